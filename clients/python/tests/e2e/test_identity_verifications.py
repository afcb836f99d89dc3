"""Verification sessions and attestations against ``openrail dev``: a session the simulated
provider verifies issues a credential, which is attested on the attestation chain, listed by
its subject and revoked (sync); a session whose check fails comes back with its reason and is
canceled, and a posted credential that does not verify raises with its verification
(async)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest
from eth_account import Account

from openrail import (
    AsyncOpenrail,
    CredentialNotVerifiedError,
    Openrail,
    OpenrailError,
    problem_names,
)

from .conftest import Server

T = TypeVar("T")
OTHER = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"


def until(what: str, get: Callable[[], T], done: Callable[[T], bool]) -> T:
    """Reads with ``get`` every 100 ms until ``done`` holds (at most 30 s)."""
    deadline = time.monotonic() + 30
    while True:
        value = get()
        if done(value):
            return value
        assert time.monotonic() < deadline, f"{what}: still {value}"
        time.sleep(0.1)


async def until_async(what: str, get: Callable[[], Awaitable[T]], done: Callable[[T], bool]) -> T:
    deadline = time.monotonic() + 30
    while True:
        value = await get()
        if done(value):
            return value
        assert time.monotonic() < deadline, f"{what}: still {value}"
        await asyncio.sleep(0.1)


def fresh_wallet() -> str:
    """A wallet of this test alone: the list by subject holds only its attestations."""
    return str(Account.create().address)


def test_a_verified_sessions_credential_is_attested_listed_and_revoked(server: Server) -> None:
    wallet = fresh_wallet()
    with Openrail(server.key, base_url=server.url) as client:
        sessions, attestations = client.identity.verifications, client.identity.attestations
        s = sessions.create(type="personhood", subject=wallet.lower())
        assert s["id"].startswith("idv_")
        assert s["status"] == "requires_input"
        assert s["credential_type"] == "PersonhoodCredential"
        assert s["subject"] == wallet  # EIP-55
        assert s["simulate"]["outcome"] == "verified"
        with pytest.raises(OpenrailError) as e:
            sessions.credential(s["id"])
        assert e.value.code == "verification_not_verified"
        assert sessions.submit(s["id"])["status"] == "processing"
        with pytest.raises(OpenrailError) as e:
            sessions.submit(s["id"])
        assert e.value.code == "verification_not_submittable"
        verified = until(
            "the session", lambda: sessions.retrieve(s["id"]), lambda v: v["status"] != "processing"
        )
        assert verified["status"] == "verified", verified
        assert verified["last_error"] is None
        credential_id = verified["credential_id"]
        assert credential_id is not None and credential_id.startswith("urn:uuid:")
        with pytest.raises(OpenrailError) as e:
            sessions.cancel(s["id"])
        assert (e.value.status, e.value.code) == (409, "verification_not_cancelable")

        # The credential, for its holder: about the wallet's did:pkh, and it verifies.
        vc = sessions.credential(s["id"])
        assert vc["id"] == credential_id
        assert vc["type"] == ["VerifiableCredential", "PersonhoodCredential"]
        did = vc["credentialSubject"]["id"]
        assert did.startswith("did:pkh:eip155:") and did.endswith(wallet), did
        assert client.identity.verify_credential(vc)["verified"] is True

        # Attested from its id; active once the attestation chain mined it.
        created = attestations.create(credential_id=credential_id, wait=30)
        assert created["id"].startswith("att_")
        assert created["status"] in ("pending", "active"), created
        assert created["recipient"] == wallet
        assert created["credential_id"] == credential_id
        assert created["credential_type"] == "PersonhoodCredential"
        assert created["issuer"] == vc["issuer"]
        assert created["expires_at"] is not None
        active = until(
            "the attestation",
            lambda: attestations.retrieve(created["id"]),
            lambda a: a["status"] != "pending",
        )
        assert active["status"] == "active", active
        assert active["uid"] is not None and len(active["uid"]) == 66

        # The same credential posted whole: verified, attested again.
        again = attestations.create(verifiableCredential=vc, recipient=wallet)
        assert again["credential_digest"] == active["credential_digest"]
        # A recipient other than the subject: 400 naming it.
        with pytest.raises(OpenrailError) as e:
            attestations.create(credential_id=credential_id, recipient=OTHER)
        assert (e.value.status, e.value.code, e.value.param) == (400, "parameter_invalid", "recipient")

        # Listed by subject, newest first, across pages of one.
        pager = attestations.list(subject=wallet, limit=1)
        assert pager.first_page()["has_more"] is True
        assert [a["id"] for a in pager] == [again["id"], created["id"]]
        with pytest.raises(OpenrailError) as e:
            attestations.list(subject="did:example:x").to_list()
        assert e.value.code == "parameter_invalid"

        # Revoked on chain; revoking again answers it as it is.
        attestations.revoke(active["id"])
        revoked = until(
            "the revocation",
            lambda: attestations.retrieve(active["id"]),
            lambda a: a["status"] != "active",
        )
        assert revoked["status"] == "revoked", revoked
        assert revoked["revoked_at"] is not None
        assert attestations.revoke(active["id"])["status"] == "revoked"
        with pytest.raises(OpenrailError) as e:
            attestations.retrieve("att_nope")
        assert e.value.code == "resource_missing"


def test_a_failed_check_and_an_unverifiable_credential_async(server: Server) -> None:
    wallet = fresh_wallet()

    async def run() -> None:
        async with AsyncOpenrail(server.key, base_url=server.url) as client:
            sessions = client.identity.verifications
            s = await sessions.create(
                type="financial_health",
                subject=wallet,
                simulate={"outcome": "failed", "failure_reason": "the bank statement was unreadable"},
            )
            await sessions.submit(s["id"])
            failed = await until_async(
                "the session",
                lambda: sessions.retrieve(s["id"]),
                lambda v: v["status"] != "processing",
            )
            assert failed["status"] == "requires_input", failed
            assert failed["last_error"] == {
                "code": "verification_failed",
                "reason": "the bank statement was unreadable",
            }
            assert failed["credential_id"] is None
            with pytest.raises(OpenrailError) as e:
                await sessions.credential(s["id"])
            assert e.value.code == "verification_not_verified"
            assert (await sessions.cancel(s["id"]))["status"] == "canceled"
            with pytest.raises(OpenrailError) as e:
                await sessions.submit(s["id"])
            assert e.value.code == "verification_not_submittable"
            with pytest.raises(OpenrailError) as e:
                await sessions.create(type="agent", subject="0x" + "0" * 40)
            assert (e.value.status, e.value.param) == (400, "subject")
            ids = [v["id"] async for v in sessions.list(limit=1)]
            assert s["id"] in ids

            # A credential Openrail issued, changed after signing: it does not verify, and
            # attesting it raises with the verification (an OpenrailError 422 too).
            vc = await client.identity.issue_credential(
                {
                    "@context": ["https://www.w3.org/ns/credentials/v2"],
                    "type": ["VerifiableCredential"],
                    "credentialSubject": {"id": f"did:pkh:eip155:31337:{wallet}"},
                }
            )
            changed = {**vc, "validUntil": "2099-01-01T00:00:00Z"}
            with pytest.raises(CredentialNotVerifiedError) as nv:
                await client.identity.attestations.create(verifiableCredential=changed)
            assert nv.value.status == 422
            assert isinstance(nv.value, OpenrailError)
            assert nv.value.verification["verified"] is False
            assert problem_names(nv.value.verification)
            assert "does not verify" in str(nv.value)

    asyncio.run(run())
