// A real delivery from `openrail dev` to a local receiver, verified with our Webhook (and
// the reference package); endpoints, deliveries and events through the client.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook as Reference } from "standardwebhooks";
import { Openrail, Webhook, WebhookVerificationError } from "../src/index.js";
import { server, skipWithoutServer } from "./env.js";

test("openrail dev delivers a signed event; our Webhook verifies it, and refuses it with another secret", { skip: skipWithoutServer }, async () => {
  const { url, key, payer } = server();
  const openrail = new Openrail({ apiKey: key, baseUrl: url });
  const received: { body: Buffer; headers: IncomingHttpHeaders }[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ body: Buffer.concat(chunks), headers: req.headers });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  try {
    const port = (receiver.address() as AddressInfo).port;
    const endpoint = await openrail.webhookEndpoints.create({ url: `http://127.0.0.1:${port}/hooks`, enabled_events: ["mandate.created", "mandate.requires_authorization"] });
    assert.match(endpoint.secret ?? "", /^whsec_/);
    const listed = await openrail.webhookEndpoints.list().toArray();
    assert.ok(listed.some((e) => e.id === endpoint.id));

    const mandate = await openrail.agentic.mandates.create({ payer_account_id: payer, max_amount: "10", currency: "USD", interval: "monthly" });
    const deadline = Date.now() + 20_000;
    while (!received.some((r) => r.body.includes(mandate.id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const delivery = received.find((r) => r.body.includes(mandate.id));
    assert.ok(delivery, `no delivery for ${mandate.id} within 20 s (${received.length} received)`);

    const event = new Webhook(endpoint.secret!).verify(delivery.body, delivery.headers as Record<string, string>);
    assert.equal(event.id, delivery.headers["webhook-id"]);
    assert.ok(event.type.startsWith("mandate."));
    assert.equal((event.data.object as { id: string }).id, mandate.id);
    new Reference(endpoint.secret!).verify(delivery.body, delivery.headers as Record<string, string>);
    assert.deepEqual(await openrail.events.retrieve(event.id), event);

    const rotated = await openrail.webhookEndpoints.rotateSecret(endpoint.id);
    assert.notEqual(rotated.secret, endpoint.secret);
    assert.throws(() => new Webhook(rotated.secret!).verify(delivery.body, delivery.headers as Record<string, string>), WebhookVerificationError);

    const deliveries = await openrail.webhookEndpoints.listDeliveries(endpoint.id).toArray();
    assert.ok(deliveries.length >= 1);
    const deleted = await openrail.webhookEndpoints.delete(endpoint.id);
    assert.equal(deleted.deleted, true);
  } finally {
    await new Promise<void>((r) => receiver.close(() => r()));
  }
});
