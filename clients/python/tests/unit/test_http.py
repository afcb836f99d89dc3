"""Retries, idempotency keys, Retry-After, typed errors and paging, against a scripted
transport (``httpx.MockTransport``: no Openrail needed), for the sync and the async client."""

from __future__ import annotations

import asyncio
import inspect
import json
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from openrail import (
    AsyncOpenrail,
    CredentialNotVerifiedError,
    Openrail,
    OpenrailConnectionError,
    OpenrailError,
    problem_names,
)
from openrail.errors import parse_retry_after


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: httpx.Headers
    body: str
    at: float


@dataclass
class Script:
    """Answers each request with ``handler(request, n)`` (n counts from 1) and records it."""

    handler: Callable[[Seen, int], httpx.Response]
    seen: list[Seen] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        s = Seen(
            request.method,
            request.url.raw_path.decode().split("?")[0],
            dict(request.url.params),
            request.headers,
            request.content.decode(),
            time.monotonic(),
        )
        self.seen.append(s)
        return self.handler(s, len(self.seen))

    def sync(self, **kw: Any) -> Openrail:
        return Openrail(
            kw.pop("api_key", "sk_testnet_x"),
            base_url="http://openrail.test",
            http_client=httpx.Client(transport=httpx.MockTransport(self)),
            **kw,
        )

    def async_(self, **kw: Any) -> AsyncOpenrail:
        return AsyncOpenrail(
            kw.pop("api_key", "sk_testnet_x"),
            base_url="http://openrail.test",
            http_client=httpx.AsyncClient(transport=httpx.MockTransport(self)),
            **kw,
        )


def problem(
    status: int, code: str, headers: dict[str, str] | None = None, **extra: Any
) -> httpx.Response:
    body = {
        "type": f"https://docs.openrail.dev/errors/{code}",
        "title": "t",
        "status": status,
        "detail": "d",
        "code": code,
        **extra,
    }
    return httpx.Response(
        status,
        headers={"content-type": "application/problem+json", "request-id": "req_test", **(headers or {})},
        json=body,
    )


def ok(obj: Any, status: int = 200) -> httpx.Response:
    return httpx.Response(status, json=obj)


MANDATE = {"payer_account_id": "ba_1", "max_amount": "1", "currency": "USD", "interval": "daily"}


def test_a_post_keeps_one_idempotency_key_across_retries_and_honours_retry_after() -> None:
    def handler(_: Seen, n: int) -> httpx.Response:
        if n == 1:
            return problem(503, "temporarily_unavailable", {"retry-after": "1"})
        if n == 2:
            return problem(429, "rate_limited", {"retry-after": "0"})
        return ok({"id": "man_1", "object": "mandate"}, 201)

    s = Script(handler)
    client = s.sync()
    m = client.agentic.mandates.create(
        payer_account_id="ba_1", max_amount="1", currency="USD", interval="daily"
    )
    assert m["id"] == "man_1"
    assert len(s.seen) == 3
    keys = [r.headers.get("idempotency-key") for r in s.seen]
    assert keys[0] and keys[0].startswith("orc_") and len(keys[0]) > 10
    assert keys == [keys[0]] * 3
    gap = s.seen[1].at - s.seen[0].at
    assert gap >= 0.95, f"Retry-After: 1 not honoured ({gap:.3f} s)"
    assert s.seen[0].headers["authorization"] == "Bearer sk_testnet_x"
    assert s.seen[0].headers["content-type"] == "application/json"
    assert json.loads(s.seen[0].body) == MANDATE
    assert all(json.loads(r.body) == MANDATE for r in s.seen)
    # Another call, another key.
    client.agentic.mandates.create(
        payer_account_id="ba_1", max_amount="1", currency="USD", interval="daily"
    )
    assert s.seen[3].headers["idempotency-key"] != keys[0]


def test_the_async_client_keeps_one_key_across_retries_too() -> None:
    def handler(_: Seen, n: int) -> httpx.Response:
        if n < 3:
            return problem(503, "temporarily_unavailable", {"retry-after": "0"})
        return ok({"id": "pull_1", "object": "debit_pull"}, 201)

    s = Script(handler)

    async def run() -> None:
        async with s.async_() as client:
            pull = await client.agentic.debit_pulls.create(session_key_id="sk_1", amount="5.00")
            assert pull["id"] == "pull_1"

    asyncio.run(run())
    keys = {r.headers["idempotency-key"] for r in s.seen}
    assert len(s.seen) == 3 and len(keys) == 1


def test_409_in_progress_is_retried_a_given_key_and_prefer_wait_are_sent_get_has_no_key() -> None:
    def handler(req: Seen, n: int) -> httpx.Response:
        if n == 1:
            return problem(409, "idempotency_in_progress", {"retry-after": "0"})
        status = "revoked" if req.method == "DELETE" else "active"
        return ok({"id": "sk_1", "object": "session_key", "status": status})

    s = Script(handler)
    client = s.sync()
    revoked = client.agentic.session_keys.revoke("sk_1", idempotency_key="revoke-sk_1", wait=5)
    assert revoked["status"] == "revoked"
    assert [(r.method, r.headers.get("idempotency-key"), r.headers.get("prefer")) for r in s.seen] == [
        ("DELETE", "revoke-sk_1", "wait=5"),
        ("DELETE", "revoke-sk_1", "wait=5"),
    ]
    client.agentic.session_keys.retrieve("sk_1")
    assert "idempotency-key" not in s.seen[2].headers
    assert "prefer" not in s.seen[2].headers
    assert s.seen[2].path == "/v1/session-keys/sk_1"
    assert s.seen[2].method == "GET"


def test_a_409_about_the_object_is_final() -> None:
    s = Script(lambda _r, _n: problem(409, "payment_not_cancelable"))
    with pytest.raises(OpenrailError) as e:
        s.sync().payments.cancel("pay_1")
    assert e.value.status == 409 and e.value.code == "payment_not_cancelable"
    assert len(s.seen) == 1
    assert s.seen[0].path == "/v1/payments/pay_1/cancel" and s.seen[0].method == "POST"
    assert s.seen[0].headers.get("idempotency-key")


def test_a_decline_is_typed_and_not_retried() -> None:
    s = Script(
        lambda _r, _n: problem(
            422,
            "allowance_exceeded",
            param="amount",
            request_id="req_body",
            pull_id="pull_1",
            remaining="10.00",
            resets_at="2026-11-26T00:00:00Z",
        )
    )
    with pytest.raises(OpenrailError) as e:
        s.sync().agentic.debit_pulls.create(session_key_id="sk_1", amount="20.00")
    err = e.value
    assert (err.status, err.code, err.param, err.detail) == (422, "allowance_exceeded", "amount", "d")
    assert err.request_id == "req_body"  # the body's, over the header's
    assert (err.pull_id, err.remaining, err.resets_at) == ("pull_1", "10.00", "2026-11-26T00:00:00Z")
    assert err.problem["code"] == "allowance_exceeded"
    assert str(err) == "422 allowance_exceeded: d (req_body)"
    assert len(s.seen) == 1


def test_retries_stop_after_max_retries_and_the_last_answer_is_raised() -> None:
    s = Script(lambda _r, _n: problem(503, "temporarily_unavailable", {"retry-after": "0"}))
    with pytest.raises(OpenrailError) as e:
        s.sync(max_retries=2).events.retrieve("evt_1")
    assert e.value.status == 503 and e.value.request_id == "req_test"
    assert e.value.retry_after == 0
    assert len(s.seen) == 3


def test_retry_after_is_bounded_by_max_retry_delay() -> None:
    s = Script(
        lambda _r, n: problem(429, "rate_limited", {"retry-after": "120"}) if n == 1 else ok({"id": "evt_1"})
    )
    start = time.monotonic()
    assert s.sync(max_retry_delay=0.2).events.retrieve("evt_1")["id"] == "evt_1"
    assert time.monotonic() - start < 2
    assert len(s.seen) == 2


def test_other_statuses_are_not_retried_and_a_body_that_is_no_problem_still_types() -> None:
    s = Script(lambda _r, _n: httpx.Response(500, text="<html>oops</html>", headers={"request-id": "req_h"}))
    with pytest.raises(OpenrailError) as e:
        s.sync().account.retrieve()
    assert (e.value.status, e.value.code, e.value.request_id) == (500, "http_500", "req_h")
    assert e.value.body == "<html>oops</html>" and e.value.problem == {}
    assert len(s.seen) == 1


def test_network_errors_are_retried_with_the_same_key_then_raise_a_connection_error() -> None:
    def handler(_: Seen, n: int) -> httpx.Response:
        raise httpx.ConnectError("refused")

    s = Script(handler)
    with pytest.raises(OpenrailConnectionError) as e:
        s.sync(max_retries=2).payments.create(
            amount="1.00",
            currency="USD",
            source={"type": "wallet", "id": "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"},
            destination={"type": "wallet", "address": "0x90F79bf6EB2c4f870365E785982E1f101E93b906"},
        )
    assert isinstance(e.value.__cause__, httpx.ConnectError)
    assert len(s.seen) == 3
    assert len({r.headers["idempotency-key"] for r in s.seen}) == 1

    # The same, then success: one key, one answer.
    s2 = Script(lambda _r, n: (_ for _ in ()).throw(httpx.ReadError("reset")) if n == 1 else ok({"id": "pay_1"}, 201))
    assert s2.sync().payments.create(
        amount="1.00",
        currency="USD",
        source={"type": "bank_account", "id": "ba_1"},
        destination={"type": "wallet", "address": "0x90F79bf6EB2c4f870365E785982E1f101E93b906"},
    )["id"] == "pay_1"
    assert s2.seen[0].headers["idempotency-key"] == s2.seen[1].headers["idempotency-key"]


def test_a_real_refused_connection_is_a_connection_error() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    with Openrail("k", base_url=f"http://127.0.0.1:{port}", max_retries=1, max_retry_delay=0.05) as c:
        with pytest.raises(OpenrailConnectionError):
            c.events.retrieve("evt_1")

    async def run() -> None:
        async with AsyncOpenrail("k", base_url=f"http://127.0.0.1:{port}", max_retries=0) as c:
            with pytest.raises(OpenrailConnectionError):
                await c.events.retrieve("evt_1")

    asyncio.run(run())


def test_none_members_are_left_out_of_the_body_and_ids_are_escaped() -> None:
    s = Script(lambda _r, _n: ok({"id": "sk_1"}, 201))
    s.sync().agentic.session_keys.create(mandate_id="man_1", expires_in=600, max_amount=None)
    assert json.loads(s.seen[0].body) == {"mandate_id": "man_1", "expires_in": 600}
    s.sync().payments.retrieve("pay_1/../x?y")
    assert s.seen[1].path == "/v1/payments/pay_1%2F..%2Fx%3Fy"
    assert s.seen[1].query == {}


def _pages(ids: list[str]) -> Callable[[Seen, int], httpx.Response]:
    def handler(req: Seen, _: int) -> httpx.Response:
        limit = int(req.query.get("limit", "10"))
        after = req.query.get("starting_after")
        start = ids.index(after) + 1 if after else 0
        data = [{"id": i, "object": "event"} for i in ids[start : start + limit]]
        return ok({"object": "list", "url": req.path, "data": data, "has_more": start + limit < len(ids)})

    return handler


def test_lists_page_with_starting_after_until_has_more_is_false() -> None:
    ids = [f"evt_{i}" for i in range(8, 0, -1)]
    s = Script(_pages(ids))
    client = s.sync()
    pager = client.events.list(limit=3, type="payment.*", created_gte=1700000000)
    assert [e["id"] for e in pager] == ids
    assert [r.query for r in s.seen] == [
        {"limit": "3", "type": "payment.*", "created[gte]": "1700000000"},
        {"limit": "3", "type": "payment.*", "created[gte]": "1700000000", "starting_after": "evt_6"},
        {"limit": "3", "type": "payment.*", "created[gte]": "1700000000", "starting_after": "evt_3"},
    ]
    # One page, as answered; kept once fetched.
    first = client.events.list(limit=3)
    page = first.first_page()
    assert [e["id"] for e in page["data"]] == ids[:3] and page["has_more"] is True
    assert first.first_page() is page
    # From a cursor, and at most max_items.
    assert [e["id"] for e in client.events.list(limit=3, starting_after="evt_5")] == ids[4:]
    assert [e["id"] for e in client.events.list(limit=2).to_list(max_items=3)] == ids[:3]
    assert [len(p["data"]) for p in client.events.list(limit=3).pages()] == [3, 3, 2]


def test_the_async_pager_pages_the_same_way() -> None:
    ids = [f"pull_{i}" for i in range(5, 0, -1)]
    s = Script(_pages(ids))

    async def run() -> None:
        async with s.async_() as client:
            got = [p["id"] async for p in client.agentic.debit_pulls.list(limit=2, session_key_id="sk_1")]
            assert got == ids
            first = await client.agentic.debit_pulls.list(limit=2)
            assert [p["id"] for p in first["data"]] == ids[:2]
            assert len(await client.agentic.debit_pulls.list(limit=4).to_list()) == 5

    asyncio.run(run())
    assert s.seen[0].query == {"limit": "2", "session_key_id": "sk_1"}
    assert s.seen[1].query == {"limit": "2", "session_key_id": "sk_1", "starting_after": "pull_4"}


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("-1") is None
    when = parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now=1445412500.0)
    assert when == 10.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412500.0) == 0.0


def test_a_key_is_required() -> None:
    with pytest.raises(ValueError):
        Openrail("")


VERDICT = {
    "verified": False,
    "problemDetails": [
        {
            "type": "https://www.w3.org/TR/vc-data-model#RANGE_ERROR",
            "code": -67,
            "title": "t",
            "detail": "d",
        }
    ],
    "results": {},
}


def test_identity_a_422_verdict_is_returned_a_422_problem_raised() -> None:
    def handler(s: Seen, n: int) -> httpx.Response:
        if n in (1, 3):
            return httpx.Response(422, json=VERDICT)
        return problem(422, "idempotency_key_reused")

    script = Script(handler)
    client = script.sync(max_retries=0)
    v = client.identity.verify_credential({"type": "VerifiableCredential"})
    assert v == VERDICT and problem_names(v) == ["RANGE_ERROR"]
    assert script.seen[0].headers["authorization"] == "Bearer sk_testnet_x"
    assert json.loads(script.seen[0].body) == {
        "verifiableCredential": {"type": "VerifiableCredential"}
    }
    with pytest.raises(OpenrailError) as e:
        client.identity.verify_credential({}, idempotency_key="k")
    assert e.value.code == "idempotency_key_reused"
    # A client without a key sends no Authorization header.
    anonymous = script.sync(api_key=None, max_retries=0)
    assert anonymous.identity.verify_credential({})["verified"] is False
    assert "authorization" not in script.seen[2].headers
    # Elsewhere a 422 stays an error, even with a body that looks like a verdict.
    with pytest.raises(OpenrailError) as e:
        client.identity.create_challenge()
    assert e.value.status == 422


def test_attesting_a_credential_that_does_not_verify_raises_with_its_verification() -> None:
    def handler(s: Seen, n: int) -> httpx.Response:
        if n == 1:
            return httpx.Response(422, json=VERDICT, headers={"request-id": "req_v"})
        if n == 2:
            return problem(422, "idempotency_key_reused")
        return httpx.Response(200, json={"id": "att_1", "status": "revoked"})

    script = Script(handler)
    client = script.sync(max_retries=0)
    with pytest.raises(CredentialNotVerifiedError) as nv:
        client.identity.attestations.create(verifiableCredential={"id": "urn:x"}, recipient="0x1")
    assert isinstance(nv.value, OpenrailError)
    assert (nv.value.status, nv.value.code, nv.value.request_id) == (422, "http_422", "req_v")
    assert nv.value.verification == VERDICT
    assert problem_names(nv.value.verification) == ["RANGE_ERROR"]
    assert str(nv.value) == "422: the credential does not verify (RANGE_ERROR)"
    assert json.loads(script.seen[0].body) == {
        "verifiableCredential": {"id": "urn:x"},
        "recipient": "0x1",
    }
    # A problem stays a plain OpenrailError.
    with pytest.raises(OpenrailError) as e:
        client.identity.attestations.create(credential_id="urn:x")
    assert not isinstance(e.value, CredentialNotVerifiedError)
    assert e.value.code == "idempotency_key_reused"
    # The action routes send no body; waits are `Prefer: wait`.
    assert client.identity.attestations.revoke("att_1", wait=30)["status"] == "revoked"
    assert (script.seen[2].method, script.seen[2].path) == ("POST", "/v1/identity/attestations/att_1/revoke")
    assert script.seen[2].body == "" and script.seen[2].headers["prefer"] == "wait=30"


def test_verification_sessions_routes_and_paging_async() -> None:
    def handler(s: Seen, n: int) -> httpx.Response:
        if s.method == "GET" and s.path == "/v1/identity/verifications":
            after = s.query.get("starting_after")
            data = [{"id": "idv_2"}] if after is None else [{"id": "idv_1"}]
            return httpx.Response(
                200, json={"object": "list", "url": s.path, "data": data, "has_more": after is None}
            )
        if s.path.endswith("/credential"):
            return httpx.Response(200, json={"verifiableCredential": {"id": "urn:c"}})
        return httpx.Response(200, json={"id": "idv_2", "status": "processing"})

    script = Script(handler)

    async def run() -> None:
        async with script.async_(max_retries=0) as client:
            v = client.identity.verifications
            await v.create(type="personhood", subject="0x1", simulate={"outcome": "slow"})
            await v.submit("idv_2")
            await v.cancel("idv_2")
            assert await v.credential("idv_2") == {"id": "urn:c"}
            assert [s["id"] async for s in v.list(limit=1)] == ["idv_2", "idv_1"]

    asyncio.run(run())
    sent = [(s.method, s.path, s.body) for s in script.seen[:4]]
    assert sent[0][:2] == ("POST", "/v1/identity/verifications")
    assert json.loads(sent[0][2]) == {"type": "personhood", "subject": "0x1", "simulate": {"outcome": "slow"}}
    assert sent[1:] == [
        ("POST", "/v1/identity/verifications/idv_2/submit", ""),
        ("POST", "/v1/identity/verifications/idv_2/cancel", ""),
        ("GET", "/v1/identity/verifications/idv_2/credential", ""),
    ]
    assert script.seen[5].query == {"limit": "1", "starting_after": "idv_2"}


def test_identity_async_verdicts_and_the_presentation_body() -> None:
    script = Script(lambda s, n: httpx.Response(422, json=VERDICT))

    async def run() -> None:
        async with script.async_(max_retries=0) as client:
            v = await client.identity.verify_presentation(
                {"type": ["VerifiablePresentation"]}, challenge="chl_1"
            )
            assert v["verified"] is False

    asyncio.run(run())
    assert json.loads(script.seen[0].body) == {
        "verifiablePresentation": {"type": ["VerifiablePresentation"]},
        "options": {"challenge": "chl_1"},
    }


def _public_methods(obj: object) -> dict[str, inspect.Signature]:
    out: dict[str, inspect.Signature] = {}
    for name, member in inspect.getmembers(obj):
        if not name.startswith("_") and callable(member):
            sig = inspect.signature(member)
            out[name] = sig.replace(return_annotation=inspect.Signature.empty)
    return out


def test_the_async_client_has_every_method_of_the_sync_one_with_the_same_parameters() -> None:
    sync = Openrail("k")
    async_ = AsyncOpenrail("k")
    groups = [
        ("agentic.mandates", sync.agentic.mandates, async_.agentic.mandates),
        ("agentic.session_keys", sync.agentic.session_keys, async_.agentic.session_keys),
        ("agentic.debit_pulls", sync.agentic.debit_pulls, async_.agentic.debit_pulls),
        ("payments", sync.payments, async_.payments),
        ("bank_accounts", sync.bank_accounts, async_.bank_accounts),
        ("account", sync.account, async_.account),
        ("events", sync.events, async_.events),
        ("webhook_endpoints", sync.webhook_endpoints, async_.webhook_endpoints),
        ("identity", sync.identity, async_.identity),
        ("identity.verifications", sync.identity.verifications, async_.identity.verifications),
        ("identity.attestations", sync.identity.attestations, async_.identity.attestations),
    ]
    for name, s, a in groups:
        ms, ma = _public_methods(s), _public_methods(a)
        assert ms.keys() == ma.keys(), name
        assert ms, name
        for method in ms:
            assert str(ms[method]) == str(ma[method]), f"{name}.{method}"
            is_list = method.startswith("list")
            assert inspect.iscoroutinefunction(getattr(a, method)) is not is_list, f"{name}.{method}"
    sync.close()
    asyncio.run(async_.aclose())
