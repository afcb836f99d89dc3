// Identity against `openrail dev`: Openrail issues a credential, which verifies (also on a
// client without a key) until it is revoked, seen through the public status list; a
// verdict of "not verified" resolves, a document that is no credential throws; a
// presentation verifies once for a challenge of this server.
import { test } from "node:test";
import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import { Openrail, OpenrailError, problemName, type VerificationResult } from "../src/index.js";
import { server, skipWithoutServer } from "./env.js";
import { Holder } from "./holder.js";

const names = (v: VerificationResult) => v.problemDetails.map(problemName);

/** Bit `index` of a status list's `encodedList` (multibase base64url of GZIP; bit 0 is the first byte's highest). */
function bit(encodedList: string, index: number): boolean {
  assert.ok(encodedList.startsWith("u"), encodedList.slice(0, 10));
  const bytes = gunzipSync(Buffer.from(encodedList.slice(1), "base64url"));
  return ((bytes[index >> 3]! >> (7 - (index & 7))) & 1) === 1;
}

test("an issued credential verifies until revoked; verdicts resolve, non-credentials throw", { skip: skipWithoutServer }, async () => {
  const { url, key } = server();
  const openrail = new Openrail({ apiKey: key, baseUrl: url });
  const vc = await openrail.identity.issueCredential({
    "@context": ["https://www.w3.org/ns/credentials/v2", "https://www.w3.org/ns/credentials/examples/v2"],
    type: ["VerifiableCredential", "ExampleAlumniCredential"],
    credentialSubject: { id: "did:example:alice", alumniOf: "Example University" },
  });
  assert.match(String(vc["issuer"]), /^did:key:z6Mk/);
  const proof = vc["proof"] as { cryptosuite: string };
  assert.equal(proof.cryptosuite, "eddsa-rdfc-2022");
  const status = vc["credentialStatus"] as { statusListCredential: string; statusListIndex: string };

  const ok = await openrail.identity.verifyCredential(vc);
  assert.equal(ok.verified, true, JSON.stringify(ok));
  assert.deepEqual(ok.problemDetails, []);
  // A client without a key verifies too, and may do nothing else.
  const anonymous = new Openrail({ apiKey: null, baseUrl: url });
  assert.equal((await anonymous.identity.verifyCredential(vc)).verified, true);
  await assert.rejects(anonymous.identity.createChallenge(), (e: unknown) => e instanceof OpenrailError && e.status === 401);

  // A changed claim: a verdict, not an exception.
  const changed = { ...vc, credentialSubject: { id: "did:example:alice", alumniOf: "Another University" } };
  const bad = await openrail.identity.verifyCredential(changed);
  assert.equal(bad.verified, false);
  assert.ok(bad.problemDetails.length > 0);
  assert.ok(bad.problemDetails.every((p) => p.type.startsWith("https://www.w3.org/TR/vc-data-model#")));
  // No credential at all: 400 naming the parameter.
  await assert.rejects(openrail.identity.verifyCredential({ hello: 1 }), (e: unknown) => {
    assert.ok(e instanceof OpenrailError);
    assert.equal(e.status, 400);
    assert.equal(e.code, "parameter_invalid");
    assert.equal(e.param, "verifiableCredential");
    return true;
  });

  // The status list, public and signed by the same issuer; it verifies as a credential.
  const listId = status.statusListCredential.split("/").pop()!;
  assert.match(listId, /^sl_/);
  const list = await anonymous.identity.statusList(listId);
  assert.equal(list.issuer, vc["issuer"]);
  assert.equal(list.credentialSubject["statusPurpose"], "revocation");
  assert.equal((await openrail.identity.verifyCredential(list)).verified, true);
  const index = Number(status.statusListIndex);
  assert.equal(bit(String(list.credentialSubject["encodedList"]), index), false);

  // Revoked: the record, the list's bit, and RANGE_ERROR.
  const record = await openrail.identity.revokeCredential(String(vc["id"]));
  assert.equal(record.status, "revoked");
  assert.equal(record.id, vc["id"]);
  assert.equal(record.type, "ExampleAlumniCredential");
  assert.equal(record.status_list_id, listId);
  assert.equal(record.status_list_index, index);
  const after = await openrail.identity.statusList(listId);
  assert.equal(bit(String(after.credentialSubject["encodedList"]), index), true);
  assert.deepEqual(names(await openrail.identity.verifyCredential(vc)), ["RANGE_ERROR"]);
  await assert.rejects(openrail.identity.revokeCredential("urn:uuid:nobody"), (e: unknown) => e instanceof OpenrailError && e.code === "resource_missing");
  await assert.rejects(openrail.identity.statusList("sl_nope"), (e: unknown) => e instanceof OpenrailError && e.status === 404);
});

test("a presentation verifies once for a challenge of this server, and only for its domain", { skip: skipWithoutServer }, async () => {
  const { url, key } = server();
  const openrail = new Openrail({ apiKey: key, baseUrl: url });
  const holder = new Holder();
  const credential = await openrail.identity.issueCredential({
    "@context": ["https://www.w3.org/ns/credentials/v2", "https://www.w3.org/ns/credentials/examples/v2"],
    type: ["VerifiableCredential", "ExampleAlumniCredential"],
    credentialSubject: { id: holder.did, alumniOf: "Example University" },
  });
  const unsigned = {
    "@context": ["https://www.w3.org/ns/credentials/v2"],
    type: ["VerifiablePresentation"],
    holder: holder.did,
    verifiableCredential: [credential],
  };
  const ch = await openrail.identity.createChallenge({ domain: "shop.example" });
  assert.match(ch.challenge, /^chl_/);
  assert.equal(ch.domain, "shop.example");
  assert.ok(ch.expires_at > Date.now() / 1000);
  const vp = holder.signPresentation(unsigned, ch.challenge, "shop.example");
  const ok = await openrail.identity.verifyPresentation(vp, { challenge: ch.challenge });
  assert.equal(ok.verified, true, JSON.stringify(ok));
  // The challenge is used up: the same presentation again is refused.
  assert.deepEqual(names(await openrail.identity.verifyPresentation(vp, { challenge: ch.challenge })), ["INVALID_CHALLENGE_ERROR"]);
  // A proof for another domain than the challenge's.
  const c2 = await openrail.identity.createChallenge({ domain: "shop.example" });
  const elsewhere = holder.signPresentation(unsigned, c2.challenge, "evil.example");
  assert.deepEqual(names(await openrail.identity.verifyPresentation(elsewhere, { challenge: c2.challenge, domain: "evil.example" })), ["INVALID_DOMAIN_ERROR"]);
  // A changed presentation fails its proof.
  const c3 = await openrail.identity.createChallenge();
  const signed = holder.signPresentation(unsigned, c3.challenge, "shop.example");
  const tampered = { ...signed, holder: "did:example:mallory" };
  const r = await openrail.identity.verifyPresentation(tampered, { challenge: c3.challenge, domain: "shop.example" });
  assert.equal(r.verified, false);
  assert.ok(names(r).length > 0);
});
