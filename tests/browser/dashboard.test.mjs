// The developer dashboard in a real headless Chromium against `openrail dev`:
// sign up → create a key → use it against the API → the mandate and pull appear in the
// dashboard → revoke the key → the API answers 401; CSRF and session checks; axe-core on
// every page; screenshots at desktop and phone width.
import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import {
  BASE, PASSWORD, PAYER, api, checkPage, cspViolations, launch, newEmail, payer, signTypedData, signUp,
} from "./lib.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test("sign up, create a key, use it, see the mandate and pull, revoke it: 401", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const started = Date.now();

  await page.goto(`${BASE}/signup`);
  await checkPage(page, "signup");
  const email = newEmail("dev");
  await signUp(page, email);
  assert.match(await page.locator("header").innerText(), new RegExp(email.replace(/[.+]/g, "\\$&")));
  await page.getByText("No keys yet.").waitFor();
  await checkPage(page, "keys-empty");

  await page.getByRole("button", { name: "Create a testnet key" }).click();
  const secret = (await page.locator("#new-secret").innerText()).trim();
  assert.match(secret, /^sk_testnet_[A-Za-z0-9]{32}$/);
  const elapsed = Date.now() - started;
  assert.ok(elapsed < 60_000, `a working key in under a minute (took ${elapsed} ms)`);
  // The copy button copies (or, without clipboard access, selects) the secret.
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: BASE });
  await page.getByRole("button", { name: "Copy" }).click();
  await page.locator("#new-secret-status").filter({ hasText: /Copied|Selected/ }).waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText()).catch(() => null);
  if (copied !== null) assert.equal(copied, secret);
  // Mainnet keys are disabled, with the reason.
  assert.equal(await page.getByRole("button", { name: "Create a mainnet key" }).isDisabled(), true);
  await page.getByText("Mainnet keys are disabled").waitFor();
  await checkPage(page, "key-created");
  // Post/redirect/get: a reload shows the list without the secret and mints no key.
  const rows = await page.locator("tbody tr").count();
  await page.reload();
  assert.equal(await page.locator("#new-secret").count(), 0);
  assert.equal(await page.locator("tbody tr").count(), rows);

  // The key works against the API: a wallet mandate the demo payer signs, a session key, a pull.
  let r = await api(secret, "POST", "/v1/mandates", {
    payer_account_id: PAYER, max_amount: "100.00", currency: "USD", interval: "daily",
    purpose: "Browser test <script>alert(1)</script>",
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const mandate = r.body;
  const signature = await signTypedData(payer, mandate.authorization.typed_data);
  r = await api(secret, "POST", `/v1/mandates/${mandate.id}/authorize`, { signature });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.status, "active");
  r = await api(secret, "POST", "/v1/session-keys", { mandate_id: mandate.id, expires_in: 3600, max_amount: "60.00" });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const key = r.body;
  r = await api(secret, "POST", "/v1/debit-pulls", { session_key_id: key.id, amount: "12.50" });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const pull = r.body;
  assert.equal(pull.status, "authorized");

  // The key's last use shows.
  await page.goto(`${BASE}/dashboard`);
  const row = page.locator("tr", { hasText: secret.slice(-4) });
  await row.getByText(/UTC/).nth(1).waitFor();

  // The mandate, with this epoch's spend as a bar, and the pull appear.
  await page.goto(`${BASE}/dashboard/mandates`);
  const mrow = page.locator(`tr#${mandate.id}`);
  await mrow.waitFor();
  assert.match(await mrow.innerText(), /active/);
  assert.match(await mrow.innerText(), /12\.50 of 100\.00 USD/);
  assert.equal(await mrow.getByRole("meter").getAttribute("aria-valuenow"), "12.5");
  // User data is escaped, never markup.
  assert.match(await mrow.innerText(), /<script>alert\(1\)<\/script>/);
  await checkPage(page, "mandates");
  await page.goto(`${BASE}/dashboard/pulls`);
  const prow = page.locator(`tr#${pull.id}`);
  await prow.waitFor();
  assert.match(await prow.innerText(), /authorized/);
  assert.match(await prow.innerText(), /12\.50 USD/);
  assert.match(await prow.innerText(), /block \d+/);
  await checkPage(page, "pulls");
  await page.goto(`${BASE}/dashboard/session-keys`);
  await page.locator(`tr#${key.id}`).waitFor();
  await checkPage(page, "session-keys");

  // Revoke the API key in the dashboard: the API answers 401.
  await page.goto(`${BASE}/dashboard`);
  await page.locator("tr", { hasText: secret.slice(-4) }).getByRole("button", { name: /Revoke/ }).click();
  await page.waitForURL(`${BASE}/dashboard`);
  assert.match(await page.locator("tr", { hasText: secret.slice(-4) }).innerText(), /revoked/);
  r = await api(secret, "GET", "/v1/mandates");
  assert.equal(r.status, 401);
  await context.close();
});

test("the integration pages: bank account, payment, events, webhooks with redelivery, cancel and revoke", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await signUp(page, newEmail("views"));
  await page.getByRole("button", { name: "Create a testnet key" }).click();
  const secret = (await page.locator("#new-secret").innerText()).trim();

  // A simulated bank account, made in the dashboard with a behaviour.
  await page.goto(`${BASE}/dashboard/bank-accounts`);
  await page.getByLabel("Holder's name").fill("Ada Lovelace");
  await page.getByLabel("Currency").selectOption("USD");
  await page.getByLabel("Starting balance").fill("500.00");
  await page.getByLabel("Behaviour").selectOption("settles");
  await page.getByLabel("Delay (seconds)").fill("0");
  await page.getByRole("button", { name: "Create" }).click();
  await page.waitForURL(`${BASE}/dashboard/bank-accounts`);
  const bankRow = page.locator("tbody tr", { hasText: "Ada Lovelace" });
  assert.match(await bankRow.innerText(), /500\.00 USD/);
  assert.match(await bankRow.innerText(), /settles/);
  const bankId = (await bankRow.getAttribute("id"));
  assert.match(bankId, /^ba_/);
  await checkPage(page, "bank-accounts");
  // Cursor paging: 21 more accounts make two pages of 20; "Older" shows the rest.
  for (let i = 0; i < 21; i++) {
    const made = await api(secret, "POST", "/v1/bank-accounts", { owner_name: `Holder ${i}`, currency: "EUR" });
    assert.equal(made.status, 201, JSON.stringify(made.body));
  }
  await page.goto(`${BASE}/dashboard/bank-accounts`);
  assert.equal(await page.locator("tbody tr").count(), 20);
  assert.equal(await page.locator("tbody tr").first().locator("td").nth(1).innerText(), "Holder 20", "newest first");
  await page.getByRole("link", { name: "Older" }).click();
  await page.waitForURL(/starting_after=ba_/);
  assert.equal(await page.locator("tbody tr").count(), 2);
  assert.equal(await page.locator("tbody tr", { hasText: "Ada Lovelace" }).count(), 1);
  assert.equal(await page.getByRole("link", { name: "Older" }).count(), 0, "the last page");
  await page.getByRole("link", { name: "Newest" }).click();
  await page.waitForURL(`${BASE}/dashboard/bank-accounts`);
  // A form the API refuses shows the API's reason.
  await page.getByLabel("Holder's name").fill("   ");
  await page.getByRole("button", { name: "Create" }).click();
  assert.match(await page.locator("[role=alert]").innerText(), /owner_name|name/i);

  // A payment from it to a wallet, through the API; it appears with its status.
  let r = await api(secret, "POST", "/v1/payments", {
    amount: "40.00", currency: "USD", source: { type: "bank_account", id: bankId },
    destination: { type: "wallet", address: PAYER },
  });
  assert.ok([200, 201, 202].includes(r.status), JSON.stringify(r.body));
  const payment = r.body;
  await page.goto(`${BASE}/dashboard/payments`);
  assert.match(await page.locator(`tr#${payment.id}`).innerText(), /40\.00 USD/);
  await checkPage(page, "payments");
  // The status filter: a status it does not have hides it.
  await page.getByLabel("Status").selectOption("failed");
  await page.getByRole("button", { name: "Filter" }).click();
  await page.waitForURL(/status=failed/);
  assert.equal(await page.locator(`tr#${payment.id}`).count(), 0);

  // A mandate, a session key, then the pages' actions: revoke the key, cancel the mandate.
  r = await api(secret, "POST", "/v1/mandates", { payer_account_id: PAYER, max_amount: "10.00", currency: "USD", interval: "monthly" });
  const mandate = r.body;
  r = await api(secret, "POST", `/v1/mandates/${mandate.id}/authorize`, { signature: await signTypedData(payer, mandate.authorization.typed_data) });
  assert.equal(r.body.status, "active");
  r = await api(secret, "POST", "/v1/session-keys", { mandate_id: mandate.id, expires_in: 600 });
  const key = r.body;
  assert.equal(key.status, "active");

  // Webhooks: an endpoint on a local receiver; redelivering an older event reaches it.
  const received = [];
  const receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => { body += c; });
    req.on("end", () => { received.push(JSON.parse(body)); res.writeHead(204); res.end(); });
  });
  await new Promise((ok) => receiver.listen(0, "127.0.0.1", ok));
  await page.goto(`${BASE}/dashboard/webhooks`);
  await page.getByLabel("URL").fill(`http://127.0.0.1:${receiver.address().port}/hook`);
  await page.getByLabel("Event types").fill("*");
  await page.getByRole("button", { name: "Add endpoint" }).click();
  assert.match((await page.locator("#new-secret").innerText()).trim(), /^whsec_/);
  await checkPage(page, "webhook-created");
  await page.goto(`${BASE}/dashboard/webhooks`);
  await checkPage(page, "webhooks");
  const endpointId = await page.locator("tbody tr").first().getAttribute("id");

  await page.goto(`${BASE}/dashboard/events?type=mandate.activated`);
  const eventRow = page.locator("tbody tr", { hasText: mandate.id });
  await eventRow.waitFor();
  assert.equal(await page.locator("tbody tr", { hasText: "payment." }).count(), 0, "the type filter applies");
  await checkPage(page, "events");
  const eventId = await eventRow.getAttribute("id");
  await eventRow.getByRole("button", { name: /Redeliver/ }).click();
  await page.waitForURL(`${BASE}/dashboard/events`);
  await page.goto(`${BASE}/dashboard/webhooks/${endpointId}`);
  await page.locator("tbody tr", { hasText: eventId }).waitFor();
  for (let i = 0; i < 100 && !received.some((e) => e.id === eventId); i++) await new Promise((ok) => setTimeout(ok, 100));
  assert.ok(received.some((e) => e.id === eventId), "the redelivered event reached the receiver");
  await page.reload();
  assert.match(await page.locator("tbody tr", { hasText: eventId }).innerText(), /succeeded/);
  await checkPage(page, "webhook-deliveries");
  receiver.close();

  await page.goto(`${BASE}/dashboard/session-keys`);
  await page.locator(`tr#${key.id}`).getByRole("button", { name: /Revoke/ }).click();
  await page.waitForURL(`${BASE}/dashboard/session-keys`);
  assert.match(await page.locator(`tr#${key.id}`).innerText(), /revoked/);
  r = await api(secret, "GET", `/v1/session-keys/${key.id}`);
  assert.equal(r.body.status, "revoked");
  // The status filter: the revoked key is under "revoked", not under "active".
  await page.getByLabel("Status").selectOption("revoked");
  await page.getByRole("button", { name: "Filter" }).click();
  await page.waitForURL(`${BASE}/dashboard/session-keys?status=revoked`);
  assert.match(await page.locator(`tr#${key.id}`).innerText(), /revoked/);
  await page.goto(`${BASE}/dashboard/session-keys?status=active`);
  assert.equal(await page.locator(`tr#${key.id}`).count(), 0);

  await page.goto(`${BASE}/dashboard/mandates`);
  await page.locator(`tr#${mandate.id}`).getByRole("button", { name: /Cancel/ }).click();
  await page.waitForURL(`${BASE}/dashboard/mandates`);
  assert.match(await page.locator(`tr#${mandate.id}`).innerText(), /canceled/);
  r = await api(secret, "GET", `/v1/mandates/${mandate.id}`);
  assert.equal(r.body.status, "canceled");
  await context.close();
});

test("a forged cross-site form post is refused, and so is a post without the token", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signUp(page, newEmail("csrf"));
  const keysBefore = await page.locator("tbody tr").count();

  // An attacker's page on another origin auto-submits a form to the dashboard; the
  // browser sends the session cookie (same site), the server refuses it.
  const evil = http.createServer((_, res) => {
    res.writeHead(200, { "Content-Type": "text/html" });
    res.end(`<form method="post" action="${BASE}/dashboard/keys"><input name="mode" value="testnet"></form>
<script>document.forms[0].submit()</script>`);
  });
  await new Promise((ok) => evil.listen(0, "127.0.0.1", ok));
  const evilUrl = `http://127.0.0.1:${evil.address().port}/`;
  const answer = page.waitForResponse((r) => r.url() === `${BASE}/dashboard/keys`);
  await page.goto(evilUrl);
  assert.equal((await answer).status(), 403);
  await page.getByText("Request refused").waitFor();
  await checkPage(page, "request-refused");
  evil.close();

  // The right token from another origin, and a wrong token from this one: refused too.
  await page.goto(`${BASE}/dashboard`);
  const token = await page.locator("input[name=csrf]").first().inputValue();
  let r = await page.request.post(`${BASE}/dashboard/keys`, {
    form: { mode: "testnet", csrf: token }, headers: { Origin: "http://evil.example" }, maxRedirects: 0,
  });
  assert.equal(r.status(), 403);
  r = await page.request.post(`${BASE}/dashboard/keys`, { form: { mode: "testnet", csrf: "x".repeat(32) }, maxRedirects: 0 });
  assert.equal(r.status(), 403);
  await page.goto(`${BASE}/dashboard`);
  assert.equal(await page.locator("tbody tr").count(), keysBefore, "no key was created");
  // With the token and this origin it works (the check is not refusing everything).
  r = await page.request.post(`${BASE}/dashboard/keys`, {
    form: { mode: "testnet", csrf: token }, headers: { Origin: BASE }, maxRedirects: 0,
  });
  // Post/redirect/get: the new key's page is the redirect's target.
  assert.equal(r.status(), 303);
  assert.equal(r.headers()["location"], "/dashboard");
  await page.goto(`${BASE}/dashboard`);
  assert.equal(await page.locator("tbody tr").count(), keysBefore + 1, "one key was created");
  await context.close();
});

test("sessions: cookie flags, sign out ends the session server-side, failed sign-ins are limited", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const email = newEmail("session");
  await signUp(page, email);
  const cookie = (await context.cookies(BASE)).find((c) => c.name === "openrail_session");
  assert.ok(cookie, "a session cookie");
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, "Lax");
  assert.equal(await page.evaluate(() => document.cookie.includes("openrail_session")), false);

  // Signed out: the dashboard sends to the sign-in page, and the old cookie is dead.
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(`${BASE}/login`);
  await checkPage(page, "login");
  const replay = await fetch(`${BASE}/dashboard`, { headers: { Cookie: `openrail_session=${cookie.value}` }, redirect: "manual" });
  assert.equal(replay.status, 303);
  assert.equal(replay.headers.get("location"), "/login");
  const none = await fetch(`${BASE}/dashboard`, { redirect: "manual" });
  assert.equal(none.status, 303);

  // Wrong passwords: 401 five times, then 429 even with the right one.
  for (let i = 0; i < 5; i++) {
    await page.goto(`${BASE}/login`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("wrong password " + i);
    const res = page.waitForResponse((r) => r.url() === `${BASE}/login` && r.request().method() === "POST");
    await page.getByRole("button", { name: "Sign in" }).click();
    assert.equal((await res).status(), 401);
    await page.getByText("do not match").waitFor();
  }
  await page.goto(`${BASE}/login`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  const limited = page.waitForResponse((r) => r.url() === `${BASE}/login` && r.request().method() === "POST");
  await page.getByRole("button", { name: "Sign in" }).click();
  assert.equal((await limited).status(), 429);

  // Another account signs in normally (the limit is per email here).
  const other = newEmail("other");
  const page2 = await (await browser.newContext()).newPage();
  await signUp(page2, other);
  await page2.getByRole("button", { name: "Sign out" }).click();
  await page2.getByLabel("Email").fill(other);
  await page2.getByLabel("Password").fill(PASSWORD);
  await page2.getByRole("button", { name: "Sign in" }).click();
  await page2.waitForURL(`${BASE}/dashboard`);
  await context.close();
});

test("the API reference renders under its Content-Security-Policy", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const refused = cspViolations(page);
  const res = await page.goto(`${BASE}/docs`);
  assert.match(res.headers()["content-security-policy"], /frame-ancestors 'none'/);
  // Redoc, started by /docs/init.js, renders the document's operations.
  await page.getByText("/v1/debit-pulls").first().waitFor({ timeout: 30_000 });
  // Refused on purpose, and only that: the "powered by Redoc" badge's image from its CDN
  // (the page loads nothing from another origin).
  const others = refused.filter((m) => !m.includes("https://cdn.redoc.ly/redoc/logo-mini.svg"));
  assert.deepEqual(others, [], "nothing of the page's own refused by the policy");
  await context.close();
});
