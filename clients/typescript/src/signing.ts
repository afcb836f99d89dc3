import type { Address, Hex, LocalAccount, TypedDataDefinition } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { components } from "./generated/openapi.js";

/**
 * The API's `authorization.typed_data`. The document declares `message` as a bare
 * object, which openapi-typescript reads as `Record<string, never>`; its members are the
 * primary type's fields (strings for uint256 values, numbers for small integers).
 */
export type TypedData = Omit<components["schemas"]["TypedData"], "message"> & { message: Record<string, unknown> };
export type Eip712Domain = components["schemas"]["Eip712Domain"];

/**
 * Anything that signs EIP-712 typed data the way viem does: a viem `LocalAccount`
 * (`privateKeyToAccount`, `mnemonicToAccount`, …), or an adapter around a wallet client
 * (`{ signTypedData: (td) => walletClient.signTypedData({ account, ...td }) }`).
 */
export interface TypedDataSigner {
  signTypedData(typedData: TypedDataDefinition): Promise<Hex>;
}

/** A viem account from a 0x private key (for servers and tests; never ship keys to browsers). */
export function accountFromPrivateKey(privateKey: Hex): LocalAccount {
  return privateKeyToAccount(privateKey);
}

/**
 * The API's `authorization.typed_data` (exactly what `eth_signTypedData_v4` takes) as
 * viem's typed-data definition: `EIP712Domain` is left to viem (it derives it from the
 * domain), and integer fields written as decimal strings become bigints.
 */
export function toViemTypedData(typedData: TypedData): TypedDataDefinition {
  const { EIP712Domain: _domainType, ...types } = typedData.types;
  const fields = types[typedData.primaryType] ?? [];
  const message: Record<string, unknown> = { ...typedData.message };
  for (const { name, type } of fields) {
    const v = message[name];
    if (/^u?int\d*$/.test(type) && (typeof v === "string" || typeof v === "number")) message[name] = BigInt(v);
  }
  return {
    domain: {
      name: typedData.domain.name,
      version: typedData.domain.version,
      chainId: typedData.domain.chainId,
      verifyingContract: typedData.domain.verifyingContract as Address,
    },
    types,
    primaryType: typedData.primaryType,
    message,
  } as unknown as TypedDataDefinition;
}

/** Signs the API's `authorization.typed_data` (a mandate's or a payment's) with `signer`. */
export function signAuthorization(signer: TypedDataSigner, typedData: TypedData): Promise<Hex> {
  return signer.signTypedData(toViemTypedData(typedData));
}

/** The on-chain `DebitPull` struct an agent signs for a key with a `signer`. */
export const DEBIT_PULL_TYPES = {
  DebitPull: [
    { name: "keyId", type: "bytes32" },
    { name: "destination", type: "address" },
    { name: "amount", type: "uint256" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
  ],
} as const;

/** Token decimals of the test stablecoins (`5000000` token units are 5.00). */
export const TOKEN_DECIMALS = 6;

/**
 * Major units ("5.00", 5, "0.5") to token units as a bigint, exactly (no floats):
 * `toTokenUnits("5.00") === 5000000n`.
 */
export function toTokenUnits(amount: string | number, decimals = TOKEN_DECIMALS): bigint {
  const text = typeof amount === "number" ? numberText(amount) : amount.trim();
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new RangeError(`not a decimal amount: ${JSON.stringify(amount)}`);
  const whole = m[1] ?? "0";
  const frac = (m[2] ?? "").replace(/0+$/, "");
  if (frac.length > decimals) throw new RangeError(`more than ${decimals} decimals: ${text}`);
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, "0") || "0");
}

function numberText(n: number): string {
  if (!Number.isFinite(n) || n < 0) throw new RangeError(`not a decimal amount: ${n}`);
  const s = String(n);
  if (/e/i.test(s)) throw new RangeError(`write ${n} as a decimal string`);
  return s;
}

export interface DebitPullTerms {
  /** The key's `eip712_domain` (present on keys with a `signer`). */
  domain: Eip712Domain;
  /** The key's `onchain.id` (bytes32). */
  keyId: Hex;
  destination: Address;
  /** Token units (see `toTokenUnits`). */
  amount: bigint;
  nonce: bigint;
  /** Unix seconds. */
  deadline: bigint;
}

/** The agent's EIP-712 signature of `DebitPull(bytes32 keyId,address destination,uint256 amount,uint256 nonce,uint256 deadline)`. */
export function signDebitPull(signer: TypedDataSigner, terms: DebitPullTerms): Promise<Hex> {
  return signer.signTypedData({
    domain: {
      name: terms.domain.name,
      version: terms.domain.version,
      chainId: terms.domain.chainId,
      verifyingContract: terms.domain.verifyingContract as Address,
    },
    types: DEBIT_PULL_TYPES,
    primaryType: "DebitPull",
    message: {
      keyId: terms.keyId,
      destination: terms.destination,
      amount: terms.amount,
      nonce: terms.nonce,
      deadline: terms.deadline,
    },
  });
}
