// Verification sessions and attestations against `openrail dev`: a session the simulated
// provider verifies issues a credential, which is attested on the attestation chain, listed
// by its subject and revoked; a session whose check fails comes back with its reason and is
// canceled; a posted credential that does not verify throws with its verification.
import { test } from "node:test";
import assert from "node:assert/strict";
import { generatePrivateKey } from "viem/accounts";
import { CredentialNotVerifiedError, Openrail, OpenrailError, accountFromPrivateKey, problemName } from "../src/index.js";
import { server, skipWithoutServer } from "./env.js";

/** Reads with `get` every 100 ms until `done` holds (at most 30 s). */
async function until<T>(what: string, get: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await get();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const code = (c: string) => (e: unknown) => e instanceof OpenrailError && e.code === c;

test("a verified session's credential is attested, listed by subject and revoked", { skip: skipWithoutServer }, async () => {
  const { url, key } = server();
  const openrail = new Openrail({ apiKey: key, baseUrl: url });
  const { verifications, attestations } = openrail.identity;
  // A wallet of this test alone: the list by subject holds only its attestations.
  const wallet = accountFromPrivateKey(generatePrivateKey()).address;

  const s = await verifications.create({ type: "personhood", subject: wallet });
  assert.match(s.id, /^idv_/);
  assert.equal(s.status, "requires_input");
  assert.equal(s.credential_type, "PersonhoodCredential");
  assert.equal(s.subject, wallet);
  assert.equal(s.simulate.outcome, "verified");
  await assert.rejects(verifications.credential(s.id), code("verification_not_verified"));
  assert.equal((await verifications.submit(s.id)).status, "processing");
  await assert.rejects(verifications.submit(s.id), code("verification_not_submittable"));
  const verified = await until("the session", () => verifications.retrieve(s.id), (v) => v.status !== "processing");
  assert.equal(verified.status, "verified", JSON.stringify(verified));
  assert.equal(verified.last_error, null);
  assert.match(String(verified.credential_id), /^urn:uuid:/);
  await assert.rejects(verifications.cancel(s.id), code("verification_not_cancelable"));

  // The credential, for its holder: about the wallet's did:pkh, and it verifies.
  const vc = await verifications.credential(s.id);
  assert.equal(vc["id"], verified.credential_id);
  assert.deepEqual(vc["type"], ["VerifiableCredential", "PersonhoodCredential"]);
  const subject = (vc["credentialSubject"] as { id: string }).id;
  assert.ok(subject.startsWith("did:pkh:eip155:") && subject.endsWith(wallet), subject);
  assert.equal((await openrail.identity.verifyCredential(vc)).verified, true);

  // Attested from its id; active once the attestation chain mined it.
  const created = await attestations.create({ credential_id: verified.credential_id! });
  assert.match(created.id, /^att_/);
  assert.ok(["pending", "active"].includes(created.status), created.status);
  assert.equal(created.recipient, wallet);
  assert.equal(created.credential_id, verified.credential_id);
  assert.equal(created.credential_type, "PersonhoodCredential");
  assert.equal(created.issuer, vc["issuer"]);
  const active = await until("the attestation", () => attestations.retrieve(created.id), (a) => a.status !== "pending");
  assert.equal(active.status, "active", JSON.stringify(active));
  assert.match(String(active.uid), /^0x[0-9a-f]{64}$/);

  // The same credential posted whole: verified, then attested again.
  const again = await attestations.create({ verifiableCredential: vc, recipient: wallet });
  assert.equal(again.credential_digest, active.credential_digest);
  // Changed, it does not verify: a CredentialNotVerifiedError with the verification.
  await assert.rejects(attestations.create({ verifiableCredential: { ...vc, validUntil: "2099-01-01T00:00:00Z" } }), (e: unknown) => {
    assert.ok(e instanceof CredentialNotVerifiedError, String(e));
    assert.ok(e instanceof OpenrailError);
    assert.equal(e.status, 422);
    assert.equal(e.verification.verified, false);
    assert.ok(e.verification.problemDetails.map(problemName).length > 0);
    return true;
  });
  // A recipient other than the subject: 400 naming it.
  await assert.rejects(attestations.create({ credential_id: verified.credential_id!, recipient: "0x90F79bf6EB2c4f870365E785982E1f101E93b906" }), (e: unknown) => {
    assert.ok(e instanceof OpenrailError);
    assert.equal(e.status, 400);
    assert.equal(e.param, "recipient");
    return true;
  });

  // Listed by subject, newest first, across pages of one.
  const listed = await attestations.list({ subject: wallet, limit: 1 }).toArray();
  assert.deepEqual(listed.map((a) => a.id), [again.id, created.id]);
  const page = await attestations.list({ subject: wallet, limit: 1 });
  assert.equal(page.has_more, true);
  await assert.rejects(attestations.list({ subject: "did:example:x" }).toArray(), code("parameter_invalid"));

  // Revoked on chain: revoked once mined, and revoking again answers it as it is.
  await attestations.revoke(active.id);
  const revoked = await until("the revocation", () => attestations.retrieve(active.id), (a) => a.status !== "active");
  assert.equal(revoked.status, "revoked", JSON.stringify(revoked));
  assert.ok(revoked.revoked_at);
  assert.equal((await attestations.revoke(active.id)).status, "revoked");
  await assert.rejects(attestations.retrieve("att_nope"), code("resource_missing"));
});

test("a session whose check fails comes back with its reason, and is canceled", { skip: skipWithoutServer }, async () => {
  const { url, key } = server();
  const openrail = new Openrail({ apiKey: key, baseUrl: url });
  const { verifications } = openrail.identity;
  const wallet = accountFromPrivateKey(generatePrivateKey()).address;
  const s = await verifications.create({
    type: "financial_health",
    subject: wallet,
    simulate: { outcome: "failed", failure_reason: "the bank statement was unreadable" },
  });
  await verifications.submit(s.id);
  const failed = await until("the session", () => verifications.retrieve(s.id), (v) => v.status !== "processing");
  assert.equal(failed.status, "requires_input", JSON.stringify(failed));
  assert.deepEqual(failed.last_error, { code: "verification_failed", reason: "the bank statement was unreadable" });
  assert.equal(failed.credential_id, null);
  await assert.rejects(verifications.credential(s.id), code("verification_not_verified"));
  assert.equal((await verifications.cancel(s.id)).status, "canceled");
  await assert.rejects(verifications.submit(s.id), code("verification_not_submittable"));
  await assert.rejects(verifications.create({ type: "agent", subject: "0x0000000000000000000000000000000000000000" }), (e: unknown) => {
    assert.ok(e instanceof OpenrailError);
    assert.equal(e.param, "subject");
    return true;
  });
  // Listed, newest first: this session comes before any older one.
  const ids = (await verifications.list({ limit: 100 }).toArray()).map((v) => v.id);
  assert.ok(ids.includes(s.id));
  const first = await verifications.list({ limit: 1 });
  assert.equal(first.data.length, 1);
});
