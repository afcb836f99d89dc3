// Retries, idempotency keys, Retry-After, typed errors and paging, against a local
// scripted HTTP server (no Openrail needed).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { CredentialNotVerifiedError, Openrail, OpenrailConnectionError, OpenrailError } from "../src/index.js";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
  at: number;
}

async function serve(handler: (req: Seen, res: ServerResponse, n: number) => void) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const s = { method: req.method!, url: req.url!, headers: req.headers, body, at: Date.now() };
      seen.push(s);
      handler(s, res, seen.length);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { seen, baseUrl: `http://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

function problem(res: ServerResponse, status: number, code: string, headers: Record<string, string> = {}, extra: object = {}) {
  res.writeHead(status, { "content-type": "application/problem+json", "request-id": "req_test", ...headers });
  res.end(JSON.stringify({ type: `https://docs.openrail.dev/errors/${code}`, title: "t", status, detail: "d", code, ...extra }));
}

test("a POST carries an Idempotency-Key, the same on every retry; 503 and 429 honour Retry-After", async () => {
  const s = await serve((_req, res, n) => {
    if (n === 1) return problem(res, 503, "temporarily_unavailable", { "retry-after": "1" });
    if (n === 2) return problem(res, 429, "rate_limited", { "retry-after": "0" });
    res.writeHead(201, { "content-type": "application/json" });
    res.end(JSON.stringify({ id: "man_1", object: "mandate" }));
  });
  try {
    const client = new Openrail({ apiKey: "sk_testnet_x", baseUrl: s.baseUrl });
    const m = await client.agentic.mandates.create({ payer_account_id: "ba_1", max_amount: "1", currency: "USD", interval: "daily" });
    assert.equal(m.id, "man_1");
    assert.equal(s.seen.length, 3);
    const keys = s.seen.map((r) => r.headers["idempotency-key"]);
    assert.ok(keys[0] && keys[0].length > 10);
    assert.deepEqual(keys, [keys[0], keys[0], keys[0]]);
    assert.ok(s.seen[1]!.at - s.seen[0]!.at >= 950, `Retry-After: 1 not honoured (${s.seen[1]!.at - s.seen[0]!.at} ms)`);
    assert.equal(s.seen[0]!.headers["authorization"], "Bearer sk_testnet_x");
    assert.equal(s.seen[0]!.headers["content-type"], "application/json");
    // Another call, another key.
    await client.agentic.mandates.create({ payer_account_id: "ba_1", max_amount: "1", currency: "USD", interval: "daily" });
    assert.notEqual(s.seen[3]!.headers["idempotency-key"], keys[0]);
  } finally {
    await s.close();
  }
});

test("409 idempotency_in_progress is retried; a given key and Prefer: wait are sent; DELETE has a key, GET none", async () => {
  const s = await serve((req, res, n) => {
    if (n === 1) return problem(res, 409, "idempotency_in_progress", { "retry-after": "0" });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ id: "sk_1", object: "session_key", status: req.method === "DELETE" ? "revoked" : "active" }));
  });
  try {
    const client = new Openrail({ apiKey: "k", baseUrl: s.baseUrl });
    await client.agentic.sessionKeys.revoke("sk_1", { idempotencyKey: "revoke-sk_1", wait: 5 });
    assert.deepEqual(s.seen.map((r) => [r.method, r.headers["idempotency-key"], r.headers["prefer"]]), [
      ["DELETE", "revoke-sk_1", "wait=5"],
      ["DELETE", "revoke-sk_1", "wait=5"],
    ]);
    await client.agentic.sessionKeys.retrieve("sk_1");
    assert.equal(s.seen[2]!.headers["idempotency-key"], undefined);
    assert.equal(s.seen[2]!.url, "/v1/session-keys/sk_1");
  } finally {
    await s.close();
  }
});

test("a 409 about the object (payment_not_cancelable) is not retried", async () => {
  const s = await serve((_req, res) => problem(res, 409, "payment_not_cancelable"));
  try {
    const client = new Openrail({ apiKey: "k", baseUrl: s.baseUrl });
    await assert.rejects(client.payments.cancel("pay_1"), (e: unknown) => {
      assert.ok(e instanceof OpenrailError);
      assert.equal(e.status, 409);
      assert.equal(e.code, "payment_not_cancelable");
      return true;
    });
    assert.equal(s.seen.length, 1);
    assert.equal(s.seen[0]!.url, "/v1/payments/pay_1/cancel");
    assert.equal(s.seen[0]!.method, "POST");
    assert.ok(s.seen[0]!.headers["idempotency-key"]);
  } finally {
    await s.close();
  }
});

test("a 422 is not retried and is typed: code, param, status, request_id, pull_id, remaining, resets_at", async () => {
  const s = await serve((_req, res) =>
    problem(res, 422, "allowance_exceeded", {}, { param: "amount", request_id: "req_body", pull_id: "pull_1", remaining: "10.00", resets_at: "2026-11-26T00:00:00Z" }),
  );
  try {
    const client = new Openrail({ apiKey: "k", baseUrl: s.baseUrl });
    const err = await client.agentic.debitPulls.create({ session_key_id: "sk_1", amount: "20.00" }).then(
      () => assert.fail("resolved"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof OpenrailError);
    assert.equal(err.status, 422);
    assert.equal(err.code, "allowance_exceeded");
    assert.equal(err.param, "amount");
    assert.equal(err.requestId, "req_body");
    assert.equal(err.pullId, "pull_1");
    assert.equal(err.remaining, "10.00");
    assert.equal(err.resetsAt, "2026-11-26T00:00:00Z");
    assert.equal(s.seen.length, 1);
  } finally {
    await s.close();
  }
});

test("retries stop after maxRetries; the last answer is thrown", async () => {
  const s = await serve((_req, res) => problem(res, 503, "temporarily_unavailable", { "retry-after": "0" }));
  try {
    const client = new Openrail({ apiKey: "k", baseUrl: s.baseUrl, maxRetries: 2 });
    await assert.rejects(client.events.retrieve("evt_1"), (e: unknown) => e instanceof OpenrailError && e.status === 503 && e.requestId === "req_test");
    assert.equal(s.seen.length, 3);
  } finally {
    await s.close();
  }
});

test("network errors are retried with the same key, then surface as OpenrailConnectionError", async () => {
  const s = await serve((_req, res, n) => {
    if (n === 1) return res.socket?.destroy();
    res.writeHead(201, { "content-type": "application/json" });
    res.end(JSON.stringify({ id: "pay_1" }));
  });
  try {
    const client = new Openrail({ apiKey: "k", baseUrl: s.baseUrl });
    const p = await client.payments.create({ amount: "1", currency: "USD", source: { type: "bank_account", id: "ba_1" }, destination: { type: "wallet", address: "0x90F79bf6EB2c4f870365E785982E1f101E93b906" } });
    assert.equal(p.id, "pay_1");
    assert.equal(s.seen.length, 2);
    assert.equal(s.seen[0]!.headers["idempotency-key"], s.seen[1]!.headers["idempotency-key"]);
  } finally {
    await s.close();
  }
  // Nothing listens there any more.
  const client = new Openrail({ apiKey: "k", baseUrl: s.baseUrl, maxRetries: 1 });
  await assert.rejects(client.events.retrieve("evt_1"), OpenrailConnectionError);
});

test("lists: await gives one page; for await follows starting_after while has_more", async () => {
  const ids = Array.from({ length: 7 }, (_, i) => `evt_${7 - i}`);
  const s = await serve((req, res) => {
    const u = new URL(req.url, "http://x");
    const limit = Number(u.searchParams.get("limit") ?? 10);
    const after = u.searchParams.get("starting_after");
    const start = after ? ids.indexOf(after) + 1 : 0;
    const data = ids.slice(start, start + limit).map((id) => ({ id, object: "event" }));
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ object: "list", url: "/v1/events", data, has_more: start + limit < ids.length }));
  });
  try {
    const client = new Openrail({ apiKey: "k", baseUrl: s.baseUrl });
    const page = await client.events.list({ limit: 3, type: "payment.*" });
    assert.deepEqual(page.data.map((e) => e.id), ids.slice(0, 3));
    assert.equal(page.has_more, true);
    const all: string[] = [];
    for await (const e of client.events.list({ limit: 3, type: "payment.*" })) all.push(e.id);
    assert.deepEqual(all, ids);
    assert.deepEqual(
      s.seen.slice(1).map((r) => r.url),
      ["/v1/events?limit=3&type=payment.*", "/v1/events?limit=3&type=payment.*&starting_after=evt_5", "/v1/events?limit=3&type=payment.*&starting_after=evt_2"],
    );
    assert.deepEqual((await client.events.list({ limit: 3, starting_after: "evt_5" }).toArray()).map((e) => e.id), ids.slice(3));
  } finally {
    await s.close();
  }
});

test("identity: a 422 verdict resolves, a 422 problem throws; a client without a key sends no Authorization", async () => {
  const verdict = { verified: false, problemDetails: [{ type: "https://www.w3.org/TR/vc-data-model#RANGE_ERROR", code: -67, title: "t", detail: "d" }], results: {} };
  const s = await serve((req, res, n) => {
    if (n === 1 || n === 3) {
      res.writeHead(422, { "content-type": "application/json" });
      return res.end(JSON.stringify(verdict));
    }
    problem(res, 422, "idempotency_key_reused");
  });
  try {
    const openrail = new Openrail({ apiKey: "sk_testnet_x", baseUrl: s.baseUrl, maxRetries: 0 });
    assert.deepEqual(await openrail.identity.verifyCredential({ type: "VerifiableCredential" }), verdict);
    assert.equal(s.seen[0]!.headers["authorization"], "Bearer sk_testnet_x");
    assert.deepEqual(JSON.parse(s.seen[0]!.body), { verifiableCredential: { type: "VerifiableCredential" } });
    await assert.rejects(openrail.identity.verifyCredential({}, { idempotencyKey: "k" }), (e: unknown) => e instanceof OpenrailError && e.code === "idempotency_key_reused");
    const anonymous = new Openrail({ apiKey: null, baseUrl: s.baseUrl, maxRetries: 0 });
    assert.equal((await anonymous.identity.verifyCredential({})).verified, false);
    assert.equal(s.seen[2]!.headers["authorization"], undefined);
    // Elsewhere a 422 stays an error, even with a body that looks like a verdict.
    await assert.rejects(openrail.identity.createChallenge({}), (e: unknown) => e instanceof OpenrailError && e.status === 422);
    assert.throws(() => new Openrail({ apiKey: "", baseUrl: s.baseUrl }), TypeError);
  } finally {
    await s.close();
  }
});

test("attestations: a 422 verdict throws CredentialNotVerifiedError with it; action routes send no body; sessions page", async () => {
  const verdict = { verified: false, problemDetails: [{ type: "https://www.w3.org/TR/vc-data-model#RANGE_ERROR", code: -67, title: "t", detail: "d" }], results: {} };
  const s = await serve((req, res, n) => {
    if (n === 1) {
      res.writeHead(422, { "content-type": "application/json", "request-id": "req_v" });
      return res.end(JSON.stringify(verdict));
    }
    if (n === 2) return problem(res, 422, "idempotency_key_reused");
    res.writeHead(200, { "content-type": "application/json" });
    if (req.url.startsWith("/v1/identity/verifications?")) {
      const after = new URL(req.url, "http://x").searchParams.get("starting_after");
      return res.end(JSON.stringify({ object: "list", url: "/v1/identity/verifications", data: [{ id: after ? "idv_1" : "idv_2" }], has_more: !after }));
    }
    res.end(JSON.stringify({ id: "att_1", status: "revoked" }));
  });
  try {
    const openrail = new Openrail({ apiKey: "sk_testnet_x", baseUrl: s.baseUrl, maxRetries: 0 });
    await assert.rejects(openrail.identity.attestations.create({ verifiableCredential: { id: "urn:x" }, recipient: "0x1" }), (e: unknown) => {
      assert.ok(e instanceof CredentialNotVerifiedError);
      assert.ok(e instanceof OpenrailError);
      assert.equal(e.status, 422);
      assert.equal(e.code, "http_422");
      assert.equal(e.requestId, "req_v");
      assert.deepEqual(e.verification, verdict);
      assert.equal(e.message, "422: the credential does not verify (RANGE_ERROR)");
      return true;
    });
    assert.deepEqual(JSON.parse(s.seen[0]!.body), { verifiableCredential: { id: "urn:x" }, recipient: "0x1" });
    // A problem stays a plain OpenrailError.
    await assert.rejects(openrail.identity.attestations.create({ credential_id: "urn:x" }), (e: unknown) => e instanceof OpenrailError && !(e instanceof CredentialNotVerifiedError) && e.code === "idempotency_key_reused");
    assert.equal((await openrail.identity.attestations.revoke("att_1", { wait: 30 })).status, "revoked");
    assert.equal(s.seen[2]!.url, "/v1/identity/attestations/att_1/revoke");
    assert.equal(s.seen[2]!.body, "");
    assert.equal(s.seen[2]!.headers["prefer"], "wait=30");
    await openrail.identity.verifications.submit("idv_2");
    await openrail.identity.verifications.cancel("idv_2");
    assert.deepEqual(s.seen.slice(3, 5).map((x) => [x.method, x.url, x.body]), [
      ["POST", "/v1/identity/verifications/idv_2/submit", ""],
      ["POST", "/v1/identity/verifications/idv_2/cancel", ""],
    ]);
    const ids = (await openrail.identity.verifications.list({ limit: 1 }).toArray()).map((v) => v.id);
    assert.deepEqual(ids, ["idv_2", "idv_1"]);
    assert.equal(s.seen[6]!.url, "/v1/identity/verifications?limit=1&starting_after=idv_2");
  } finally {
    await s.close();
  }
});
