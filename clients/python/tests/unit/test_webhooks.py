"""Our Standard Webhooks verification against the reference implementation (PyPI
``standardwebhooks``): each signs what the other verifies, and each refuses what the other
would refuse."""

from __future__ import annotations

import base64
import json
import os
import time
from datetime import datetime, timezone

import httpx
import pytest
from standardwebhooks.webhooks import Webhook as Reference

from openrail import Webhook, WebhookVerificationError, verify_webhook

SECRET = "whsec_" + base64.b64encode(os.urandom(24)).decode()
OTHER = "whsec_" + base64.b64encode(os.urandom(24)).decode()
BODY = json.dumps(
    {"id": "evt_1", "object": "event", "type": "debit_pull.authorized", "data": {"object": {"amount": "5.00"}}}
)
MSG_ID = "evt_1"


def headers(sig: str, ts: int, msg_id: str = MSG_ID) -> dict[str, str]:
    return {"webhook-id": msg_id, "webhook-timestamp": str(ts), "webhook-signature": sig}


def now() -> int:
    return int(time.time())


def at(ts: int) -> datetime:
    return datetime.fromtimestamp(ts, tz=timezone.utc)


def test_the_reference_signs_we_verify() -> None:
    ts = now()
    sig = Reference(SECRET).sign(MSG_ID, at(ts), BODY)
    event = Webhook(SECRET).verify(BODY, headers(sig, ts))
    assert event["id"] == "evt_1"
    # Bytes and any header mapping (httpx.Headers, mixed case) work too.
    mixed = {k.title(): v for k, v in headers(sig, ts).items()}
    assert verify_webhook(SECRET, BODY.encode(), mixed)["type"] == "debit_pull.authorized"
    assert verify_webhook(SECRET, BODY.encode(), httpx.Headers(headers(sig, ts)))["id"] == "evt_1"


def test_we_sign_the_reference_verifies_byte_identical() -> None:
    ts = now()
    ours = Webhook(SECRET).sign(MSG_ID, ts, BODY)
    assert ours == Reference(SECRET).sign(MSG_ID, at(ts), BODY)
    assert Reference(SECRET).verify(BODY, headers(ours, ts))["id"] == "evt_1"


def test_a_tampered_body_another_id_or_another_secret_is_refused_by_both() -> None:
    ts = now()
    sig = Webhook(SECRET).sign(MSG_ID, ts, BODY)
    tampered = BODY.replace("5.00", "500.00")
    for body, h, secret in [
        (tampered, headers(sig, ts), SECRET),
        (BODY, headers(sig, ts, "evt_2"), SECRET),
        (BODY, headers(sig, ts), OTHER),
    ]:
        with pytest.raises(WebhookVerificationError, match="no matching signature"):
            Webhook(secret).verify(body, h)
        with pytest.raises(Exception):
            Reference(secret).verify(body, h)


def test_a_timestamp_outside_the_tolerance_is_refused_by_both_inside_it_accepted() -> None:
    for skew in (-301, 301, -3600):
        ts = now() + skew
        sig = Reference(SECRET).sign(MSG_ID, at(ts), BODY)
        with pytest.raises(WebhookVerificationError, match="too (old|new)"):
            Webhook(SECRET).verify(BODY, headers(sig, ts))
        with pytest.raises(Exception):
            Reference(SECRET).verify(BODY, headers(sig, ts))
    ts = now() - 200
    sig = Reference(SECRET).sign(MSG_ID, at(ts), BODY)
    Webhook(SECRET).verify(BODY, headers(sig, ts))
    with pytest.raises(WebhookVerificationError, match="too old"):
        Webhook(SECRET).verify(BODY, headers(sig, ts), tolerance_seconds=100)
    assert Webhook(SECRET).verify(BODY, headers(sig, ts), now=ts + 10)["id"] == "evt_1"


def test_during_a_rotation_either_secret_verifies() -> None:
    ts = now()
    both = f"{Webhook(OTHER).sign(MSG_ID, ts, BODY)} {Webhook(SECRET).sign(MSG_ID, ts, BODY)}"
    Webhook(SECRET).verify(BODY, headers(both, ts))
    Webhook(OTHER).verify(BODY, headers(both, ts))
    Reference(SECRET).verify(BODY, headers(both, ts))
    third = "whsec_" + base64.b64encode(os.urandom(24)).decode()
    with pytest.raises(WebhookVerificationError, match="no matching signature"):
        Webhook(third).verify(BODY, headers(both, ts))


def test_missing_headers_other_versions_and_malformed_secrets_are_refused() -> None:
    ts = now()
    sig = Webhook(SECRET).sign(MSG_ID, ts, BODY)
    with pytest.raises(WebhookVerificationError, match="missing"):
        Webhook(SECRET).verify(BODY, {"webhook-id": MSG_ID, "webhook-timestamp": str(ts)})
    with pytest.raises(WebhookVerificationError, match="no matching"):
        Webhook(SECRET).verify(BODY, headers(sig.replace("v1,", "v2,"), ts))
    with pytest.raises(WebhookVerificationError, match="invalid webhook-timestamp"):
        Webhook(SECRET).verify(BODY, {**headers(sig, ts), "webhook-timestamp": "soon"})
    with pytest.raises(WebhookVerificationError, match="no matching"):
        Webhook(SECRET).verify(BODY, headers("v1,not*base64", ts))
    for bad in ("whsec_not base64!", "whsec_", ""):
        with pytest.raises(ValueError):
            Webhook(bad)
