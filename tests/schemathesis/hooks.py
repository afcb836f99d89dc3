"""Schemathesis hooks: the rules of the document's `evm-address` format that JSON Schema
cannot say, applied to the data schemathesis generates as valid.

An address is `0x` and 40 hex digits (the pattern), not the zero address (`not`), and when
its hex mixes upper and lower case it must carry a valid EIP-55 checksum (a keccak-256 of
the address: no JSON Schema keyword computes it). The server refuses a wrong checksum with
400 `parameter_invalid`, as the format's description says, so a generated positive value
with mixed case is written all-lowercase (which carries no checksum and is accepted).
A payment's destination must differ from its source (said in the `PaymentCreate`
description; JSON Schema cannot compare two members): a generated positive payment paying
its own source gets the spare wallet as destination (or source). The zero address, which the schema excludes with `not` (a keyword some of schemathesis's
generators do not apply), is replaced the same way. Negative cases are left untouched.

A mandate's `payees` are distinct and never its payer (said in `MandateCreate`; JSON
Schema cannot compare an array's items with each other or with another member): a
positive case's payees are deduplicated and the payer dropped. A session key pays only
among its mandate's payees and, when the mandate names an agent, has that agent as its
signer (`SessionKeyCreate`; the mandate lives on the server): a positive case's
`allowed_destinations` are mapped onto the payees of the mandate it names and its
`signer` set to the mandate's agent, read with the run's API key
(`OPENRAIL_API_URL`, `OPENRAIL_API_KEY`, exported by scripts/start-dev.sh).

A bank account holds one currency, and a mandate or payment it pays (or a payment it
receives) must be in it (said in `MandateCreate` and `PaymentCreate`; the account lives on
the server): a positive case naming a `ba_…` gets that account's currency, read with the
run's API key. The stateful phase's links carry it, but links schemathesis infers (an id
only) do not.

A generated valid `Idempotency-Key` of a positive case gets a unique suffix (still 1 to 255 visible ASCII
characters): hypothesis draws the same short keys ("0", "!") for many different requests,
which the server rightly answers 422 `idempotency_key_reused` without running them, so the
handlers would go untested behind the replay layer. Replays themselves are tested in
tests/tests/agentic_api.rs and hostile_input.rs.
"""

import json
import os
import re
import urllib.parse
import urllib.request
import uuid

import schemathesis

_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")
_ZERO = "0x" + "0" * 40
_KEY = re.compile(r"^[!-~]{1,255}$")
# anvil's development account 3 (`openrail dev`'s spare wallet): never a payer, source
# or contract there.
_SPARE = "0x90f79bf6eb2c4f870365e785982e1f101e93b906"
# anvil's development account 4.
_OTHER = "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65"


def _unmix(value):
    if isinstance(value, str) and _ADDRESS.match(value):
        if value == _ZERO:
            return _SPARE
        hexpart = value[2:]
        if hexpart != hexpart.lower() and hexpart != hexpart.upper():
            return "0x" + hexpart.lower()
        return value
    if isinstance(value, dict):
        return {k: _unmix(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unmix(v) for v in value]
    return value


@schemathesis.hook
def before_call(context, case, kwargs):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return
    headers = case.headers or {}
    for name in list(headers):
        value = headers[name]
        if name.lower() == "idempotency-key" and isinstance(value, str) and _KEY.match(value):
            headers[name] = value[:200] + "-" + uuid.uuid4().hex
    if isinstance(case.body, (dict, list)):
        body = _unmix(case.body)
        if (
            isinstance(body, dict)
            and isinstance(body.get("source"), dict)
            and isinstance(body.get("destination"), dict)
            and str(body["source"].get("id", "")).lower()
            == str(body["destination"].get("address", "")).lower()
        ):
            if body["destination"]["address"].lower() == _SPARE:
                body["source"]["id"] = _OTHER
            else:
                body["destination"]["address"] = _SPARE
        if isinstance(body, dict) and case.method.upper() == "POST":
            if case.path == "/v1/mandates":
                _signed_payees(body)
                _in_bank_currency(body, [body.get("payer_account_id")])
            elif case.path == "/v1/session-keys":
                _within_mandate(body)
            elif case.path == "/v1/payments":
                legs = [body.get("source"), body.get("destination")]
                _in_bank_currency(
                    body,
                    [leg.get("id") or leg.get("address") for leg in legs if isinstance(leg, dict)],
                )
        case.body = body


def _signed_payees(body):
    """Payees distinct (case-insensitively) and without the payer."""
    payees = body.get("payees")
    if not isinstance(payees, list):
        return
    payer = str(body.get("payer_account_id", "")).lower()
    seen, kept = set(), []
    for p in payees:
        key = p.lower() if isinstance(p, str) else p
        if key == payer or key in seen:
            continue
        seen.add(key)
        kept.append(p)
    body["payees"] = kept


def _read(collection, prefix, object_id):
    """The object `object_id` of `collection` as the API shows it, or None."""
    url, key = os.environ.get("OPENRAIL_API_URL"), os.environ.get("OPENRAIL_API_KEY")
    if not url or not key or not isinstance(object_id, str) or not object_id.startswith(prefix):
        return None
    req = urllib.request.Request(
        f"{url}/v1/{collection}/{urllib.parse.quote(object_id, safe='')}",
        headers={"Authorization": f"Bearer {key}"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)
    except Exception:
        return None


def _mandate(mandate_id):
    """The mandate `mandate_id` as the API shows it, or None."""
    return _read("mandates", "man_", mandate_id)


def _in_bank_currency(body, parties):
    """The body's currency set to that of the first bank account among `parties`."""
    for party in parties:
        account = _read("bank-accounts", "ba_", party)
        if account and isinstance(account.get("currency"), str) and "currency" in body:
            body["currency"] = account["currency"]
            return


def _within_mandate(body):
    """A key's destinations among its mandate's payees, its signer the mandate's agent."""
    mandate = _mandate(body.get("mandate_id"))
    if not mandate:
        return
    payees = mandate.get("payees") or []
    dests = body.get("allowed_destinations")
    if payees and isinstance(dests, list):
        signed = {p.lower(): p for p in payees}
        mapped = [
            signed.get(d.lower(), payees[i % len(payees)]) if isinstance(d, str) else d
            for i, d in enumerate(dests)
        ]
        body["allowed_destinations"] = list(dict.fromkeys(mapped))
    agent = mandate.get("agent")
    if agent and body.get("signer") is not None:
        body["signer"] = agent
