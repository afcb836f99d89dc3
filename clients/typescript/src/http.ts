import { CredentialNotVerifiedError, OpenrailConnectionError, OpenrailError } from "./errors.js";

export interface ClientOptions {
  /**
   * An API key (`sk_testnet_…`, `sk_mainnet_…`) or a session key's secret (`sks_…`); `null`
   * for a client without a key, which may only do what the API serves anonymously
   * (verifying a credential, rate-limited per address; reading a status list).
   */
  apiKey: string | null;
  /** Default `http://127.0.0.1:8080` (what `openrail dev` serves). */
  baseUrl?: string;
  /** Retries after the first attempt (network errors, 409 `idempotency_in_progress`, 429, 502, 503, 504). Default 3. */
  maxRetries?: number;
  /** Per-attempt timeout in milliseconds. Default 75,000 (above `Prefer: wait=60`). */
  timeoutMs?: number;
  /** Longest wait between attempts, in seconds, also capping `Retry-After`. Default 60. */
  maxRetryDelaySeconds?: number;
  /** A `fetch` implementation (default: the global one). */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  /**
   * The `Idempotency-Key` of a POST or DELETE. Default: a fresh random key per call,
   * reused on every retry of that call.
   */
  idempotencyKey?: string;
  /** `Prefer: wait=N`: how long a write waits for the chain before answering 202 (0–60 s). */
  wait?: number;
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number;
}

export type Query = Record<string, string | number | boolean | undefined | null>;

/**
 * Statuses that are retried with the same Idempotency-Key: nothing ran twice. A 409 only
 * when its code is `idempotency_in_progress`: other conflicts (`payment_not_cancelable`, …)
 * are final answers about the object.
 */
const RETRY_STATUSES = new Set([409, 429, 502, 503, 504]);
function retryable(error: OpenrailError): boolean {
  return RETRY_STATUSES.has(error.status) && (error.status !== 409 || error.code === "idempotency_in_progress");
}

export class HttpClient {
  readonly baseUrl: string;
  private readonly apiKey: string | null;
  private readonly maxRetries: number;
  private readonly timeoutMs: number;
  private readonly maxDelay: number;
  private readonly fetchImpl: typeof fetch;

  constructor(options: ClientOptions) {
    if (options.apiKey !== null && !options.apiKey) throw new TypeError("apiKey is required (null: no key)");
    this.apiKey = options.apiKey;
    this.baseUrl = (options.baseUrl ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
    this.maxRetries = options.maxRetries ?? 3;
    this.timeoutMs = options.timeoutMs ?? 75_000;
    this.maxDelay = options.maxRetryDelaySeconds ?? 60;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  async request<T>(
    method: "GET" | "POST" | "DELETE",
    path: string,
    init: {
      query?: Query;
      body?: unknown;
      options?: RequestOptions;
      /**
       * A 422 whose body is a verification's verdict (`verified`, no `code`): `"answer"`
       * resolves with it; `"error"` throws `CredentialNotVerifiedError` carrying it.
       */
      verdict?: "answer" | "error";
    } = {},
  ): Promise<T> {
    const { query, body, options = {} } = init;
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
    }
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.apiKey !== null) headers["authorization"] = `Bearer ${this.apiKey}`;
    if (method !== "GET") headers["idempotency-key"] = options.idempotencyKey ?? `orc_${globalThis.crypto.randomUUID()}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    if (options.wait !== undefined) headers["prefer"] = `wait=${options.wait}`;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const maxRetries = options.maxRetries ?? this.maxRetries;

    for (let attempt = 0; ; attempt++) {
      const timeout = AbortSignal.timeout(this.timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      let res: Response;
      try {
        res = await this.fetchImpl(url, { method, headers, body: payload, signal });
      } catch (err) {
        if (options.signal?.aborted) throw err;
        if (attempt >= maxRetries) {
          throw new OpenrailConnectionError(`${method} ${path}: ${(err as Error).message ?? err}`, { cause: err });
        }
        await sleep(this.backoff(attempt, undefined), options.signal);
        continue;
      }
      const text = await res.text();
      let json: unknown = undefined;
      if (text !== "") {
        try {
          json = JSON.parse(text);
        } catch {
          json = text;
        }
      }
      if (res.ok) return json as T;
      if (init.verdict && res.status === 422 && isVerdict(json)) {
        if (init.verdict === "answer") return json as T;
        throw new CredentialNotVerifiedError(json as CredentialNotVerifiedError["verification"], res.headers);
      }
      const error = new OpenrailError(res.status, json, res.headers);
      if (retryable(error) && attempt < maxRetries) {
        await sleep(this.backoff(attempt, error.retryAfter), options.signal);
        continue;
      }
      throw error;
    }
  }

  /** Milliseconds before the next attempt: `Retry-After` when given, else exponential with jitter. */
  private backoff(attempt: number, retryAfter: number | undefined): number {
    const seconds =
      retryAfter !== undefined ? retryAfter : Math.min(0.25 * 2 ** attempt, 8) * (0.75 + Math.random() * 0.5);
    return Math.min(seconds, this.maxDelay) * 1000;
  }
}

/** A verification's verdict (VC API): `verified` and no problem `code`. */
export function isVerdict(body: unknown): boolean {
  return typeof body === "object" && body !== null && "verified" in body && !("code" in body);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A list page as the API answers it. */
export interface List<T> {
  object: "list";
  url: string;
  data: T[];
  has_more: boolean;
}

/**
 * A list call: `await` it for one page, or `for await` over it for every item of every
 * page (following `starting_after` = the last id while `has_more`).
 */
export class PageRequest<T extends { id: string }> implements PromiseLike<List<T>>, AsyncIterable<T> {
  private first: Promise<List<T>> | undefined;

  constructor(
    private readonly fetchPage: (startingAfter: string | undefined) => Promise<List<T>>,
    private readonly startingAfter: string | undefined,
  ) {}

  private firstPage(): Promise<List<T>> {
    this.first ??= this.fetchPage(this.startingAfter);
    return this.first;
  }

  then<R1 = List<T>, R2 = never>(
    onfulfilled?: ((value: List<T>) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.firstPage().then(onfulfilled, onrejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page = await this.firstPage();
    for (;;) {
      yield* page.data;
      const last = page.data[page.data.length - 1];
      if (!page.has_more || last === undefined) return;
      page = await this.fetchPage(last.id);
    }
  }

  /** Every item of every page, in one array (at most `max`, default 10,000). */
  async toArray(max = 10_000): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) {
      if (out.length >= max) break;
      out.push(item);
    }
    return out;
  }
}
