//! The one place requests are made: authentication, idempotency keys, retries, problems,
//! pages.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{Client, Error, ListParams, RequestOptions};

/// An error the API answered (RFC 9457 `application/problem+json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Problem {
    /// The HTTP status.
    pub status: u16,
    /// The stable snake_case code (`allowance_exceeded`, `parameter_invalid`, …).
    pub code: String,
    /// A short title.
    #[serde(default)]
    pub title: String,
    /// What went wrong, for people.
    #[serde(default)]
    pub detail: String,
    /// The request field at fault.
    #[serde(default)]
    pub param: Option<String>,
    /// The request's id (also the `Request-Id` header): quote it to support.
    #[serde(default)]
    pub request_id: Option<String>,
    /// A declined pull's id (the pull stays readable).
    #[serde(default)]
    pub pull_id: Option<String>,
    /// `allowance_exceeded`: what may still be pulled this epoch.
    #[serde(default)]
    pub remaining: Option<String>,
    /// `allowance_exceeded`: when the epoch resets.
    #[serde(default)]
    pub resets_at: Option<String>,
    /// Seconds the API asked to wait before a retry (`Retry-After`), on 429 and 503.
    #[serde(skip)]
    pub retry_after: Option<u64>,
}

/// Whether an answer with `status` and `code` may be retried with the same key.
fn retryable(status: StatusCode, code: &str) -> bool {
    matches!(status.as_u16(), 429 | 503)
        || (status == StatusCode::CONFLICT && code == "idempotency_in_progress")
}

/// The wait before retry `attempt` (0-based): `Retry-After` when given, else 0.5 s, 1 s,
/// 2 s … with jitter, at most 30 s.
fn backoff(attempt: u32, retry_after: Option<u64>) -> Duration {
    if let Some(s) = retry_after {
        return Duration::from_secs(s.min(60));
    }
    let base = 500u64.saturating_mul(1 << attempt.min(6)).min(30_000);
    let jitter = rand::random::<u64>() % (base / 4 + 1);
    Duration::from_millis(base + jitter)
}

/// A fresh idempotency key: `or_` and 32 random hex digits.
pub(crate) fn idempotency_key() -> String {
    format!("or_{}", hex::encode(rand::random::<[u8; 16]>()))
}

impl Client {
    /// Sends `method path` with `body`, retrying what may be retried; returns the decoded
    /// answer.
    pub(crate) async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        query: &[(String, String)],
        body: Option<&serde_json::Value>,
        options: &RequestOptions,
    ) -> Result<T, Error> {
        self.call_accepting(method, path, query, body, options, false)
            .await
    }

    /// [`Client::call`], where a 422 whose body is a `T` (a verification's verdict, not a
    /// problem) is an answer when `verdict_422` is set.
    async fn call_accepting<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        query: &[(String, String)],
        body: Option<&serde_json::Value>,
        options: &RequestOptions,
        verdict_422: bool,
    ) -> Result<T, Error> {
        let writes = method == Method::POST || method == Method::DELETE;
        let key = writes.then(|| {
            options
                .idempotency_key
                .clone()
                .unwrap_or_else(idempotency_key)
        });
        let mut attempt = 0;
        loop {
            let mut req = self
                .http
                .request(method.clone(), format!("{}{path}", self.base))
                .query(query);
            if !self.key.is_empty() {
                req = req.bearer_auth(&self.key);
            }
            if let Some(key) = &key {
                req = req.header("Idempotency-Key", key);
            }
            if let (true, Some(wait)) = (method == Method::POST, self.wait) {
                req = req.header("Prefer", format!("wait={wait}"));
            }
            if let Some(body) = body {
                req = req.json(body);
            }
            let answer = match req.send().await {
                Ok(answer) => answer,
                Err(e)
                    if attempt < self.max_retries
                        && (e.is_connect() || e.is_timeout() || e.is_request()) =>
                {
                    tokio::time::sleep(backoff(attempt, None)).await;
                    attempt += 1;
                    continue;
                }
                Err(e) => return Err(Error::Network(e)),
            };
            let status = answer.status();
            let retry_after = answer
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok());
            let text = answer.text().await?;
            if status.is_success() {
                return serde_json::from_str(&text)
                    .map_err(|e| Error::Decode(format!("{e}: {}", truncate(&text))));
            }
            if verdict_422
                && status == StatusCode::UNPROCESSABLE_ENTITY
                && let Some(verdict) = verdict::<T>(&text)
            {
                return Ok(verdict);
            }
            let mut problem: Problem = serde_json::from_str(&text).map_err(|e| {
                Error::Decode(format!(
                    "{status} with a body that is no problem ({e}): {}",
                    truncate(&text)
                ))
            })?;
            problem.retry_after = retry_after;
            if attempt < self.max_retries && retryable(status, &problem.code) {
                tokio::time::sleep(backoff(attempt, retry_after)).await;
                attempt += 1;
                continue;
            }
            return Err(Error::Api(Box::new(problem)));
        }
    }

    pub(crate) async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, Error> {
        self.call(Method::GET, path, &[], None, &RequestOptions::default())
            .await
    }

    pub(crate) async fn post<T: DeserializeOwned, B: Serialize>(
        &self,
        path: &str,
        body: &B,
        options: &RequestOptions,
    ) -> Result<T, Error> {
        let body = serde_json::to_value(body).map_err(|e| Error::Decode(e.to_string()))?;
        self.call(Method::POST, path, &[], Some(&body), options)
            .await
    }

    /// A POST without a body (the action routes: submit, cancel, revoke).
    pub(crate) async fn post_empty<T: DeserializeOwned>(
        &self,
        path: &str,
        options: &RequestOptions,
    ) -> Result<T, Error> {
        self.call(Method::POST, path, &[], None, options).await
    }

    /// A POST whose 422 may be a verdict (`{"verified": false, …}`) rather than a problem.
    pub(crate) async fn post_verdict<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &serde_json::Value,
        options: &RequestOptions,
    ) -> Result<T, Error> {
        self.call_accepting(Method::POST, path, &[], Some(body), options, true)
            .await
    }

    pub(crate) async fn delete<T: DeserializeOwned>(
        &self,
        path: &str,
        options: &RequestOptions,
    ) -> Result<T, Error> {
        self.call(Method::DELETE, path, &[], None, options).await
    }

    /// The pages of the list at `path`.
    pub(crate) fn pages<T: DeserializeOwned>(&self, path: &str, params: ListParams) -> Pages<T> {
        Pages {
            client: self.clone(),
            path: path.to_string(),
            params,
            buffer: std::collections::VecDeque::new(),
            done: false,
        }
    }
}

/// A 422 body that is a verdict: JSON with `verified` and no problem `code`, decoding as `T`.
fn verdict<T: DeserializeOwned>(text: &str) -> Option<T> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    if v.get("verified").is_none() || v.get("code").is_some() {
        return None;
    }
    serde_json::from_value(v).ok()
}

/// One path segment, percent-encoded (ids never need it; hostile input might).
pub(crate) fn seg(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn truncate(s: &str) -> &str {
    match s.char_indices().nth(300) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// A page of a list as the API answers it.
#[derive(Debug, Deserialize)]
struct Page<T> {
    data: Vec<T>,
    has_more: bool,
}

/// The objects of a list, newest first, fetched a page at a time as they are read:
/// `while let Some(m) = pages.next().await { let m = m?; … }`.
#[derive(Debug)]
pub struct Pages<T> {
    client: Client,
    path: String,
    params: ListParams,
    buffer: std::collections::VecDeque<T>,
    done: bool,
}

impl<T: DeserializeOwned + HasId> Pages<T> {
    /// The next object, fetching the next page when this one is read.
    pub async fn next(&mut self) -> Option<Result<T, Error>> {
        if self.buffer.is_empty() && !self.done {
            let mut query = self.params.filters.clone();
            if let Some(limit) = self.params.limit {
                query.push(("limit".into(), limit.to_string()));
            }
            if let Some(after) = &self.params.starting_after {
                query.push(("starting_after".into(), after.clone()));
            }
            let page: Page<T> = match self
                .client
                .call(
                    Method::GET,
                    &self.path,
                    &query,
                    None,
                    &RequestOptions::default(),
                )
                .await
            {
                Ok(page) => page,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            };
            self.done = !page.has_more || page.data.is_empty();
            self.params.starting_after = page.data.last().map(|o| o.id().to_string());
            self.buffer.extend(page.data);
        }
        self.buffer.pop_front().map(Ok)
    }

    /// Every remaining object, in one vector.
    pub async fn collect(mut self) -> Result<Vec<T>, Error> {
        let mut all = Vec::new();
        while let Some(o) = self.next().await {
            all.push(o?);
        }
        Ok(all)
    }
}

/// An object with an id (what `starting_after` names).
pub trait HasId {
    /// The object's id.
    fn id(&self) -> &str;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_transient_answers_are_retried() {
        assert!(retryable(StatusCode::TOO_MANY_REQUESTS, "rate_limited"));
        assert!(retryable(
            StatusCode::SERVICE_UNAVAILABLE,
            "temporarily_unavailable"
        ));
        assert!(retryable(StatusCode::CONFLICT, "idempotency_in_progress"));
        assert!(!retryable(StatusCode::CONFLICT, "other"));
        assert!(!retryable(
            StatusCode::UNPROCESSABLE_ENTITY,
            "allowance_exceeded"
        ));
        assert!(!retryable(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error"
        ));
    }

    #[test]
    fn backoff_honours_retry_after_and_grows() {
        assert_eq!(backoff(0, Some(2)), Duration::from_secs(2));
        let first = backoff(0, None);
        assert!(first >= Duration::from_millis(500) && first <= Duration::from_millis(625));
        assert!(backoff(3, None) >= Duration::from_secs(4));
        assert!(backoff(20, None) <= Duration::from_millis(37_500));
    }

    #[test]
    fn a_verdict_is_told_from_a_problem() {
        #[derive(serde::Deserialize)]
        struct V {
            verified: bool,
        }
        let v: Option<V> = verdict(r#"{"verified": false, "problemDetails": [], "results": {}}"#);
        assert_eq!(v.map(|v| v.verified), Some(false));
        let p: Option<V> = verdict(r#"{"code": "idempotency_key_reused", "status": 422}"#);
        assert!(p.is_none());
        let both: Option<V> = verdict(r#"{"code": "x", "verified": false}"#);
        assert!(both.is_none());
        assert!(verdict::<V>("not json").is_none());
    }

    #[test]
    fn path_segments_are_encoded() {
        assert_eq!(seg("sl_AbC-1"), "sl_AbC-1");
        assert_eq!(seg("../x y"), "..%2Fx%20y");
    }

    #[test]
    fn idempotency_keys_are_fresh() {
        let (a, b) = (idempotency_key(), idempotency_key());
        assert_ne!(a, b);
        assert!(a.starts_with("or_") && a.len() == 35);
    }
}
