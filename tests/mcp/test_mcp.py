"""``openrail mcp`` driven by the official MCP Python client (PyPI ``mcp``) against a real
``openrail dev``: the tools and their schemas, pulls until ``allowance_exceeded``, a
revoked key, a key an agent signs for (with and without the agent's key), an account key
refused, the 2025-03-26 revision, and the streamable HTTP transport."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from typing import Any

import httpx
from eth_account import Account
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from helpers import DEST, Dev, http_server, mcp_session, openrail_bin, server_env, text

TOOLS = {"get_allowance", "create_debit_pull", "list_debit_pulls", "get_debit_pull", "verify_credential"}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_tools_are_listed_with_schemas_that_state_the_limits(dev: Dev) -> None:
    key = dev.session_key(dev.mandate()["id"], max_amount="10")

    async def go() -> None:
        async with mcp_session(server_env(dev, key)) as s:
            await s.send_ping()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == TOOLS
            pull = tools["create_debit_pull"]
            schema = pull.input_schema
            assert schema["required"] == ["amount"] and schema["additionalProperties"] is False
            assert schema["properties"]["amount"]["type"] == "string"
            assert schema["properties"]["amount"]["pattern"] == "^[0-9]+(\\.[0-9]{1,2})?$"
            assert "at most 2 decimals" in schema["properties"]["amount"]["description"]
            assert "allowed_destinations" in schema["properties"]["destination"]["description"]
            for words in ("allowance_exceeded", "remaining", "resets_at", "expires_at", "idempotency_key"):
                assert words in (pull.description or ""), words
            assert pull.annotations is not None and pull.annotations.read_only_hint is False
            for name in ("get_allowance", "list_debit_pulls", "get_debit_pull", "verify_credential"):
                a = tools[name].annotations
                assert a is not None and a.read_only_hint is True, name
            assert tools["get_debit_pull"].input_schema["required"] == ["pull_id"]
            verify = tools["verify_credential"]
            assert verify.input_schema["required"] == ["credential"]
            for words in ("RANGE_ERROR", "PROOF_VERIFICATION_ERROR", "trust", "parameter_invalid"):
                assert words in (verify.description or ""), words

    run(go())


def test_pulls_until_allowance_exceeded_then_reads_them(dev: Dev) -> None:
    key = dev.session_key(dev.mandate()["id"], max_amount="10")

    async def go() -> None:
        async with mcp_session(server_env(dev, key)) as s:
            allowance = await s.call_tool("get_allowance", {})
            assert not allowance.is_error, text(allowance)
            a = allowance.structured_content
            assert a is not None
            assert (a["session_key_id"], a["remaining"], a["currency"], a["status"]) == (key["id"], "10.00", "USD", "active")
            assert a["expires_at"] == key["expires_at"] and a["resets_at"].endswith("T00:00:00Z")

            ids = []
            for _ in range(2):
                r = await s.call_tool("create_debit_pull", {"amount": "4.00", "description": "mcp test"})
                assert not r.is_error, text(r)
                assert r.structured_content and r.structured_content["status"] == "authorized"
                ids.append(r.structured_content["id"])
            over = await s.call_tool("create_debit_pull", {"amount": "4.00"})
            assert over.is_error
            t = text(over)
            assert t.startswith("allowance_exceeded (HTTP 422): a pull of 4.00 USD exceeds"), t
            assert "remaining: 2.00" in t and "resets_at: " in t
            sc = over.structured_content
            assert sc and (sc["code"], sc["remaining"]) == ("allowance_exceeded", "2.00")
            assert sc["resets_at"] == a["resets_at"] and sc["pull_id"].startswith("pull_")

            # A malformed amount is the API's to refuse, and the refusal reaches the model.
            bad = await s.call_tool("create_debit_pull", {"amount": "1.001"})
            assert bad.is_error and "amount" in text(bad)

            listed = await s.call_tool("list_debit_pulls", {"limit": 2})
            assert not listed.is_error, text(listed)
            page = listed.structured_content
            assert page and len(page["data"]) == 2 and page["has_more"] is True
            rest = await s.call_tool("list_debit_pulls", {"limit": 100, "starting_after": page["next_starting_after"]})
            every = page["data"] + (rest.structured_content or {})["data"]
            assert {p["id"] for p in every} >= {*ids, sc["pull_id"]}
            assert all(p["session_key_id"] == key["id"] for p in every)

            one = await s.call_tool("get_debit_pull", {"pull_id": ids[0]})
            assert not one.is_error and one.structured_content and one.structured_content["status"] == "authorized"
            declined = await s.call_tool("get_debit_pull", {"pull_id": sc["pull_id"]})
            assert declined.structured_content and declined.structured_content["decline_code"] == "allowance_exceeded"
            after = (await s.call_tool("get_allowance", {})).structured_content
            assert after and (after["remaining"], after["spent"]) == ("2.00", "8.00")

        # With OPENRAIL_SESSION_KEY_ID given, the same key.
        async with mcp_session(server_env(dev, key, key_id=True)) as s:
            learnt = await s.call_tool("get_allowance", {})
            assert not learnt.is_error and learnt.structured_content
            assert learnt.structured_content["session_key_id"] == key["id"]

    run(go())


def test_a_fresh_key_needs_only_its_secret(dev: Dev) -> None:
    """No pull yet and no OPENRAIL_SESSION_KEY_ID: the server asks the API which key its
    secret is, and the first pull goes through."""
    key = dev.session_key(dev.mandate()["id"])

    async def go() -> None:
        async with mcp_session(server_env(dev, key, key_id=False)) as s:
            r = await s.call_tool("create_debit_pull", {"amount": "1"})
            assert not r.is_error, text(r)
            assert r.structured_content and r.structured_content["session_key_id"] == key["id"]

    run(go())


def test_a_revoked_key_is_refused(dev: Dev) -> None:
    key = dev.session_key(dev.mandate()["id"])
    with dev.client() as c:
        assert c.agentic.session_keys.revoke(key["id"], wait=30)["status"] == "revoked"

    async def go() -> None:
        async with mcp_session(server_env(dev, key)) as s:
            r = await s.call_tool("create_debit_pull", {"amount": "1.00"})
            assert r.is_error
            assert text(r).startswith("unauthenticated (HTTP 401)"), text(r)
            assert "revoked" in text(r)
            a = await s.call_tool("get_allowance", {})
            assert a.is_error and a.structured_content and a.structured_content["code"] == "unauthenticated"

    run(go())


def test_a_key_an_agent_signs_for(dev: Dev) -> None:
    agent = Account.create()
    # The key names its signer (the mandate names no agent: any of its keys may or may not).
    mandate = dev.mandate(payees=[DEST])
    key = dev.session_key(mandate["id"], signer=agent.address)
    assert key["signer"] == agent.address and key["allowed_destinations"] == [DEST]
    agent_key = "0x" + bytes(agent.key).hex()

    async def go() -> None:
        async with mcp_session(server_env(dev, key, agent_key=agent_key)) as s:
            r = await s.call_tool(
                "create_debit_pull", {"amount": "5.00", "destination": DEST, "idempotency_key": "mcp-signed-1"}
            )
            assert not r.is_error, text(r)
            pull = r.structured_content
            assert pull and (pull["status"], pull["destination"], pull["amount"]) == ("authorized", DEST, "5.00")
            # The same idempotency key returns the same pull (the body signed the first time).
            again = await s.call_tool(
                "create_debit_pull", {"amount": "5.00", "destination": DEST, "idempotency_key": "mcp-signed-1"}
            )
            assert not again.is_error and again.structured_content and again.structured_content["id"] == pull["id"]
            # No destination: the key's only one is signed for.
            second = await s.call_tool("create_debit_pull", {"amount": "0.50"})
            assert not second.is_error and second.structured_content
            assert second.structured_content["destination"] == DEST
            a = (await s.call_tool("get_allowance", {})).structured_content
            assert a and a["signer"] == agent.address and a["agent_key_configured"] is True
            assert a["spent"] == "5.50"

        async with mcp_session(server_env(dev, key)) as s:
            refused = await s.call_tool("create_debit_pull", {"amount": "1.00", "destination": DEST})
            assert refused.is_error
            t = text(refused)
            assert t.startswith("signature_required: ") and "OPENRAIL_AGENT_KEY" in t, t
            assert refused.structured_content and refused.structured_content["sent"] is False

        other = "0x" + bytes(Account.create().key).hex()
        async with mcp_session(server_env(dev, key, agent_key=other)) as s:
            wrong = await s.call_tool("create_debit_pull", {"amount": "1.00", "destination": DEST})
            assert wrong.is_error and text(wrong).startswith("signature_invalid: ")

        with dev.client() as c:
            pulls = c.agentic.debit_pulls.list(session_key_id=key["id"], limit=100).to_list()
        assert sorted(p["amount"] for p in pulls) == ["0.50", "5.00"], "the refused calls sent nothing"

    run(go())


def test_an_account_key_is_refused_at_start(dev: Dev) -> None:
    out = subprocess.run(
        [openrail_bin(), "mcp"],
        env={"OPENRAIL_API_KEY": dev.key, "OPENRAIL_BASE_URL": dev.url, "PATH": os.environ.get("PATH", "")},
        input="",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode != 0 and out.stdout == ""
    assert "not a session key's secret" in out.stderr


def test_stdio_answers_2025_03_26_and_json_rpc_errors(dev: Dev) -> None:
    key = dev.session_key(dev.mandate()["id"])
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "resources/list"},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "get_allowance", "arguments": {}}},
    ]
    stdin = "\n".join(json.dumps(m) for m in lines) + "\n{oops\n"
    out = subprocess.run(
        [openrail_bin(), "mcp"], env={"PATH": os.environ.get("PATH", ""), **server_env(dev, key)},
        input=stdin, capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    answers = {json.dumps(a.get("id")): a for a in map(json.loads, out.stdout.splitlines())}
    assert answers["1"]["result"]["protocolVersion"] == "2025-03-26"
    assert all("title" not in t for t in answers["2"]["result"]["tools"])
    assert answers["3"]["error"]["code"] == -32601
    call = answers["4"]["result"]
    assert call["isError"] is False and "structuredContent" not in call
    assert json.loads(call["content"][0]["text"].split("\n", 1)[1])["session_key_id"] == key["id"]
    assert answers["null"]["error"]["code"] == -32700


def test_verify_credential_with_the_agents_secret(dev: Dev) -> None:
    """The account issues a credential (its API key, in the test); the agent's server, holding
    only the session key's secret, verifies it, then refuses it changed and once revoked."""
    key = dev.session_key(dev.mandate()["id"])
    wallet = Account.create().address
    with dev.client() as c:
        vc = c.identity.issue_credential(
            {
                "@context": ["https://www.w3.org/ns/credentials/v2", "https://www.w3.org/ns/credentials/examples/v2"],
                "type": ["VerifiableCredential", "ExampleAlumniCredential"],
                "credentialSubject": {"id": f"did:pkh:eip155:31337:{wallet}", "alumniOf": "Example University"},
            }
        )

    async def go() -> None:
        async with mcp_session(server_env(dev, key)) as s:
            ok = await s.call_tool("verify_credential", {"credential": vc})
            assert not ok.is_error, text(ok)
            assert text(ok).startswith(f"verified: ExampleAlumniCredential issued by {vc['issuer']} about did:pkh:eip155:31337:{wallet}"), text(ok)
            sc = ok.structured_content
            assert sc and sc["verified"] is True and sc["problems"] == []
            assert (sc["issuer"], sc["subject"]) == (vc["issuer"], f"did:pkh:eip155:31337:{wallet}")
            assert sc["type"] == ["VerifiableCredential", "ExampleAlumniCredential"]
            # Passed as a JSON string, as some models do: the same answer.
            as_text = await s.call_tool("verify_credential", {"credential": json.dumps(vc)})
            assert as_text.structured_content and as_text.structured_content["verified"] is True

            # A changed claim breaks the proof: an answer (not an error), verified false.
            changed = {**vc, "credentialSubject": {**vc["credentialSubject"], "alumniOf": "Elsewhere"}}
            bad = await s.call_tool("verify_credential", {"credential": changed})
            assert not bad.is_error, text(bad)
            assert text(bad).startswith("NOT verified (PROOF_VERIFICATION_ERROR"), text(bad)
            assert bad.structured_content and bad.structured_content["verified"] is False
            assert bad.structured_content["problems"][0]["name"] == "PROOF_VERIFICATION_ERROR"

            # Revoked by the account: RANGE_ERROR.
            with dev.client() as c:
                assert c.identity.revoke_credential(vc["id"])["status"] == "revoked"
            revoked = await s.call_tool("verify_credential", {"credential": vc})
            assert revoked.structured_content and revoked.structured_content["verified"] is False
            assert [p["name"] for p in revoked.structured_content["problems"]] == ["RANGE_ERROR"]

            # No credential at all: the API's 400; no argument: refused before sending.
            none = await s.call_tool("verify_credential", {"credential": {"hello": 1}})
            assert none.is_error and text(none).startswith("parameter_invalid (HTTP 400)"), text(none)
            missing = await s.call_tool("verify_credential", {})
            assert missing.is_error and "credential is required" in text(missing)

    run(go())


def test_streamable_http(dev: Dev) -> None:
    key = dev.session_key(dev.mandate()["id"], max_amount="3")
    with http_server(server_env(dev, key)) as url:

        async def go() -> None:
            async with streamable_http_client(url) as (read, write), ClientSession(read, write) as s:
                init = await s.initialize()
                assert init.protocol_version == "2025-06-18"
                assert {t.name for t in (await s.list_tools()).tools} == TOOLS
                r = await s.call_tool("create_debit_pull", {"amount": "2.00"})
                assert not r.is_error and r.structured_content and r.structured_content["status"] == "authorized"
                over = await s.call_tool("create_debit_pull", {"amount": "2.00"})
                assert over.is_error and over.structured_content
                assert (over.structured_content["code"], over.structured_content["remaining"]) == ("allowance_exceeded", "1.00")

        run(go())

        # Raw: a notification is 202, GET is 405, a foreign Origin 403, a bad version 400.
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        note = httpx.post(url, headers=h, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert note.status_code == 202 and note.content == b""
        assert httpx.get(url).status_code == 405
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        assert httpx.post(url, headers={**h, "Origin": "https://evil.example"}, json=ping).status_code == 403
        assert httpx.post(url, headers={**h, "MCP-Protocol-Version": "1999-01-01"}, json=ping).status_code == 400
        ok = httpx.post(url, headers={**h, "MCP-Protocol-Version": "2025-06-18"}, json=ping)
        assert ok.status_code == 200 and ok.headers["content-type"].startswith("application/json")
        assert ok.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_http_refuses_a_non_loopback_address(dev: Dev) -> None:
    key = dev.session_key(dev.mandate()["id"])
    out = subprocess.run(
        [openrail_bin(), "mcp", "--http", "0.0.0.0:0"],
        env={"PATH": os.environ.get("PATH", ""), **server_env(dev, key)},
        capture_output=True, text=True, timeout=30,
    )
    assert out.returncode != 0 and "loopback" in out.stderr
