"""The README's Python quickstart, as a program: a mandate the payer signs, a session key,
pulls until the key's ceiling declines one, the key revoked, then a wallet payment.

    KEY=sk_testnet_… PAYER_KEY=0x… python examples/quickstart.py

(``KEY`` and ``PAYER_KEY`` as ``make dev`` printed them; ``API`` when not on port 8080.)
The block between ``readme-start`` and ``readme-end`` is the README's Python snippet (a test
checks they are the same, and another runs this file against a fresh ``openrail dev``).
"""

from __future__ import annotations

import os

from openrail import Openrail, OpenrailError, account_from_private_key


def run(api: str, key: str, payer_key: str) -> None:
    """The quickstart against ``api`` with the account's ``key`` and the payer's private key."""
    # readme-start
    client = Openrail(key, base_url=api)
    payer = account_from_private_key(payer_key)  # an eth-account LocalAccount

    # A mandate on the payer's wallet: up to 100 USD a day to the one payee it names (no
    # key may pay anyone else), active once the payer signs its EIP-712 typed data.
    merchant = "0x000000000000000000000000000000000000bEEF"
    mandate = client.agentic.mandates.create(
        payer_account_id=payer.address,
        max_amount="100.00",
        currency="USD",
        interval="daily",
        purpose="quickstart",
        payees=[merchant],
    )
    mandate = client.agentic.mandates.sign_and_authorize(mandate, payer, wait=30)
    print("mandate", mandate["id"], mandate["status"])

    # A session key with a tighter ceiling; its secret is all the agent holds.
    session_key = client.agentic.session_keys.create(
        mandate_id=mandate["id"], expires_in=3600, max_amount="30", wait=30
    )
    secret = session_key.get("secret")
    assert secret, "the secret is shown once, at creation"
    agent = Openrail(secret, base_url=api)

    # The agent pulls 12.50 until the chain says the key's ceiling is spent.
    while True:
        try:
            pull = agent.agentic.debit_pulls.create(
                session_key_id=session_key["id"], amount="12.50", destination=merchant
            )
        except OpenrailError as e:
            if e.code != "allowance_exceeded":
                raise
            print(f"declined: {e.code}, {e.remaining} left")  # resets at e.resets_at
            break
        print("pull", pull["id"], pull["amount"], pull["status"])
    revoked = client.agentic.session_keys.revoke(session_key["id"])
    print("key", revoked["id"], revoked["status"])

    # A one-time payment from the payer's wallet, moved as the payer signed it.
    payment = client.payments.create(
        amount="5.00",
        currency="USD",
        source={"type": "wallet", "id": payer.address},
        destination={"type": "wallet", "address": "0x000000000000000000000000000000000000dEaD"},
    )
    payment = client.payments.sign_and_authorize(payment, payer, wait=30)
    print("payment", payment["id"], payment["status"])

    # Every event of the payment, across pages.
    for event in client.events.list(object_id=payment["id"], limit=2):
        print("event", event["type"])
    # readme-end


if __name__ == "__main__":
    run(
        os.environ.get("API", "http://127.0.0.1:8080"),
        os.environ["KEY"],
        os.environ["PAYER_KEY"],
    )
