"""Compile-time checks (never run): wrong requests and wrong reads do not type-check.

``make python-sdk`` runs ``mypy --strict`` on this file; strict mode warns about unused
``type: ignore`` comments, so each line below fails the build the day the SDK's types stop
catching its mistake (a body typed ``Any``, a response typed ``dict``)."""

from __future__ import annotations

from typing import Literal

from openrail import AsyncOpenrail, Openrail
from openrail.models import Mandate

PAYER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
DEST = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"


def wrong_requests(client: Openrail) -> None:
    # A required member missing, a misspelt one, a value outside an enum.
    client.agentic.mandates.create(payer_account_id=PAYER, max_amount="1", currency="USD")  # type: ignore[call-arg]
    client.agentic.mandates.create(
        payer_account_id=PAYER, max_amount="1", currency="USD", interval="daily", max_amonut="2"  # type: ignore[call-arg]
    )
    client.agentic.mandates.create(
        payer_account_id=PAYER, max_amount="1", currency="USD", interval="hourly"  # type: ignore[arg-type]
    )
    client.agentic.mandates.create(
        payer_account_id=PAYER, max_amount="1", currency="GBP", interval="daily"  # type: ignore[arg-type]
    )
    # A payment's source without its id; a session key's lifetime as a string.
    client.payments.create(
        amount="1.00",
        currency="USD",
        source={"type": "wallet"},  # type: ignore[arg-type]
        destination={"type": "wallet", "address": DEST},
    )
    client.agentic.session_keys.create(mandate_id="man_1", expires_in="600")  # type: ignore[arg-type]
    # Lists take their filters only.
    client.agentic.debit_pulls.list(mandate_id="man_1")  # type: ignore[call-arg]
    client.events.list(type="payment.nope")  # type: ignore[arg-type]
    # Request options are typed too.
    client.agentic.debit_pulls.create(session_key_id="sk_1", amount="1", wait="30")  # type: ignore[arg-type]
    # Identity: a session's type and simulated outcome are the document's; lists filter.
    client.identity.verifications.create(type="wizardry", subject=DEST)  # type: ignore[arg-type]
    client.identity.verifications.create(
        type="personhood", subject=DEST, simulate={"outcome": "maybe"}  # type: ignore[arg-type]
    )
    client.identity.verifications.list(subject=DEST)  # type: ignore[call-arg]
    client.identity.attestations.create(credential=DEST)  # type: ignore[call-arg]


def wrong_reads(client: Openrail) -> None:
    mandate: Mandate = client.agentic.mandates.retrieve("man_1")
    mandate["statuz"]  # type: ignore[typeddict-item]
    status: Literal["active"] = mandate["status"]  # type: ignore[assignment]
    count: int = mandate["max_amount"]  # type: ignore[assignment]
    for pull in client.agentic.debit_pulls.list():
        amount: float = pull["amount"]  # type: ignore[assignment]
    attestation = client.identity.attestations.retrieve("att_1")
    revoked: Literal["suspended"] = attestation["status"]  # type: ignore[assignment]
    session = client.identity.verifications.retrieve("idv_1")
    session["credential"]  # type: ignore[typeddict-item]
    del status, count, amount, revoked


async def wrong_async(client: AsyncOpenrail) -> None:
    # An async call not awaited is no mandate.
    mandate: Mandate = client.agentic.mandates.retrieve("man_1")  # type: ignore[assignment]
    for _ in client.agentic.debit_pulls.list():  # type: ignore[attr-defined]
        pass
    del mandate
