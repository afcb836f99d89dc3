"""Standard Webhooks verification of Openrail's deliveries (the same scheme as PyPI
``standardwebhooks``, which the tests check it against both ways).

``webhook-signature`` holds space-separated ``v1,<base64>`` entries, each the HMAC-SHA256
of ``{webhook-id}.{webhook-timestamp}.{body}`` keyed with the base64-decoded secret after
``whsec_``; one matching entry suffices (during a rotation both secrets sign). Verify the
raw body bytes, before any JSON parsing::

    event = Webhook(secret).verify(request_body_bytes, request.headers)
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from collections.abc import Mapping
from typing import cast

from .errors import WebhookVerificationError
from .models import Event

__all__ = ["Webhook", "verify_webhook", "DEFAULT_TOLERANCE_SECONDS"]

DEFAULT_TOLERANCE_SECONDS = 300
"""How far ``webhook-timestamp`` may be from now, either way (Standard Webhooks' 5 minutes)."""

_B64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_TIMESTAMP = re.compile(r"^\d{1,15}$")


class Webhook:
    """A webhook endpoint's secret (``whsec_…``), to verify (and, in tests, sign) deliveries."""

    def __init__(self, secret: str) -> None:
        b64 = secret[len("whsec_") :] if secret.startswith("whsec_") else secret
        if not _B64.match(b64):
            raise ValueError("a webhook secret is whsec_ and base64")
        try:
            self._key = base64.b64decode(b64, validate=True)
        except binascii.Error as e:
            raise ValueError("a webhook secret is whsec_ and base64") from e
        if not self._key:
            raise ValueError("empty webhook secret")

    def sign(self, msg_id: str, timestamp: int | str, body: str | bytes) -> str:
        """The ``v1,<base64>`` signature of one message."""
        payload = body.encode("utf-8") if isinstance(body, str) else body
        mac = hmac.new(self._key, f"{msg_id}.{timestamp}.".encode() + payload, hashlib.sha256)
        return "v1," + base64.b64encode(mac.digest()).decode("ascii")

    def verify(
        self,
        body: str | bytes,
        headers: Mapping[str, str],
        *,
        tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
        now: int | None = None,
    ) -> Event:
        """Verifies one delivery and returns its parsed event.

        ``headers`` is any mapping (a ``dict``, ``httpx.Headers``, a framework's request
        headers); names are matched case-insensitively. Raises
        :class:`~openrail.errors.WebhookVerificationError` on a missing header, an invalid
        or out-of-tolerance ``webhook-timestamp``, or no matching signature.
        """
        msg_id = _header(headers, "webhook-id")
        timestamp = _header(headers, "webhook-timestamp")
        signatures = _header(headers, "webhook-signature")
        if not msg_id or not timestamp or not signatures:
            raise WebhookVerificationError(
                "missing webhook-id, webhook-timestamp or webhook-signature"
            )
        if not _TIMESTAMP.match(timestamp):
            raise WebhookVerificationError("invalid webhook-timestamp")
        current = int(time.time()) if now is None else now
        ts = int(timestamp)
        if ts < current - tolerance_seconds:
            raise WebhookVerificationError("webhook-timestamp too old")
        if ts > current + tolerance_seconds:
            raise WebhookVerificationError("webhook-timestamp too new")
        expected = base64.b64decode(self.sign(msg_id, timestamp, body)[3:])
        for entry in signatures.split(" "):
            version, _, sig = entry.partition(",")
            if version != "v1" or not sig:
                continue
            try:
                given = base64.b64decode(sig, validate=True)
            except binascii.Error:
                continue
            if hmac.compare_digest(given, expected):
                text = body if isinstance(body, str) else body.decode("utf-8")
                return cast(Event, json.loads(text))
        raise WebhookVerificationError("no matching signature")


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is not None:
        return value
    for k, v in headers.items():
        if k.lower() == name:
            return v
    return None


def verify_webhook(
    secret: str,
    body: str | bytes,
    headers: Mapping[str, str],
    *,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: int | None = None,
) -> Event:
    """``Webhook(secret).verify(body, headers, …)``."""
    return Webhook(secret).verify(body, headers, tolerance_seconds=tolerance_seconds, now=now)
