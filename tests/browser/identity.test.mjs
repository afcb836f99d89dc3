// The dashboard's identity pages in a real headless Chromium against `openrail dev`:
// sign up → start a verification session on testnet (the simulated provider fails the
// first check, with a reason shown escaped) → submit again → the page, reloading itself,
// shows it verified with its timeline and issued credential → attest the credential in
// one click → the attestation becomes active on the attestation chain → revoke it
// (confirmed; a dismissed confirmation posts nothing) → revoked; a session canceled from
// the list; the issued credentials; the API agrees; headers, the Content-Security-Policy
// (nothing refused), axe-core and screenshots on every page.
import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { BASE, api, checkPage, cspViolations, launch, newEmail, signUp } from "./lib.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** A fresh wallet address (no one's key: the simulated provider needs none). */
function wallet() {
  return `0x${randomBytes(20).toString("hex")}`;
}

/** The dashboard's security headers on `res`. */
function assertHeaders(res, what) {
  const h = res.headers();
  assert.match(h["content-security-policy"], /default-src 'none'/, what);
  assert.match(h["content-security-policy"], /script-src 'self'/, what);
  assert.match(h["content-security-policy"], /frame-ancestors 'none'/, what);
  assert.equal(h["x-frame-options"], "DENY", what);
  assert.equal(h["x-content-type-options"], "nosniff", what);
  assert.equal(h["referrer-policy"], "same-origin", what);
  assert.equal(h["cache-control"], "no-store", what);
}

/** The value of the fact `term` on a detail page. */
async function fact(page, term) {
  return (await page.locator("dl.facts dt", { hasText: new RegExp(`^${term}$`) }).locator("xpath=following-sibling::dd[1]").innerText()).trim();
}

test("identity: verify a wallet, attest its credential, revoke the attestation", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const refused = cspViolations(page);
  await signUp(page, newEmail("identity"));
  // A key, to check what the pages show against the API.
  await page.getByRole("button", { name: "Create a testnet key" }).click();
  const secret = (await page.locator("#new-secret").innerText()).trim();

  // The Identity section, its first page: verifications, none yet.
  await page.getByRole("navigation", { name: "Dashboard sections" }).getByRole("link", { name: "Identity" }).click();
  await page.waitForURL(`${BASE}/dashboard/identity/verifications`);
  assert.equal(await page.getByRole("navigation", { name: "Dashboard sections" }).getByRole("link", { name: "Identity" }).getAttribute("aria-current"), "page");
  assert.equal(await page.getByRole("navigation", { name: "Identity" }).getByRole("link", { name: "Verifications" }).getAttribute("aria-current"), "page");
  await page.getByText("Nothing here yet.").waitFor();
  await checkPage(page, "identity-verifications-empty");

  // A session whose first check fails, with a reason that is markup: shown as text.
  const subject = wallet();
  await page.getByLabel("Type").selectOption("personhood");
  await page.getByLabel("Subject wallet").fill(subject);
  await page.getByLabel("Simulated outcome").selectOption("failed");
  await page.getByLabel("Failure reason").fill("<b>the document had expired</b>");
  await page.getByRole("button", { name: "Create session" }).click();
  await page.waitForURL(/\/dashboard\/identity\/verifications\/idv_[A-Za-z0-9]+$/);
  const sessionUrl = page.url();
  const sessionId = sessionUrl.split("/").pop();
  assert.equal(await fact(page, "Status"), "requires_input");
  assert.equal((await fact(page, "Subject")).toLowerCase(), subject);
  assert.equal(await fact(page, "Credential type"), "PersonhoodCredential");
  await checkPage(page, "identity-verification-new");

  // Submit: the provider's first check fails; the page, reloading itself while the
  // session is processing, shows the reason, escaped.
  await page.getByRole("button", { name: `Submit session ${sessionId}` }).click();
  await page.waitForURL(sessionUrl);
  const failed = page.getByRole("alert").filter({ hasText: "The last check failed" });
  await failed.waitFor({ timeout: 20_000 });
  assert.match(await failed.innerText(), /<b>the document had expired<\/b>/);
  assert.equal(await page.locator("main b").count(), 0, "the reason is text, not markup");
  assert.equal(await fact(page, "Status"), "requires_input");
  await checkPage(page, "identity-verification-failed");

  // Submit again: verified, with no reload by the test (the page refreshes itself).
  await page.getByRole("button", { name: `Submit session ${sessionId}` }).click();
  await page.waitForURL(sessionUrl);
  await page.locator("dl.facts dd .status-verified").waitFor({ timeout: 20_000 });
  const credentialId = await fact(page, "Credential");
  assert.match(credentialId, /^urn:uuid:[0-9a-f-]{36}$/);
  assert.equal(await page.locator("dl.facts").nth(1).locator("dd").nth(1).innerText(), "PersonhoodCredential");
  // The timeline, oldest first: created, processing, the failed check, processing, verified.
  const steps = await page.locator("ol.timeline li code").allInnerTexts();
  assert.deepEqual(steps, [
    "identity.verification.created",
    "identity.verification.processing",
    "identity.verification.requires_input",
    "identity.verification.processing",
    "identity.verification.verified",
  ]);
  assert.match(await page.locator("ol.timeline li").nth(2).innerText(), /<b>the document had expired<\/b>/);
  await page.getByText("The signed credential (JSON)").click();
  assert.match(await page.locator("pre.json").innerText(), new RegExp(`did:pkh:eip155:\\d+:${subject}`, "i"));
  await page.getByText("Not attested yet.").waitFor();
  await checkPage(page, "identity-verification-verified");
  let r = await api(secret, "GET", `/v1/identity/verifications/${sessionId}`);
  assert.equal(r.body.status, "verified");
  assert.equal(r.body.credential_id, credentialId);

  // Attest its credential in one click: the attestation's page, active once mined.
  await page.getByRole("button", { name: `Attest credential ${credentialId} on chain` }).click();
  await page.waitForURL(/\/dashboard\/identity\/attestations\/att_[A-Za-z0-9]+$/);
  const attestationUrl = page.url();
  const attestationId = attestationUrl.split("/").pop();
  await page.locator("dl.facts dd .status-active").waitFor({ timeout: 30_000 });
  assert.equal((await fact(page, "Recipient")).toLowerCase(), subject);
  assert.equal(await fact(page, "Credential"), credentialId);
  assert.equal(await fact(page, "Credential type"), "PersonhoodCredential");
  assert.match(await fact(page, "UID"), /^0x[0-9a-f]{64}$/);
  assert.match(await fact(page, "Transaction"), /block \d+/);
  assert.match(await fact(page, "Chain"), /^\d+$/);
  await checkPage(page, "identity-attestation-active");
  r = await api(secret, "GET", `/v1/identity/attestations/${attestationId}`);
  assert.equal(r.body.status, "active");
  assert.equal(r.body.uid, await fact(page, "UID"));

  // The attestations list: status, type, recipient, chain, uid, transaction.
  await page.getByRole("navigation", { name: "Identity" }).getByRole("link", { name: "Attestations" }).click();
  const row = page.locator(`tr#${attestationId}`);
  await row.waitFor();
  assert.match(await row.innerText(), /active/);
  assert.match(await row.innerText(), /PersonhoodCredential/);
  await checkPage(page, "identity-attestations");

  // Revoke, from its page: a dismissed confirmation posts nothing; a confirmed one revokes.
  await page.goto(attestationUrl);
  page.once("dialog", (d) => d.dismiss());
  await page.getByRole("button", { name: `Revoke attestation ${attestationId}` }).click();
  await page.waitForTimeout(500);
  r = await api(secret, "GET", `/v1/identity/attestations/${attestationId}`);
  assert.equal(r.body.status, "active", "a dismissed confirmation revokes nothing");
  let asked = "";
  page.once("dialog", (d) => { asked = d.message(); d.accept(); });
  await page.getByRole("button", { name: `Revoke attestation ${attestationId}` }).click();
  await page.waitForURL(attestationUrl);
  assert.match(asked, /Revoke this attestation/);
  for (let i = 0; i < 40 && !(await page.locator("dl.facts dd .status-revoked").count()); i++) {
    await page.waitForTimeout(500);
    await page.reload();
  }
  assert.equal(await fact(page, "Status"), "revoked");
  assert.notEqual(await fact(page, "Revoked"), "");
  assert.equal(await page.getByRole("button", { name: /Revoke/ }).count(), 0, "nothing left to revoke");
  assert.deepEqual(await page.locator("ol.timeline li code").allInnerTexts(), [
    "identity.attestation.pending", "identity.attestation.active", "identity.attestation.revoked",
  ]);
  await checkPage(page, "identity-attestation-revoked");
  r = await api(secret, "GET", `/v1/identity/attestations/${attestationId}`);
  assert.equal(r.body.status, "revoked");

  // The session's page lists the attestation of its credential.
  await page.goto(sessionUrl);
  const link = page.getByRole("link", { name: attestationId });
  await link.waitFor();
  assert.match(await page.locator("li", { has: link }).innerText(), /revoked/);

  // Issued credentials: the session's credential, still active (only the attestation was
  // revoked), attestable again.
  await page.getByRole("navigation", { name: "Identity" }).getByRole("link", { name: "Issued credentials" }).click();
  const crow = page.locator("tbody tr", { hasText: credentialId });
  await crow.waitFor();
  assert.match(await crow.innerText(), /PersonhoodCredential/);
  assert.match(await crow.innerText(), /active/);
  assert.equal(await crow.getByRole("button", { name: /Attest credential/ }).count(), 1);
  await checkPage(page, "identity-credentials");

  // Another session, canceled from the list (confirmed): canceled, with no buttons left.
  await page.goto(`${BASE}/dashboard/identity/verifications`);
  await page.getByLabel("Type").selectOption("agent");
  await page.getByLabel("Subject wallet").fill(wallet());
  await page.getByRole("button", { name: "Create session" }).click();
  await page.waitForURL(/\/dashboard\/identity\/verifications\/idv_/);
  const second = page.url().split("/").pop();
  await page.goto(`${BASE}/dashboard/identity/verifications`);
  page.once("dialog", (d) => d.accept());
  await page.locator(`tr#${second}`).getByRole("button", { name: `Cancel session ${second}` }).click();
  await page.waitForURL(`${BASE}/dashboard/identity/verifications/${second}`);
  assert.equal(await fact(page, "Status"), "canceled");
  assert.equal(await page.getByRole("button", { name: /Submit session/ }).count(), 0);
  await page.goto(`${BASE}/dashboard/identity/verifications`);
  assert.match(await page.locator(`tr#${second}`).innerText(), /canceled/);
  assert.match(await page.locator(`tr#${sessionId}`).innerText(), /verified/);
  await checkPage(page, "identity-verifications");

  // A form the API refuses shows the API's reason.
  await page.getByLabel("Subject wallet").fill("0x1234");
  await page.getByRole("button", { name: "Create session" }).click();
  assert.match(await page.getByRole("alert").innerText(), /subject/i);

  assert.deepEqual(refused, [], "nothing refused by the Content-Security-Policy");
  await context.close();
});

test("identity pages: security headers, no inline script or style, sign-in and CSRF required", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  // Signed out: every identity page sends to the sign-in page.
  for (const path of ["/dashboard/identity", "/dashboard/identity/verifications", "/dashboard/identity/attestations", "/dashboard/identity/credentials"]) {
    const res = await fetch(`${BASE}${path}`, { redirect: "manual" });
    assert.equal(res.status, 303, path);
    assert.equal(res.headers.get("location"), "/login", path);
  }
  await signUp(page, newEmail("identity-headers"));
  for (const path of ["/dashboard/identity/verifications", "/dashboard/identity/attestations", "/dashboard/identity/credentials"]) {
    const res = await page.goto(`${BASE}${path}`);
    assert.equal(res.status(), 200, path);
    assertHeaders(res, path);
    const html = await res.text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, `${path}: no inline script`);
    assert.doesNotMatch(html, /<style|style="/, `${path}: no inline style`);
  }
  // Someone else's (or no) object: the API's 404, as a page.
  const missing = await page.goto(`${BASE}/dashboard/identity/attestations/att_doesnotexist`);
  assert.equal(missing.status(), 404);
  assertHeaders(missing, "a missing attestation");
  // A post without the session's token, or from another origin, is refused.
  await page.goto(`${BASE}/dashboard/identity/verifications`);
  const csrf = await page.locator("input[name=csrf]").first().inputValue();
  const form = { type: "personhood", subject: wallet() };
  let r = await page.request.post(`${BASE}/dashboard/identity/verifications`, { form, maxRedirects: 0 });
  assert.equal(r.status(), 403);
  r = await page.request.post(`${BASE}/dashboard/identity/verifications`, {
    form: { ...form, csrf }, headers: { Origin: "http://evil.example" }, maxRedirects: 0,
  });
  assert.equal(r.status(), 403);
  await page.goto(`${BASE}/dashboard/identity/verifications`);
  await page.getByText("Nothing here yet.").waitFor();
  // With the token from this origin: created, and the answer redirects to its page (PRG).
  r = await page.request.post(`${BASE}/dashboard/identity/verifications`, {
    form: { ...form, csrf }, headers: { Origin: BASE }, maxRedirects: 0,
  });
  assert.equal(r.status(), 303);
  assert.match(r.headers()["location"], /^\/dashboard\/identity\/verifications\/idv_/);
  await context.close();
});
