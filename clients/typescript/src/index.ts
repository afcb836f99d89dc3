export * from "./client.js";
export { HttpClient, PageRequest, type ClientOptions, type RequestOptions, type List, type Query } from "./http.js";
export { OpenrailError, OpenrailConnectionError, WebhookVerificationError, CredentialNotVerifiedError, type Problem, type ErrorCode } from "./errors.js";
export {
  accountFromPrivateKey,
  signAuthorization,
  signDebitPull,
  toTokenUnits,
  toViemTypedData,
  DEBIT_PULL_TYPES,
  TOKEN_DECIMALS,
  type TypedData,
  type TypedDataSigner,
  type DebitPullTerms,
  type Eip712Domain,
} from "./signing.js";
export { Webhook, verifyWebhook, type VerifyOptions, type WebhookHeaders } from "./webhooks.js";
export type { components, paths, operations } from "./generated/openapi.js";
