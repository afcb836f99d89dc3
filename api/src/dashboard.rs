//! The developer dashboard and the hosted payer-consent page: server-rendered HTML served
//! by the same router as `/v1`, with small vanilla scripts embedded in the binary (a copy
//! button; the EIP-1193 wallet on the consent page). No Node.js at run time, no CDN.
//!
//! - [`auth`]: sign up, sign in, sign out; sessions (an HttpOnly, SameSite=Lax cookie
//!   holding a random secret, stored as its SHA-256; `Secure` over https); CSRF (a
//!   synchronizer token per session, a double-submit cookie before sign-in, and the
//!   `Origin` header when present) on every POST; failed sign-ins limited per email and
//!   per client address, counted in the database.
//! - [`pages`]: API keys (created through the store's one key creation) and what the
//!   account's integration did — read through the `/v1` handlers themselves, called
//!   in-process for the signed-in account, so a page shows exactly what the API answers.
//! - [`identity`]: verification sessions, attestations and issued credentials, through
//!   the `/v1/identity` handlers (the credentials through the store's list).
//! - [`consent`]: `/authorize/{man_…|pay_…}`, the page a payer opens to sign a mandate or
//!   payment with a browser wallet; the signature goes through the same service call as
//!   `POST /v1/…/authorize`.
//! - [`html`]: escaping and the page layout.

pub mod auth;
pub mod consent;
pub mod html;
pub mod identity;
pub mod pages;

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};

use crate::AppState;
use crate::error::ApiError;
use openrail_store::StoreError;

/// Why a dashboard request failed; each becomes an HTML page (or a redirect to sign in).
#[derive(Debug, thiserror::Error)]
pub enum DashError {
    /// No live session: sign in first.
    #[error("not signed in")]
    SignedOut,
    /// The form's CSRF token or the request's origin does not match.
    #[error("the form is stale or was sent from another site")]
    Csrf,
    /// Too many failed sign-ins.
    #[error("too many failed sign-ins")]
    TooManyAttempts {
        /// Seconds until another try.
        retry_after_secs: u64,
    },
    /// Too many sign-ups from one client address.
    #[error("too many sign-ups")]
    TooManySignUps {
        /// Seconds until another try.
        retry_after_secs: u64,
    },
    /// A form field is missing or wrong.
    #[error("{0}")]
    Form(String),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An API handler or service refused (its problem is shown) or failed.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// Hashing a password failed.
    #[error("password hashing: {0}")]
    Hash(String),
}

impl IntoResponse for DashError {
    fn into_response(self) -> Response {
        let (status, title, detail) = match &self {
            DashError::SignedOut => return Redirect::to("/login").into_response(),
            DashError::Csrf => (
                StatusCode::FORBIDDEN,
                "Request refused",
                "This form is stale or was not sent from this site. Reload the page and try again."
                    .to_string(),
            ),
            DashError::TooManyAttempts { .. } => (
                StatusCode::TOO_MANY_REQUESTS,
                "Too many attempts",
                "Too many failed sign-ins. Wait a few minutes and try again.".to_string(),
            ),
            DashError::TooManySignUps { .. } => (
                StatusCode::TOO_MANY_REQUESTS,
                "Too many attempts",
                "Too many accounts were requested from this network. Wait a few minutes and try again."
                    .to_string(),
            ),
            DashError::Form(m) => (StatusCode::BAD_REQUEST, "Check the form", m.clone()),
            DashError::Store(_) | DashError::Hash(_) => {
                tracing::error!(error = %self, "dashboard request failed");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Something went wrong",
                    "The server could not do this. Try again in a moment.".to_string(),
                )
            }
            DashError::Api(e) => {
                let p = e.problem();
                if p.status >= 500 {
                    tracing::error!(error = %e, "dashboard request failed");
                }
                (
                    StatusCode::from_u16(p.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                    p.title,
                    p.detail,
                )
            }
        };
        let body = html::page(
            title,
            None,
            &format!(
                "<h1>{}</h1><p role=\"alert\">{}</p><p><a href=\"/dashboard\">Back to the dashboard</a></p>",
                html::esc(title),
                html::esc(&detail)
            ),
        );
        let mut res = (status, body).into_response();
        if let DashError::TooManyAttempts { retry_after_secs }
        | DashError::TooManySignUps { retry_after_secs } = self
        {
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
        }
        res
    }
}

/// The dashboard's and the consent page's routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(|| async { Redirect::to("/dashboard") }))
        .route("/signup", get(auth::signup_page).post(auth::signup))
        .route("/login", get(auth::login_page).post(auth::login))
        .route("/logout", post(auth::logout))
        .route("/dashboard", get(pages::keys))
        .route("/dashboard/keys", post(pages::create_key))
        .route("/dashboard/keys/{id}/revoke", post(pages::revoke_key))
        .route("/dashboard/mandates", get(pages::mandates))
        .route(
            "/dashboard/mandates/{id}/cancel",
            post(pages::cancel_mandate),
        )
        .route("/dashboard/session-keys", get(pages::session_keys))
        .route(
            "/dashboard/session-keys/{id}/revoke",
            post(pages::revoke_session_key),
        )
        .route("/dashboard/pulls", get(pages::pulls))
        .route("/dashboard/payments", get(pages::payments))
        .route(
            "/dashboard/payments/{id}/cancel",
            post(pages::cancel_payment),
        )
        .route(
            "/dashboard/bank-accounts",
            get(pages::bank_accounts).post(pages::create_bank_account),
        )
        .route("/dashboard/identity", get(identity::index))
        .route(
            "/dashboard/identity/verifications",
            get(identity::verifications).post(identity::create_verification),
        )
        .route(
            "/dashboard/identity/verifications/{id}",
            get(identity::verification),
        )
        .route(
            "/dashboard/identity/verifications/{id}/submit",
            post(identity::submit_verification),
        )
        .route(
            "/dashboard/identity/verifications/{id}/cancel",
            post(identity::cancel_verification),
        )
        .route(
            "/dashboard/identity/attestations",
            get(identity::attestations).post(identity::create_attestation),
        )
        .route(
            "/dashboard/identity/attestations/{id}",
            get(identity::attestation),
        )
        .route(
            "/dashboard/identity/attestations/{id}/revoke",
            post(identity::revoke_attestation),
        )
        .route(
            "/dashboard/identity/credentials",
            get(identity::credentials),
        )
        .route("/dashboard/events", get(pages::events))
        .route(
            "/dashboard/events/{id}/redeliver",
            post(pages::redeliver_event),
        )
        .route(
            "/dashboard/webhooks",
            get(pages::webhooks).post(pages::create_webhook),
        )
        .route("/dashboard/webhooks/{id}", get(pages::webhook_deliveries))
        .route(
            "/dashboard/settings",
            get(pages::settings).post(pages::save_settings),
        )
        .route("/authorize/{id}", get(consent::show).post(consent::submit))
        .route("/assets/dashboard.css", get(html::css))
        .route("/assets/dashboard.js", get(html::js))
        .route("/assets/consent.js", get(consent::js))
        .layer(axum::middleware::from_fn(page_headers))
}

/// The `Content-Security-Policy` of every dashboard and consent page: scripts, styles and
/// images only from this origin (the pages' scripts are `/assets/…` files; the consent
/// page's data is a JSON block, which no policy executes), requests only to this origin
/// (the consent page posts the signature back here), forms only to this origin, and no
/// framing by anyone (`frame-ancestors 'none'`: a page that could be framed could be
/// overlaid to make a payer sign what they do not see).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; \
     frame-ancestors 'none'";

/// Headers on every response of these routes: the policy above, `X-Frame-Options: DENY`
/// (browsers without `frame-ancestors`) and `nosniff`; and a referrer policy. The consent
/// page's (`/authorize/…`) is `no-referrer`: its link is a bearer link and must not leak to
/// another site through `Referer`. The dashboard's is `same-origin`, which leaks nothing
/// to another site either, but keeps the `Origin` of its own form posts: under
/// `no-referrer` a browser sends `Origin: null` on a form post, which the CSRF check
/// (rightly) refuses. (The consent page's post is a `fetch`, whose `Origin` is always
/// sent.)
///
/// Every page but the static assets is `Cache-Control: no-store`: signed-in pages show an
/// account's data (and, once, a key's secret), the forms carry CSRF tokens, and the
/// consent page is reached by a bearer link.
async fn page_headers(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let consent = req.uri().path().starts_with("/authorize/");
    let asset = req.uri().path().starts_with("/assets/");
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    if !asset {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static(if consent {
            "no-referrer"
        } else {
            "same-origin"
        }),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    res
}

/// The status and JSON body of a `/v1` handler's answer, called in-process.
pub(crate) async fn json_of(res: Response) -> Result<(StatusCode, serde_json::Value), DashError> {
    let status = res.status();
    let bytes = axum::body::to_bytes(res.into_body(), 16 * 1024 * 1024)
        .await
        .map_err(|e| DashError::Api(ApiError::Internal(e.to_string())))?;
    let value = serde_json::from_slice(&bytes)
        .map_err(|e| DashError::Api(ApiError::Internal(e.to_string())))?;
    Ok((status, value))
}
