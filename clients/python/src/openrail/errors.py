"""Errors the SDK raises: the API's problem documents, no answer at all, a bad webhook."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from typing import Any, cast

from .models import VerificationResult

__all__ = [
    "OpenrailError",
    "CredentialNotVerifiedError",
    "OpenrailConnectionError",
    "WebhookVerificationError",
    "parse_retry_after",
]


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


class OpenrailError(Exception):
    """An answer of the API with status 4xx/5xx: an RFC 9457 problem with a stable ``code``.

    Attributes:
        status: the HTTP status.
        code: the stable code to branch on (``allowance_exceeded``, ``resource_missing``, …);
            ``http_<status>`` when the body was no problem document.
        param: the field (or header) at fault, if any (``amount``, ``source.id``,
            ``Idempotency-Key``).
        detail: a sentence for people.
        title, type: the kind of problem (its title and ``type`` URI).
        request_id: the request's id (``req_…``), from the body or the ``Request-Id`` header.
        pull_id: declines: the declined pull, still readable (``pull_…``).
        remaining, resets_at: ``allowance_exceeded``: what may still be pulled this epoch
            (``"10.00"``) and when the epoch resets (RFC 3339).
        retry_after: seconds from a ``Retry-After`` header, if any.
        problem: the whole problem document (``{}`` when the body was no JSON object).
        body: the raw body text.
    """

    status: int
    code: str
    param: str | None
    detail: str | None
    title: str | None
    type: str | None
    request_id: str | None
    pull_id: str | None
    remaining: str | None
    resets_at: str | None
    retry_after: float | None
    problem: dict[str, Any]
    body: str

    def __init__(
        self,
        status: int,
        problem: Mapping[str, Any] | None,
        headers: Mapping[str, str] | None = None,
        body: str = "",
    ) -> None:
        p: dict[str, Any] = dict(problem) if problem is not None else {}
        headers = headers or {}
        self.status = status
        self.code = _str(p.get("code")) or f"http_{status}"
        self.param = _str(p.get("param"))
        self.detail = _str(p.get("detail"))
        self.title = _str(p.get("title"))
        self.type = _str(p.get("type"))
        self.request_id = _str(p.get("request_id")) or _header(headers, "request-id")
        self.pull_id = _str(p.get("pull_id"))
        self.remaining = _str(p.get("remaining"))
        self.resets_at = _str(p.get("resets_at"))
        self.retry_after = parse_retry_after(_header(headers, "retry-after"))
        self.problem = p
        self.body = body
        message = f"{status} {self.code}"
        if self.detail:
            message += f": {self.detail}"
        if self.request_id:
            message += f" ({self.request_id})"
        super().__init__(message)


class CredentialNotVerifiedError(OpenrailError):
    """A credential posted to be attested did not verify: the API's 422 whose body is the
    verification, not a problem document (so ``code`` is ``http_422``). ``verification``
    is that ``VerificationResult``: its ``problemDetails`` say why."""

    verification: VerificationResult

    def __init__(
        self,
        verification: Mapping[str, Any],
        headers: Mapping[str, str] | None = None,
        body: str = "",
    ) -> None:
        super().__init__(422, verification, headers, body)
        self.verification = cast(VerificationResult, dict(verification))
        names = [
            str(p.get("type", "")).rsplit("#", 1)[-1]
            for p in verification.get("problemDetails", [])
            if isinstance(p, Mapping)
        ]
        self.args = (f"422: the credential does not verify ({', '.join(names)})",)


class OpenrailConnectionError(Exception):
    """The request never got an answer (connection refused or reset, DNS, timeout), after
    all retries. ``__cause__`` is the last ``httpx`` error."""


class WebhookVerificationError(Exception):
    """Webhook verification failed: a missing header, a bad signature, or a timestamp out of
    tolerance."""


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        for k, v in headers.items():
            if k.lower() == name:
                return v
    return value


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value: delta-seconds or an HTTP date; ``None``
    when absent or unreadable."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        if when is None:
            return None
        return max(0.0, when.timestamp() - (time.time() if now is None else now))
    if seconds != seconds or seconds < 0 or seconds == float("inf"):  # NaN, negative, inf
        return None
    return seconds
