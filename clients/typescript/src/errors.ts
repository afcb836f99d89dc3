import type { components } from "./generated/openapi.js";

export type Problem = components["schemas"]["Problem"];
export type ErrorCode = components["schemas"]["ErrorCode"];

/** An answer of the API with status 4xx/5xx: an RFC 9457 problem with a stable `code`. */
export class OpenrailError extends Error {
  /** HTTP status. */
  readonly status: number;
  /** Stable code to branch on (`allowance_exceeded`, `resource_missing`, …). */
  // eslint-disable-next-line @typescript-eslint/ban-types
  readonly code: ErrorCode | (string & {});
  /** The field (or header) at fault, if any (`amount`, `source.id`, `Idempotency-Key`). */
  readonly param: string | undefined;
  /** The request's id (`req_…`), from the body or the `Request-Id` header. */
  readonly requestId: string | undefined;
  /** The problem's `type` URI and `title`. */
  readonly type: string | undefined;
  readonly title: string | undefined;
  readonly detail: string | undefined;
  /** Declines: the declined pull, still readable (`pull_…`). */
  readonly pullId: string | undefined;
  /** `allowance_exceeded`: what may still be pulled this epoch, and when it resets. */
  readonly remaining: string | undefined;
  readonly resetsAt: string | undefined;
  /** Seconds from a `Retry-After` header, if any. */
  readonly retryAfter: number | undefined;
  /** The whole problem document (or the raw body when it was not JSON). */
  readonly raw: unknown;

  constructor(status: number, body: unknown, headers?: Headers) {
    const p = (typeof body === "object" && body !== null ? body : {}) as Partial<Problem>;
    const code = typeof p.code === "string" ? p.code : `http_${status}`;
    const detail = typeof p.detail === "string" ? p.detail : undefined;
    super(`${status} ${code}${detail ? `: ${detail}` : ""}`);
    this.name = "OpenrailError";
    this.status = status;
    this.code = code;
    this.param = p.param;
    this.requestId = p.request_id ?? headers?.get("request-id") ?? undefined;
    this.type = p.type;
    this.title = p.title;
    this.detail = detail;
    this.pullId = p.pull_id;
    this.remaining = p.remaining;
    this.resetsAt = p.resets_at;
    this.retryAfter = parseRetryAfter(headers?.get("retry-after") ?? null);
    this.raw = body;
  }
}

/**
 * A credential posted to be attested did not verify: the API's 422 whose body is the
 * verification (no problem document, so `code` is `http_422` and `raw` is the
 * verification). `verification.problemDetails` say why.
 */
export class CredentialNotVerifiedError extends OpenrailError {
  readonly verification: components["schemas"]["VerificationResult"];
  constructor(verification: components["schemas"]["VerificationResult"], headers?: Headers) {
    super(422, verification, headers);
    const names = verification.problemDetails.map((p) => p.type.slice(p.type.lastIndexOf("#") + 1));
    this.name = "CredentialNotVerifiedError";
    this.message = `422: the credential does not verify (${names.join(", ")})`;
    this.verification = verification;
  }
}

/** The request never got an answer (connection refused or reset, DNS, timeout), after all retries. */
export class OpenrailConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "OpenrailConnectionError";
  }
}

/** Webhook verification failed: a missing header, a bad signature, or a timestamp out of tolerance. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const secs = Number(value);
  if (Number.isFinite(secs) && secs >= 0) return secs;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, (date - Date.now()) / 1000);
}
