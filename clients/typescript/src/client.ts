import type { Address, Hex } from "viem";
import type { components, operations } from "./generated/openapi.js";
import { HttpClient, PageRequest, type ClientOptions, type List, type RequestOptions } from "./http.js";
import { signAuthorization, signDebitPull, toTokenUnits, type TypedDataSigner } from "./signing.js";

type S = components["schemas"];
export type Mandate = S["Mandate"];
export type MandateCreate = S["MandateCreate"];
export type SessionKey = S["SessionKey"];
export type SessionKeyCreate = S["SessionKeyCreate"];
export type DebitPull = S["DebitPull"];
export type DebitPullCreate = S["DebitPullCreate"];
export type Payment = S["Payment"];
export type PaymentCreate = S["PaymentCreate"];
export type BankAccount = S["BankAccount"];
export type BankAccountCreate = S["BankAccountCreate"];
export type Event = S["Event"];
export type WebhookEndpoint = S["WebhookEndpoint"];
export type WebhookEndpointCreate = S["WebhookEndpointCreate"];
export type WebhookEndpointUpdate = S["WebhookEndpointUpdate"];
export type WebhookDelivery = S["WebhookDelivery"];
export type DeletedWebhookEndpoint = S["DeletedWebhookEndpoint"];
export type RedeliverCreate = S["RedeliverCreate"];
export type Account = S["Account"];
export type AccountUpdate = S["AccountUpdate"];
export type VerificationResult = S["VerificationResult"];
export type VerificationProblem = VerificationResult["problemDetails"][number];
export type IdentityChallenge = S["IdentityChallenge"];
export type ChallengeCreate = S["ChallengeCreate"];
export type IdentityCredential = S["IdentityCredential"];
export type StatusListCredential = S["StatusListCredential"];
/** A Verifiable Credential (VC 1.1 or 2.0) as JSON, with its Data Integrity proofs. */
export type VerifiableCredential = S["CredentialVerifyRequest"]["verifiableCredential"];
/** A Verifiable Presentation as JSON, with a proof of purpose `authentication`. */
export type VerifiablePresentation = S["PresentationVerifyRequest"]["verifiablePresentation"];
/** An unsigned VC 2.0 credential for Openrail to issue. */
export type UnsignedCredential = S["CredentialIssueRequest"]["credential"];
export type IdentityVerification = S["IdentityVerification"];
export type IdentityVerificationCreate = S["IdentityVerificationCreate"];
export type IdentityAttestation = S["IdentityAttestation"];
/**
 * `POST /v1/identity/attestations`: exactly one of `credential_id` (a credential this
 * account issued) and `verifiableCredential` (one posted whole, verified first), and
 * `recipient` when the credential's subject is no wallet.
 */
export type AttestationCreate = (
  | { credential_id: string; verifiableCredential?: never }
  | { verifiableCredential: VerifiableCredential; credential_id?: never }
) &
  Pick<S["AttestationCreate"], "recipient">;

type QueryOf<Op extends keyof operations> = operations[Op]["parameters"] extends { query?: infer Q } ? NonNullable<Q> : never;
/** Filters of a list, without the paging members (the iterator pages itself). */
type ListParams<Op extends keyof operations> = QueryOf<Op>;

const enc = encodeURIComponent;

function pages<T extends { id: string }>(
  http: HttpClient,
  path: string,
  params: Record<string, unknown> = {},
  options?: RequestOptions,
): PageRequest<T> {
  const { starting_after, ...rest } = params as { starting_after?: string };
  return new PageRequest<T>(
    (after) =>
      http.request<List<T>>("GET", path, {
        query: { ...(rest as Record<string, string | number | undefined>), starting_after: after },
        ...(options ? { options } : {}),
      }),
    starting_after,
  );
}

/** Mandates: the payer's standing authorization, a ceiling per epoch. */
export class Mandates {
  constructor(private readonly http: HttpClient) {}
  create(params: MandateCreate, options?: RequestOptions): Promise<Mandate> {
    return this.http.request("POST", "/v1/mandates", { body: params, options });
  }
  retrieve(id: string, options?: RequestOptions): Promise<Mandate> {
    return this.http.request("GET", `/v1/mandates/${enc(id)}`, { options });
  }
  list(params?: ListParams<"listMandates">, options?: RequestOptions): PageRequest<Mandate> {
    return pages(this.http, "/v1/mandates", params, options);
  }
  /** Sends the payer's signature of `authorization.typed_data`. */
  authorize(id: string, signature: Hex, options?: RequestOptions): Promise<Mandate> {
    return this.http.request("POST", `/v1/mandates/${enc(id)}/authorize`, { body: { signature }, options });
  }
  /** Signs the mandate's `authorization.typed_data` with the payer's `signer`, and authorizes it. */
  async signAndAuthorize(mandate: Mandate, signer: TypedDataSigner, options?: RequestOptions): Promise<Mandate> {
    const auth = mandate.authorization;
    if (!auth || auth.method !== "payer_signature") throw new TypeError(`${mandate.id} needs no payer signature`);
    return this.authorize(mandate.id, await signAuthorization(signer, auth.typed_data), options);
  }
  cancel(id: string, options?: RequestOptions): Promise<Mandate> {
    return this.http.request("POST", `/v1/mandates/${enc(id)}/cancel`, { options });
  }
}

/** Session keys: what an agent pulls with, scoped to one mandate. */
export class SessionKeys {
  constructor(private readonly http: HttpClient) {}
  create(params: SessionKeyCreate, options?: RequestOptions): Promise<SessionKey> {
    return this.http.request("POST", "/v1/session-keys", { body: params, options });
  }
  retrieve(id: string, options?: RequestOptions): Promise<SessionKey> {
    return this.http.request("GET", `/v1/session-keys/${enc(id)}`, { options });
  }
  list(params?: ListParams<"listSessionKeys">, options?: RequestOptions): PageRequest<SessionKey> {
    return pages(this.http, "/v1/session-keys", params, options);
  }
  /** Revokes the key on chain (`DELETE /v1/session-keys/{id}`). */
  revoke(id: string, options?: RequestOptions): Promise<SessionKey> {
    return this.http.request("DELETE", `/v1/session-keys/${enc(id)}`, { options });
  }
  /**
   * Issues the key's `AgentCredential` (a W3C credential Openrail signs, binding the key's
   * `signer` to its payer, mandate and ceiling, valid until the key expires), or resolves with
   * the one issued before. A key without a signer throws 409 `session_key_without_signer`.
   */
  async issueAgentCredential(id: string, options?: RequestOptions): Promise<VerifiableCredential> {
    const issued = await this.http.request<S["IssuedCredential"]>("POST", `/v1/session-keys/${enc(id)}/credential`, { options });
    return issued.verifiableCredential;
  }
  /** The key's `AgentCredential`, once issued (404 before). */
  async agentCredential(id: string, options?: RequestOptions): Promise<VerifiableCredential> {
    const issued = await this.http.request<S["IssuedCredential"]>("GET", `/v1/session-keys/${enc(id)}/credential`, { options });
    return issued.verifiableCredential;
  }
}

export interface SignedPullParams {
  /** The key (as created or retrieved: its `eip712_domain` and `onchain.id` are used). */
  sessionKey: SessionKey;
  /** Major units, e.g. "5.00". */
  amount: string;
  destination: Address;
  /** The agent (the key's `signer`). */
  signer: TypedDataSigner;
  /** Default: random 64 bits. Each nonce works once per key. */
  nonce?: bigint;
  /** Unix seconds; default now + 10 minutes. */
  deadline?: bigint;
  description?: string;
}

/** Debit pulls: money moved against a session key, checked on chain. */
export class DebitPulls {
  constructor(private readonly http: HttpClient) {}
  /** A declined pull throws `OpenrailError` (422, `code`, `pullId`, `remaining`, `resetsAt`). */
  create(params: DebitPullCreate, options?: RequestOptions): Promise<DebitPull> {
    return this.http.request("POST", "/v1/debit-pulls", { body: params, options });
  }
  /** A pull on a key with a `signer`: signs `DebitPull(...)` with the agent's signer and sends it. */
  async createSigned(params: SignedPullParams, options?: RequestOptions): Promise<DebitPull> {
    const key = params.sessionKey;
    if (!key.eip712_domain) throw new TypeError(`${key.id} has no signer (no eip712_domain)`);
    const nonce = params.nonce ?? randomNonce();
    const deadline = params.deadline ?? BigInt(Math.floor(Date.now() / 1000) + 600);
    const signature = await signDebitPull(params.signer, {
      domain: key.eip712_domain,
      keyId: key.onchain.id as Hex,
      destination: params.destination,
      amount: toTokenUnits(params.amount),
      nonce,
      deadline,
    });
    return this.create(
      {
        session_key_id: key.id,
        amount: params.amount,
        destination: params.destination,
        signature,
        nonce: nonce.toString(),
        deadline: Number(deadline),
        ...(params.description !== undefined ? { description: params.description } : {}),
      },
      options,
    );
  }
  retrieve(id: string, options?: RequestOptions): Promise<DebitPull> {
    return this.http.request("GET", `/v1/debit-pulls/${enc(id)}`, { options });
  }
  list(params?: ListParams<"listDebitPulls">, options?: RequestOptions): PageRequest<DebitPull> {
    return pages(this.http, "/v1/debit-pulls", params, options);
  }
}

function randomNonce(): bigint {
  const b = crypto.getRandomValues(new Uint8Array(8));
  return b.reduce((n, x) => (n << 8n) | BigInt(x), 0n);
}

/** One-time payments (wallet ↔ wallet, bank ↔ wallet, bank → bank). */
export class Payments {
  constructor(private readonly http: HttpClient) {}
  create(params: PaymentCreate, options?: RequestOptions): Promise<Payment> {
    return this.http.request("POST", "/v1/payments", { body: params, options });
  }
  retrieve(id: string, options?: RequestOptions): Promise<Payment> {
    return this.http.request("GET", `/v1/payments/${enc(id)}`, { options });
  }
  list(params?: ListParams<"listPayments">, options?: RequestOptions): PageRequest<Payment> {
    return pages(this.http, "/v1/payments", params, options);
  }
  authorize(id: string, signature: Hex, options?: RequestOptions): Promise<Payment> {
    return this.http.request("POST", `/v1/payments/${enc(id)}/authorize`, { body: { signature }, options });
  }
  /** Signs the payment's `authorization.typed_data` with the source wallet's `signer`, and authorizes it. */
  async signAndAuthorize(payment: Payment, signer: TypedDataSigner, options?: RequestOptions): Promise<Payment> {
    const auth = payment.authorization;
    if (!auth || auth.method !== "payer_signature") throw new TypeError(`${payment.id} needs no payer signature`);
    return this.authorize(payment.id, await signAuthorization(signer, auth.typed_data), options);
  }
  /**
   * Withdraws a payment still waiting for its payer's signature (`requires_authorization`):
   * it becomes `canceled` and its consent link offers nothing to sign. A payment past that
   * stage throws `OpenrailError` 409 `payment_not_cancelable`.
   */
  cancel(id: string, options?: RequestOptions): Promise<Payment> {
    return this.http.request("POST", `/v1/payments/${enc(id)}/cancel`, { options });
  }
}

/** Simulated bank accounts (testnet). */
export class BankAccounts {
  constructor(private readonly http: HttpClient) {}
  create(params: BankAccountCreate, options?: RequestOptions): Promise<BankAccount> {
    return this.http.request("POST", "/v1/bank-accounts", { body: params, options });
  }
  retrieve(id: string, options?: RequestOptions): Promise<BankAccount> {
    return this.http.request("GET", `/v1/bank-accounts/${enc(id)}`, { options });
  }
}

/** Your account: where its one-time payments settle (requests never name a chain). */
export class AccountSettings {
  constructor(private readonly http: HttpClient) {}
  retrieve(options?: RequestOptions): Promise<Account> {
    return this.http.request("GET", "/v1/account", { options });
  }
  update(params: AccountUpdate, options?: RequestOptions): Promise<Account> {
    return this.http.request("POST", "/v1/account", { body: params, options });
  }
}

/**
 * Identity verification sessions (`/v1/identity/verifications`; testnet, answered by a
 * simulated provider chosen with `simulate`): `requires_input` → `submit` → `processing` →
 * `verified` (the credential issued: `credential`), or back to `requires_input` with
 * `last_error`; `cancel` withdraws one not yet submitted. A move outside the lifecycle
 * throws `OpenrailError` 409 (`verification_not_submittable`, `verification_not_cancelable`,
 * `verification_not_verified`).
 */
export class IdentityVerifications {
  constructor(private readonly http: HttpClient) {}
  create(params: IdentityVerificationCreate, options?: RequestOptions): Promise<IdentityVerification> {
    return this.http.request("POST", "/v1/identity/verifications", { body: params, options });
  }
  retrieve(id: string, options?: RequestOptions): Promise<IdentityVerification> {
    return this.http.request("GET", `/v1/identity/verifications/${enc(id)}`, { options });
  }
  list(params?: ListParams<"listIdentityVerifications">, options?: RequestOptions): PageRequest<IdentityVerification> {
    return pages(this.http, "/v1/identity/verifications", params, options);
  }
  /** The flow is finished: the provider checks (`requires_input` → `processing`). */
  submit(id: string, options?: RequestOptions): Promise<IdentityVerification> {
    return this.http.request("POST", `/v1/identity/verifications/${enc(id)}/submit`, { options });
  }
  /** Withdraws a session not yet submitted (`canceled`). */
  cancel(id: string, options?: RequestOptions): Promise<IdentityVerification> {
    return this.http.request("POST", `/v1/identity/verifications/${enc(id)}/cancel`, { options });
  }
  /** The signed credential a verified session issued, for its holder. */
  async credential(id: string, options?: RequestOptions): Promise<VerifiableCredential> {
    const issued = await this.http.request<S["IssuedCredential"]>("GET", `/v1/identity/verifications/${enc(id)}/credential`, { options });
    return issued.verifiableCredential;
  }
}

/**
 * Identity attestations (`/v1/identity/attestations`): a verified credential attested on
 * the mode's attestation chain. Creating and revoking wait for the chain like every write
 * (`{ wait }`, default 10 s): `active`/`revoked` when it answered, else the object as it is
 * (`pending`, or still `active` with its revocation queued) — read it again with `retrieve`.
 */
export class IdentityAttestations {
  constructor(private readonly http: HttpClient) {}
  /**
   * Attests a credential. A posted `verifiableCredential` that does not verify throws
   * `CredentialNotVerifiedError` (an `OpenrailError` 422 with its `verification`); a revoked
   * one named by `credential_id` throws `OpenrailError` 409 `credential_revoked`.
   */
  create(params: AttestationCreate, options?: RequestOptions): Promise<IdentityAttestation> {
    return this.http.request("POST", "/v1/identity/attestations", { body: params, options, verdict: "error" });
  }
  retrieve(id: string, options?: RequestOptions): Promise<IdentityAttestation> {
    return this.http.request("GET", `/v1/identity/attestations/${enc(id)}`, { options });
  }
  /** The account's attestations, newest first; `{ subject: "0x…" }` (or `did:pkh:eip155:…:0x…`): only those about that wallet. */
  list(params?: ListParams<"listAttestations">, options?: RequestOptions): PageRequest<IdentityAttestation> {
    return pages(this.http, "/v1/identity/attestations", params, options);
  }
  /** Revokes it on chain (final). A revoked or failed one resolves as it is. */
  revoke(id: string, options?: RequestOptions): Promise<IdentityAttestation> {
    return this.http.request("POST", `/v1/identity/attestations/${enc(id)}/revoke`, { options });
  }
}

/**
 * W3C Verifiable Credentials (`/v1/identity`). A verification that ran is an answer, never
 * an exception: a credential that does not verify (HTTP 422) resolves with
 * `{ verified: false, problemDetails }`. A document that is no credential at all throws
 * `OpenrailError` 400 `parameter_invalid`. Whether the issuer is trusted is your policy's
 * call: verification says the proofs, validity and status hold, whoever signed.
 */
export class Identity {
  /** Verification sessions: is a wallet a person, financially healthy, an agent? (testnet) */
  readonly verifications: IdentityVerifications;
  /** Verified credentials attested on the mode's attestation chain. */
  readonly attestations: IdentityAttestations;
  constructor(private readonly http: HttpClient) {
    this.verifications = new IdentityVerifications(http);
    this.attestations = new IdentityAttestations(http);
  }
  /** Verifies a credential: proofs, validity, status. Works on a client without a key too (`apiKey: null`). */
  verifyCredential(credential: VerifiableCredential, options?: RequestOptions): Promise<VerificationResult> {
    return this.http.request("POST", "/v1/identity/credentials/verify", {
      body: { verifiableCredential: credential } satisfies S["CredentialVerifyRequest"],
      options,
      verdict: "answer",
    });
  }
  /**
   * Verifies a presentation signed for `challenge` (from `createChallenge`; used up by this
   * call, so a replay fails) and `domain` (default: the challenge's).
   */
  verifyPresentation(
    presentation: VerifiablePresentation,
    params: { challenge: string; domain?: string },
    options?: RequestOptions,
  ): Promise<VerificationResult> {
    const body: S["PresentationVerifyRequest"] = { verifiablePresentation: presentation, options: params };
    return this.http.request("POST", "/v1/identity/presentations/verify", { body, options, verdict: "answer" });
  }
  /** A single-use challenge (ten minutes) for a holder to sign into a presentation, bound to `domain` when given. */
  createChallenge(params: ChallengeCreate = {}, options?: RequestOptions): Promise<IdentityChallenge> {
    return this.http.request("POST", "/v1/identity/challenges", { body: params, options });
  }
  /**
   * Signs `credential` as Openrail's issuer (`did:key`, `eddsa-rdfc-2022`), adding its `id`
   * (when absent), `issuer`, `validFrom` (when absent) and a revocation entry of a Bitstring
   * Status List; resolves with the signed credential.
   */
  async issueCredential(credential: UnsignedCredential, options?: RequestOptions): Promise<VerifiableCredential> {
    const body: S["CredentialIssueRequest"] = { credential };
    const issued = await this.http.request<S["IssuedCredential"]>("POST", "/v1/identity/credentials/issue", { body, options });
    return issued.verifiableCredential;
  }
  /** Revokes a credential this account issued (final); resolves with its record (`status: "revoked"`). */
  revokeCredential(id: string, options?: RequestOptions): Promise<IdentityCredential> {
    const body: S["CredentialStatusUpdate"] = {
      credentialId: id,
      credentialStatus: { type: "BitstringStatusListEntry", statusPurpose: "revocation" },
      status: true,
    };
    return this.http.request("POST", "/v1/identity/credentials/status", { body, options });
  }
  /** A status list (`sl_…`) as its public URL serves it: a signed `BitstringStatusListCredential`. */
  statusList(id: string, options?: RequestOptions): Promise<StatusListCredential> {
    return this.http.request("GET", `/v1/identity/status-lists/${enc(id)}`, { options });
  }
}

/** The name of a verification problem's type: `RANGE_ERROR` of `https://www.w3.org/TR/vc-data-model#RANGE_ERROR`. */
export function problemName(problem: VerificationProblem): string {
  return problem.type.slice(problem.type.lastIndexOf("#") + 1);
}

/** Events (`evt_…`): every state change. */
export class Events {
  constructor(private readonly http: HttpClient) {}
  retrieve(id: string, options?: RequestOptions): Promise<Event> {
    return this.http.request("GET", `/v1/events/${enc(id)}`, { options });
  }
  list(params?: ListParams<"listEvents">, options?: RequestOptions): PageRequest<Event> {
    return pages(this.http, "/v1/events", params, options);
  }
  /** Queues the event again (to every subscribed endpoint, or `{ endpoint: "we_…" }`); answers the deliveries queued. */
  redeliver(id: string, params: RedeliverCreate = {}, options?: RequestOptions): Promise<S["WebhookDeliveryList"]> {
    return this.http.request("POST", `/v1/events/${enc(id)}/redeliver`, { body: params, options });
  }
}

/** Webhook endpoints and their deliveries. */
export class WebhookEndpoints {
  constructor(private readonly http: HttpClient) {}
  create(params: WebhookEndpointCreate, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.http.request("POST", "/v1/webhook-endpoints", { body: params, options });
  }
  retrieve(id: string, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.http.request("GET", `/v1/webhook-endpoints/${enc(id)}`, { options });
  }
  list(params?: ListParams<"listWebhookEndpoints">, options?: RequestOptions): PageRequest<WebhookEndpoint> {
    return pages(this.http, "/v1/webhook-endpoints", params, options);
  }
  update(id: string, params: WebhookEndpointUpdate, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.http.request("POST", `/v1/webhook-endpoints/${enc(id)}`, { body: params, options });
  }
  delete(id: string, options?: RequestOptions): Promise<DeletedWebhookEndpoint> {
    return this.http.request("DELETE", `/v1/webhook-endpoints/${enc(id)}`, { options });
  }
  rotateSecret(id: string, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.http.request("POST", `/v1/webhook-endpoints/${enc(id)}/rotate-secret`, { options });
  }
  listDeliveries(id: string, params?: ListParams<"listWebhookDeliveries">, options?: RequestOptions): PageRequest<WebhookDelivery> {
    return pages(this.http, `/v1/webhook-endpoints/${enc(id)}/deliveries`, params, options);
  }
}

/**
 * The Openrail client.
 *
 * ```ts
 * const openrail = new Openrail({ apiKey: process.env.OPENRAIL_API_KEY!, baseUrl: "http://127.0.0.1:8080" });
 * const mandate = await openrail.agentic.mandates.create({ payer_account_id, max_amount: "100.00", currency: "USD", interval: "daily" });
 * ```
 */
export class Openrail {
  readonly http: HttpClient;
  /** Mandates, session keys and debit pulls. */
  readonly agentic: { mandates: Mandates; sessionKeys: SessionKeys; debitPulls: DebitPulls };
  /** One-time payments. */
  readonly payments: Payments;
  readonly bankAccounts: BankAccounts;
  readonly account: AccountSettings;
  readonly events: Events;
  readonly webhookEndpoints: WebhookEndpoints;
  /** W3C Verifiable Credentials: verify, challenges, issue, revoke, status lists; `verifications` and `attestations`. */
  readonly identity: Identity;

  constructor(options: ClientOptions) {
    this.http = new HttpClient(options);
    this.agentic = {
      mandates: new Mandates(this.http),
      sessionKeys: new SessionKeys(this.http),
      debitPulls: new DebitPulls(this.http),
    };
    this.payments = new Payments(this.http);
    this.bankAccounts = new BankAccounts(this.http);
    this.account = new AccountSettings(this.http);
    this.events = new Events(this.http);
    this.webhookEndpoints = new WebhookEndpoints(this.http);
    this.identity = new Identity(this.http);
  }
}
