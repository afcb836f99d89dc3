// Compile-time checks: the request and response types are the document's. Each
// `@ts-expect-error` fails `tsc` (and so `make ts-sdk`) if the line stops being an error.
import { test } from "node:test";
import type { Mandate, Openrail, OpenrailError } from "../src/index.js";

test("request and response types come from docs/openapi.json (checked by tsc)", () => {
  const check = async (o: Openrail, m: Mandate, e: OpenrailError) => {
    // @ts-expect-error intervals are daily | weekly | monthly | yearly
    void o.agentic.mandates.create({ payer_account_id: "ba_1", max_amount: "1", currency: "USD", interval: "hourly" });
    // @ts-expect-error a member the document does not declare
    void o.agentic.debitPulls.create({ session_key_id: "sk_1", amount: "1", memo: "x" });
    // @ts-expect-error enabled_events are the document's event types ("mandate.*" is a list filter only)
    void o.webhookEndpoints.create({ url: "http://127.0.0.1:3000", enabled_events: ["mandate.*"] });
    // @ts-expect-error session_key_id is required
    void o.agentic.debitPulls.create({ amount: "1" });
    // @ts-expect-error statuses are the document's
    if (m.status === "approved") return;
    // @ts-expect-error a challenge's domain is a string
    void o.identity.createChallenge({ domain: 5 });
    // @ts-expect-error a presentation is verified against a challenge
    void o.identity.verifyPresentation({}, {});
    const v = await o.identity.verifyCredential({});
    // @ts-expect-error problemDetails carry a numeric code
    const problemCode: string = v.problemDetails[0]!.code;
    void problemCode;
    const record = await o.identity.revokeCredential("urn:uuid:x");
    // @ts-expect-error a record's status is active | revoked
    if (record.status === "suspended") return;
    // @ts-expect-error a session verifies personhood | financial_health | agent
    void o.identity.verifications.create({ type: "wizardry", subject: "0x90F79bf6EB2c4f870365E785982E1f101E93b906" });
    // @ts-expect-error an attestation names exactly one credential: its id or the credential itself
    void o.identity.attestations.create({ credential_id: "urn:uuid:x", verifiableCredential: {} });
    // @ts-expect-error an attestation names a credential
    void o.identity.attestations.create({ recipient: "0x90F79bf6EB2c4f870365E785982E1f101E93b906" });
    const att = await o.identity.attestations.retrieve("att_1");
    // @ts-expect-error an attestation's status is pending | active | revoked | failed | expired
    if (att.status === "suspended") return;
    const code: "allowance_exceeded" | (string & {}) = e.code;
    const page = await o.events.list({ type: "payment.*", limit: 5 });
    const first: string | undefined = page.data[0]?.type;
    void code;
    void first;
  };
  void check;
});
