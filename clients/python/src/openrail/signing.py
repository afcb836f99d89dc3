"""EIP-712 signing with ``eth-account``: a payer's consent and an agent's ``DebitPull``.

- A wallet payer (of a mandate) or source (of a payment) signs the
  ``authorization.typed_data`` the API answers: exactly what ``eth_signTypedData_v4``
  takes, with uint fields as decimal strings. :func:`sign_typed_data` signs it; the
  signature goes to ``POST /v1/mandates/{id}/authorize`` or
  ``POST /v1/payments/{id}/authorize`` as ``{"signature": "0x…"}``.
- An agent whose address is a session key's ``signer`` signs
  ``DebitPull(bytes32 keyId,address destination,uint256 amount,uint256 nonce,uint256 deadline)``
  in the key's ``eip712_domain`` for every pull: :func:`sign_debit_pull`, with the amount
  in token units (6 decimals: ``to_token_units("5.00") == 5_000_000``).

A signer is an ``eth_account`` ``LocalAccount`` (:func:`account_from_private_key`) or any
callable that takes the ``eth_signTypedData_v4`` document (a ``dict``, uint fields as
decimal strings) and returns the 65-byte signature as ``0x`` hex — a hardware wallet, a
KMS, a browser wallet behind your server.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Union

from eth_account import Account
from eth_account.signers.local import LocalAccount

from .models import Eip712Domain, Mandate, Payment, TypedData

__all__ = [
    "DEBIT_PULL_TYPES",
    "EIP712_DOMAIN_TYPE",
    "TOKEN_DECIMALS",
    "Signer",
    "account_from_private_key",
    "consent_typed_data",
    "debit_pull_typed_data",
    "recover_typed_data_signer",
    "sign_debit_pull",
    "sign_typed_data",
    "to_token_units",
]

Signer = Union[LocalAccount, Callable[[dict[str, Any]], str]]
"""An ``eth_account`` ``LocalAccount``, or a callable signing an ``eth_signTypedData_v4``
document and returning the signature as ``0x`` hex."""

TOKEN_DECIMALS = 6
"""Token decimals of the test stablecoins (``5000000`` token units are 5.00)."""

EIP712_DOMAIN_TYPE: list[dict[str, str]] = [
    {"name": "name", "type": "string"},
    {"name": "version", "type": "string"},
    {"name": "chainId", "type": "uint256"},
    {"name": "verifyingContract", "type": "address"},
]
"""The ``EIP712Domain`` of Openrail's domains (name, version, chainId, verifyingContract)."""

DEBIT_PULL_TYPES: dict[str, list[dict[str, str]]] = {
    "DebitPull": [
        {"name": "keyId", "type": "bytes32"},
        {"name": "destination", "type": "address"},
        {"name": "amount", "type": "uint256"},
        {"name": "nonce", "type": "uint256"},
        {"name": "deadline", "type": "uint256"},
    ],
}
"""The on-chain ``DebitPull`` struct an agent signs for a key with a ``signer``."""

_INT = re.compile(r"^u?int\d*$")
_AMOUNT = re.compile(r"^(\d+)(?:\.(\d+))?$")


def account_from_private_key(private_key: str) -> LocalAccount:
    """An ``eth_account`` account from a ``0x`` private key (for servers and tests; never
    ship keys to browsers)."""
    account: LocalAccount = Account.from_key(private_key)
    return account


def to_token_units(amount: str | int | float | Decimal, decimals: int = TOKEN_DECIMALS) -> int:
    """Major units (``"5.00"``, ``5``, ``Decimal("0.5")``) as token units, exactly (no float
    arithmetic): ``to_token_units("5.00") == 5_000_000``.

    Raises ``ValueError`` for negative, exponent, empty or malformed amounts, and for more
    than ``decimals`` significant decimals.
    """
    if isinstance(amount, bool):
        raise ValueError(f"not a decimal amount: {amount!r}")
    if isinstance(amount, int):
        text = str(amount)
    elif isinstance(amount, float):
        text = repr(amount)
        if amount != amount or amount in (float("inf"), float("-inf")) or "e" in text.lower():
            raise ValueError(f"write {amount!r} as a decimal string")
    elif isinstance(amount, Decimal):
        text = format(amount, "f")
    else:
        text = amount.strip()
    m = _AMOUNT.match(text)
    if not m:
        raise ValueError(f"not a decimal amount: {amount!r}")
    whole, frac = m.group(1), (m.group(2) or "").rstrip("0")
    if len(frac) > decimals:
        raise ValueError(f"more than {decimals} decimals: {text}")
    return int(whole + frac.ljust(decimals, "0"))


def _with_ints(value: Any, type_: str, types: Mapping[str, Any]) -> Any:
    """``value`` of EIP-712 type ``type_`` with its integer members as ``int``s (the API
    writes uint256 values as decimal strings)."""
    if type_.endswith("]"):
        inner = type_[: type_.rindex("[")]
        return [_with_ints(v, inner, types) for v in value] if isinstance(value, list) else value
    if type_ in types and isinstance(value, Mapping):
        out = dict(value)
        for field in types[type_]:
            name = field["name"]
            if name in out:
                out[name] = _with_ints(out[name], field["type"], types)
        return out
    if _INT.match(type_) and isinstance(value, str):
        return int(value, 0) if value.lower().startswith("0x") else int(value)
    return value


def _for_eth_account(typed_data: Mapping[str, Any]) -> dict[str, Any]:
    types = typed_data["types"]
    domain_type = types.get("EIP712Domain", EIP712_DOMAIN_TYPE)
    return {
        "types": {**types, "EIP712Domain": domain_type},
        "primaryType": typed_data["primaryType"],
        "domain": _with_ints(dict(typed_data["domain"]), "EIP712Domain", {"EIP712Domain": domain_type}),
        "message": _with_ints(dict(typed_data["message"]), typed_data["primaryType"], types),
    }


def sign_typed_data(signer: Signer, typed_data: TypedData | Mapping[str, Any]) -> str:
    """Signs an ``eth_signTypedData_v4`` document (the API's ``authorization.typed_data``)
    with ``signer``; returns the 65-byte signature as ``0x`` hex (lowercase)."""
    if isinstance(signer, LocalAccount):
        signed = signer.sign_typed_data(full_message=_for_eth_account(typed_data))
        return "0x" + bytes(signed.signature).hex()
    signature = signer(dict(typed_data))
    if not isinstance(signature, str) or not re.fullmatch(r"0x[0-9a-fA-F]{130}", signature):
        raise ValueError("a signer must return 65 bytes as 0x hex")
    return signature


def consent_typed_data(obj: Mandate | Payment) -> TypedData:
    """The ``authorization.typed_data`` a mandate's payer or a payment's source wallet signs.
    Raises ``ValueError`` when the object needs no payer signature (a bank-account payer,
    or already authorized and no longer carrying it)."""
    auth = obj["authorization"]
    if auth is None or auth["method"] != "payer_signature":
        raise ValueError(f"{obj['id']} needs no payer signature")
    return auth["typed_data"]


def recover_typed_data_signer(typed_data: TypedData | Mapping[str, Any], signature: str) -> str:
    """The checksummed address that signed ``typed_data`` (to check a signature locally)."""
    from eth_account.messages import encode_typed_data

    message = encode_typed_data(full_message=_for_eth_account(typed_data))
    address: str = Account.recover_message(message, signature=signature)
    return address


def debit_pull_typed_data(
    *,
    domain: Eip712Domain | Mapping[str, Any],
    key_id: str,
    destination: str,
    amount: int,
    nonce: int,
    deadline: int,
) -> dict[str, Any]:
    """The ``eth_signTypedData_v4`` document of a ``DebitPull`` (uint fields as decimal
    strings, like the API's own typed data). ``amount`` is in token units."""
    return {
        "types": {"EIP712Domain": EIP712_DOMAIN_TYPE, **DEBIT_PULL_TYPES},
        "primaryType": "DebitPull",
        "domain": {
            "name": domain["name"],
            "version": domain["version"],
            "chainId": domain["chainId"],
            "verifyingContract": domain["verifyingContract"],
        },
        "message": {
            "keyId": key_id,
            "destination": destination,
            "amount": str(amount),
            "nonce": str(nonce),
            "deadline": str(deadline),
        },
    }


def sign_debit_pull(
    signer: Signer,
    *,
    domain: Eip712Domain | Mapping[str, Any],
    key_id: str,
    destination: str,
    amount: int,
    nonce: int,
    deadline: int,
) -> str:
    """The agent's EIP-712 signature of
    ``DebitPull(bytes32 keyId,address destination,uint256 amount,uint256 nonce,uint256 deadline)``.

    Args:
        domain: the key's ``eip712_domain`` (present on keys with a ``signer``).
        key_id: the key's ``onchain.id`` (bytes32, ``0x`` hex).
        destination: the wallet paid.
        amount: token units (see :func:`to_token_units`).
        nonce: a number not used before on this key.
        deadline: unix seconds after which the signature is void.
    """
    for name, n in (("amount", amount), ("nonce", nonce), ("deadline", deadline)):
        if isinstance(n, bool) or not isinstance(n, int) or n < 0 or n >= 2**256:
            raise ValueError(f"{name} must be an integer in uint256: {n!r}")
    return sign_typed_data(
        signer,
        debit_pull_typed_data(
            domain=domain,
            key_id=key_id,
            destination=destination,
            amount=amount,
            nonce=nonce,
            deadline=deadline,
        ),
    )
