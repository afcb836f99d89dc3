// The README's snippets, run as written (as a new user saves and runs them in this
// directory, importing "@openrail/client" by name) against `openrail dev`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { promisify } from "node:util";
import { server, skipWithoutServer } from "./env.js";

const root = new URL("../../", import.meta.url).pathname; // clients/typescript (from dist/test)
const readmes = readFileSync(`${root}README.md`, "utf8") + readFileSync(`${root}../../README.md`, "utf8");

function snippet(name: string): string {
  const m = new RegExp(`<!-- readme-test: ${name.replace(".", "\\.")} -->\\n\`\`\`js\\n([\\s\\S]*?)\\n\`\`\``).exec(readmes);
  assert.ok(m?.[1], `README.md has no snippet ${name}`);
  return m[1];
}

async function run(name: string): Promise<string> {
  const file = `${root}.readme-${name}`;
  writeFileSync(file, snippet(name));
  try {
    const { url, key, payerKey } = server();
    const { stdout } = await promisify(execFile)(process.execPath, [file], {
      cwd: root,
      env: { ...process.env, KEY: key, PAYER_KEY: payerKey, API: url },
      timeout: 120_000,
    });
    return stdout;
  } finally {
    rmSync(file, { force: true });
  }
}

test("README: the agentic snippet", { skip: skipWithoutServer }, async () => {
  const out = await run("agentic.mjs");
  assert.match(out, /^requires_authorization$/m);
  assert.match(out, /^man_\S+ active$/m);
  assert.match(out, /^pull_\S+ authorized$/m);
  assert.match(out, /^allowance_exceeded 10\.00 \d{4}-\d\d-\d\dT00:00:00Z$/m);
  assert.match(out, /^session_key_revoked$/m);
  assert.equal(out.match(/^pull_\S+ \S+ (authorized|declined)$/gm)?.length, 3, out);
});

test("the root README's snippet", { skip: skipWithoutServer }, async () => {
  const out = await run("first.mjs");
  assert.match(out, /id: 'pull_\w+'/);
  assert.match(out, /status: 'authorized'/);
  assert.match(out, /amount: '50\.00'/);
});

test("README: the payment snippet", { skip: skipWithoutServer }, async () => {
  const out = await run("payment.mjs");
  assert.match(out, /^pay_\S+ succeeded 0x[0-9a-f]{64}$/m);
  assert.match(out, /^pay_\S+ (succeeded|processing)$/m);
  assert.match(out, /^payment\.succeeded$/m);
});
