"""One-time payments (``client.payments``): wallet ↔ wallet, bank ↔ wallet, bank → bank.

A payment from a wallet answers ``requires_authorization`` with
``authorization.typed_data``, which the source wallet signs (:meth:`Payments.sign_and_authorize`);
a payment from a simulated bank account needs no signature (its bank mandate is the consent).
"""

from __future__ import annotations

from typing import cast

from typing_extensions import Unpack

from ._http import AsyncTransport, SyncTransport, seg
from .models import ListPaymentsParams, Payment, PaymentCreate
from .paging import AsyncPager, ListPage, Pager
from .signing import Signer, consent_typed_data, sign_typed_data

__all__ = ["Payments", "AsyncPayments"]


class Payments:
    """One-time payments."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def create(
        self,
        *,
        idempotency_key: str | None = None,
        wait: int | None = None,
        **params: Unpack[PaymentCreate],
    ) -> Payment:
        """``POST /v1/payments``. ``wait`` (``Prefer: wait=N``, at most 60) waits that long for
        a bank-funded payment to settle before answering (202 and ``processing`` otherwise)."""
        return cast(
            Payment,
            self._http.request(
                "POST", "/v1/payments", body=params, idempotency_key=idempotency_key, wait=wait
            ),
        )

    def retrieve(self, id: str) -> Payment:
        """``GET /v1/payments/{id}``."""
        return cast(Payment, self._http.request("GET", f"/v1/payments/{seg(id)}"))

    def list(self, **params: Unpack[ListPaymentsParams]) -> Pager[Payment]:
        """``GET /v1/payments``, newest first: iterate for every payment of every page."""
        start = params.pop("starting_after", None)
        return Pager(
            lambda after: cast(
                ListPage[Payment],
                self._http.request("GET", "/v1/payments", query={**params, "starting_after": after}),
            ),
            start,
        )

    def authorize(
        self,
        id: str,
        signature: str,
        *,
        idempotency_key: str | None = None,
        wait: int | None = None,
    ) -> Payment:
        """``POST /v1/payments/{id}/authorize`` with the source wallet's signature of
        ``authorization.typed_data``."""
        return cast(
            Payment,
            self._http.request(
                "POST",
                f"/v1/payments/{seg(id)}/authorize",
                body={"signature": signature},
                idempotency_key=idempotency_key,
                wait=wait,
            ),
        )

    def sign_and_authorize(
        self,
        payment: Payment,
        signer: Signer,
        *,
        idempotency_key: str | None = None,
        wait: int | None = None,
    ) -> Payment:
        """Signs the payment's ``authorization.typed_data`` with the source wallet's ``signer``
        (EIP-712) and authorizes it. Raises ``ValueError`` when it needs no payer signature."""
        signature = sign_typed_data(signer, consent_typed_data(payment))
        return self.authorize(payment["id"], signature, idempotency_key=idempotency_key, wait=wait)

    def cancel(
        self, id: str, *, idempotency_key: str | None = None, wait: int | None = None
    ) -> Payment:
        """Withdraws a payment still waiting for its payer's signature
        (``requires_authorization``): it becomes ``canceled``. A payment past that stage
        raises ``OpenrailError`` 409 ``payment_not_cancelable`` (not retried)."""
        return cast(
            Payment,
            self._http.request(
                "POST", f"/v1/payments/{seg(id)}/cancel", idempotency_key=idempotency_key, wait=wait
            ),
        )


class AsyncPayments:
    """One-time payments (async)."""

    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def create(
        self,
        *,
        idempotency_key: str | None = None,
        wait: int | None = None,
        **params: Unpack[PaymentCreate],
    ) -> Payment:
        """``POST /v1/payments`` (see :meth:`Payments.create`)."""
        return cast(
            Payment,
            await self._http.request(
                "POST", "/v1/payments", body=params, idempotency_key=idempotency_key, wait=wait
            ),
        )

    async def retrieve(self, id: str) -> Payment:
        """``GET /v1/payments/{id}``."""
        return cast(Payment, await self._http.request("GET", f"/v1/payments/{seg(id)}"))

    def list(self, **params: Unpack[ListPaymentsParams]) -> AsyncPager[Payment]:
        """``GET /v1/payments``, newest first: ``async for`` over every payment of every page."""
        start = params.pop("starting_after", None)

        async def fetch(after: str | None) -> ListPage[Payment]:
            return cast(
                ListPage[Payment],
                await self._http.request(
                    "GET", "/v1/payments", query={**params, "starting_after": after}
                ),
            )

        return AsyncPager(fetch, start)

    async def authorize(
        self,
        id: str,
        signature: str,
        *,
        idempotency_key: str | None = None,
        wait: int | None = None,
    ) -> Payment:
        """``POST /v1/payments/{id}/authorize`` with the source wallet's signature."""
        return cast(
            Payment,
            await self._http.request(
                "POST",
                f"/v1/payments/{seg(id)}/authorize",
                body={"signature": signature},
                idempotency_key=idempotency_key,
                wait=wait,
            ),
        )

    async def sign_and_authorize(
        self,
        payment: Payment,
        signer: Signer,
        *,
        idempotency_key: str | None = None,
        wait: int | None = None,
    ) -> Payment:
        """Signs the payment's ``authorization.typed_data`` with the source wallet's ``signer``
        (EIP-712) and authorizes it."""
        signature = sign_typed_data(signer, consent_typed_data(payment))
        return await self.authorize(
            payment["id"], signature, idempotency_key=idempotency_key, wait=wait
        )

    async def cancel(
        self, id: str, *, idempotency_key: str | None = None, wait: int | None = None
    ) -> Payment:
        """Withdraws a payment still waiting for its payer's signature (see
        :meth:`Payments.cancel`)."""
        return cast(
            Payment,
            await self._http.request(
                "POST", f"/v1/payments/{seg(id)}/cancel", idempotency_key=idempotency_key, wait=wait
            ),
        )
