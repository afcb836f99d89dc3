"""A holder for the tests: an Ed25519 key named as a ``did:key``, signing a presentation
with an ``eddsa-jcs-2022`` Data Integrity proof (Data Integrity EdDSA Cryptosuites v1.0,
§3.3: the proof configuration and the document in JCS, each hashed with SHA-256, the two
hashes signed), so ``verify_presentation`` is tested on a presentation the server did not
make. Ed25519 from pycryptodome (which eth-account already installs). Test code only: the
SDK itself does not sign credentials."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone
from typing import Any

from Crypto.PublicKey import ECC
from Crypto.Signature import eddsa

ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def base58(data: bytes) -> str:
    """base58btc (Bitcoin's alphabet)."""
    n = int.from_bytes(data, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = ALPHABET[r] + out
    zeros = len(data) - len(data.lstrip(b"\0"))
    return "1" * zeros + out


def jcs(value: Any) -> bytes:
    """RFC 8785 for the JSON these tests make (strings, integers, booleans, null, lists,
    objects with ASCII keys)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


class Holder:
    def __init__(self) -> None:
        self._key = ECC.generate(curve="ed25519")
        raw = self._key.public_key().export_key(format="raw")
        # did:key: multibase base58btc of the multicodec ed25519-pub (0xed 0x01) and the key.
        multikey = "z" + base58(b"\xed\x01" + raw)
        self.did = f"did:key:{multikey}"
        self.verification_method = f"{self.did}#{multikey}"

    def sign_presentation(
        self, unsigned: dict[str, Any], challenge: str, domain: str
    ) -> dict[str, Any]:
        """``unsigned`` with a proof of purpose ``authentication`` for ``challenge`` and
        ``domain``."""
        created = datetime.now(timezone.utc) - timedelta(seconds=5)
        proof: dict[str, Any] = {
            "type": "DataIntegrityProof",
            "cryptosuite": "eddsa-jcs-2022",
            "created": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "verificationMethod": self.verification_method,
            "proofPurpose": "authentication",
            "challenge": challenge,
            "domain": domain,
        }
        config = {**proof, "@context": unsigned["@context"]}
        data = hashlib.sha256(jcs(config)).digest() + hashlib.sha256(jcs(unsigned)).digest()
        signature = eddsa.new(self._key, "rfc8032").sign(data)
        return {**unsigned, "proof": {**proof, "proofValue": "z" + base58(signature)}}
