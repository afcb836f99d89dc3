//! The one mapping from errors to RFC 9457 problems. Every failure of a handler is an
//! [`ApiError`]; [`ApiError::problem`] turns it into status, stable `code` and body, with no
//! `_` arm, so a new variant cannot ship without a decided answer. 5xx bodies never carry
//! internal messages; those are logged with the request id.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use openrail_chain::ChainError;
use openrail_store::StoreError;
use serde::Serialize;
use serde_json::{Map, Value};

/// Everything a request can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The body is not valid JSON, or not a JSON object.
    #[error("{0}")]
    InvalidJson(String),
    /// The request did not say `Content-Type: application/json`.
    #[error("send JSON with Content-Type: application/json")]
    UnsupportedMediaType,
    /// A required field is absent.
    #[error("{param} is required")]
    ParameterMissing {
        /// The missing field.
        param: String,
    },
    /// A field appears twice in one JSON object.
    #[error("{param} appears more than once; send each field once")]
    ParameterDuplicated {
        /// The repeated field.
        param: String,
    },
    /// A field is not one the endpoint knows.
    #[error("{param} is not a known parameter")]
    ParameterUnknown {
        /// The unknown field.
        param: String,
    },
    /// A field has the wrong type or value.
    #[error("{param} {detail}")]
    ParameterInvalid {
        /// The field.
        param: String,
        /// What is wrong with it.
        detail: String,
    },
    /// An amount is malformed, zero, negative, too precise or too large.
    #[error("{param} {detail}")]
    AmountInvalid {
        /// The field.
        param: String,
        /// What is wrong with it.
        detail: String,
    },
    /// No valid credential.
    #[error("provide a valid API key as `Authorization: Bearer sk_testnet_…`")]
    Unauthenticated,
    /// The credential is valid but may not do this.
    #[error("{0}")]
    Forbidden(String),
    /// The object does not exist for this account and mode.
    #[error("no such {kind}: {id}")]
    ResourceMissing {
        /// The kind of object.
        kind: &'static str,
        /// The id asked for.
        id: String,
    },
    /// The body is larger than the limit.
    #[error("the request body is larger than {limit} bytes")]
    PayloadTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The HTTP framework refused the request before a handler ran (a path id that is not
    /// UTF-8, …); its message is the detail.
    #[error("{detail}")]
    Rejected {
        /// The framework's 4xx status.
        status: u16,
        /// Its message.
        detail: String,
    },
    /// The request URI is longer than the server reads.
    #[error("the request URI is longer than 8192 bytes")]
    UriTooLong,
    /// No route for this method and path.
    #[error("no such endpoint")]
    NotFound,
    /// The route exists but not for this method.
    #[error("method not allowed")]
    MethodNotAllowed,
    /// A session key outside what its mandate's payer signed (a destination not among the
    /// payees, a signer other than the named agent).
    #[error("{detail}")]
    SessionKeyOutsideMandate {
        /// The field at fault.
        param: &'static str,
        /// Said for a person.
        detail: String,
    },
    /// The payer or a key's signer lacks an attestation its mandate requires (403): refused
    /// before anything is written or sent.
    #[error("{detail}")]
    IdentityRequirementUnmet {
        /// `payer` or `signer`.
        holder: &'static str,
        /// Said for a person: who lacks which kind.
        detail: String,
    },
    /// A session key's ceiling above its mandate's.
    #[error("max_amount {key} is above the mandate's max_amount {mandate}")]
    SessionKeyCeilingExceedsMandate {
        /// The requested key ceiling.
        key: String,
        /// The mandate's ceiling.
        mandate: String,
    },
    /// An on-chain rule declined a pull, or an operation met an object in the wrong state.
    #[error("{detail}")]
    Declined {
        /// Which rule.
        reason: DeclineReason,
        /// Human explanation.
        detail: String,
        /// The declined pull, when one was recorded.
        pull_id: Option<String>,
        /// Allowance left this epoch (for `allowance_exceeded`).
        remaining: Option<String>,
        /// When the allowance resets, RFC 3339 (for `allowance_exceeded`).
        resets_at: Option<String>,
    },
    /// The object's state rules the request out (a payment past its payer's signature
    /// canceled, a canceled payment authorized).
    #[error("{detail}")]
    Conflict {
        /// Which conflict: its code.
        code: Conflict,
        /// Human explanation.
        detail: String,
    },
    /// The `Idempotency-Key` header is not 1 to 255 visible ASCII characters.
    #[error("Idempotency-Key must be 1 to 255 visible ASCII characters")]
    IdempotencyKeyInvalid,
    /// The idempotency key was used with another request.
    #[error("this Idempotency-Key was used with a different request")]
    IdempotencyKeyReused,
    /// The idempotency key's first request is still running.
    #[error("a request with this Idempotency-Key is still in progress; retry later")]
    IdempotencyInProgress,
    /// Too many requests for this key.
    #[error("too many requests; retry after {retry_after_secs} s")]
    RateLimited {
        /// Seconds to wait.
        retry_after_secs: u64,
    },
    /// A webhook endpoint's URL may not receive this mode's webhooks (scheme, or an
    /// address that is not public).
    #[error("{detail}")]
    WebhookUrlRefused {
        /// Why.
        detail: String,
    },
    /// Mainnet keys work only when mainnet chains and bank are configured.
    #[error("mainnet is not configured on this server; use a testnet key")]
    MainnetUnavailable,
    /// The account's one-time payments settle on a chain this server does not serve in
    /// the key's mode (its configuration changed since the account chose it).
    #[error(
        "this account's payments settle on its {chain} chain, which this server does not serve for this mode; choose another with POST /v1/account"
    )]
    ChainUnavailable {
        /// `settlement` or `attestation`.
        chain: &'static str,
    },
    /// The database failed.
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// A chain failed.
    #[error("chain: {0}")]
    Chain(#[from] ChainError),
    /// A bug or an unexpected state, logged.
    #[error("internal: {0}")]
    Internal(String),
}

/// Declares [`ErrorCode`]: one row per code, with its HTTP status, title and where it is
/// answered.
macro_rules! error_codes {
    ($($(#[$m:meta])* $variant:ident = $code:literal, $status:ident, $title:literal, $scope:ident;)+) => {
        /// Every `code` of a problem that is neither a 409 conflict with an object's state
        /// ([`Conflict`]) nor a 422 decline ([`DeclineReason`]): the one table of codes, with
        /// each code's HTTP status, title and scope. [`ApiError::problem`], the OpenAPI
        /// document (its `ErrorCode` enum and each response's codes) and the table in
        /// `docs/errors-and-idempotency.md` (a test keeps it equal) are read off it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ErrorCode { $($(#[$m])* $variant),+ }

        impl ErrorCode {
            /// Every code, in the table's order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),+];

            /// The stable snake_case `code`.
            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $code),+ }
            }

            /// The HTTP status it answers with.
            pub fn status(self) -> StatusCode {
                match self { $(ErrorCode::$variant => StatusCode::$status),+ }
            }

            /// The problem's `title`.
            pub fn title(self) -> &'static str {
                match self { $(ErrorCode::$variant => $title),+ }
            }

            /// Which requests may answer it.
            pub fn scope(self) -> Scope {
                match self { $(ErrorCode::$variant => Scope::$scope),+ }
            }
        }
    };
}

/// Which requests may answer a code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Any operation (the OpenAPI document lists it under every response of its status).
    Every,
    /// Some operations, which the document names one by one.
    Some,
    /// No operation: the router's own answers (no route, wrong method, a URI too long) and
    /// the server's failure.
    Server,
}

error_codes! {
    /// The body is not valid JSON, or not a JSON object.
    InvalidJson = "invalid_json", BAD_REQUEST, "Invalid JSON", Every;
    /// A required field is absent.
    ParameterMissing = "parameter_missing", BAD_REQUEST, "Missing parameter", Every;
    /// A field appears twice in one JSON object.
    ParameterDuplicated = "parameter_duplicated", BAD_REQUEST, "Duplicated parameter", Every;
    /// A field is not one the endpoint knows.
    ParameterUnknown = "parameter_unknown", BAD_REQUEST, "Unknown parameter", Every;
    /// A field has the wrong type or value.
    ParameterInvalid = "parameter_invalid", BAD_REQUEST, "Invalid parameter", Every;
    /// An amount is malformed, zero, negative, too precise or too large.
    AmountInvalid = "amount_invalid", BAD_REQUEST, "Invalid amount", Every;
    /// The `Idempotency-Key` header is malformed.
    IdempotencyKeyInvalid = "idempotency_key_invalid", BAD_REQUEST, "Invalid idempotency key", Every;
    /// A webhook endpoint's URL may not receive this mode's webhooks.
    UrlNotAllowed = "url_not_allowed", BAD_REQUEST, "URL not allowed", Every;
    /// The HTTP framework refused the request before a handler ran (its own 4xx status).
    InvalidRequest = "invalid_request", BAD_REQUEST, "Invalid request", Every;
    /// No valid credential.
    Unauthenticated = "unauthenticated", UNAUTHORIZED, "Unauthenticated", Every;
    /// The credential may not do this.
    Forbidden = "forbidden", FORBIDDEN, "Forbidden", Every;
    /// The payer or a key's signer lacks an attestation its mandate requires.
    IdentityRequirementUnmet = "identity_requirement_unmet", FORBIDDEN, "Identity requirement unmet", Some;
    /// No such object for this account and mode.
    ResourceMissing = "resource_missing", NOT_FOUND, "No such resource", Every;
    /// No route for this path.
    NotFound = "not_found", NOT_FOUND, "No such endpoint", Server;
    /// The route exists, not for this method.
    MethodNotAllowed = "method_not_allowed", METHOD_NOT_ALLOWED, "Method not allowed", Server;
    /// The idempotency key's first request is still running.
    IdempotencyInProgress = "idempotency_in_progress", CONFLICT, "Idempotent request in progress", Every;
    /// The body is larger than the limit.
    PayloadTooLarge = "payload_too_large", PAYLOAD_TOO_LARGE, "Request body too large", Every;
    /// The request URI is longer than the server reads.
    UriTooLong = "uri_too_long", URI_TOO_LONG, "URI too long", Server;
    /// The request did not say `Content-Type: application/json`.
    UnsupportedMediaType = "unsupported_media_type", UNSUPPORTED_MEDIA_TYPE, "Unsupported media type", Every;
    /// The idempotency key was used with another request.
    IdempotencyKeyReused = "idempotency_key_reused", UNPROCESSABLE_ENTITY, "Idempotency key reused", Every;
    /// A session key's ceiling above its mandate's.
    SessionKeyCeilingExceedsMandate = "session_key_ceiling_exceeds_mandate", UNPROCESSABLE_ENTITY, "Session key ceiling above the mandate's", Some;
    /// A session key outside what its mandate's payer signed.
    SessionKeyOutsideMandate = "session_key_outside_mandate", UNPROCESSABLE_ENTITY, "Session key outside what the payer signed", Some;
    /// Too many requests.
    RateLimited = "rate_limited", TOO_MANY_REQUESTS, "Too many requests", Every;
    /// Mainnet keys work only when mainnet chains and bank are configured.
    MainnetUnavailable = "mainnet_unavailable", SERVICE_UNAVAILABLE, "Mainnet unavailable", Every;
    /// The account's payments settle on a chain this server does not serve in this mode.
    ChainUnavailable = "chain_unavailable", SERVICE_UNAVAILABLE, "Chain unavailable", Some;
    /// Briefly unavailable (the database, a chain, a server stopping): send it again.
    TemporarilyUnavailable = "temporarily_unavailable", SERVICE_UNAVAILABLE, "Temporarily unavailable", Every;
    /// A bug, logged.
    InternalError = "internal_error", INTERNAL_SERVER_ERROR, "Internal error", Server;
}

/// Every `code` a problem may carry, once each: the table's, the conflicts' and the
/// declines' (`identity_requirement_unmet` is both a 403 of the service, refused before
/// anything is written, and a decline of the chain when a requirement lapses in flight).
pub fn all_codes() -> impl Iterator<Item = &'static str> {
    let mut seen = std::collections::HashSet::new();
    ErrorCode::ALL
        .iter()
        .map(|c| c.as_str())
        .chain(Conflict::ALL.iter().map(|c| c.as_str()))
        .chain(DeclineReason::ALL.iter().map(|r| r.as_str()))
        .filter(move |c| seen.insert(*c))
}

/// What a 409 conflict with an object's state is (defined with the services' errors).
pub use openrail_engine::service::Conflict;

/// On-chain and state rules that decline a request with 422: one enum for the chain's
/// decline reasons, the stored `decline_code` and the HTTP `code` (defined in `store`).
pub use openrail_store::agentic::DeclineReason;

/// An RFC 9457 problem document plus Openrail's members.
#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    /// A URI naming the problem type.
    #[serde(rename = "type")]
    pub type_: String,
    /// Short summary of the type.
    pub title: &'static str,
    /// HTTP status.
    pub status: u16,
    /// This occurrence, in words.
    pub detail: String,
    /// Stable snake_case code.
    pub code: &'static str,
    /// The field at fault.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// Filled in by the request-id middleware.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Domain members (`remaining`, `resets_at`, `pull_id`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// Seconds for `Retry-After`.
    #[serde(skip)]
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// Status, code, title and body members of this error.
    pub fn problem(&self) -> Problem {
        use ApiError as E;
        /// Where a problem's code comes from.
        enum Head {
            Code(ErrorCode),
            Declined(DeclineReason),
            Conflict(Conflict),
        }
        use ErrorCode as C;
        let code = |c: ErrorCode| Head::Code(c);
        let named = |p: &str| Some(p.to_string());
        let (head, param): (Head, Option<String>) = match self {
            E::InvalidJson(_) => (code(C::InvalidJson), None),
            E::UnsupportedMediaType => (code(C::UnsupportedMediaType), None),
            E::ParameterMissing { param } => (code(C::ParameterMissing), named(param)),
            E::ParameterDuplicated { param } => (code(C::ParameterDuplicated), named(param)),
            E::ParameterUnknown { param } => (code(C::ParameterUnknown), named(param)),
            E::ParameterInvalid { param, .. } => (code(C::ParameterInvalid), named(param)),
            E::AmountInvalid { param, .. } => (code(C::AmountInvalid), named(param)),
            E::Unauthenticated => (code(C::Unauthenticated), None),
            E::Forbidden(_) => (code(C::Forbidden), None),
            E::IdentityRequirementUnmet { holder, .. } => {
                (code(C::IdentityRequirementUnmet), named(holder))
            }
            E::ResourceMissing { .. } => (code(C::ResourceMissing), None),
            E::PayloadTooLarge { .. } => (code(C::PayloadTooLarge), None),
            E::NotFound => (code(C::NotFound), None),
            E::Rejected { .. } => (code(C::InvalidRequest), None),
            E::UriTooLong => (code(C::UriTooLong), None),
            E::MethodNotAllowed => (code(C::MethodNotAllowed), None),
            E::SessionKeyOutsideMandate { param, .. } => {
                (code(C::SessionKeyOutsideMandate), named(param))
            }
            E::SessionKeyCeilingExceedsMandate { .. } => (
                code(C::SessionKeyCeilingExceedsMandate),
                named("max_amount"),
            ),
            E::Declined { reason, .. } => {
                let param = match reason {
                    DeclineReason::DestinationNotAllowed => named("destination"),
                    DeclineReason::AllowanceExceeded => named("amount"),
                    DeclineReason::SignatureRequired | DeclineReason::SignatureInvalid => {
                        named("signature")
                    }
                    DeclineReason::NonceUsed => named("nonce"),
                    DeclineReason::AuthorizationExpired
                    | DeclineReason::SessionKeyRevoked
                    | DeclineReason::SessionKeyExpired
                    | DeclineReason::MandateNotActive
                    | DeclineReason::InsufficientFunds
                    | DeclineReason::AllowanceInsufficient
                    | DeclineReason::TransferFailed
                    | DeclineReason::SessionKeyNotActive
                    | DeclineReason::IdentityRequirementUnmet => None,
                };
                (Head::Declined(*reason), param)
            }
            E::Conflict { code, .. } => (Head::Conflict(*code), None),
            E::IdempotencyKeyInvalid => (code(C::IdempotencyKeyInvalid), named("Idempotency-Key")),
            E::IdempotencyKeyReused => (code(C::IdempotencyKeyReused), named("Idempotency-Key")),
            E::IdempotencyInProgress => (code(C::IdempotencyInProgress), None),
            E::RateLimited { .. } => (code(C::RateLimited), None),
            E::WebhookUrlRefused { .. } => (code(C::UrlNotAllowed), named("url")),
            E::MainnetUnavailable => (code(C::MainnetUnavailable), None),
            E::ChainUnavailable { .. } => (code(C::ChainUnavailable), None),
            E::Store(StoreError::UnknownCursor) => {
                (code(C::ParameterInvalid), named("starting_after"))
            }
            E::Store(e) if e.is_transient() => (code(C::TemporarilyUnavailable), None),
            E::Chain(e) if e.is_transient() => (code(C::TemporarilyUnavailable), None),
            E::Store(_) | E::Chain(_) | E::Internal(_) => (code(C::InternalError), None),
        };
        let (status, code, title) = match head {
            Head::Code(c) => (c.status(), c.as_str(), c.title()),
            Head::Declined(r) => (StatusCode::UNPROCESSABLE_ENTITY, r.as_str(), "Declined"),
            Head::Conflict(c) => (StatusCode::CONFLICT, c.as_str(), "Conflict"),
        };
        // The framework's refusals keep the framework's own 4xx status.
        let status = match self {
            E::Rejected { status, .. } => {
                StatusCode::from_u16(*status).unwrap_or(StatusCode::BAD_REQUEST)
            }
            _ => status,
        };
        let detail = if status.is_server_error() {
            match self {
                E::MainnetUnavailable | E::ChainUnavailable { .. } => self.to_string(),
                _ => "something went wrong on our side; it has been logged with this request id"
                    .to_string(),
            }
        } else {
            self.to_string()
        };
        let mut extra = Map::new();
        if let E::Declined {
            pull_id,
            remaining,
            resets_at,
            ..
        } = self
        {
            for (k, v) in [
                ("pull_id", pull_id),
                ("remaining", remaining),
                ("resets_at", resets_at),
            ] {
                if let Some(v) = v {
                    extra.insert(k.to_string(), Value::String(v.clone()));
                }
            }
        }
        Problem {
            type_: format!("https://docs.openrail.dev/errors/{code}"),
            title,
            status: status.as_u16(),
            detail,
            code,
            param,
            request_id: crate::context::current_request_id(),
            extra,
            retry_after: match self {
                E::RateLimited { retry_after_secs } => Some(*retry_after_secs),
                _ => None,
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let problem = self.problem();
        if problem.status >= 500 {
            tracing::error!(error = %self, "request failed");
        }
        problem.into_response()
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&self).unwrap_or_default();
        let mut res = (status, body).into_response();
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let Some(secs) = self.retry_after {
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        res
    }
}

impl From<openrail_engine::service::ServiceError> for ApiError {
    fn from(e: openrail_engine::service::ServiceError) -> Self {
        use openrail_engine::service::ServiceError as P;
        match e {
            P::Invalid { param, detail } => ApiError::ParameterInvalid {
                param: param.into(),
                detail,
            },
            P::Amount { param, error } => ApiError::AmountInvalid {
                param: param.into(),
                detail: error.to_string(),
            },
            P::Missing { kind, id } => ApiError::ResourceMissing { kind, id },
            P::KeyCeilingExceedsMandate { key, mandate } => {
                ApiError::SessionKeyCeilingExceedsMandate { key, mandate }
            }
            P::KeyOutsideMandate { param, detail } => {
                ApiError::SessionKeyOutsideMandate { param, detail }
            }
            P::IdentityRequirementUnmet { holder, .. } => ApiError::IdentityRequirementUnmet {
                holder,
                detail: e.to_string(),
            },
            P::Declined { reason, detail } => ApiError::Declined {
                reason,
                detail,
                pull_id: None,
                remaining: None,
                resets_at: None,
            },
            P::AuthorizationExpired { deadline } => ApiError::Declined {
                reason: DeclineReason::AuthorizationExpired,
                detail: format!(
                    "the authorization expired at {}",
                    crate::rfc3339::rfc3339_s(deadline)
                ),
                pull_id: None,
                remaining: None,
                resets_at: None,
            },
            P::Conflict { code, detail } => ApiError::Conflict { code, detail },
            P::Store(e) => ApiError::Store(e),
            P::Chain(e) => ApiError::Chain(e),
            P::Internal(m) => ApiError::Internal(m),
        }
    }
}

/// The table of statuses and codes in `docs/errors-and-idempotency.md` (between its
/// `error-codes` markers), rendered from [`ErrorCode`], [`Conflict`] and [`DeclineReason`]:
/// a test keeps the document equal to it.
pub fn codes_table_markdown() -> String {
    let meaning = |status: u16| match status {
        400 => "malformed: fix the request",
        401 => "no valid credential",
        403 => "the credential may not do this, or an identity the mandate requires is missing",
        404 => "no such object for this account and mode, or no such endpoint",
        405 => "the path exists, not with this method",
        409 => {
            "the same `Idempotency-Key` is still running (retry); or the object's state rules the request out (final: do not retry)"
        }
        413 => "body over 64 KiB",
        414 => "URI over 8 KiB",
        415 => "not JSON",
        422 => "well-formed, but a business rule declines it; nothing moved",
        429 => "too many requests (with `Retry-After`)",
        500 => "a bug, logged",
        503 => "mainnet not configured, or briefly unavailable: send it again",
        _ => "",
    };
    let mut statuses: Vec<u16> = ErrorCode::ALL.iter().map(|c| c.status().as_u16()).collect();
    statuses.sort_unstable();
    statuses.dedup();
    let mut out = String::from("| Status | Meaning | Codes |\n|---|---|---|\n");
    for status in statuses {
        let mut codes: Vec<&str> = ErrorCode::ALL
            .iter()
            .filter(|c| c.status().as_u16() == status)
            .map(|c| c.as_str())
            .collect();
        match status {
            409 => codes.extend(Conflict::ALL.iter().map(|c| c.as_str())),
            422 => codes.extend(DeclineReason::ALL.iter().map(|r| r.as_str())),
            _ => {}
        }
        let codes: Vec<String> = codes.iter().map(|c| format!("`{c}`")).collect();
        out.push_str(&format!(
            "| {status} | {} | {} |\n",
            meaning(status),
            codes.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `docs/errors-and-idempotency.md` lists exactly the codes of the table.
    #[test]
    fn the_documented_table_is_the_codes_table() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../docs/errors-and-idempotency.md"
        );
        let doc = std::fs::read_to_string(path).unwrap();
        let (start, end) = ("<!-- error-codes:start -->\n", "<!-- error-codes:end -->");
        let from = doc.find(start).expect("the start marker") + start.len();
        let to = doc.find(end).expect("the end marker");
        let expected = codes_table_markdown();
        assert!(
            doc[from..to] == expected,
            "docs/errors-and-idempotency.md's table differs from api::error's; put this between the markers:\n{expected}"
        );
    }

    /// Every variant's code is one the document lists.
    #[test]
    fn every_code_is_documented() {
        let s = || "x".to_string();
        let all = [
            ApiError::InvalidJson(s()),
            ApiError::UnsupportedMediaType,
            ApiError::ParameterMissing { param: s() },
            ApiError::ParameterDuplicated { param: s() },
            ApiError::ParameterUnknown { param: s() },
            ApiError::ParameterInvalid {
                param: s(),
                detail: s(),
            },
            ApiError::AmountInvalid {
                param: s(),
                detail: s(),
            },
            ApiError::Unauthenticated,
            ApiError::Forbidden(s()),
            ApiError::IdentityRequirementUnmet {
                holder: "payer",
                detail: s(),
            },
            ApiError::ResourceMissing { kind: "x", id: s() },
            ApiError::PayloadTooLarge { limit: 1 },
            ApiError::Rejected {
                status: 400,
                detail: s(),
            },
            ApiError::UriTooLong,
            ApiError::NotFound,
            ApiError::MethodNotAllowed,
            ApiError::SessionKeyCeilingExceedsMandate {
                key: s(),
                mandate: s(),
            },
            ApiError::SessionKeyOutsideMandate {
                param: "signer",
                detail: s(),
            },
            ApiError::IdempotencyKeyInvalid,
            ApiError::IdempotencyKeyReused,
            ApiError::IdempotencyInProgress,
            ApiError::RateLimited {
                retry_after_secs: 1,
            },
            ApiError::WebhookUrlRefused { detail: s() },
            ApiError::MainnetUnavailable,
            ApiError::ChainUnavailable {
                chain: "attestation",
            },
            ApiError::Store(StoreError::UnknownCursor),
            ApiError::Chain(ChainError::Journal(s())),
            ApiError::Internal(s()),
        ];
        let produced: Vec<&str> = all.iter().map(|e| e.problem().code).collect();
        for c in ErrorCode::ALL {
            assert!(produced.contains(&c.as_str()), "no error answers {c:?}");
        }
        for e in all {
            let code = e.problem().code;
            // The document's `ErrorCode` enum is both lists (`identity_requirement_unmet`
            // is a decline reason too: the chain's, when a requirement lapses in flight).
            assert!(all_codes().any(|c| c == code), "{code} is not a code");
        }
        for code in Conflict::ALL {
            let e = ApiError::Conflict {
                code: *code,
                detail: s(),
            };
            assert_eq!(e.problem().code, code.as_str());
            assert_eq!(e.problem().status, 409);
            assert!(all_codes().any(|c| c == code.as_str()), "{code:?}");
        }
        for reason in DeclineReason::ALL {
            let e = ApiError::Declined {
                reason: *reason,
                detail: s(),
                pull_id: None,
                remaining: None,
                resets_at: None,
            };
            assert_eq!(e.problem().code, reason.as_str());
        }
    }
}
