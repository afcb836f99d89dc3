"""Simulated bank accounts, account settings, events and webhook endpoints."""

from __future__ import annotations

from typing import cast

from typing_extensions import Unpack

from ._http import AsyncTransport, SyncTransport, seg
from .models import (
    Account,
    AccountUpdate,
    BankAccount,
    BankAccountCreate,
    DeletedWebhookEndpoint,
    Event,
    ListEventsParams,
    ListWebhookDeliveriesParams,
    ListWebhookEndpointsParams,
    RedeliverCreate,
    WebhookDelivery,
    WebhookDeliveryList,
    WebhookEndpoint,
    WebhookEndpointCreate,
    WebhookEndpointUpdate,
)
from .paging import AsyncPager, ListPage, Pager

__all__ = [
    "BankAccounts",
    "AsyncBankAccounts",
    "AccountSettings",
    "AsyncAccountSettings",
    "Events",
    "AsyncEvents",
    "WebhookEndpoints",
    "AsyncWebhookEndpoints",
]

# --- sync ---------------------------------------------------------------------------------


class BankAccounts:
    """Simulated bank accounts (testnet): sources and destinations of payments."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[BankAccountCreate]
    ) -> BankAccount:
        """``POST /v1/bank-accounts``: an account with a ``balance`` and a ``behavior``."""
        return cast(
            BankAccount,
            self._http.request(
                "POST", "/v1/bank-accounts", body=params, idempotency_key=idempotency_key
            ),
        )

    def retrieve(self, id: str) -> BankAccount:
        """``GET /v1/bank-accounts/{id}`` (balances and transfers)."""
        return cast(BankAccount, self._http.request("GET", f"/v1/bank-accounts/{seg(id)}"))


class AccountSettings:
    """Your account (``GET/POST /v1/account``): where its one-time payments settle."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def retrieve(self) -> Account:
        """``GET /v1/account``."""
        return cast(Account, self._http.request("GET", "/v1/account"))

    def update(
        self, *, idempotency_key: str | None = None, **params: Unpack[AccountUpdate]
    ) -> Account:
        """``POST /v1/account`` (``payments_chain="settlement" | "attestation"``)."""
        return cast(
            Account,
            self._http.request("POST", "/v1/account", body=params, idempotency_key=idempotency_key),
        )


class Events:
    """Events (``evt_…``): every state change."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def retrieve(self, id: str) -> Event:
        """``GET /v1/events/{id}``."""
        return cast(Event, self._http.request("GET", f"/v1/events/{seg(id)}"))

    def list(self, **params: Unpack[ListEventsParams]) -> Pager[Event]:
        """``GET /v1/events`` (filters: ``type``, ``object_id``, ``created_gte`` — sent as
        ``created[gte]``)."""
        start = params.pop("starting_after", None)
        return Pager(
            lambda after: cast(
                ListPage[Event],
                self._http.request("GET", "/v1/events", query={**params, "starting_after": after}),
            ),
            start,
        )

    def redeliver(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[RedeliverCreate]
    ) -> WebhookDeliveryList:
        """Queues the event again (to every subscribed endpoint, or ``endpoint="we_…"``);
        answers the deliveries queued."""
        return cast(
            WebhookDeliveryList,
            self._http.request(
                "POST",
                f"/v1/events/{seg(id)}/redeliver",
                body=params,
                idempotency_key=idempotency_key,
            ),
        )


class WebhookEndpoints:
    """Webhook endpoints and their deliveries."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[WebhookEndpointCreate]
    ) -> WebhookEndpoint:
        """``POST /v1/webhook-endpoints``; the answer's ``secret`` (``whsec_…``) is shown once."""
        return cast(
            WebhookEndpoint,
            self._http.request(
                "POST", "/v1/webhook-endpoints", body=params, idempotency_key=idempotency_key
            ),
        )

    def retrieve(self, id: str) -> WebhookEndpoint:
        """``GET /v1/webhook-endpoints/{id}``."""
        return cast(
            WebhookEndpoint, self._http.request("GET", f"/v1/webhook-endpoints/{seg(id)}")
        )

    def list(self, **params: Unpack[ListWebhookEndpointsParams]) -> Pager[WebhookEndpoint]:
        """``GET /v1/webhook-endpoints``."""
        start = params.pop("starting_after", None)
        return Pager(
            lambda after: cast(
                ListPage[WebhookEndpoint],
                self._http.request(
                    "GET", "/v1/webhook-endpoints", query={**params, "starting_after": after}
                ),
            ),
            start,
        )

    def update(
        self,
        id: str,
        *,
        idempotency_key: str | None = None,
        **params: Unpack[WebhookEndpointUpdate],
    ) -> WebhookEndpoint:
        """``POST /v1/webhook-endpoints/{id}`` (``url``, ``enabled_events``, ``status``,
        ``description``)."""
        return cast(
            WebhookEndpoint,
            self._http.request(
                "POST",
                f"/v1/webhook-endpoints/{seg(id)}",
                body=params,
                idempotency_key=idempotency_key,
            ),
        )

    def delete(self, id: str, *, idempotency_key: str | None = None) -> DeletedWebhookEndpoint:
        """``DELETE /v1/webhook-endpoints/{id}``."""
        return cast(
            DeletedWebhookEndpoint,
            self._http.request(
                "DELETE", f"/v1/webhook-endpoints/{seg(id)}", idempotency_key=idempotency_key
            ),
        )

    def rotate_secret(self, id: str, *, idempotency_key: str | None = None) -> WebhookEndpoint:
        """``POST /v1/webhook-endpoints/{id}/rotate-secret``: a new ``secret``; the previous
        one keeps signing until ``previous_secret_expires_at``."""
        return cast(
            WebhookEndpoint,
            self._http.request(
                "POST",
                f"/v1/webhook-endpoints/{seg(id)}/rotate-secret",
                idempotency_key=idempotency_key,
            ),
        )

    def list_deliveries(
        self, id: str, **params: Unpack[ListWebhookDeliveriesParams]
    ) -> Pager[WebhookDelivery]:
        """``GET /v1/webhook-endpoints/{id}/deliveries``."""
        start = params.pop("starting_after", None)
        path = f"/v1/webhook-endpoints/{seg(id)}/deliveries"
        return Pager(
            lambda after: cast(
                ListPage[WebhookDelivery],
                self._http.request("GET", path, query={**params, "starting_after": after}),
            ),
            start,
        )


# --- async --------------------------------------------------------------------------------


class AsyncBankAccounts:
    """Simulated bank accounts (async)."""

    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[BankAccountCreate]
    ) -> BankAccount:
        """``POST /v1/bank-accounts``."""
        return cast(
            BankAccount,
            await self._http.request(
                "POST", "/v1/bank-accounts", body=params, idempotency_key=idempotency_key
            ),
        )

    async def retrieve(self, id: str) -> BankAccount:
        """``GET /v1/bank-accounts/{id}``."""
        return cast(
            BankAccount, await self._http.request("GET", f"/v1/bank-accounts/{seg(id)}")
        )


class AsyncAccountSettings:
    """Your account (async)."""

    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def retrieve(self) -> Account:
        """``GET /v1/account``."""
        return cast(Account, await self._http.request("GET", "/v1/account"))

    async def update(
        self, *, idempotency_key: str | None = None, **params: Unpack[AccountUpdate]
    ) -> Account:
        """``POST /v1/account``."""
        return cast(
            Account,
            await self._http.request(
                "POST", "/v1/account", body=params, idempotency_key=idempotency_key
            ),
        )


class AsyncEvents:
    """Events (async)."""

    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def retrieve(self, id: str) -> Event:
        """``GET /v1/events/{id}``."""
        return cast(Event, await self._http.request("GET", f"/v1/events/{seg(id)}"))

    def list(self, **params: Unpack[ListEventsParams]) -> AsyncPager[Event]:
        """``GET /v1/events`` (filters: ``type``, ``object_id``, ``created_gte``)."""
        start = params.pop("starting_after", None)

        async def fetch(after: str | None) -> ListPage[Event]:
            return cast(
                ListPage[Event],
                await self._http.request(
                    "GET", "/v1/events", query={**params, "starting_after": after}
                ),
            )

        return AsyncPager(fetch, start)

    async def redeliver(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[RedeliverCreate]
    ) -> WebhookDeliveryList:
        """Queues the event again; answers the deliveries queued."""
        return cast(
            WebhookDeliveryList,
            await self._http.request(
                "POST",
                f"/v1/events/{seg(id)}/redeliver",
                body=params,
                idempotency_key=idempotency_key,
            ),
        )


class AsyncWebhookEndpoints:
    """Webhook endpoints and their deliveries (async)."""

    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[WebhookEndpointCreate]
    ) -> WebhookEndpoint:
        """``POST /v1/webhook-endpoints``."""
        return cast(
            WebhookEndpoint,
            await self._http.request(
                "POST", "/v1/webhook-endpoints", body=params, idempotency_key=idempotency_key
            ),
        )

    async def retrieve(self, id: str) -> WebhookEndpoint:
        """``GET /v1/webhook-endpoints/{id}``."""
        return cast(
            WebhookEndpoint,
            await self._http.request("GET", f"/v1/webhook-endpoints/{seg(id)}"),
        )

    def list(self, **params: Unpack[ListWebhookEndpointsParams]) -> AsyncPager[WebhookEndpoint]:
        """``GET /v1/webhook-endpoints``."""
        start = params.pop("starting_after", None)

        async def fetch(after: str | None) -> ListPage[WebhookEndpoint]:
            return cast(
                ListPage[WebhookEndpoint],
                await self._http.request(
                    "GET", "/v1/webhook-endpoints", query={**params, "starting_after": after}
                ),
            )

        return AsyncPager(fetch, start)

    async def update(
        self,
        id: str,
        *,
        idempotency_key: str | None = None,
        **params: Unpack[WebhookEndpointUpdate],
    ) -> WebhookEndpoint:
        """``POST /v1/webhook-endpoints/{id}``."""
        return cast(
            WebhookEndpoint,
            await self._http.request(
                "POST",
                f"/v1/webhook-endpoints/{seg(id)}",
                body=params,
                idempotency_key=idempotency_key,
            ),
        )

    async def delete(
        self, id: str, *, idempotency_key: str | None = None
    ) -> DeletedWebhookEndpoint:
        """``DELETE /v1/webhook-endpoints/{id}``."""
        return cast(
            DeletedWebhookEndpoint,
            await self._http.request(
                "DELETE", f"/v1/webhook-endpoints/{seg(id)}", idempotency_key=idempotency_key
            ),
        )

    async def rotate_secret(
        self, id: str, *, idempotency_key: str | None = None
    ) -> WebhookEndpoint:
        """``POST /v1/webhook-endpoints/{id}/rotate-secret``."""
        return cast(
            WebhookEndpoint,
            await self._http.request(
                "POST",
                f"/v1/webhook-endpoints/{seg(id)}/rotate-secret",
                idempotency_key=idempotency_key,
            ),
        )

    def list_deliveries(
        self, id: str, **params: Unpack[ListWebhookDeliveriesParams]
    ) -> AsyncPager[WebhookDelivery]:
        """``GET /v1/webhook-endpoints/{id}/deliveries``."""
        start = params.pop("starting_after", None)
        path = f"/v1/webhook-endpoints/{seg(id)}/deliveries"

        async def fetch(after: str | None) -> ListPage[WebhookDelivery]:
            return cast(
                ListPage[WebhookDelivery],
                await self._http.request("GET", path, query={**params, "starting_after": after}),
            )

        return AsyncPager(fetch, start)
