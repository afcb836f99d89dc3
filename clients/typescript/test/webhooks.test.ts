// Our Standard Webhooks verification against the reference implementation (npm
// `standardwebhooks`): each signs what the other verifies, and each refuses what the
// other would refuse.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { Webhook as Reference } from "standardwebhooks";
import { Webhook, WebhookVerificationError, verifyWebhook } from "../src/index.js";

const secret = `whsec_${randomBytes(24).toString("base64")}`;
const other = `whsec_${randomBytes(24).toString("base64")}`;
const body = JSON.stringify({ id: "evt_1", object: "event", type: "debit_pull.authorized", data: { object: { amount: "5.00" } } });
const id = "evt_1";

function headers(sig: string, ts: number, msgId = id): Record<string, string> {
  return { "webhook-id": msgId, "webhook-timestamp": String(ts), "webhook-signature": sig };
}
const now = () => Math.floor(Date.now() / 1000);

test("the reference signs, we verify", () => {
  const ts = now();
  const sig = new Reference(secret).sign(id, new Date(ts * 1000), body);
  const event = new Webhook(secret).verify(body, headers(sig, ts));
  assert.equal(event.id, "evt_1");
  assert.equal(verifyWebhook(secret, Buffer.from(body), new Headers(headers(sig, ts))).type, "debit_pull.authorized");
});

test("we sign, the reference verifies (and our signature is byte-identical to its)", () => {
  const ts = now();
  const ours = new Webhook(secret).sign(id, ts, body);
  assert.equal(ours, new Reference(secret).sign(id, new Date(ts * 1000), body));
  const verified = new Reference(secret).verify(body, headers(ours, ts)) as { id: string };
  assert.equal(verified.id, "evt_1");
});

test("a tampered body, another id or another secret is refused by both", () => {
  const ts = now();
  const sig = new Webhook(secret).sign(id, ts, body);
  const tampered = body.replace("5.00", "500.00");
  for (const [b, h, s] of [
    [tampered, headers(sig, ts), secret],
    [body, headers(sig, ts, "evt_2"), secret],
    [body, headers(sig, ts), other],
  ] as const) {
    assert.throws(() => new Webhook(s).verify(b, h), WebhookVerificationError);
    assert.throws(() => new Reference(s).verify(b, h));
  }
});

test("a timestamp outside the tolerance is refused by both, inside it is accepted", () => {
  for (const skew of [-301, 301, -3600]) {
    const ts = now() + skew;
    const sig = new Reference(secret).sign(id, new Date(ts * 1000), body);
    assert.throws(() => new Webhook(secret).verify(body, headers(sig, ts)), /too (old|new)/);
    assert.throws(() => new Reference(secret).verify(body, headers(sig, ts)));
  }
  const ts = now() - 200;
  const sig = new Reference(secret).sign(id, new Date(ts * 1000), body);
  new Webhook(secret).verify(body, headers(sig, ts));
  assert.throws(() => new Webhook(secret).verify(body, headers(sig, ts), { toleranceSeconds: 100 }), /too old/);
});

test("during a rotation the header carries two signatures; either secret verifies", () => {
  const ts = now();
  const both = `${new Webhook(other).sign(id, ts, body)} ${new Webhook(secret).sign(id, ts, body)}`;
  new Webhook(secret).verify(body, headers(both, ts));
  new Webhook(other).verify(body, headers(both, ts));
  new Reference(secret).verify(body, headers(both, ts));
  const third = `whsec_${randomBytes(24).toString("base64")}`;
  assert.throws(() => new Webhook(third).verify(body, headers(both, ts)), /no matching signature/);
});

test("missing headers, other versions and malformed secrets are refused", () => {
  const ts = now();
  const sig = new Webhook(secret).sign(id, ts, body);
  assert.throws(() => new Webhook(secret).verify(body, { "webhook-id": id, "webhook-timestamp": String(ts) }), /missing/);
  assert.throws(() => new Webhook(secret).verify(body, headers(sig.replace("v1,", "v2,"), ts)), /no matching/);
  assert.throws(() => new Webhook(secret).verify(body, { ...headers(sig, ts), "webhook-timestamp": "soon" }), /invalid webhook-timestamp/);
  assert.throws(() => new Webhook("whsec_not base64!"), TypeError);
});
