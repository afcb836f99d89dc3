//! Request ids, authentication, rate limits, idempotency and the fallbacks.

use openrail_store::now_ms;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use openrail_store::Mode;
use openrail_store::ids::{hash_secret, random_id};
use openrail_store::journal::IdempotencyBegin;
use sha2::{Digest, Sha256};

use crate::AppState;
use crate::body::MAX_BODY_BYTES;
use crate::context::{IDEMPOTENCY_CLAIM, Principal, REQUEST_ID};
use crate::error::ApiError;
use openrail_store::agentic::KeyStatus;

/// The object at `path` (`/v1/<kind>/<id>`) as its GET would show it to `principal`, or
/// `None` when it does not exist.
async fn current_object(
    state: &AppState,
    principal: &Principal,
    path: &str,
) -> Result<Option<Response>, ApiError> {
    use axum::extract::Path;
    let Some((kind, id)) = path
        .strip_prefix("/v1/")
        .and_then(|rest| rest.split_once('/'))
    else {
        return Err(ApiError::Internal(format!(
            "unusable idempotency link {path}"
        )));
    };
    let (s, p, id) = (
        State(state.clone()),
        axum::Extension(principal.clone()),
        Path(id.to_string()),
    );
    let found = match kind {
        "mandates" => crate::agentic::get_mandate(s, p, id).await,
        "session-keys" => crate::agentic::get_session_key(s, p, id).await,
        "debit-pulls" => crate::agentic::get_pull(s, p, id).await,
        "payments" => crate::payments::get_payment(s, p, id).await,
        "bank-accounts" => crate::bank::get_bank_account(s, p, id).await,
        "webhook-endpoints" => crate::webhooks::get_webhook_endpoint(s, p, id).await,
        _ => {
            return Err(ApiError::Internal(format!(
                "unusable idempotency link {path}"
            )));
        }
    };
    match found {
        Ok(res) => Ok(Some(res)),
        Err(ApiError::ResourceMissing { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Gives every request an id, returned as `Request-Id` (and in problem bodies); every log
/// line written while the request is handled carries it (the `request` span, with the
/// method and path).
pub async fn request_id(req: Request, next: Next) -> Response {
    use tracing::Instrument;
    let id = random_id("req_", 20);
    let uri_len = req.uri().path_and_query().map_or(0, |p| p.as_str().len());
    let span = tracing::info_span!(
        "request",
        request_id = %id,
        method = %req.method(),
        path = %req.uri().path(),
    );
    let mut res = REQUEST_ID
        .scope(
            id.clone(),
            async move {
                if uri_len > MAX_URI_BYTES {
                    return ApiError::UriTooLong.into_response();
                }
                let started = std::time::Instant::now();
                let res = problem_for_plain_errors(next.run(req).await).await;
                // The access log, at debug level (`RUST_LOG=openrail=debug`).
                tracing::debug!(
                    status = res.status().as_u16(),
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "answered"
                );
                res
            }
            .instrument(span),
        )
        .await;
    res.headers_mut().insert(
        "request-id",
        HeaderValue::from_str(&id).expect("ids are ascii"),
    );
    res
}

/// Longest request URI served, bytes. Longer ones get 414 as problem+json with a
/// `Request-Id` (the HTTP library's own limit, 64 KiB, answers a bare 414 further out).
pub const MAX_URI_BYTES: usize = 8 * 1024;

/// Errors answered by the framework itself (an extractor's rejection, such as a path id
/// that is not valid UTF-8) come as `text/plain`; every error of this API is
/// `application/problem+json`, so they are rewritten as one (code `invalid_request`, the
/// framework's message as `detail`).
async fn problem_for_plain_errors(res: Response) -> Response {
    let status = res.status();
    // Problems pass, and so do the dashboard's HTML error pages (they are for people) and
    // the JSON verdicts of the identity verifiers (422 `verified: false`, the VC API's shape).
    let is_problem = res.headers().get(header::CONTENT_TYPE).is_some_and(|v| {
        v.as_bytes().starts_with(b"application/problem+json")
            || v.as_bytes().starts_with(b"text/html")
            || v.as_bytes() == b"application/json"
    });
    if !(status.is_client_error() || status.is_server_error()) || is_problem {
        return res;
    }
    let (parts, body) = res.into_parts();
    let text = to_bytes(body, 4096).await.unwrap_or_default();
    let detail: String = String::from_utf8_lossy(&text).chars().take(300).collect();
    let error = if status.is_server_error() {
        ApiError::Internal(detail)
    } else {
        ApiError::Rejected {
            status: status.as_u16(),
            detail,
        }
    };
    let mut out = error.into_response();
    for (k, v) in parts.headers.iter() {
        if k != header::CONTENT_TYPE && k != header::CONTENT_LENGTH {
            out.headers_mut().insert(k.clone(), v.clone());
        }
    }
    out
}

/// Authenticates `Authorization: Bearer …`, enforces mainnet availability and rate limits.
pub async fn authenticate(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Result<Response, ApiError> {
    // Failed attempts are limited per client address: a request whose credential fails
    // takes a token; once the address's tokens run out its failures get 429 instead of
    // 401. A valid credential is never refused by this limit — every customer behind one
    // load balancer shares an address, and one client sending a stale key must not lock
    // the others out. (Guessing a key stays hopeless: 128 random bits.)
    let client = crate::hardening::client_address(
        req.extensions()
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>(),
        req.headers(),
        &state.config.trusted_proxies,
    );
    // An operation open to anonymous callers (verifying a credential, as public verifiers
    // are) runs without a key when none is sent, rate-limited per client address.
    if !req.headers().contains_key(header::AUTHORIZATION)
        && crate::openapi::route_of(req.method().as_str(), req.uri().path())
            .is_some_and(|r| r.is_anonymous())
    {
        state
            .anonymous
            .check(&client)
            .map_err(|retry_after_secs| ApiError::RateLimited { retry_after_secs })?;
        return Ok(next.run(req).await);
    }
    match authenticate_inner(&state, req, next).await {
        Err(ApiError::Unauthenticated) => match state.auth_failures.check(&client) {
            Ok(()) => Err(ApiError::Unauthenticated),
            Err(retry_after_secs) => Err(ApiError::RateLimited { retry_after_secs }),
        },
        other => other,
    }
}

async fn authenticate_inner(
    state: &AppState,
    mut req: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let secret = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
        .ok_or(ApiError::Unauthenticated)?
        .to_string();
    let principal = if secret.starts_with("sks_") {
        let key = state
            .store
            .keys()
            .by_secret(&hash_secret(&secret))
            .await?
            .ok_or(ApiError::Unauthenticated)?;
        // A dead key's secret is no credential: revoked, failed, or past its expiry.
        if matches!(key.status, KeyStatus::Revoked | KeyStatus::Failed)
            || openrail_store::now_ms() >= key.expires_at
        {
            return Err(ApiError::Unauthenticated);
        }
        Principal::Agent {
            session_key_id: key.id,
            account_id: key.account_id,
            mode: key.mode,
        }
    } else if secret.starts_with("sk_testnet_") || secret.starts_with("sk_mainnet_") {
        let key = state
            .store
            .api_keys()
            .authenticate(&secret)
            .await?
            .ok_or(ApiError::Unauthenticated)?;
        // The key's "last used", kept to the minute: written in the background when the
        // recorded time is a minute old, so a request costs no write.
        let now = now_ms();
        if key.last_used_at.is_none_or(|t| now - t >= 60_000) {
            let (store, id) = (state.store.clone(), key.key_id.clone());
            tokio::spawn(async move {
                if let Err(e) = store.api_keys().touch(&id, now).await {
                    tracing::warn!(error = %e, "recording an API key's last use failed");
                }
            });
        }
        Principal::Account(key)
    } else {
        return Err(ApiError::Unauthenticated);
    };
    if principal.mode() == Mode::Mainnet && state.mainnet.is_none() {
        return Err(ApiError::MainnetUnavailable);
    }
    if let Err(retry_after_secs) = state.limiter.check(principal.credential_id()) {
        return Err(ApiError::RateLimited { retry_after_secs });
    }
    req.extensions_mut().insert(principal);
    Ok(next.run(req).await)
}

/// `Idempotency-Key` on POST and DELETE: replay a finished request's response, refuse the
/// key with another request (422) or while the first is in flight (409).
pub async fn idempotency(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Result<Response, ApiError> {
    // A key that cannot be read is refused, never ignored: ignoring it would let a retry
    // create a second object (pay twice).
    let key = match req.headers().get("idempotency-key") {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .filter(|k| {
                    !k.is_empty() && k.len() <= 255 && k.bytes().all(|b| b.is_ascii_graphic())
                })
                .ok_or(ApiError::IdempotencyKeyInvalid)?
                .to_string(),
        ),
    };
    let (Some(key), true) = (key, matches!(*req.method(), Method::POST | Method::DELETE)) else {
        return Ok(next.run(req).await);
    };
    // No principal: an anonymous operation (read-only), nothing to replay.
    let Some(principal) = req.extensions().get::<Principal>().cloned() else {
        return Ok(next.run(req).await);
    };
    let (parts, body) = req.into_parts();
    let bytes = to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| ApiError::PayloadTooLarge {
            limit: MAX_BODY_BYTES,
        })?;
    let mut hasher = Sha256::new();
    hasher.update(parts.method.as_str());
    hasher.update(b" ");
    hasher.update(parts.uri.path());
    hasher.update(b"\n");
    hasher.update(&bytes);
    let fingerprint = hex::encode(hasher.finalize());
    let cred = principal.credential_id().to_string();
    let node = &state.config.node_id;
    match state
        .store
        .idempotency()
        .begin(&cred, &key, &fingerprint, node, now_ms())
        .await?
    {
        IdempotencyBegin::Started => {}
        IdempotencyBegin::Mismatch => return Err(ApiError::IdempotencyKeyReused),
        IdempotencyBegin::InProgress => return Err(ApiError::IdempotencyInProgress),
        // The first request's process died after creating (or while about to create) an
        // object: show the object as it is now, or run the request again if it never
        // came to exist.
        IdempotencyBegin::Recover { resource } => {
            if let Some(mut res) = current_object(&state, &principal, &resource).await? {
                res.headers_mut()
                    .insert("idempotent-replayed", HeaderValue::from_static("recovered"));
                return Ok(res);
            }
            if !state
                .store
                .idempotency()
                .restart(&cred, &key, &resource, node, now_ms())
                .await?
            {
                return Err(ApiError::IdempotencyInProgress);
            }
        }
        IdempotencyBegin::Replay { status, body } => {
            let mut res = Response::new(Body::from(body.clone()));
            *res.status_mut() = axum::http::StatusCode::from_u16(status).unwrap_or_default();
            // A problem has a `code` and a `status`; a 4xx that is an answer (a verifier's
            // 422 verdict) is replayed as the JSON it was.
            let problem = status >= 400
                && serde_json::from_slice::<serde_json::Value>(body.as_ref())
                    .is_ok_and(|v| v.get("code").is_some() && v.get("status").is_some());
            let ct = if problem {
                "application/problem+json"
            } else {
                "application/json"
            };
            res.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
            res.headers_mut()
                .insert("idempotent-replayed", HeaderValue::from_static("true"));
            return Ok(res);
        }
    }
    let res = IDEMPOTENCY_CLAIM
        .scope(
            (cred.clone(), key.clone()),
            next.run(Request::from_parts(parts, Body::from(bytes))),
        )
        .await;
    let (parts, body) = res.into_parts();
    let bytes = match to_bytes(body, usize::MAX).await {
        Ok(b) => b,
        Err(e) => {
            state.store.idempotency().abandon(&cred, &key).await?;
            return Err(ApiError::Internal(format!("buffering response: {e}")));
        }
    };
    if parts.status.is_server_error() {
        // Nothing durable was promised: let a retry run again.
        state.store.idempotency().abandon(&cred, &key).await?;
    } else {
        state
            .store
            .idempotency()
            .finish(
                &cred,
                &key,
                parts.status.as_u16(),
                &without_secret(&String::from_utf8_lossy(&bytes)),
            )
            .await?;
    }
    Ok(Response::from_parts(parts, Body::from(bytes)))
}

/// The response as the idempotency record keeps it: a secret shown once (a session key's
/// `secret`) is never stored, so a replay answers the object without it (`"secret": null`,
/// `"secret_redacted": true`); the secret exists only in the first response and, hashed,
/// in the key's row.
fn without_secret(body: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(body) {
        Ok(mut v) if v.get("secret").is_some_and(|s| !s.is_null()) => {
            v["secret"] = serde_json::Value::Null;
            v["secret_redacted"] = serde_json::Value::Bool(true);
            v.to_string()
        }
        _ => body.to_string(),
    }
}

/// Token buckets per credential.
#[derive(Debug)]
pub struct RateLimiter {
    rate: f64,
    burst: f64,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl RateLimiter {
    /// `rate` tokens per second, at most `burst` saved.
    pub fn new(rate: f64, burst: f64) -> Self {
        Self {
            rate,
            burst,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes a token, or says how many seconds until one is available.
    pub fn check(&self, credential: &str) -> Result<(), u64> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().expect("rate limiter lock");
        let (tokens, last) = buckets
            .entry(credential.to_string())
            .or_insert((self.burst, now));
        *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * self.rate).min(self.burst);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - *tokens) / self.rate).ceil().max(1.0) as u64)
        }
    }
}

/// Any path that is not a route.
pub async fn not_found() -> Response {
    ApiError::NotFound.into_response()
}

/// A route asked with the wrong method.
pub async fn method_not_allowed() -> Response {
    ApiError::MethodNotAllowed.into_response()
}
