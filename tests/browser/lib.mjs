// Shared by the browser tests: Debian's chromium through playwright-core (never a
// downloaded browser), axe-core on a page, screenshots at desktop and phone width, the
// API, and a wallet key that signs EIP-712 typed data (viem).
import { readFileSync, mkdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { privateKeyToAccount } from "viem/accounts";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

/** The server under test (`openrail dev`, started by run.sh). */
export const BASE = process.env.OPENRAIL_API_URL;
/** The dev account's key and the demo payer `openrail dev` printed. */
export const DEV_KEY = process.env.OPENRAIL_API_KEY;
export const PAYER = process.env.OPENRAIL_PAYER;
export const PAYER_KEY = process.env.OPENRAIL_PAYER_KEY;
/** Where screenshots go (named in the README). */
export const SHOTS = process.env.OPENRAIL_SCREENSHOTS || join(here, "screenshots");
mkdirSync(SHOTS, { recursive: true });
assert.ok(BASE && DEV_KEY && PAYER && PAYER_KEY, "run through tests/browser/run.sh");

/** A fresh headless Chromium (playwright gives each launch a new temporary profile, its
 *  --user-data-dir, which it refuses to take from the arguments). */
export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
}

/** axe-core's serious and critical violations on the page as it is now: none allowed. */
export async function assertAccessible(page, name) {
  // Evaluated, not added as a <script>: the pages' Content-Security-Policy refuses inline
  // scripts (as it should), and evaluation from the test is not a page script.
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(AXE);
  const result = await page.evaluate(async () => await window.axe.run(document));
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(
    bad.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
    [],
    `axe-core on ${name}`,
  );
  assert.ok(result.passes.length > 10, `axe-core ran its checks on ${name}`);
}

/** Collects what the page's Content-Security-Policy refused (console reports), to assert none. */
export function cspViolations(page) {
  const seen = [];
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) seen.push(m.text());
  });
  return seen;
}

/** Screenshots of the page at desktop (1280) and phone (390) width, full length. */
export async function screenshots(page, name) {
  for (const [suffix, size] of [["desktop", { width: 1280, height: 800 }], ["phone", { width: 390, height: 844 }]]) {
    await page.setViewportSize(size);
    await page.screenshot({ path: join(SHOTS, `${name}-${suffix}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** Both checks of a page. */
export async function checkPage(page, name) {
  await assertAccessible(page, name);
  await screenshots(page, name);
}

/** A JSON call to the API with `key`; returns { status, body }. */
export async function api(key, method, path, body) {
  const res = await fetch(`${BASE}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${key}`,
      "Content-Type": "application/json",
      Prefer: "wait=30",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** The demo payer's wallet (a public anvil key). */
export const payer = privateKeyToAccount(PAYER_KEY);

/** An `eth_signTypedData_v4` signature of `typedData` (the API's JSON) by `account`. */
export async function signTypedData(account, typedData) {
  const { EIP712Domain, ...types } = typedData.types;
  const message = {};
  const fields = types[typedData.primaryType];
  for (const f of fields) {
    const v = typedData.message[f.name];
    message[f.name] = /^u?int\d*$/.test(f.type) ? BigInt(v) : v;
  }
  const domain = { ...typedData.domain, chainId: BigInt(typedData.domain.chainId) };
  return account.signTypedData({ domain, types, primaryType: typedData.primaryType, message });
}

/** A unique email for a new account. */
export function newEmail(tag) {
  return `${tag}-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;
}

/** The password every test account signs up with. */
export const PASSWORD = "correct horse battery";

/** Signs up `email` in `page` and signs in (sign-up answers alike for new and taken
 *  emails, so the owner then signs in); ends on the dashboard. */
export async function signUp(page, email) {
  await page.goto(`${BASE}/signup`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await page.waitForURL(`${BASE}/login?signed_up`);
  await page.getByText("Account request received").waitFor();
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${BASE}/dashboard`);
}
