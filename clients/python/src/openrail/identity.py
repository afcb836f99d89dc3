"""Identity (``/v1/identity``): W3C Verifiable Credentials. Verify a credential or a
presentation (Data Integrity proofs, validity, status), hand out single-use challenges for
presentations, and use Openrail as an issuer: sign a credential with a revocation entry,
revoke it, read its public status list.

A verification that ran is an answer, never an exception: a credential that does not verify
(HTTP 422) returns ``{"verified": False, "problemDetails": [...], "results": {...}}``. A
document that is no credential at all raises :class:`~openrail.OpenrailError` 400
``parameter_invalid``. Whether the issuer is *trusted* is not part of verification: decide
that from the credential's ``issuer`` with your own policy.

``identity.verifications`` are verification sessions (testnet, answered by a simulated
provider: ``simulate``): is a wallet a person, financially healthy, an agent? A verified
session issues the matching credential. ``identity.attestations`` attest a verified
credential on the mode's attestation chain; posting one that does not verify raises
:class:`~openrail.CredentialNotVerifiedError` with its verification.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from typing_extensions import Unpack

from ._http import AsyncTransport, SyncTransport, seg
from .models import (
    AttestationCreate,
    IdentityAttestation,
    IdentityChallenge,
    IdentityCredential,
    IdentityVerification,
    IdentityVerificationCreate,
    ListAttestationsParams,
    ListIdentityVerificationsParams,
    StatusListCredential,
    VerificationResult,
    VerificationResultProblemDetailsItem,
)
from .paging import AsyncPager, ListPage, Pager

__all__ = [
    "Identity",
    "AsyncIdentity",
    "IdentityVerifications",
    "AsyncIdentityVerifications",
    "Attestations",
    "AsyncAttestations",
    "problem_names",
]

_REVOCATION = {"type": "BitstringStatusListEntry", "statusPurpose": "revocation"}


def problem_names(verification: VerificationResult) -> list[str]:
    """The names of a verification's problems (``RANGE_ERROR``, ``INVALID_CHALLENGE_ERROR``,
    …): each ``problemDetails[].type`` after its ``#``."""
    return [_name(p) for p in verification["problemDetails"]]


def _name(problem: VerificationResultProblemDetailsItem) -> str:
    return problem["type"].rsplit("#", 1)[-1]


def _presentation_body(
    presentation: Mapping[str, Any], challenge: str, domain: str | None
) -> dict[str, object]:
    options: dict[str, str] = {"challenge": challenge}
    if domain is not None:
        options["domain"] = domain
    return {"verifiablePresentation": presentation, "options": options}


_VERIFICATIONS = "/v1/identity/verifications"
_ATTESTATIONS = "/v1/identity/attestations"


class IdentityVerifications:
    """Verification sessions (``/v1/identity/verifications``, testnet): ``requires_input``
    → :meth:`submit` → ``processing`` → ``verified`` (its credential issued:
    :meth:`credential`), or back to ``requires_input`` with ``last_error``; :meth:`cancel`
    withdraws one not yet submitted. A move outside the lifecycle raises
    :class:`~openrail.OpenrailError` 409 (``verification_not_submittable``,
    ``verification_not_cancelable``, ``verification_not_verified``)."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[IdentityVerificationCreate]
    ) -> IdentityVerification:
        """``POST /v1/identity/verifications``: ``type`` (``personhood``,
        ``financial_health``, ``agent``), ``subject`` (a wallet) and, on testnet,
        ``simulate={"outcome": "verified" | "failed" | "slow", "failure_reason": …}``."""
        return cast(
            IdentityVerification,
            self._http.request(
                "POST", _VERIFICATIONS, body=params, idempotency_key=idempotency_key
            ),
        )

    def retrieve(self, id: str) -> IdentityVerification:
        """``GET /v1/identity/verifications/{id}``."""
        return cast(
            IdentityVerification, self._http.request("GET", f"{_VERIFICATIONS}/{seg(id)}")
        )

    def list(self, **params: Unpack[ListIdentityVerificationsParams]) -> Pager[IdentityVerification]:
        """``GET /v1/identity/verifications``, newest first: iterate for every session of
        every page."""
        start = params.pop("starting_after", None)
        return Pager(
            lambda after: cast(
                ListPage[IdentityVerification],
                self._http.request(
                    "GET", _VERIFICATIONS, query={**params, "starting_after": after}
                ),
            ),
            start,
        )

    def submit(self, id: str, *, idempotency_key: str | None = None) -> IdentityVerification:
        """``POST /v1/identity/verifications/{id}/submit``: the flow is finished, the
        provider checks (``requires_input`` → ``processing``)."""
        return cast(
            IdentityVerification,
            self._http.request(
                "POST", f"{_VERIFICATIONS}/{seg(id)}/submit", idempotency_key=idempotency_key
            ),
        )

    def cancel(self, id: str, *, idempotency_key: str | None = None) -> IdentityVerification:
        """``POST /v1/identity/verifications/{id}/cancel``: withdraws a session not yet
        submitted (``canceled``)."""
        return cast(
            IdentityVerification,
            self._http.request(
                "POST", f"{_VERIFICATIONS}/{seg(id)}/cancel", idempotency_key=idempotency_key
            ),
        )

    def credential(self, id: str) -> dict[str, Any]:
        """``GET /v1/identity/verifications/{id}/credential``: the signed credential a
        verified session issued, for its holder."""
        issued = self._http.request("GET", f"{_VERIFICATIONS}/{seg(id)}/credential")
        return cast(dict[str, Any], issued["verifiableCredential"])


class Attestations:
    """Attestations (``/v1/identity/attestations``): a verified credential attested on the
    mode's attestation chain. Creating and revoking wait for the chain (``wait``, ``Prefer:
    wait=N``, default 10 s): ``active``/``revoked`` when it answered, else the object as it
    is (``pending``, or still ``active`` with its revocation queued): read it again."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def create(
        self,
        *,
        idempotency_key: str | None = None,
        wait: int | None = None,
        **params: Unpack[AttestationCreate],
    ) -> IdentityAttestation:
        """``POST /v1/identity/attestations`` with exactly one of ``credential_id`` (a
        credential this account issued) and ``verifiableCredential`` (one posted whole,
        verified first), and ``recipient`` (0x…) when its subject is no wallet. A posted
        credential that does not verify raises :class:`~openrail.CredentialNotVerifiedError`;
        a revoked one named by id raises 409 ``credential_revoked``."""
        return cast(
            IdentityAttestation,
            self._http.request(
                "POST",
                _ATTESTATIONS,
                body=params,
                idempotency_key=idempotency_key,
                wait=wait,
                not_verified=True,
            ),
        )

    def retrieve(self, id: str) -> IdentityAttestation:
        """``GET /v1/identity/attestations/{id}``."""
        return cast(IdentityAttestation, self._http.request("GET", f"{_ATTESTATIONS}/{seg(id)}"))

    def list(self, **params: Unpack[ListAttestationsParams]) -> Pager[IdentityAttestation]:
        """``GET /v1/identity/attestations``, newest first; ``subject="0x…"`` (or
        ``did:pkh:eip155:…:0x…``): only those about that wallet."""
        start = params.pop("starting_after", None)
        return Pager(
            lambda after: cast(
                ListPage[IdentityAttestation],
                self._http.request("GET", _ATTESTATIONS, query={**params, "starting_after": after}),
            ),
            start,
        )

    def revoke(
        self, id: str, *, idempotency_key: str | None = None, wait: int | None = None
    ) -> IdentityAttestation:
        """``POST /v1/identity/attestations/{id}/revoke``: revokes it on chain (final); a
        revoked or failed one is answered as it is."""
        return cast(
            IdentityAttestation,
            self._http.request(
                "POST",
                f"{_ATTESTATIONS}/{seg(id)}/revoke",
                idempotency_key=idempotency_key,
                wait=wait,
            ),
        )


class Identity:
    """W3C Verifiable Credentials: verify, challenges, issue, revoke, status lists;
    ``verifications`` (sessions) and ``attestations``."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http
        self.verifications = IdentityVerifications(http)
        """Verification sessions (testnet)."""
        self.attestations = Attestations(http)
        """Verified credentials attested on the mode's attestation chain."""

    def verify_credential(
        self, credential: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> VerificationResult:
        """``POST /v1/identity/credentials/verify``: proofs, validity and status. Works on a
        client without a key too (``Openrail(None)``), rate-limited per address."""
        return cast(
            VerificationResult,
            self._http.request(
                "POST",
                "/v1/identity/credentials/verify",
                body={"verifiableCredential": credential},
                idempotency_key=idempotency_key,
                verdict=True,
            ),
        )

    def verify_presentation(
        self,
        presentation: Mapping[str, Any],
        *,
        challenge: str,
        domain: str | None = None,
        idempotency_key: str | None = None,
    ) -> VerificationResult:
        """``POST /v1/identity/presentations/verify``: a presentation signed for
        ``challenge`` (from :meth:`create_challenge`; used up by this call, so a replay
        fails) and ``domain`` (default: the challenge's)."""
        return cast(
            VerificationResult,
            self._http.request(
                "POST",
                "/v1/identity/presentations/verify",
                body=_presentation_body(presentation, challenge, domain),
                idempotency_key=idempotency_key,
                verdict=True,
            ),
        )

    def create_challenge(
        self, *, domain: str | None = None, idempotency_key: str | None = None
    ) -> IdentityChallenge:
        """``POST /v1/identity/challenges``: a single-use challenge (ten minutes), bound to
        ``domain`` when given."""
        return cast(
            IdentityChallenge,
            self._http.request(
                "POST",
                "/v1/identity/challenges",
                body={"domain": domain},
                idempotency_key=idempotency_key,
            ),
        )

    def issue_credential(
        self, credential: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """``POST /v1/identity/credentials/issue``: Openrail signs ``credential`` (unsigned,
        VC 2.0) as its issuer (``did:key``, ``eddsa-rdfc-2022``), adding ``id`` (when
        absent), ``issuer``, ``validFrom`` (when absent) and a revocation entry of a
        Bitstring Status List. Returns the signed credential."""
        issued = self._http.request(
            "POST",
            "/v1/identity/credentials/issue",
            body={"credential": credential},
            idempotency_key=idempotency_key,
        )
        return cast(dict[str, Any], issued["verifiableCredential"])

    def revoke_credential(
        self, id: str, *, idempotency_key: str | None = None
    ) -> IdentityCredential:
        """``POST /v1/identity/credentials/status``: revokes a credential this account issued
        (final). Returns its record (``status`` ``"revoked"``)."""
        return cast(
            IdentityCredential,
            self._http.request(
                "POST",
                "/v1/identity/credentials/status",
                body={"credentialId": id, "credentialStatus": _REVOCATION, "status": True},
                idempotency_key=idempotency_key,
            ),
        )

    def status_list(self, id: str) -> StatusListCredential:
        """``GET /v1/identity/status-lists/{id}`` (public): the signed
        ``BitstringStatusListCredential``."""
        return cast(
            StatusListCredential,
            self._http.request("GET", f"/v1/identity/status-lists/{seg(id)}"),
        )


class AsyncIdentityVerifications:
    """Verification sessions (async): the same methods as :class:`IdentityVerifications`."""

    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[IdentityVerificationCreate]
    ) -> IdentityVerification:
        """``POST /v1/identity/verifications``."""
        return cast(
            IdentityVerification,
            await self._http.request(
                "POST", _VERIFICATIONS, body=params, idempotency_key=idempotency_key
            ),
        )

    async def retrieve(self, id: str) -> IdentityVerification:
        """``GET /v1/identity/verifications/{id}``."""
        return cast(
            IdentityVerification,
            await self._http.request("GET", f"{_VERIFICATIONS}/{seg(id)}"),
        )

    def list(
        self, **params: Unpack[ListIdentityVerificationsParams]
    ) -> AsyncPager[IdentityVerification]:
        """``GET /v1/identity/verifications``, newest first: ``async for`` over every
        session of every page."""
        start = params.pop("starting_after", None)

        async def fetch(after: str | None) -> ListPage[IdentityVerification]:
            return cast(
                ListPage[IdentityVerification],
                await self._http.request(
                    "GET", _VERIFICATIONS, query={**params, "starting_after": after}
                ),
            )

        return AsyncPager(fetch, start)

    async def submit(
        self, id: str, *, idempotency_key: str | None = None
    ) -> IdentityVerification:
        """``POST /v1/identity/verifications/{id}/submit``."""
        return cast(
            IdentityVerification,
            await self._http.request(
                "POST", f"{_VERIFICATIONS}/{seg(id)}/submit", idempotency_key=idempotency_key
            ),
        )

    async def cancel(
        self, id: str, *, idempotency_key: str | None = None
    ) -> IdentityVerification:
        """``POST /v1/identity/verifications/{id}/cancel``."""
        return cast(
            IdentityVerification,
            await self._http.request(
                "POST", f"{_VERIFICATIONS}/{seg(id)}/cancel", idempotency_key=idempotency_key
            ),
        )

    async def credential(self, id: str) -> dict[str, Any]:
        """``GET /v1/identity/verifications/{id}/credential``."""
        issued = await self._http.request("GET", f"{_VERIFICATIONS}/{seg(id)}/credential")
        return cast(dict[str, Any], issued["verifiableCredential"])


class AsyncAttestations:
    """Attestations (async): the same methods as :class:`Attestations`."""

    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def create(
        self,
        *,
        idempotency_key: str | None = None,
        wait: int | None = None,
        **params: Unpack[AttestationCreate],
    ) -> IdentityAttestation:
        """``POST /v1/identity/attestations`` (see :meth:`Attestations.create`)."""
        return cast(
            IdentityAttestation,
            await self._http.request(
                "POST",
                _ATTESTATIONS,
                body=params,
                idempotency_key=idempotency_key,
                wait=wait,
                not_verified=True,
            ),
        )

    async def retrieve(self, id: str) -> IdentityAttestation:
        """``GET /v1/identity/attestations/{id}``."""
        return cast(
            IdentityAttestation, await self._http.request("GET", f"{_ATTESTATIONS}/{seg(id)}")
        )

    def list(self, **params: Unpack[ListAttestationsParams]) -> AsyncPager[IdentityAttestation]:
        """``GET /v1/identity/attestations``, newest first (``subject`` filters)."""
        start = params.pop("starting_after", None)

        async def fetch(after: str | None) -> ListPage[IdentityAttestation]:
            return cast(
                ListPage[IdentityAttestation],
                await self._http.request(
                    "GET", _ATTESTATIONS, query={**params, "starting_after": after}
                ),
            )

        return AsyncPager(fetch, start)

    async def revoke(
        self, id: str, *, idempotency_key: str | None = None, wait: int | None = None
    ) -> IdentityAttestation:
        """``POST /v1/identity/attestations/{id}/revoke`` (final)."""
        return cast(
            IdentityAttestation,
            await self._http.request(
                "POST",
                f"{_ATTESTATIONS}/{seg(id)}/revoke",
                idempotency_key=idempotency_key,
                wait=wait,
            ),
        )


class AsyncIdentity:
    """W3C Verifiable Credentials (async): the same methods as :class:`Identity`."""

    def __init__(self, http: AsyncTransport) -> None:
        self._http = http
        self.verifications = AsyncIdentityVerifications(http)
        """Verification sessions (testnet)."""
        self.attestations = AsyncAttestations(http)
        """Verified credentials attested on the mode's attestation chain."""

    async def verify_credential(
        self, credential: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> VerificationResult:
        """``POST /v1/identity/credentials/verify``."""
        return cast(
            VerificationResult,
            await self._http.request(
                "POST",
                "/v1/identity/credentials/verify",
                body={"verifiableCredential": credential},
                idempotency_key=idempotency_key,
                verdict=True,
            ),
        )

    async def verify_presentation(
        self,
        presentation: Mapping[str, Any],
        *,
        challenge: str,
        domain: str | None = None,
        idempotency_key: str | None = None,
    ) -> VerificationResult:
        """``POST /v1/identity/presentations/verify``."""
        return cast(
            VerificationResult,
            await self._http.request(
                "POST",
                "/v1/identity/presentations/verify",
                body=_presentation_body(presentation, challenge, domain),
                idempotency_key=idempotency_key,
                verdict=True,
            ),
        )

    async def create_challenge(
        self, *, domain: str | None = None, idempotency_key: str | None = None
    ) -> IdentityChallenge:
        """``POST /v1/identity/challenges``."""
        return cast(
            IdentityChallenge,
            await self._http.request(
                "POST",
                "/v1/identity/challenges",
                body={"domain": domain},
                idempotency_key=idempotency_key,
            ),
        )

    async def issue_credential(
        self, credential: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """``POST /v1/identity/credentials/issue``; returns the signed credential."""
        issued = await self._http.request(
            "POST",
            "/v1/identity/credentials/issue",
            body={"credential": credential},
            idempotency_key=idempotency_key,
        )
        return cast(dict[str, Any], issued["verifiableCredential"])

    async def revoke_credential(
        self, id: str, *, idempotency_key: str | None = None
    ) -> IdentityCredential:
        """``POST /v1/identity/credentials/status`` (revocation, final)."""
        return cast(
            IdentityCredential,
            await self._http.request(
                "POST",
                "/v1/identity/credentials/status",
                body={"credentialId": id, "credentialStatus": _REVOCATION, "status": True},
                idempotency_key=idempotency_key,
            ),
        )

    async def status_list(self, id: str) -> StatusListCredential:
        """``GET /v1/identity/status-lists/{id}`` (public)."""
        return cast(
            StatusListCredential,
            await self._http.request("GET", f"/v1/identity/status-lists/{seg(id)}"),
        )
