"""The clients: :class:`Openrail` (sync) and :class:`AsyncOpenrail` (asyncio)."""

from __future__ import annotations

from types import TracebackType

import httpx

from ._http import AsyncTransport, SyncTransport
from .agentic import Agentic, AsyncAgentic
from .identity import AsyncIdentity, Identity
from .payments import AsyncPayments, Payments
from .resources import (
    AccountSettings,
    AsyncAccountSettings,
    AsyncBankAccounts,
    AsyncEvents,
    AsyncWebhookEndpoints,
    BankAccounts,
    Events,
    WebhookEndpoints,
)

__all__ = ["Openrail", "AsyncOpenrail"]

DEFAULT_MAX_RETRIES = 3
DEFAULT_TIMEOUT = 75.0
DEFAULT_MAX_RETRY_DELAY = 60.0


class Openrail:
    """The Openrail client (sync, over ``httpx.Client``)::

        client = Openrail(api_key="sk_testnet_…", base_url="http://127.0.0.1:8080")
        mandate = client.agentic.mandates.create(
            payer_account_id=payer, max_amount="100.00", currency="USD", interval="daily"
        )

    Args:
        api_key: an API key (``sk_testnet_…``, ``sk_mainnet_…``) or a session key's secret
            (``sks_…``, which may only pull on its key and read it); ``None`` for a client
            without a key, which may only do what the API serves anonymously (verifying a
            credential, rate-limited per address; reading a status list).
        base_url: default ``http://127.0.0.1:8080`` (what ``openrail dev`` serves).
        max_retries: retries after the first attempt of a call (network errors, 409
            ``idempotency_in_progress``, 429, 502, 503, 504), every one with the call's
            ``Idempotency-Key``. Default 3.
        timeout: per-attempt timeout in seconds. Default 75 (above ``Prefer: wait=60``).
        max_retry_delay: the longest wait between attempts, in seconds, also capping
            ``Retry-After``. Default 60.
        http_client: an ``httpx.Client`` of your own (proxies, transports); you close it.

    Resources: ``agentic`` (``mandates``, ``session_keys``, ``debit_pulls``), ``payments``,
    ``bank_accounts``, ``account``, ``events``, ``webhook_endpoints``, ``identity``.
    """

    def __init__(
        self,
        api_key: str | None,
        *,
        base_url: str | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float = DEFAULT_TIMEOUT,
        max_retry_delay: float = DEFAULT_MAX_RETRY_DELAY,
        http_client: httpx.Client | None = None,
    ) -> None:
        self._http = SyncTransport(
            api_key, base_url, max_retries, timeout, max_retry_delay, http_client
        )
        self.base_url = self._http.base_url
        self.agentic = Agentic(self._http)
        """Mandates, session keys and debit pulls."""
        self.payments = Payments(self._http)
        """One-time payments."""
        self.bank_accounts = BankAccounts(self._http)
        """Simulated bank accounts (testnet)."""
        self.account = AccountSettings(self._http)
        """Your account's settings (``GET/POST /v1/account``)."""
        self.events = Events(self._http)
        """Events."""
        self.webhook_endpoints = WebhookEndpoints(self._http)
        """Webhook endpoints and deliveries."""
        self.identity = Identity(self._http)
        """W3C Verifiable Credentials: verify, challenges, issue, revoke, status lists."""

    def close(self) -> None:
        """Closes the connection pool (unless you passed your own ``http_client``)."""
        self._http.close()

    def __enter__(self) -> Openrail:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncOpenrail:
    """The Openrail client for asyncio (over ``httpx.AsyncClient``); the same resources and
    arguments as :class:`Openrail`, every call awaited::

        async with AsyncOpenrail(api_key=key, base_url=api) as client:
            mandate = await client.agentic.mandates.create(...)
            async for pull in client.agentic.debit_pulls.list(limit=100):
                ...
    """

    def __init__(
        self,
        api_key: str | None,
        *,
        base_url: str | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float = DEFAULT_TIMEOUT,
        max_retry_delay: float = DEFAULT_MAX_RETRY_DELAY,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._http = AsyncTransport(
            api_key, base_url, max_retries, timeout, max_retry_delay, http_client
        )
        self.base_url = self._http.base_url
        self.agentic = AsyncAgentic(self._http)
        """Mandates, session keys and debit pulls."""
        self.payments = AsyncPayments(self._http)
        """One-time payments."""
        self.bank_accounts = AsyncBankAccounts(self._http)
        """Simulated bank accounts (testnet)."""
        self.account = AsyncAccountSettings(self._http)
        """Your account's settings (``GET/POST /v1/account``)."""
        self.events = AsyncEvents(self._http)
        """Events."""
        self.webhook_endpoints = AsyncWebhookEndpoints(self._http)
        """Webhook endpoints and deliveries."""
        self.identity = AsyncIdentity(self._http)
        """W3C Verifiable Credentials: verify, challenges, issue, revoke, status lists."""

    async def aclose(self) -> None:
        """Closes the connection pool (unless you passed your own ``http_client``)."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncOpenrail:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
