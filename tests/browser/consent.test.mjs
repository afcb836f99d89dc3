// The hosted payer-consent page in a real headless Chromium: an EIP-1193 provider injected
// into the page, backed by the demo payer's key in node (viem), signs the mandate's typed
// data; the mandate becomes active. axe-core and screenshots on each state.
import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import { BASE, DEV_KEY, PAYER, api, checkPage, cspViolations, launch, payer, signTypedData } from "./lib.mjs";
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** A page whose `window.ethereum` is an EIP-1193 provider signing with `account`. */
async function pageWithWallet(account) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const calls = [];
  await page.exposeFunction("__openrailTestWallet", async (method, params) => {
    calls.push(method);
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [account.address];
      case "eth_signTypedData_v4": {
        assert.equal(params[0].toLowerCase(), account.address.toLowerCase());
        return signTypedData(account, JSON.parse(params[1]));
      }
      default:
        throw new Error(`unsupported ${method}`);
    }
  });
  await page.addInitScript(() => {
    window.ethereum = {
      isMetaMask: false,
      request: ({ method, params }) => window.__openrailTestWallet(method, params ?? []),
      on() {}, removeListener() {},
    };
  });
  return { context, page, calls };
}

async function newMandate(purpose) {
  const r = await api(DEV_KEY, "POST", "/v1/mandates", {
    payer_account_id: PAYER, max_amount: "25.00", currency: "USD", interval: "weekly", purpose,
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.status, "requires_authorization");
  return r.body;
}

test("the consent page states the terms, the injected wallet signs, the mandate becomes active", async () => {
  const mandate = await newMandate("Coffee subscription");
  const { context, page, calls } = await pageWithWallet(payer);
  const refused = cspViolations(page);
  const res = await page.goto(`${BASE}/authorize/${mandate.id}`);
  assert.match(res.headers()["content-security-policy"], /frame-ancestors 'none'/);
  assert.equal(res.headers()["x-frame-options"], "DENY");
  assert.equal(res.headers()["referrer-policy"], "no-referrer");
  const terms = await page.locator("main").innerText();
  assert.match(terms, /An unverified business \(no name given\) asks to take/);
  assert.match(terms, /up to twice the ceiling/);
  assert.match(terms, /up to 25\.00 USD per week/);
  assert.match(terms, /Coffee subscription/);
  assert.match(terms, /until you cancel/i);
  assert.match(terms, new RegExp(PAYER, "i"));
  assert.match(terms, /cancelMandate\(0x[0-9a-f]{64}\)/);
  await checkPage(page, "consent");

  await page.getByRole("button", { name: "Connect wallet" }).click();
  await page.getByText(`Connected ${payer.address}`).waitFor();
  await page.getByRole("button", { name: "Sign and authorize" }).click();
  await page.locator("#consent-result").getByText("active", { exact: true }).waitFor({ timeout: 30_000 });
  assert.deepEqual(calls, ["eth_requestAccounts", "eth_signTypedData_v4"]);
  await checkPage(page, "consent-authorized");
  assert.deepEqual(refused, [], "the page's own scripts and styles run under its policy");

  const r = await api(DEV_KEY, "GET", `/v1/mandates/${mandate.id}`);
  assert.equal(r.body.status, "active");
  assert.match(r.body.authorization.signature, /^0x[0-9a-f]{130}$/);
  await context.close();
});

test("a wallet payment's consent page: the injected wallet signs and the payment moves", async () => {
  const r0 = await api(DEV_KEY, "POST", "/v1/payments", {
    amount: "3.25", currency: "EUR", source: { type: "wallet", id: PAYER },
    destination: { type: "wallet", address: "0x90F79bf6EB2c4f870365E785982E1f101E93b906" },
  });
  assert.equal(r0.status, 201, JSON.stringify(r0.body));
  assert.equal(r0.body.status, "requires_authorization");
  const { context, page } = await pageWithWallet(payer);
  await page.goto(`${BASE}/authorize/${r0.body.id}`);
  assert.match(await page.locator("main").innerText(), /pay 3\.25 EUR once/);
  await checkPage(page, "consent-payment");
  await page.getByRole("button", { name: "Connect wallet" }).click();
  await page.getByRole("button", { name: "Sign and authorize" }).click();
  await page.locator("#consent-result").waitFor({ timeout: 30_000 });
  const r = await api(DEV_KEY, "GET", `/v1/payments/${r0.body.id}`);
  assert.ok(["pending", "processing", "succeeded"].includes(r.body.status), r.body.status);
  assert.match(r.body.authorization.signature, /^0x[0-9a-f]{130}$/);
  await context.close();
});

test("a wallet that is not the payer cannot sign, and a bad signature is refused", async () => {
  const mandate = await newMandate(undefined);
  const stranger = privateKeyToAccount(generatePrivateKey());
  const { context, page } = await pageWithWallet(stranger);
  await page.goto(`${BASE}/authorize/${mandate.id}`);
  await page.getByRole("button", { name: "Connect wallet" }).click();
  await page.getByText("must be signed by").waitFor();
  assert.equal(await page.getByRole("button", { name: "Sign and authorize" }).isDisabled(), true);
  await checkPage(page, "consent-wrong-wallet");

  // The stranger's signature posted straight to the page's endpoint: 422, nothing changes.
  const signature = await signTypedData(stranger, mandate.authorization.typed_data);
  const res = await fetch(`${BASE}/authorize/${mandate.id}`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ signature }),
  });
  assert.equal(res.status, 422);
  assert.equal((await res.json()).code, "signature_invalid");
  // From another site: refused before anything is read.
  const cross = await fetch(`${BASE}/authorize/${mandate.id}`, {
    method: "POST", headers: { "Content-Type": "application/json", Origin: "http://evil.example" },
    body: JSON.stringify({ signature }),
  });
  assert.equal(cross.status, 403);
  const r = await api(DEV_KEY, "GET", `/v1/mandates/${mandate.id}`);
  assert.equal(r.body.status, "requires_authorization");
  await context.close();

  const missing = await fetch(`${BASE}/authorize/man_doesnotexist000000000000`);
  assert.equal(missing.status, 404);
});

test("another site cannot frame the consent page", async () => {
  const mandate = await newMandate("Framed?");
  const context = await browser.newContext();
  const page = await context.newPage();
  // A page of another origin (about:blank here) that frames the link.
  await page.setContent(`<iframe id="f" src="${BASE}/authorize/${mandate.id}" width="800" height="600"></iframe>`);
  await page.waitForTimeout(1500);
  const frame = page.frames().find((f) => f.url().includes("/authorize/"));
  const framedText = frame ? await frame.evaluate(() => document.body?.innerText ?? "").catch(() => "") : "";
  assert.doesNotMatch(framedText, /Sign and authorize|asks to take/, "the page rendered inside another site's frame");
  await context.close();
});

test("a withdrawn link says so and offers nothing to sign", async () => {
  const mandate = await newMandate("Withdrawn soon");
  const r = await api(DEV_KEY, "POST", `/v1/mandates/${mandate.id}/cancel`, {});
  assert.equal(r.body.status, "canceled");
  const { context, page } = await pageWithWallet(payer);
  await page.goto(`${BASE}/authorize/${mandate.id}`);
  assert.match(await page.locator("main").innerText(), /withdrawn by the business/);
  assert.equal(await page.getByRole("button", { name: "Sign and authorize" }).count(), 0);
  assert.equal(await page.getByRole("button", { name: "Connect wallet" }).count(), 0);
  assert.equal(await page.locator("#consent-data").count(), 0);
  await checkPage(page, "consent-withdrawn");
  await context.close();
});
