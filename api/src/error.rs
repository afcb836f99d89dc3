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

/// Every `code` [`ApiError::problem`] answers besides the decline reasons
/// ([`DeclineReason::ALL`]): the document's `ErrorCode` enum is these and those.
pub const ERROR_CODES: &[&str] = &[
    "invalid_json",
    "unsupported_media_type",
    "parameter_missing",
    "parameter_duplicated",
    "parameter_unknown",
    "parameter_invalid",
    "amount_invalid",
    "unauthenticated",
    "forbidden",
    "resource_missing",
    "payload_too_large",
    "not_found",
    "invalid_request",
    "uri_too_long",
    "method_not_allowed",
    "session_key_ceiling_exceeds_mandate",
    "session_key_outside_mandate",
    "payment_not_cancelable",
    "payment_canceled",
    "credential_exists",
    "credential_revoked",
    "verification_not_submittable",
    "verification_not_cancelable",
    "verification_not_verified",
    "session_key_without_signer",
    "idempotency_key_invalid",
    "idempotency_key_reused",
    "idempotency_in_progress",
    "rate_limited",
    "url_not_allowed",
    "mainnet_unavailable",
    "chain_unavailable",
    "temporarily_unavailable",
    "internal_error",
];

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
        let (status, code, title, param): (StatusCode, &'static str, &'static str, Option<String>) =
            match self {
                E::InvalidJson(_) => (
                    StatusCode::BAD_REQUEST,
                    "invalid_json",
                    "Invalid JSON",
                    None,
                ),
                E::UnsupportedMediaType => (
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                    "Unsupported media type",
                    None,
                ),
                E::ParameterMissing { param } => (
                    StatusCode::BAD_REQUEST,
                    "parameter_missing",
                    "Missing parameter",
                    Some(param.clone()),
                ),
                E::ParameterDuplicated { param } => (
                    StatusCode::BAD_REQUEST,
                    "parameter_duplicated",
                    "Duplicated parameter",
                    Some(param.clone()),
                ),
                E::ParameterUnknown { param } => (
                    StatusCode::BAD_REQUEST,
                    "parameter_unknown",
                    "Unknown parameter",
                    Some(param.clone()),
                ),
                E::ParameterInvalid { param, .. } => (
                    StatusCode::BAD_REQUEST,
                    "parameter_invalid",
                    "Invalid parameter",
                    Some(param.clone()),
                ),
                E::AmountInvalid { param, .. } => (
                    StatusCode::BAD_REQUEST,
                    "amount_invalid",
                    "Invalid amount",
                    Some(param.clone()),
                ),
                E::Unauthenticated => (
                    StatusCode::UNAUTHORIZED,
                    "unauthenticated",
                    "Unauthenticated",
                    None,
                ),
                E::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden", "Forbidden", None),
                E::IdentityRequirementUnmet { holder, .. } => (
                    StatusCode::FORBIDDEN,
                    "identity_requirement_unmet",
                    "Identity requirement unmet",
                    Some((*holder).into()),
                ),
                E::ResourceMissing { .. } => (
                    StatusCode::NOT_FOUND,
                    "resource_missing",
                    "No such resource",
                    None,
                ),
                E::PayloadTooLarge { .. } => (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "payload_too_large",
                    "Request body too large",
                    None,
                ),
                E::NotFound => (StatusCode::NOT_FOUND, "not_found", "No such endpoint", None),
                E::Rejected { status, .. } => (
                    StatusCode::from_u16(*status).unwrap_or(StatusCode::BAD_REQUEST),
                    "invalid_request",
                    "Invalid request",
                    None,
                ),
                E::UriTooLong => (
                    StatusCode::URI_TOO_LONG,
                    "uri_too_long",
                    "URI too long",
                    None,
                ),
                E::MethodNotAllowed => (
                    StatusCode::METHOD_NOT_ALLOWED,
                    "method_not_allowed",
                    "Method not allowed",
                    None,
                ),
                E::SessionKeyOutsideMandate { param, .. } => (
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "session_key_outside_mandate",
                    "Session key outside what the payer signed",
                    Some((*param).into()),
                ),
                E::SessionKeyCeilingExceedsMandate { .. } => (
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "session_key_ceiling_exceeds_mandate",
                    "Session key ceiling above the mandate's",
                    Some("max_amount".into()),
                ),
                E::Declined { reason, .. } => {
                    let param = match reason {
                        DeclineReason::DestinationNotAllowed => Some("destination".to_string()),
                        DeclineReason::AllowanceExceeded => Some("amount".to_string()),
                        DeclineReason::SignatureRequired | DeclineReason::SignatureInvalid => {
                            Some("signature".to_string())
                        }
                        DeclineReason::NonceUsed => Some("nonce".to_string()),
                        DeclineReason::AuthorizationExpired => None,
                        DeclineReason::SessionKeyRevoked
                        | DeclineReason::SessionKeyExpired
                        | DeclineReason::MandateNotActive
                        | DeclineReason::InsufficientFunds
                        | DeclineReason::AllowanceInsufficient
                        | DeclineReason::TransferFailed
                        | DeclineReason::SessionKeyNotActive
                        | DeclineReason::IdentityRequirementUnmet => None,
                    };
                    (
                        StatusCode::UNPROCESSABLE_ENTITY,
                        reason.as_str(),
                        "Declined",
                        param,
                    )
                }
                E::Conflict { code, .. } => (StatusCode::CONFLICT, code.as_str(), "Conflict", None),
                E::IdempotencyKeyInvalid => (
                    StatusCode::BAD_REQUEST,
                    "idempotency_key_invalid",
                    "Invalid idempotency key",
                    Some("Idempotency-Key".into()),
                ),
                E::IdempotencyKeyReused => (
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "idempotency_key_reused",
                    "Idempotency key reused",
                    Some("Idempotency-Key".into()),
                ),
                E::IdempotencyInProgress => (
                    StatusCode::CONFLICT,
                    "idempotency_in_progress",
                    "Idempotent request in progress",
                    None,
                ),
                E::RateLimited { .. } => (
                    StatusCode::TOO_MANY_REQUESTS,
                    "rate_limited",
                    "Too many requests",
                    None,
                ),
                E::WebhookUrlRefused { .. } => (
                    StatusCode::BAD_REQUEST,
                    "url_not_allowed",
                    "URL not allowed",
                    Some("url".into()),
                ),
                E::MainnetUnavailable => (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "mainnet_unavailable",
                    "Mainnet unavailable",
                    None,
                ),
                E::ChainUnavailable { .. } => (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "chain_unavailable",
                    "Chain unavailable",
                    None,
                ),
                E::Store(StoreError::UnknownCursor) => (
                    StatusCode::BAD_REQUEST,
                    "parameter_invalid",
                    "Invalid parameter",
                    Some("starting_after".into()),
                ),
                E::Store(e) if e.is_transient() => (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "temporarily_unavailable",
                    "Temporarily unavailable",
                    None,
                ),
                E::Chain(e) if e.is_transient() => (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "temporarily_unavailable",
                    "Temporarily unavailable",
                    None,
                ),
                E::Store(_) | E::Chain(_) | E::Internal(_) => (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal_error",
                    "Internal error",
                    None,
                ),
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

#[cfg(test)]
mod tests {
    use super::*;

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
            ApiError::Internal(s()),
        ];
        for e in all {
            let code = e.problem().code;
            // The document's `ErrorCode` enum is both lists (`identity_requirement_unmet`
            // is a decline reason too: the chain's, when a requirement lapses in flight).
            assert!(
                ERROR_CODES.contains(&code)
                    || DeclineReason::ALL.iter().any(|r| r.as_str() == code),
                "{code} is not in ERROR_CODES"
            );
        }
        for code in Conflict::ALL {
            let e = ApiError::Conflict {
                code: *code,
                detail: s(),
            };
            assert_eq!(e.problem().code, code.as_str());
            assert_eq!(e.problem().status, 409);
            assert!(ERROR_CODES.contains(&code.as_str()), "{code:?}");
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
