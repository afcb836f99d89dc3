"""Agentic recurring debits: mandates, session keys and debit pulls (``client.agentic``).

A mandate is the payer's standing authorization (a ceiling per epoch, enforced on chain); a
session key is what an agent pulls with, scoped to one mandate; a debit pull moves money
against a key, checked on chain. A declined pull raises
:class:`~openrail.errors.OpenrailError` (422, ``code``, ``pull_id``, ``remaining``,
``resets_at``).
"""

from __future__ import annotations

import secrets
import time
from typing import Any, cast

from typing_extensions import Unpack

from ._http import AsyncTransport, SyncTransport, seg
from .models import (
    DebitPull,
    DebitPullCreate,
    ListDebitPullsParams,
    ListMandatesParams,
    ListSessionKeysParams,
    Mandate,
    MandateCreate,
    SessionKey,
    SessionKeyCreate,
)
from .paging import AsyncPager, ListPage, Pager
from .signing import Signer, consent_typed_data, sign_debit_pull, sign_typed_data, to_token_units

__all__ = [
    "Agentic",
    "AsyncAgentic",
    "Mandates",
    "AsyncMandates",
    "SessionKeys",
    "AsyncSessionKeys",
    "DebitPulls",
    "AsyncDebitPulls",
    "random_nonce",
]

DEFAULT_PULL_DEADLINE_SECONDS = 600
"""A signed pull's deadline when none is given: now + 10 minutes."""


def random_nonce() -> int:
    """A random 64-bit nonce (each nonce works once per key)."""
    return secrets.randbits(64)


def _signed_pull_body(
    session_key: SessionKey,
    amount: str,
    destination: str,
    signer: Signer,
    nonce: int | None,
    deadline: int | None,
    description: str | None,
) -> DebitPullCreate:
    domain = session_key.get("eip712_domain")
    if not domain:
        raise ValueError(f"{session_key['id']} has no signer (no eip712_domain)")
    nonce = random_nonce() if nonce is None else nonce
    deadline = int(time.time()) + DEFAULT_PULL_DEADLINE_SECONDS if deadline is None else deadline
    signature = sign_debit_pull(
        signer,
        domain=domain,
        key_id=session_key["onchain"]["id"],
        destination=destination,
        amount=to_token_units(amount),
        nonce=nonce,
        deadline=deadline,
    )
    body: DebitPullCreate = {
        "session_key_id": session_key["id"],
        "amount": amount,
        "destination": destination,
        "signature": signature,
        "nonce": str(nonce),
        "deadline": deadline,
    }
    if description is not None:
        body["description"] = description
    return body


# --- sync ---------------------------------------------------------------------------------


class Mandates:
    """Mandates: the payer's standing authorization, a ceiling per epoch."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def create(
        self,
        *,
        idempotency_key: str | None = None,
        wait: int | None = None,
        **params: Unpack[MandateCreate],
    ) -> Mandate:
        """``POST /v1/mandates``. A wallet payer's mandate answers ``requires_authorization``
        with ``authorization.typed_data`` to sign (:meth:`sign_and_authorize`)."""
        return cast(
            Mandate,
            self._http.request(
                "POST", "/v1/mandates", body=params, idempotency_key=idempotency_key, wait=wait
            ),
        )

    def retrieve(self, id: str) -> Mandate:
        """``GET /v1/mandates/{id}``."""
        return cast(Mandate, self._http.request("GET", f"/v1/mandates/{seg(id)}"))

    def list(self, **params: Unpack[ListMandatesParams]) -> Pager[Mandate]:
        """``GET /v1/mandates``, newest first: iterate for every mandate of every page."""
        start = params.pop("starting_after", None)
        return Pager(
            lambda after: cast(
                ListPage[Mandate],
                self._http.request("GET", "/v1/mandates", query={**params, "starting_after": after}),
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
    ) -> Mandate:
        """``POST /v1/mandates/{id}/authorize`` with the payer's signature of
        ``authorization.typed_data``."""
        return cast(
            Mandate,
            self._http.request(
                "POST",
                f"/v1/mandates/{seg(id)}/authorize",
                body={"signature": signature},
                idempotency_key=idempotency_key,
                wait=wait,
            ),
        )

    def sign_and_authorize(
        self,
        mandate: Mandate,
        signer: Signer,
        *,
        idempotency_key: str | None = None,
        wait: int | None = None,
    ) -> Mandate:
        """Signs the mandate's ``authorization.typed_data`` with the payer's ``signer`` (EIP-712)
        and authorizes it. Raises ``ValueError`` when the mandate needs no payer signature."""
        signature = sign_typed_data(signer, consent_typed_data(mandate))
        return self.authorize(
            mandate["id"], signature, idempotency_key=idempotency_key, wait=wait
        )

    def cancel(
        self, id: str, *, idempotency_key: str | None = None, wait: int | None = None
    ) -> Mandate:
        """``POST /v1/mandates/{id}/cancel``."""
        return cast(
            Mandate,
            self._http.request(
                "POST", f"/v1/mandates/{seg(id)}/cancel", idempotency_key=idempotency_key, wait=wait
            ),
        )


class SessionKeys:
    """Session keys: what an agent pulls with, scoped to one mandate."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def create(
        self,
        *,
        idempotency_key: str | None = None,
        wait: int | None = None,
        **params: Unpack[SessionKeyCreate],
    ) -> SessionKey:
        """``POST /v1/session-keys``. The answer carries the key's ``secret`` (``sks_…``),
        shown once."""
        return cast(
            SessionKey,
            self._http.request(
                "POST", "/v1/session-keys", body=params, idempotency_key=idempotency_key, wait=wait
            ),
        )

    def retrieve(self, id: str) -> SessionKey:
        """``GET /v1/session-keys/{id}``."""
        return cast(SessionKey, self._http.request("GET", f"/v1/session-keys/{seg(id)}"))

    def list(self, **params: Unpack[ListSessionKeysParams]) -> Pager[SessionKey]:
        """``GET /v1/session-keys`` (filter: ``mandate_id``)."""
        start = params.pop("starting_after", None)
        return Pager(
            lambda after: cast(
                ListPage[SessionKey],
                self._http.request(
                    "GET", "/v1/session-keys", query={**params, "starting_after": after}
                ),
            ),
            start,
        )

    def revoke(
        self, id: str, *, idempotency_key: str | None = None, wait: int | None = None
    ) -> SessionKey:
        """Revokes the key on chain (``DELETE /v1/session-keys/{id}``)."""
        return cast(
            SessionKey,
            self._http.request(
                "DELETE", f"/v1/session-keys/{seg(id)}", idempotency_key=idempotency_key, wait=wait
            ),
        )

    def issue_agent_credential(self, id: str) -> dict[str, Any]:
        """``POST /v1/session-keys/{id}/credential``: the key's ``AgentCredential`` (a W3C
        credential Openrail signs, binding the key's ``signer`` to its payer, mandate and
        ceiling, valid until the key expires), issued now or the one issued before. A key
        without a signer raises 409 ``session_key_without_signer``."""
        issued = self._http.request("POST", f"/v1/session-keys/{seg(id)}/credential")
        return cast(dict[str, Any], issued["verifiableCredential"])

    def agent_credential(self, id: str) -> dict[str, Any]:
        """``GET /v1/session-keys/{id}/credential``: the key's ``AgentCredential`` once
        issued (404 before)."""
        issued = self._http.request("GET", f"/v1/session-keys/{seg(id)}/credential")
        return cast(dict[str, Any], issued["verifiableCredential"])


class DebitPulls:
    """Debit pulls: money moved against a session key, checked on chain."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def create(
        self,
        *,
        idempotency_key: str | None = None,
        wait: int | None = None,
        **params: Unpack[DebitPullCreate],
    ) -> DebitPull:
        """``POST /v1/debit-pulls``. A declined pull raises ``OpenrailError`` (422, ``code``,
        ``pull_id``, and for ``allowance_exceeded`` ``remaining`` and ``resets_at``)."""
        return cast(
            DebitPull,
            self._http.request(
                "POST", "/v1/debit-pulls", body=params, idempotency_key=idempotency_key, wait=wait
            ),
        )

    def create_signed(
        self,
        *,
        session_key: SessionKey,
        amount: str,
        destination: str,
        signer: Signer,
        nonce: int | None = None,
        deadline: int | None = None,
        description: str | None = None,
        idempotency_key: str | None = None,
        wait: int | None = None,
    ) -> DebitPull:
        """A pull on a key with a ``signer``: signs ``DebitPull(keyId, destination, amount,
        nonce, deadline)`` in the key's ``eip712_domain`` with the agent's ``signer`` and
        sends it.

        Args:
            session_key: the key as created or retrieved (its ``eip712_domain`` and
                ``onchain.id`` are used).
            amount: major units (``"5.00"``); signed in token units (6 decimals).
            nonce: default a random 64-bit number; each nonce works once per key.
            deadline: unix seconds; default now + 10 minutes.
        """
        body = _signed_pull_body(
            session_key, amount, destination, signer, nonce, deadline, description
        )
        return self.create(idempotency_key=idempotency_key, wait=wait, **body)

    def retrieve(self, id: str) -> DebitPull:
        """``GET /v1/debit-pulls/{id}``."""
        return cast(DebitPull, self._http.request("GET", f"/v1/debit-pulls/{seg(id)}"))

    def list(self, **params: Unpack[ListDebitPullsParams]) -> Pager[DebitPull]:
        """``GET /v1/debit-pulls`` (filter: ``session_key_id``)."""
        start = params.pop("starting_after", None)
        return Pager(
            lambda after: cast(
                ListPage[DebitPull],
                self._http.request(
                    "GET", "/v1/debit-pulls", query={**params, "starting_after": after}
                ),
            ),
            start,
        )


class Agentic:
    """``client.agentic``: ``mandates``, ``session_keys`` and ``debit_pulls``."""

    def __init__(self, http: SyncTransport) -> None:
        self.mandates = Mandates(http)
        self.session_keys = SessionKeys(http)
        self.debit_pulls = DebitPulls(http)


# --- async --------------------------------------------------------------------------------


class AsyncMandates:
    """Mandates (async): the payer's standing authorization, a ceiling per epoch."""

    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def create(
        self,
        *,
        idempotency_key: str | None = None,
        wait: int | None = None,
        **params: Unpack[MandateCreate],
    ) -> Mandate:
        """``POST /v1/mandates``. A wallet payer's mandate answers ``requires_authorization``
        with ``authorization.typed_data`` to sign (:meth:`sign_and_authorize`)."""
        return cast(
            Mandate,
            await self._http.request(
                "POST", "/v1/mandates", body=params, idempotency_key=idempotency_key, wait=wait
            ),
        )

    async def retrieve(self, id: str) -> Mandate:
        """``GET /v1/mandates/{id}``."""
        return cast(Mandate, await self._http.request("GET", f"/v1/mandates/{seg(id)}"))

    def list(self, **params: Unpack[ListMandatesParams]) -> AsyncPager[Mandate]:
        """``GET /v1/mandates``, newest first: ``async for`` over every mandate of every page."""
        start = params.pop("starting_after", None)

        async def fetch(after: str | None) -> ListPage[Mandate]:
            return cast(
                ListPage[Mandate],
                await self._http.request(
                    "GET", "/v1/mandates", query={**params, "starting_after": after}
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
    ) -> Mandate:
        """``POST /v1/mandates/{id}/authorize`` with the payer's signature of
        ``authorization.typed_data``."""
        return cast(
            Mandate,
            await self._http.request(
                "POST",
                f"/v1/mandates/{seg(id)}/authorize",
                body={"signature": signature},
                idempotency_key=idempotency_key,
                wait=wait,
            ),
        )

    async def sign_and_authorize(
        self,
        mandate: Mandate,
        signer: Signer,
        *,
        idempotency_key: str | None = None,
        wait: int | None = None,
    ) -> Mandate:
        """Signs the mandate's ``authorization.typed_data`` with the payer's ``signer`` (EIP-712)
        and authorizes it. Raises ``ValueError`` when the mandate needs no payer signature."""
        signature = sign_typed_data(signer, consent_typed_data(mandate))
        return await self.authorize(
            mandate["id"], signature, idempotency_key=idempotency_key, wait=wait
        )

    async def cancel(
        self, id: str, *, idempotency_key: str | None = None, wait: int | None = None
    ) -> Mandate:
        """``POST /v1/mandates/{id}/cancel``."""
        return cast(
            Mandate,
            await self._http.request(
                "POST", f"/v1/mandates/{seg(id)}/cancel", idempotency_key=idempotency_key, wait=wait
            ),
        )


class AsyncSessionKeys:
    """Session keys (async): what an agent pulls with, scoped to one mandate."""

    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def create(
        self,
        *,
        idempotency_key: str | None = None,
        wait: int | None = None,
        **params: Unpack[SessionKeyCreate],
    ) -> SessionKey:
        """``POST /v1/session-keys``. The answer carries the key's ``secret`` (``sks_…``),
        shown once."""
        return cast(
            SessionKey,
            await self._http.request(
                "POST", "/v1/session-keys", body=params, idempotency_key=idempotency_key, wait=wait
            ),
        )

    async def retrieve(self, id: str) -> SessionKey:
        """``GET /v1/session-keys/{id}``."""
        return cast(SessionKey, await self._http.request("GET", f"/v1/session-keys/{seg(id)}"))

    def list(self, **params: Unpack[ListSessionKeysParams]) -> AsyncPager[SessionKey]:
        """``GET /v1/session-keys`` (filter: ``mandate_id``)."""
        start = params.pop("starting_after", None)

        async def fetch(after: str | None) -> ListPage[SessionKey]:
            return cast(
                ListPage[SessionKey],
                await self._http.request(
                    "GET", "/v1/session-keys", query={**params, "starting_after": after}
                ),
            )

        return AsyncPager(fetch, start)

    async def revoke(
        self, id: str, *, idempotency_key: str | None = None, wait: int | None = None
    ) -> SessionKey:
        """Revokes the key on chain (``DELETE /v1/session-keys/{id}``)."""
        return cast(
            SessionKey,
            await self._http.request(
                "DELETE", f"/v1/session-keys/{seg(id)}", idempotency_key=idempotency_key, wait=wait
            ),
        )

    async def issue_agent_credential(self, id: str) -> dict[str, Any]:
        """``POST /v1/session-keys/{id}/credential``: the key's ``AgentCredential``, issued
        now or the one issued before."""
        issued = await self._http.request("POST", f"/v1/session-keys/{seg(id)}/credential")
        return cast(dict[str, Any], issued["verifiableCredential"])

    async def agent_credential(self, id: str) -> dict[str, Any]:
        """``GET /v1/session-keys/{id}/credential``: the key's ``AgentCredential`` once
        issued (404 before)."""
        issued = await self._http.request("GET", f"/v1/session-keys/{seg(id)}/credential")
        return cast(dict[str, Any], issued["verifiableCredential"])


class AsyncDebitPulls:
    """Debit pulls (async): money moved against a session key, checked on chain."""

    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def create(
        self,
        *,
        idempotency_key: str | None = None,
        wait: int | None = None,
        **params: Unpack[DebitPullCreate],
    ) -> DebitPull:
        """``POST /v1/debit-pulls``. A declined pull raises ``OpenrailError`` (422, ``code``,
        ``pull_id``, and for ``allowance_exceeded`` ``remaining`` and ``resets_at``)."""
        return cast(
            DebitPull,
            await self._http.request(
                "POST", "/v1/debit-pulls", body=params, idempotency_key=idempotency_key, wait=wait
            ),
        )

    async def create_signed(
        self,
        *,
        session_key: SessionKey,
        amount: str,
        destination: str,
        signer: Signer,
        nonce: int | None = None,
        deadline: int | None = None,
        description: str | None = None,
        idempotency_key: str | None = None,
        wait: int | None = None,
    ) -> DebitPull:
        """A pull on a key with a ``signer``: signs ``DebitPull(keyId, destination, amount,
        nonce, deadline)`` in the key's ``eip712_domain`` with the agent's ``signer`` and
        sends it (see :meth:`DebitPulls.create_signed`)."""
        body = _signed_pull_body(
            session_key, amount, destination, signer, nonce, deadline, description
        )
        return await self.create(idempotency_key=idempotency_key, wait=wait, **body)

    async def retrieve(self, id: str) -> DebitPull:
        """``GET /v1/debit-pulls/{id}``."""
        return cast(DebitPull, await self._http.request("GET", f"/v1/debit-pulls/{seg(id)}"))

    def list(self, **params: Unpack[ListDebitPullsParams]) -> AsyncPager[DebitPull]:
        """``GET /v1/debit-pulls`` (filter: ``session_key_id``)."""
        start = params.pop("starting_after", None)

        async def fetch(after: str | None) -> ListPage[DebitPull]:
            return cast(
                ListPage[DebitPull],
                await self._http.request(
                    "GET", "/v1/debit-pulls", query={**params, "starting_after": after}
                ),
            )

        return AsyncPager(fetch, start)


class AsyncAgentic:
    """``client.agentic`` of the async client."""

    def __init__(self, http: AsyncTransport) -> None:
        self.mandates = AsyncMandates(http)
        self.session_keys = AsyncSessionKeys(http)
        self.debit_pulls = AsyncDebitPulls(http)
