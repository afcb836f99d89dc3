// EIP-712: what we sign equals what Foundry's `cast wallet sign --data` signs for the same
// typed data (the command the docs use), and recovers to the signer.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { recoverTypedDataAddress, type Hex } from "viem";
import { accountFromPrivateKey, signAuthorization, signDebitPull, toTokenUnits, toViemTypedData, DEBIT_PULL_TYPES, type TypedData } from "../src/index.js";

// anvil's public development account 2 (the demo payer of `openrail dev`).
const PAYER_KEY: Hex = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a";
const PAYER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const CAST = new URL("../../../../node_modules/.bin/cast", import.meta.url).pathname;

const mandateTypedData: TypedData = {
  types: {
    EIP712Domain: [
      { name: "name", type: "string" },
      { name: "version", type: "string" },
      { name: "chainId", type: "uint256" },
      { name: "verifyingContract", type: "address" },
    ],
    Mandate: [
      { name: "mandateId", type: "bytes32" },
      { name: "payer", type: "address" },
      { name: "token", type: "address" },
      { name: "maxAmount", type: "uint256" },
      { name: "interval", type: "uint8" },
      { name: "nonce", type: "uint256" },
      { name: "deadline", type: "uint256" },
    ],
  },
  primaryType: "Mandate",
  domain: { name: "Openrail", version: "1", chainId: 31337, verifyingContract: "0xDc64a140Aa3E981100a9becA4E685f962f0cF6C9" },
  message: {
    mandateId: "0x0729a1d6b1b3c9d5cb3f4c9e3a8b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6fff90",
    payer: PAYER,
    token: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    maxAmount: "100000000",
    interval: 0,
    nonce: "3527900121251115019",
    deadline: "1795588669",
  },
};

test("toTokenUnits reads decimal major units exactly", () => {
  assert.equal(toTokenUnits("5.00"), 5_000_000n);
  assert.equal(toTokenUnits("0.01"), 10_000n);
  assert.equal(toTokenUnits(1.5), 1_500_000n);
  assert.equal(toTokenUnits("1000000000000"), 1_000_000_000_000_000_000n);
  assert.equal(toTokenUnits("12.500000"), 12_500_000n);
  for (const bad of ["-1", "1e3", "", "1.0000001", " ", "1,5"]) assert.throws(() => toTokenUnits(bad), RangeError, bad);
});

test("a mandate's typed data: our signature recovers to the payer", async () => {
  const account = accountFromPrivateKey(PAYER_KEY);
  const signature = await signAuthorization(account, mandateTypedData);
  assert.match(signature, /^0x[0-9a-f]{130}$/);
  const recovered = await recoverTypedDataAddress({ ...toViemTypedData(mandateTypedData), signature });
  assert.equal(recovered, PAYER);
  const other = { ...mandateTypedData, message: { ...mandateTypedData.message, maxAmount: "100000001" } };
  assert.notEqual(await signAuthorization(account, other), signature);
});

test("the same signature as `cast wallet sign --data` for a mandate and a DebitPull", { skip: !existsSync(CAST) && "cast not installed (make setup)" }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "openrail-sign-"));
  const cast = (td: unknown) => {
    const file = join(dir, "td.json");
    writeFileSync(file, JSON.stringify(td));
    return execFileSync(CAST, ["wallet", "sign", "--data", "--from-file", file, "--private-key", PAYER_KEY]).toString().trim();
  };
  const account = accountFromPrivateKey(PAYER_KEY);
  assert.equal(await signAuthorization(account, mandateTypedData), cast(mandateTypedData));

  const domain = { name: "Openrail" as const, version: "1" as const, chainId: 31337, verifyingContract: "0xDc64a140Aa3E981100a9becA4E685f962f0cF6C9" };
  const terms = {
    domain,
    keyId: "0x1111111111111111111111111111111111111111111111111111111111111111" as Hex,
    destination: "0x90F79bf6EB2c4f870365E785982E1f101E93b906" as const,
    amount: toTokenUnits("5.00"),
    nonce: 1n,
    deadline: 1795588669n,
  };
  const ours = await signDebitPull(account, terms);
  const theirs = cast({
    types: { EIP712Domain: mandateTypedData.types["EIP712Domain"], ...DEBIT_PULL_TYPES },
    primaryType: "DebitPull",
    domain,
    message: { keyId: terms.keyId, destination: terms.destination, amount: "5000000", nonce: "1", deadline: "1795588669" },
  });
  assert.equal(ours, theirs);
});
