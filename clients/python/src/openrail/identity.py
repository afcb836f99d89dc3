"""Identity (``/v1/identity``): W3C Verifiable Credentials. Verify a credential or a
presentation (Data Integrity proofs, validity, status), hand out single-use challenges for
presentations, and use Openrail as an issuer: sign a credential with a revocation entry,
revoke it, read its public status list.

A verification that ran is an answer, never an exception: a credential that does not verify
(HTTP 422) returns ``{"verified": False, "problemDetails": [...], "results": {...}}``. A
document that is no credential at all raises :class:`~openrail.OpenrailError` 400
``parameter_invalid``. Whether the issuer is *trusted* is not part of verification: decide
that from the credential's ``issuer`` with your own policy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from ._http import AsyncTransport, SyncTransport, seg
from .models import (
    IdentityChallenge,
    IdentityCredential,
    StatusListCredential,
    VerificationResult,
    VerificationResultProblemDetailsItem,
)

__all__ = ["Identity", "AsyncIdentity", "problem_names"]

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


class Identity:
    """W3C Verifiable Credentials: verify, challenges, issue, revoke, status lists."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

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


class AsyncIdentity:
    """W3C Verifiable Credentials (async): the same methods as :class:`Identity`."""

    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

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
