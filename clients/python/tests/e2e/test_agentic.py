"""The agentic flow against ``openrail dev``: a mandate the payer signs (EIP-712,
eth-account) → a session key → pulls → ``allowance_exceeded`` → revoke →
``session_key_revoked``; and a key an agent signs for (async client)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest
from eth_account import Account

from openrail import AsyncOpenrail, Openrail, OpenrailError, account_from_private_key

from .conftest import Server

DEST = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
T = TypeVar("T")


def raises(call: Callable[[], Any]) -> OpenrailError:
    with pytest.raises(OpenrailError) as e:
        call()
    return e.value


async def araises(call: Callable[[], Awaitable[Any]]) -> OpenrailError:
    with pytest.raises(OpenrailError) as e:
        await call()
    return e.value


def test_mandate_signed_by_the_payer_key_pulls_allowance_exceeded_revoke(server: Server) -> None:
    client = Openrail(server.key, base_url=server.url)
    payer = account_from_private_key(server.payer_key)
    assert payer.address == server.payer

    created = client.agentic.mandates.create(
        payer_account_id=server.payer, max_amount="100.00", currency="USD", interval="daily"
    )
    assert created["status"] == "requires_authorization"
    assert created["authorization"] and created["authorization"]["method"] == "payer_signature"

    # A signature by someone else is refused, typed, and changes nothing.
    intruder = Account.create()
    bad = raises(lambda: client.agentic.mandates.sign_and_authorize(created, intruder))
    assert (bad.status, bad.code) == (422, "signature_invalid")
    assert bad.request_id and bad.request_id.startswith("req_")
    assert client.agentic.mandates.retrieve(created["id"])["status"] == "requires_authorization"

    mandate = client.agentic.mandates.sign_and_authorize(created, payer, wait=30)
    assert mandate["status"] == "active"
    assert mandate["current_epoch"]["remaining"] == "100.00"

    key = client.agentic.session_keys.create(
        mandate_id=mandate["id"], expires_in=3600, max_amount="60", wait=30
    )
    assert key["status"] == "active"
    secret = key.get("secret")
    assert secret and secret.startswith("sks_testnet_")

    idem = f"pull-{key['id']}"
    pull = client.agentic.debit_pulls.create(
        session_key_id=key["id"], amount="50.00", wait=30, idempotency_key=idem
    )
    assert (pull["status"], pull["amount"]) == ("authorized", "50.00")
    # The same Idempotency-Key replays the first answer; another body with it is refused.
    replay = client.agentic.debit_pulls.create(
        session_key_id=key["id"], amount="50.00", idempotency_key=idem
    )
    assert replay["id"] == pull["id"]
    reused = raises(
        lambda: client.agentic.debit_pulls.create(
            session_key_id=key["id"], amount="5.00", idempotency_key=idem
        )
    )
    assert (reused.code, reused.param) == ("idempotency_key_reused", "Idempotency-Key")

    # The agent pulls with its own secret.
    with Openrail(secret, base_url=server.url) as agent:
        small = agent.agentic.debit_pulls.create(session_key_id=key["id"], amount="5.00", wait=30)
        assert small["status"] == "authorized"
        # A session key's secret may not read mandates.
        assert raises(lambda: agent.agentic.mandates.retrieve(mandate["id"])).status == 403

    exceeded = raises(
        lambda: client.agentic.debit_pulls.create(session_key_id=key["id"], amount="20.00", wait=30)
    )
    assert (exceeded.status, exceeded.code, exceeded.param) == (422, "allowance_exceeded", "amount")
    assert exceeded.remaining == "5.00"
    assert exceeded.resets_at and exceeded.resets_at.endswith("T00:00:00Z")
    assert exceeded.pull_id and exceeded.pull_id.startswith("pull_")
    assert exceeded.problem["pull_id"] == exceeded.pull_id
    assert client.agentic.debit_pulls.retrieve(exceeded.pull_id)["status"] == "declined"

    revoked = client.agentic.session_keys.revoke(key["id"], wait=30)
    assert revoked["status"] == "revoked"
    after = raises(
        lambda: client.agentic.debit_pulls.create(session_key_id=key["id"], amount="1", wait=30)
    )
    assert after.code == "session_key_revoked"

    # Auto-paging: the key's pulls (two authorized, two declined), two per page.
    pulls = client.agentic.debit_pulls.list(session_key_id=key["id"], limit=2).to_list()
    assert sorted(p["status"] for p in pulls) == ["authorized", "authorized", "declined", "declined"]
    assert len({p["id"] for p in pulls}) == 4
    pages = list(client.agentic.debit_pulls.list(session_key_id=key["id"], limit=2).pages())
    assert [len(p["data"]) for p in pages] == [2, 2]
    assert [k["id"] for k in client.agentic.session_keys.list(mandate_id=mandate["id"])] == [key["id"]]
    assert any(m["id"] == mandate["id"] for m in client.agentic.mandates.list(limit=100))
    client.close()


def test_a_key_an_agent_signs_for_pulls_carry_its_debit_pull_signature(server: Server) -> None:
    async def run() -> None:
        async with AsyncOpenrail(server.key, base_url=server.url) as client:
            agent = Account.create()
            created = await client.agentic.mandates.create(
                payer_account_id=server.payer,
                max_amount="100",
                currency="USD",
                interval="weekly",
                payees=[DEST],
                agent=agent.address,
            )
            assert created["payees"] == [DEST]
            assert created["agent"] == agent.address
            auth = created["authorization"]
            assert auth is not None and auth["method"] == "payer_signature"
            message = auth["typed_data"]["message"]
            assert message["payees"] == [DEST] and message["agent"] == agent.address
            mandate = await client.agentic.mandates.sign_and_authorize(
                created, account_from_private_key(server.payer_key), wait=30
            )
            assert mandate["status"] == "active"

            # Keys stay within what the payer signed.
            elsewhere = await araises(
                lambda: client.agentic.session_keys.create(
                    mandate_id=mandate["id"],
                    expires_in=600,
                    allowed_destinations=["0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65"],
                )
            )
            assert (elsewhere.status, elsewhere.code, elsewhere.param) == (
                422,
                "session_key_outside_mandate",
                "allowed_destinations",
            )
            other_signer = await araises(
                lambda: client.agentic.session_keys.create(
                    mandate_id=mandate["id"], expires_in=600, signer=Account.create().address
                )
            )
            assert (other_signer.code, other_signer.param) == ("session_key_outside_mandate", "signer")

            # Without a signer, the key gets the agent (and the payees).
            key = await client.agentic.session_keys.create(
                mandate_id=mandate["id"], expires_in=600, wait=30
            )
            assert key["signer"] == agent.address
            assert key["allowed_destinations"] == [DEST]
            assert key["eip712_domain"] is not None

            # The key's agent credential names its signer; issued once, then the same.
            credential = await client.agentic.session_keys.issue_agent_credential(key["id"])
            assert credential["type"] == ["VerifiableCredential", "AgentCredential"]
            subject = credential["credentialSubject"]
            chain_id = key["onchain"]["chain_id"]
            assert subject["id"] == f"did:pkh:eip155:{chain_id}:{agent.address}"
            assert (subject["sessionKey"], subject["mandate"]) == (key["id"], mandate["id"])
            assert await client.agentic.session_keys.issue_agent_credential(key["id"]) == credential
            assert await client.agentic.session_keys.agent_credential(key["id"]) == credential
            assert (await client.identity.verify_credential(credential))["verified"] is True

            pull = await client.agentic.debit_pulls.create_signed(
                session_key=key, amount="5.00", destination=DEST, signer=agent, nonce=1, wait=30
            )
            assert (pull["status"], pull["destination"], pull["amount"]) == ("authorized", DEST, "5.00")

            reused = await araises(
                lambda: client.agentic.debit_pulls.create_signed(
                    session_key=key, amount="5.00", destination=DEST, signer=agent, nonce=1
                )
            )
            assert reused.code == "nonce_used"
            other = await araises(
                lambda: client.agentic.debit_pulls.create_signed(
                    session_key=key, amount="5.00", destination=DEST, signer=Account.create()
                )
            )
            assert other.code == "signature_invalid"
            unsigned = await araises(
                lambda: client.agentic.debit_pulls.create(session_key_id=key["id"], amount="1")
            )
            assert unsigned.code == "signature_required"
            # Signed for another key id: the signature does not match this key's.
            tampered = await araises(
                lambda: client.agentic.debit_pulls.create_signed(
                    session_key={**key, "onchain": {**key["onchain"], "id": "0x" + "22" * 32}},
                    amount="5.00",
                    destination=DEST,
                    signer=agent,
                )
            )
            assert tampered.code == "signature_invalid"
            # A random nonce and default deadline work too.
            second = await client.agentic.debit_pulls.create_signed(
                session_key=key, amount="0.50", destination=DEST, signer=agent, wait=30
            )
            assert (second["status"], second["amount"]) == ("authorized", "0.50")
            ids = [p["id"] async for p in client.agentic.debit_pulls.list(session_key_id=key["id"], limit=1)]
            assert pull["id"] in ids and second["id"] in ids

    asyncio.run(run())
