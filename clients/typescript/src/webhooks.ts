import { createHmac, timingSafeEqual } from "node:crypto";
import { WebhookVerificationError } from "./errors.js";
import type { components } from "./generated/openapi.js";

export type Event = components["schemas"]["Event"];

/** Headers as Node (`IncomingMessage.headers`), fetch (`Headers`) or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far `webhook-timestamp` may be from now, in seconds, either way. Default 300. */
  toleranceSeconds?: number;
  /** "Now" in unix seconds (tests). */
  now?: number;
}

/**
 * Standard Webhooks verification: `webhook-signature` holds space-separated `v1,<base64>`
 * entries, each the HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with
 * the base64-decoded secret after `whsec_`; one matching entry suffices (during a
 * rotation both secrets sign). Verify the raw body bytes, before any JSON parsing.
 */
export class Webhook {
  private readonly key: Buffer;

  constructor(secret: string) {
    const b64 = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new TypeError("a webhook secret is whsec_ and base64");
    this.key = Buffer.from(b64, "base64");
    if (this.key.length === 0) throw new TypeError("empty webhook secret");
  }

  /** The `v1,<base64>` signature of one message. */
  sign(id: string, timestamp: number | string, body: string | Uint8Array): string {
    const mac = createHmac("sha256", this.key)
      .update(`${id}.${timestamp}.`)
      .update(typeof body === "string" ? Buffer.from(body, "utf8") : body)
      .digest("base64");
    return `v1,${mac}`;
  }

  /** Verifies and returns the parsed event; throws `WebhookVerificationError` otherwise. */
  verify(body: string | Uint8Array, headers: WebhookHeaders, options: VerifyOptions = {}): Event {
    const id = header(headers, "webhook-id");
    const timestamp = header(headers, "webhook-timestamp");
    const signatures = header(headers, "webhook-signature");
    if (!id || !timestamp || !signatures) throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature");
    if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError("invalid webhook-timestamp");
    const now = options.now ?? Math.floor(Date.now() / 1000);
    const tolerance = options.toleranceSeconds ?? 300;
    const ts = Number(timestamp);
    if (ts < now - tolerance) throw new WebhookVerificationError("webhook-timestamp too old");
    if (ts > now + tolerance) throw new WebhookVerificationError("webhook-timestamp too new");
    const expected = Buffer.from(this.sign(id, timestamp, body).slice(3), "base64");
    const ok = signatures.split(" ").some((entry) => {
      const [version, sig] = entry.split(",", 2);
      if (version !== "v1" || !sig) return false;
      const given = Buffer.from(sig, "base64");
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
    if (!ok) throw new WebhookVerificationError("no matching signature");
    const text = typeof body === "string" ? body : Buffer.from(body).toString("utf8");
    return JSON.parse(text) as Event;
  }
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : record[key];
  return Array.isArray(v) ? v.join(" ") : v;
}

/** `new Webhook(secret).verify(body, headers, options)`. */
export function verifyWebhook(secret: string, body: string | Uint8Array, headers: WebhookHeaders, options?: VerifyOptions): Event {
  return new Webhook(secret).verify(body, headers, options);
}
