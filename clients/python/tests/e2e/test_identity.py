"""Identity against ``openrail dev``: Openrail issues a credential, which verifies (also on
a client without a key) until it is revoked, seen through the public status list; a verdict
of "not verified" is returned, a document that is no credential raises; a presentation
verifies once for a challenge of this server (sync and async)."""

from __future__ import annotations

import asyncio
import base64
import gzip
import time
from typing import Any

import pytest

from openrail import AsyncOpenrail, Openrail, OpenrailError, problem_names

from .conftest import Server
from .holder import Holder

ALUMNI: dict[str, Any] = {
    "@context": [
        "https://www.w3.org/ns/credentials/v2",
        "https://www.w3.org/ns/credentials/examples/v2",
    ],
    "type": ["VerifiableCredential", "ExampleAlumniCredential"],
    "credentialSubject": {"id": "did:example:alice", "alumniOf": "Example University"},
}


def bit(encoded_list: str, index: int) -> bool:
    """Bit ``index`` of a status list's ``encodedList`` (multibase base64url of GZIP; bit 0
    is the first byte's highest)."""
    assert encoded_list.startswith("u")
    body = encoded_list[1:]
    data = gzip.decompress(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    return bool((data[index >> 3] >> (7 - (index & 7))) & 1)


def test_an_issued_credential_verifies_until_revoked(server: Server) -> None:
    with Openrail(server.key, base_url=server.url) as client, Openrail(
        None, base_url=server.url
    ) as anonymous:
        vc = client.identity.issue_credential(ALUMNI)
        assert vc["issuer"].startswith("did:key:z6Mk")
        assert vc["proof"]["cryptosuite"] == "eddsa-rdfc-2022"
        status = vc["credentialStatus"]

        ok = client.identity.verify_credential(vc)
        assert ok["verified"] is True, ok
        assert ok["problemDetails"] == []
        assert ok["results"]["status"][0]["status"] is False
        # A client without a key verifies too, and may do nothing else.
        assert anonymous.identity.verify_credential(vc)["verified"] is True
        with pytest.raises(OpenrailError) as e:
            anonymous.identity.create_challenge()
        assert e.value.status == 401

        # A changed claim: a verdict, not an exception.
        changed = {**vc, "credentialSubject": {**vc["credentialSubject"], "alumniOf": "Elsewhere"}}
        bad = client.identity.verify_credential(changed)
        assert bad["verified"] is False
        assert problem_names(bad), bad
        # No credential at all: 400 naming the parameter.
        with pytest.raises(OpenrailError) as e:
            client.identity.verify_credential({"hello": 1})
        assert (e.value.status, e.value.code, e.value.param) == (
            400,
            "parameter_invalid",
            "verifiableCredential",
        )

        # The status list: public, signed by the same issuer, a credential that verifies.
        list_id = status["statusListCredential"].rsplit("/", 1)[-1]
        assert list_id.startswith("sl_")
        lst = anonymous.identity.status_list(list_id)
        assert lst["issuer"] == vc["issuer"]
        assert lst["credentialSubject"]["statusPurpose"] == "revocation"
        assert client.identity.verify_credential(lst)["verified"] is True
        index = int(status["statusListIndex"])
        assert not bit(lst["credentialSubject"]["encodedList"], index)

        # Revoked: the record, the list's bit, and RANGE_ERROR.
        record = client.identity.revoke_credential(vc["id"])
        assert (record["id"], record["status"], record["type"]) == (
            vc["id"],
            "revoked",
            "ExampleAlumniCredential",
        )
        assert (record["status_list_id"], record["status_list_index"]) == (list_id, index)
        assert record["revoked_at"] is not None
        after = client.identity.status_list(list_id)
        assert bit(after["credentialSubject"]["encodedList"], index)
        assert problem_names(client.identity.verify_credential(vc)) == ["RANGE_ERROR"]
        with pytest.raises(OpenrailError) as e:
            client.identity.revoke_credential("urn:uuid:nobody")
        assert e.value.code == "resource_missing"
        with pytest.raises(OpenrailError) as e:
            client.identity.status_list("sl_nope")
        assert e.value.status == 404


def test_a_presentation_verifies_once_for_a_challenge_of_this_server(server: Server) -> None:
    holder = Holder()

    async def run() -> None:
        async with AsyncOpenrail(server.key, base_url=server.url) as client:
            credential = await client.identity.issue_credential(
                {**ALUMNI, "credentialSubject": {"id": holder.did, "alumniOf": "Example U"}}
            )
            unsigned: dict[str, Any] = {
                "@context": ["https://www.w3.org/ns/credentials/v2"],
                "type": ["VerifiablePresentation"],
                "holder": holder.did,
                "verifiableCredential": [credential],
            }
            ch = await client.identity.create_challenge(domain="shop.example")
            assert ch["challenge"].startswith("chl_") and ch["domain"] == "shop.example"
            assert ch["expires_at"] > time.time()
            vp = holder.sign_presentation(unsigned, ch["challenge"], "shop.example")
            ok = await client.identity.verify_presentation(vp, challenge=ch["challenge"])
            assert ok["verified"] is True, ok
            # Used up: the same presentation again is refused.
            replay = await client.identity.verify_presentation(vp, challenge=ch["challenge"])
            assert problem_names(replay) == ["INVALID_CHALLENGE_ERROR"]
            # A proof for another domain than the challenge's.
            c2 = await client.identity.create_challenge(domain="shop.example")
            elsewhere = holder.sign_presentation(unsigned, c2["challenge"], "evil.example")
            r = await client.identity.verify_presentation(
                elsewhere, challenge=c2["challenge"], domain="evil.example"
            )
            assert problem_names(r) == ["INVALID_DOMAIN_ERROR"]
            # A changed presentation fails its proof.
            c3 = await client.identity.create_challenge()
            signed = holder.sign_presentation(unsigned, c3["challenge"], "shop.example")
            tampered = {**signed, "holder": "did:example:mallory"}
            r = await client.identity.verify_presentation(
                tampered, challenge=c3["challenge"], domain="shop.example"
            )
            assert r["verified"] is False and problem_names(r)

    asyncio.run(run())
