// A holder for the tests: an Ed25519 key named as a did:key, signing a presentation with an
// `eddsa-jcs-2022` Data Integrity proof (Data Integrity EdDSA Cryptosuites v1.0, §3.3: the
// proof configuration and the document in JCS, each hashed with SHA-256, the two hashes
// signed), so the SDK's verifyPresentation is tested on a presentation the server did not
// make. Test code only: the SDK itself does not sign credentials.
import { createHash, generateKeyPairSync, sign, type KeyObject } from "node:crypto";

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** base58btc (Bitcoin's alphabet). */
export function base58(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = "";
  while (n > 0n) {
    out = ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = "1" + out;
  }
  return out;
}

/** RFC 8785 for the JSON these tests make (strings, integers, booleans, null, arrays, objects). */
export function jcs(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(jcs).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${jcs(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest();

export class Holder {
  readonly did: string;
  readonly verificationMethod: string;
  private readonly key: KeyObject;

  constructor() {
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    const raw = Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url");
    // did:key: multibase base58btc of the multicodec ed25519-pub (0xed 0x01) and the key.
    const multikey = "z" + base58(new Uint8Array([0xed, 0x01, ...raw]));
    this.did = `did:key:${multikey}`;
    this.verificationMethod = `${this.did}#${multikey}`;
    this.key = privateKey;
  }

  /** `unsigned` with a proof of purpose `authentication` for `challenge` and `domain`. */
  signPresentation(unsigned: Record<string, unknown>, challenge: string, domain: string): Record<string, unknown> {
    const proof: Record<string, unknown> = {
      type: "DataIntegrityProof",
      cryptosuite: "eddsa-jcs-2022",
      created: new Date(Date.now() - 5000).toISOString().replace(/\.\d+Z$/, "Z"),
      verificationMethod: this.verificationMethod,
      proofPurpose: "authentication",
      challenge,
      domain,
    };
    const config = { ...proof, "@context": unsigned["@context"] };
    const data = Buffer.concat([sha256(jcs(config)), sha256(jcs(unsigned))]);
    const signature = sign(null, data, this.key);
    return { ...unsigned, proof: { ...proof, proofValue: "z" + base58(new Uint8Array(signature)) } };
  }
}
