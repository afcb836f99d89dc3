"""The transport: one request with its idempotency key, retries and typed errors, for the
sync (``httpx.Client``) and the async (``httpx.AsyncClient``) client alike."""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal
from urllib.parse import quote

import httpx

from ._version import __version__
from .errors import CredentialNotVerifiedError, OpenrailConnectionError, OpenrailError
from .models import QUERY_NAMES

Method = Literal["GET", "POST", "DELETE"]

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
"""What ``openrail dev`` serves."""

# Retried with the same Idempotency-Key: nothing ran twice. A 409 only when its code is
# `idempotency_in_progress`: other conflicts (`payment_not_cancelable`, …) are final.
RETRY_STATUSES = frozenset({409, 429, 502, 503, 504})


def retryable(error: OpenrailError) -> bool:
    """Whether an error answer may be retried with the same idempotency key."""
    return error.status in RETRY_STATUSES and (
        error.status != 409 or error.code == "idempotency_in_progress"
    )


def is_verdict(data: object) -> bool:
    """Whether a body is a verification's verdict (VC API): ``verified`` and no ``code``."""
    return isinstance(data, dict) and "verified" in data and "code" not in data


def seg(value: str) -> str:
    """One path segment, percent-encoded (ids never need it; hostile input might)."""
    return quote(value, safe="")


def _json_default(value: object) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def new_idempotency_key() -> str:
    """A fresh random ``Idempotency-Key`` (``orc_`` and a UUID4)."""
    return f"orc_{uuid.uuid4()}"


@dataclass(frozen=True)
class Prepared:
    method: Method
    path: str
    params: dict[str, str]
    headers: dict[str, str]
    content: bytes | None


class BaseTransport:
    """What the sync and async transports share: the request as sent, the answer as read,
    and how long to wait before the next attempt."""

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        max_retries: int,
        timeout: float,
        max_retry_delay: float,
    ) -> None:
        if api_key is not None and not api_key:
            raise ValueError("api_key is required (None: a client without a key)")
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.api_key = api_key
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.max_retries = max_retries
        self.timeout = timeout
        self.max_retry_delay = max_retry_delay

    def prepare(
        self,
        method: Method,
        path: str,
        query: Mapping[str, object] | None,
        body: Mapping[str, object] | None,
        idempotency_key: str | None,
        wait: int | None,
    ) -> Prepared:
        headers = {
            "Accept": "application/json",
            "User-Agent": f"openrail-python/{__version__}",
        }
        if self.api_key is not None:
            headers["Authorization"] = f"Bearer {self.api_key}"
        if method != "GET":
            # One key per call: every retry of this call below sends the same one.
            headers["Idempotency-Key"] = idempotency_key or new_idempotency_key()
        content: bytes | None = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            clean = {k: v for k, v in body.items() if v is not None}
            content = json.dumps(clean, default=_json_default, separators=(",", ":")).encode()
        if wait is not None:
            headers["Prefer"] = f"wait={int(wait)}"
        params: dict[str, str] = {}
        for k, v in (query or {}).items():
            if v is None:
                continue
            params[QUERY_NAMES.get(k, k)] = (
                ("true" if v else "false") if isinstance(v, bool) else str(v)
            )
        return Prepared(method, path, params, headers, content)

    def read(
        self, response: httpx.Response, verdict: bool = False, not_verified: bool = False
    ) -> Any:
        """The answer's JSON, or raises ``OpenrailError`` for 4xx/5xx; with ``verdict``, a
        422 whose body is a verification's verdict (``verified``, no ``code``) is an answer;
        with ``not_verified``, it raises :class:`CredentialNotVerifiedError` carrying it."""
        text = response.text
        data: Any = None
        if text:
            try:
                data = json.loads(text)
            except ValueError:
                data = None
        if response.is_success:
            return data
        if verdict and response.status_code == 422 and is_verdict(data):
            return data
        if not_verified and response.status_code == 422 and is_verdict(data):
            raise CredentialNotVerifiedError(data, dict(response.headers), text)
        problem = data if isinstance(data, dict) else None
        raise OpenrailError(response.status_code, problem, dict(response.headers), text)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds before the next attempt: ``Retry-After`` when given, else exponential
        backoff with jitter; never more than ``max_retry_delay``."""
        if retry_after is not None:
            seconds = retry_after
        else:
            seconds = min(0.25 * 2**attempt, 8.0) * (0.75 + random.random() * 0.5)
        return min(seconds, self.max_retry_delay)


class SyncTransport(BaseTransport):
    """Requests through an ``httpx.Client``."""

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        max_retries: int,
        timeout: float,
        max_retry_delay: float,
        http_client: httpx.Client | None,
    ) -> None:
        super().__init__(api_key, base_url, max_retries, timeout, max_retry_delay)
        self._owned = http_client is None
        self.client = http_client or httpx.Client(timeout=timeout)

    def close(self) -> None:
        if self._owned:
            self.client.close()

    def request(
        self,
        method: Method,
        path: str,
        *,
        query: Mapping[str, object] | None = None,
        body: Mapping[str, object] | None = None,
        idempotency_key: str | None = None,
        wait: int | None = None,
        max_retries: int | None = None,
        verdict: bool = False,
        not_verified: bool = False,
    ) -> Any:
        p = self.prepare(method, path, query, body, idempotency_key, wait)
        retries = self.max_retries if max_retries is None else max_retries
        attempt = 0
        while True:
            try:
                response = self.client.request(
                    p.method,
                    self.base_url + p.path,
                    params=p.params,
                    headers=p.headers,
                    content=p.content,
                    timeout=self.timeout,
                )
            except httpx.TransportError as e:
                if attempt >= retries:
                    raise OpenrailConnectionError(f"{method} {path}: {e!r}") from e
                time.sleep(self.delay(attempt, None))
                attempt += 1
                continue
            try:
                return self.read(response, verdict, not_verified)
            except OpenrailError as e:
                if not retryable(e) or attempt >= retries:
                    raise
                time.sleep(self.delay(attempt, e.retry_after))
                attempt += 1


class AsyncTransport(BaseTransport):
    """Requests through an ``httpx.AsyncClient``."""

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        max_retries: int,
        timeout: float,
        max_retry_delay: float,
        http_client: httpx.AsyncClient | None,
    ) -> None:
        super().__init__(api_key, base_url, max_retries, timeout, max_retry_delay)
        self._owned = http_client is None
        self.client = http_client or httpx.AsyncClient(timeout=timeout)

    async def aclose(self) -> None:
        if self._owned:
            await self.client.aclose()

    async def request(
        self,
        method: Method,
        path: str,
        *,
        query: Mapping[str, object] | None = None,
        body: Mapping[str, object] | None = None,
        idempotency_key: str | None = None,
        wait: int | None = None,
        max_retries: int | None = None,
        verdict: bool = False,
        not_verified: bool = False,
    ) -> Any:
        p = self.prepare(method, path, query, body, idempotency_key, wait)
        retries = self.max_retries if max_retries is None else max_retries
        attempt = 0
        while True:
            try:
                response = await self.client.request(
                    p.method,
                    self.base_url + p.path,
                    params=p.params,
                    headers=p.headers,
                    content=p.content,
                    timeout=self.timeout,
                )
            except httpx.TransportError as e:
                if attempt >= retries:
                    raise OpenrailConnectionError(f"{method} {path}: {e!r}") from e
                await asyncio.sleep(self.delay(attempt, None))
                attempt += 1
                continue
            try:
                return self.read(response, verdict, not_verified)
            except OpenrailError as e:
                if not retryable(e) or attempt >= retries:
                    raise
                await asyncio.sleep(self.delay(attempt, e.retry_after))
                attempt += 1
