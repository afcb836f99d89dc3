#!/usr/bin/env node
// Copies the ABI and bytecode of the deployable contracts from forge's output
// (contracts/out) into chain/artifacts, where the Rust `sol!` bindings read them.
// `--check` exits non-zero when the committed artifacts differ from a fresh build
// (CI runs it after `forge build`, so bindings can never drift from the sources).
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const CONTRACTS = ['AllowanceStateMachine', 'SettlementRouter', 'AttestationVerifier', 'TestStablecoin'];
const check = process.argv.includes('--check');
const outDir = join(root, 'chain', 'artifacts');
mkdirSync(outDir, { recursive: true });

let drift = [];
for (const name of CONTRACTS) {
  const src = join(root, 'contracts', 'out', `${name}.sol`, `${name}.json`);
  const art = JSON.parse(readFileSync(src, 'utf8'));
  const slim = {
    abi: art.abi,
    bytecode: { object: art.bytecode.object },
    deployedBytecode: { object: art.deployedBytecode.object },
  };
  const text = JSON.stringify(slim, null, 1) + '\n';
  const dst = join(outDir, `${name}.json`);
  if (check) {
    if (!existsSync(dst) || readFileSync(dst, 'utf8') !== text) drift.push(dst);
  } else {
    writeFileSync(dst, text);
  }
}
if (drift.length) {
  console.error(`chain/artifacts out of date with contracts/src: ${drift.join(', ')}`);
  console.error('run: make artifacts (forge build && node scripts/export-artifacts.mjs) and commit');
  process.exit(1);
}
console.log(check ? 'chain/artifacts match contracts/src' : `wrote ${CONTRACTS.length} artifacts to chain/artifacts`);
