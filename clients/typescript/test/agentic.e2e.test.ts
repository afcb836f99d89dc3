// The agentic flow against `openrail dev`: a mandate the payer signs (EIP-712, viem) →
// a session key → pulls → allowance_exceeded → revoke → session_key_revoked; and a key
// an agent signs for.
import { test } from "node:test";
import assert from "node:assert/strict";
import { generatePrivateKey } from "viem/accounts";
import { Openrail, OpenrailError, accountFromPrivateKey } from "../src/index.js";
import { server, skipWithoutServer } from "./env.js";

const DEST = "0x90F79bf6EB2c4f870365E785982E1f101E93b906" as const;

async function rejects(p: Promise<unknown>): Promise<OpenrailError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof OpenrailError, `not an OpenrailError: ${e}`);
    return e;
  }
  assert.fail("expected an OpenrailError");
}

test("mandate with the payer's signature → key → pulls → allowance_exceeded → revoke", { skip: skipWithoutServer }, async () => {
  const { url, key, payerKey, payer } = server();
  const openrail = new Openrail({ apiKey: key, baseUrl: url });
  const payerAccount = accountFromPrivateKey(payerKey);

  const created = await openrail.agentic.mandates.create({ payer_account_id: payer, max_amount: "100.00", currency: "USD", interval: "daily" });
  assert.equal(created.status, "requires_authorization");
  assert.equal(created.authorization?.method, "payer_signature");

  // A signature by someone else is refused, typed, and changes nothing.
  const intruder = accountFromPrivateKey(generatePrivateKey());
  const bad = await rejects(openrail.agentic.mandates.signAndAuthorize(created, intruder));
  assert.equal(bad.status, 422);
  assert.equal(bad.code, "signature_invalid");
  assert.match(bad.requestId ?? "", /^req_/);

  const mandate = await openrail.agentic.mandates.signAndAuthorize(created, payerAccount, { wait: 30 });
  assert.equal(mandate.status, "active");
  assert.equal(mandate.current_epoch.remaining, "100.00");

  const sessionKey = await openrail.agentic.sessionKeys.create({ mandate_id: mandate.id, expires_in: 3600, max_amount: "60" }, { wait: 30 });
  assert.equal(sessionKey.status, "active");
  assert.match(sessionKey.secret ?? "", /^sks_testnet_/);

  const pull = await openrail.agentic.debitPulls.create({ session_key_id: sessionKey.id, amount: "50.00" }, { wait: 30, idempotencyKey: `pull-${sessionKey.id}` });
  assert.equal(pull.status, "authorized");
  assert.equal(pull.amount, "50.00");
  // The same Idempotency-Key replays the first answer (no second pull); another body with it is refused.
  const replay = await openrail.agentic.debitPulls.create({ session_key_id: sessionKey.id, amount: "50.00" }, { idempotencyKey: `pull-${sessionKey.id}` });
  assert.equal(replay.id, pull.id);
  const reused = await rejects(openrail.agentic.debitPulls.create({ session_key_id: sessionKey.id, amount: "5.00" }, { idempotencyKey: `pull-${sessionKey.id}` }));
  assert.equal(reused.code, "idempotency_key_reused");
  assert.equal(reused.param, "Idempotency-Key");

  // The agent pulls with its own secret.
  const agent = new Openrail({ apiKey: sessionKey.secret!, baseUrl: url });
  const small = await agent.agentic.debitPulls.create({ session_key_id: sessionKey.id, amount: "5.00" }, { wait: 30 });
  assert.equal(small.status, "authorized");

  const exceeded = await rejects(openrail.agentic.debitPulls.create({ session_key_id: sessionKey.id, amount: "20.00" }, { wait: 30 }));
  assert.equal(exceeded.status, 422);
  assert.equal(exceeded.code, "allowance_exceeded");
  assert.equal(exceeded.param, "amount");
  assert.equal(exceeded.remaining, "5.00");
  assert.ok(exceeded.resetsAt);
  assert.match(exceeded.pullId ?? "", /^pull_/);
  assert.equal((await openrail.agentic.debitPulls.retrieve(exceeded.pullId!)).status, "declined");

  const revoked = await openrail.agentic.sessionKeys.revoke(sessionKey.id, { wait: 30 });
  assert.equal(revoked.status, "revoked");
  const afterRevoke = await rejects(openrail.agentic.debitPulls.create({ session_key_id: sessionKey.id, amount: "1" }, { wait: 30 }));
  assert.equal(afterRevoke.code, "session_key_revoked");

  // Auto-paging: the key's pulls (two authorized, two declined), two per page.
  const pulls = await openrail.agentic.debitPulls.list({ session_key_id: sessionKey.id, limit: 2 }).toArray();
  assert.equal(pulls.length, 4);
  assert.deepEqual(pulls.map((p) => p.status).sort(), ["authorized", "authorized", "declined", "declined"]);
  assert.equal(new Set(pulls.map((p) => p.id)).size, 4);
});

test("a key an agent signs for: pulls carry its DebitPull signature", { skip: skipWithoutServer }, async () => {
  const { url, key, payerKey, payer } = server();
  const openrail = new Openrail({ apiKey: key, baseUrl: url });
  // The payer signs who may be paid and the one agent whose keys may pull.
  const agent = accountFromPrivateKey(generatePrivateKey());
  const created = await openrail.agentic.mandates.create({ payer_account_id: payer, max_amount: "100", currency: "USD", interval: "weekly", payees: [DEST], agent: agent.address });
  assert.deepEqual(created.payees, [DEST]);
  assert.equal(created.agent, agent.address);
  assert.equal(created.authorization?.method, "payer_signature");
  const message = created.authorization?.method === "payer_signature" ? created.authorization.typed_data.message : {};
  assert.deepEqual(message["payees"], [DEST]);
  assert.equal(message["agent"], agent.address);
  const mandate = await openrail.agentic.mandates.signAndAuthorize(created, accountFromPrivateKey(payerKey), { wait: 30 });
  assert.equal(mandate.status, "active");

  // Keys stay within what the payer signed: another destination or another signer is 422.
  const elsewhere = await rejects(
    openrail.agentic.sessionKeys.create({ mandate_id: mandate.id, expires_in: 600, allowed_destinations: ["0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65"] }),
  );
  assert.equal(elsewhere.status, 422);
  assert.equal(elsewhere.code, "session_key_outside_mandate");
  assert.equal(elsewhere.param, "allowed_destinations");
  const otherSigner = await rejects(
    openrail.agentic.sessionKeys.create({ mandate_id: mandate.id, expires_in: 600, signer: accountFromPrivateKey(generatePrivateKey()).address }),
  );
  assert.equal(otherSigner.code, "session_key_outside_mandate");
  assert.equal(otherSigner.param, "signer");

  // Without a signer, the key gets the agent (and the payees).
  const sessionKey = await openrail.agentic.sessionKeys.create({ mandate_id: mandate.id, expires_in: 600 }, { wait: 30 });
  assert.equal(sessionKey.signer, agent.address);
  assert.deepEqual(sessionKey.allowed_destinations, [DEST]);
  assert.ok(sessionKey.eip712_domain);

  // The key's agent credential names its signer; issued once, then the same; it verifies.
  const credential = await openrail.agentic.sessionKeys.issueAgentCredential(sessionKey.id);
  assert.deepEqual(credential["type"], ["VerifiableCredential", "AgentCredential"]);
  const subject = credential["credentialSubject"] as Record<string, unknown>;
  assert.equal(subject["id"], `did:pkh:eip155:${sessionKey.onchain.chain_id}:${agent.address}`);
  assert.equal(subject["sessionKey"], sessionKey.id);
  assert.equal(subject["mandate"], mandate.id);
  assert.deepEqual(await openrail.agentic.sessionKeys.issueAgentCredential(sessionKey.id), credential);
  assert.deepEqual(await openrail.agentic.sessionKeys.agentCredential(sessionKey.id), credential);
  assert.equal((await openrail.identity.verifyCredential(credential)).verified, true);

  const pull = await openrail.agentic.debitPulls.createSigned({ sessionKey, amount: "5.00", destination: DEST, signer: agent, nonce: 1n }, { wait: 30 });
  assert.equal(pull.status, "authorized");
  assert.equal(pull.destination, DEST);

  const reused = await rejects(openrail.agentic.debitPulls.createSigned({ sessionKey, amount: "5.00", destination: DEST, signer: agent, nonce: 1n }));
  assert.equal(reused.code, "nonce_used");
  const other = await rejects(
    openrail.agentic.debitPulls.createSigned({ sessionKey, amount: "5.00", destination: DEST, signer: accountFromPrivateKey(generatePrivateKey()) }),
  );
  assert.equal(other.code, "signature_invalid");
  const unsigned = await rejects(openrail.agentic.debitPulls.create({ session_key_id: sessionKey.id, amount: "1" }));
  assert.equal(unsigned.code, "signature_required");
});
