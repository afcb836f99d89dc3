// A wallet → wallet payment the source signs, a bank → wallet payment, and events.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Openrail, OpenrailError, accountFromPrivateKey } from "../src/index.js";
import { server, skipWithoutServer } from "./env.js";

const DEST = "0x90F79bf6EB2c4f870365E785982E1f101E93b906" as const;

test("a wallet → wallet payment, signed by the source wallet", { skip: skipWithoutServer }, async () => {
  const { url, key, payerKey, payer } = server();
  const openrail = new Openrail({ apiKey: key, baseUrl: url });
  const created = await openrail.payments.create({
    amount: "12.50",
    currency: "USD",
    source: { type: "wallet", id: payer },
    destination: { type: "wallet", address: DEST },
  });
  assert.equal(created.status, "requires_authorization");
  assert.equal(created.authorization?.method === "payer_signature" && created.authorization.typed_data.primaryType, "Payment");
  const payment = await openrail.payments.signAndAuthorize(created, accountFromPrivateKey(payerKey), { wait: 30 });
  assert.equal(payment.status, "succeeded");
  assert.equal(payment.amount, "12.50");
  assert.equal((await openrail.payments.retrieve(payment.id)).status, "succeeded");

  const events = await openrail.events.list({ object_id: payment.id }).toArray();
  assert.ok(events.some((e) => e.type === "payment.succeeded"), events.map((e) => e.type).join());
});

test("a simulated bank account pays a wallet; a missing object is a typed 404", { skip: skipWithoutServer }, async () => {
  const { url, key } = server();
  const openrail = new Openrail({ apiKey: key, baseUrl: url });
  const account = await openrail.bankAccounts.create({ owner_name: "Ada Lovelace", currency: "USD", balance: "1500.00", delay_seconds: 0 });
  assert.equal(account.available_balance, "1500.00");
  const payment = await openrail.payments.create(
    { amount: "40.00", currency: "USD", source: { type: "bank_account", id: account.id }, destination: { type: "wallet", address: DEST } },
    { wait: 30 },
  );
  assert.equal(payment.authorization?.method, "bank_mandate");
  let status = payment.status;
  for (let i = 0; i < 60 && status !== "succeeded" && status !== "failed"; i++) {
    await new Promise((r) => setTimeout(r, 500));
    status = (await openrail.payments.retrieve(payment.id)).status;
  }
  assert.equal(status, "succeeded");
  assert.equal((await openrail.bankAccounts.retrieve(account.id)).balance, "1460.00");

  await assert.rejects(openrail.payments.retrieve("pay_doesnotexist"), (e: unknown) => {
    assert.ok(e instanceof OpenrailError);
    assert.equal(e.status, 404);
    assert.equal(e.code, "resource_missing");
    return true;
  });
});

test("a payment waiting for its payer is withdrawn; a paid one cannot be", { skip: skipWithoutServer }, async () => {
  const { url, key, payerKey, payer } = server();
  const openrail = new Openrail({ apiKey: key, baseUrl: url });
  const params = { amount: "1.00", currency: "USD", source: { type: "wallet", id: payer }, destination: { type: "wallet", address: DEST } } as const;
  const waiting = await openrail.payments.create(params);
  assert.equal(waiting.status, "requires_authorization");
  const canceled = await openrail.payments.cancel(waiting.id);
  assert.equal(canceled.status, "canceled");
  await assert.rejects(openrail.payments.signAndAuthorize(waiting, accountFromPrivateKey(payerKey)), (e: unknown) => {
    assert.ok(e instanceof OpenrailError);
    assert.equal(e.status, 409);
    assert.equal(e.code, "payment_canceled");
    return true;
  });
  const paid = await openrail.payments.signAndAuthorize(await openrail.payments.create(params), accountFromPrivateKey(payerKey), { wait: 30 });
  assert.equal(paid.status, "succeeded");
  await assert.rejects(openrail.payments.cancel(paid.id), (e: unknown) => {
    assert.ok(e instanceof OpenrailError);
    assert.equal(e.status, 409);
    assert.equal(e.code, "payment_not_cancelable");
    return true;
  });
});

test("the account says which chain settles its payments; a chain that is none is a typed 400", { skip: skipWithoutServer }, async () => {
  const { url, key } = server();
  const openrail = new Openrail({ apiKey: key, baseUrl: url });
  const account = await openrail.account.retrieve();
  assert.equal(account.object, "account");
  assert.deepEqual(account.chains.map((c) => c.role), ["settlement", "attestation"]);
  // Setting the current value changes nothing (the other tests share this account).
  const same = await openrail.account.update({ payments_chain: account.payments_chain });
  assert.equal(same.payments_chain, account.payments_chain);
  await assert.rejects(openrail.account.update({ payments_chain: "chain-c" as "settlement" }), (e: unknown) => {
    assert.ok(e instanceof OpenrailError);
    assert.equal(e.status, 400);
    assert.equal(e.code, "parameter_invalid");
    return true;
  });
});
