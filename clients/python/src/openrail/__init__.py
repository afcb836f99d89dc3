"""Openrail's Python SDK: one-time payments and agentic recurring debits.

    from openrail import Openrail, account_from_private_key

    client = Openrail(api_key="sk_testnet_…", base_url="http://127.0.0.1:8080")
    payer = account_from_private_key(payer_key)
    mandate = client.agentic.mandates.create(
        payer_account_id=payer.address, max_amount="100.00", currency="USD", interval="daily"
    )
    mandate = client.agentic.mandates.sign_and_authorize(mandate, payer)

See ``docs/python-sdk.md``. Modules: :mod:`openrail.agentic`, :mod:`openrail.payments`,
:mod:`openrail.resources`, :mod:`openrail.identity`, :mod:`openrail.signing`, :mod:`openrail.webhooks`,
:mod:`openrail.errors`, :mod:`openrail.paging`, :mod:`openrail.models` (generated types).
"""

from ._client import AsyncOpenrail, Openrail
from ._version import __version__
from .errors import (
    CredentialNotVerifiedError,
    OpenrailConnectionError,
    OpenrailError,
    WebhookVerificationError,
)
from .identity import problem_names
from .paging import AsyncPager, ListPage, Pager
from .signing import (
    DEBIT_PULL_TYPES,
    TOKEN_DECIMALS,
    Signer,
    account_from_private_key,
    consent_typed_data,
    debit_pull_typed_data,
    recover_typed_data_signer,
    sign_debit_pull,
    sign_typed_data,
    to_token_units,
)
from .webhooks import Webhook, verify_webhook

__all__ = [
    "AsyncOpenrail",
    "CredentialNotVerifiedError",
    "AsyncPager",
    "DEBIT_PULL_TYPES",
    "ListPage",
    "Openrail",
    "OpenrailConnectionError",
    "OpenrailError",
    "Pager",
    "Signer",
    "TOKEN_DECIMALS",
    "Webhook",
    "WebhookVerificationError",
    "__version__",
    "account_from_private_key",
    "consent_typed_data",
    "debit_pull_typed_data",
    "problem_names",
    "recover_typed_data_signer",
    "sign_debit_pull",
    "sign_typed_data",
    "to_token_units",
    "verify_webhook",
]
