"""A wallet → wallet payment the source signs, a bank → wallet payment, withdrawal, events
and the account's settings, against ``openrail dev``."""

from __future__ import annotations

import asyncio
import time

import pytest

from openrail import AsyncOpenrail, Openrail, OpenrailError, account_from_private_key

from .conftest import Server

DEST = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"


def test_a_wallet_to_wallet_payment_signed_by_the_source_wallet(server: Server) -> None:
    with Openrail(server.key, base_url=server.url) as client:
        created = client.payments.create(
            amount="12.50",
            currency="USD",
            source={"type": "wallet", "id": server.payer},
            destination={"type": "wallet", "address": DEST},
        )
        assert created["status"] == "requires_authorization"
        auth = created["authorization"]
        assert auth is not None and auth["method"] == "payer_signature"
        assert auth["typed_data"]["primaryType"] == "Payment"
        payment = client.payments.sign_and_authorize(
            created, account_from_private_key(server.payer_key), wait=30
        )
        assert (payment["status"], payment["amount"]) == ("succeeded", "12.50")
        tx = payment["onchain"]["tx_hash"]
        assert tx and tx.startswith("0x") and len(tx) == 66
        assert client.payments.retrieve(payment["id"])["status"] == "succeeded"
        types = [e["type"] for e in client.events.list(object_id=payment["id"], limit=1)]
        assert "payment.succeeded" in types, types
        assert any(p["id"] == payment["id"] for p in client.payments.list(limit=100))


def test_a_bank_account_pays_a_wallet_and_a_missing_object_is_a_typed_404(server: Server) -> None:
    async def run() -> None:
        async with AsyncOpenrail(server.key, base_url=server.url) as client:
            account = await client.bank_accounts.create(
                owner_name="Ada Lovelace", currency="USD", balance="1500.00", delay_seconds=0
            )
            assert account["available_balance"] == "1500.00"
            payment = await client.payments.create(
                amount="40.00",
                currency="USD",
                source={"type": "bank_account", "id": account["id"]},
                destination={"type": "wallet", "address": DEST},
                wait=30,
            )
            assert payment["authorization"] == {"method": "bank_mandate"}
            status = payment["status"]
            deadline = time.monotonic() + 30
            while status not in ("succeeded", "failed") and time.monotonic() < deadline:
                await asyncio.sleep(0.5)
                status = (await client.payments.retrieve(payment["id"]))["status"]
            assert status == "succeeded"
            assert (await client.bank_accounts.retrieve(account["id"]))["balance"] == "1460.00"

            with pytest.raises(OpenrailError) as e:
                await client.payments.retrieve("pay_doesnotexist")
            assert (e.value.status, e.value.code) == (404, "resource_missing")
            assert e.value.request_id and e.value.request_id.startswith("req_")

    asyncio.run(run())


def test_a_payment_waiting_for_its_payer_is_withdrawn_a_paid_one_cannot_be(server: Server) -> None:
    payer = account_from_private_key(server.payer_key)
    with Openrail(server.key, base_url=server.url) as client:

        def create() -> str:
            p = client.payments.create(
                amount="1.00",
                currency="USD",
                source={"type": "wallet", "id": server.payer},
                destination={"type": "wallet", "address": DEST},
            )
            assert p["status"] == "requires_authorization"
            return p["id"]

        waiting = client.payments.retrieve(create())
        assert client.payments.cancel(waiting["id"])["status"] == "canceled"
        with pytest.raises(OpenrailError) as e:
            client.payments.sign_and_authorize(waiting, payer)
        assert (e.value.status, e.value.code) == (409, "payment_canceled")

        paid = client.payments.sign_and_authorize(client.payments.retrieve(create()), payer, wait=30)
        assert paid["status"] == "succeeded"
        with pytest.raises(OpenrailError) as e:
            client.payments.cancel(paid["id"])
        assert (e.value.status, e.value.code) == (409, "payment_not_cancelable")


def test_the_account_says_which_chain_settles_its_payments(server: Server) -> None:
    with Openrail(server.key, base_url=server.url) as client:
        account = client.account.retrieve()
        assert account["object"] == "account" and account["id"].startswith("acct_")
        assert [c["role"] for c in account["chains"]] == ["settlement", "attestation"]
        # Setting the current value changes nothing (the other tests share this account).
        same = client.account.update(payments_chain=account["payments_chain"])
        assert same["payments_chain"] == account["payments_chain"]
        with pytest.raises(OpenrailError) as e:
            client.account.update(payments_chain="chain-c")  # type: ignore[arg-type]
        assert (e.value.status, e.value.code) == (400, "parameter_invalid")
        assert e.value.param == "payments_chain"
