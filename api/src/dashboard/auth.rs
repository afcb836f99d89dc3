//! Accounts in the browser: sign up (a new account is a testnet account), sign in, sign
//! out; the session cookie; CSRF checks; the failed sign-in limit.
//!
//! - Passwords: argon2id (the `argon2` crate's defaults: 19 MiB, 2 passes), hashed off the
//!   async runtime. An unknown email is checked against a dummy hash, so both answers take
//!   about as long.
//! - Sessions: the cookie `openrail_session` holds 32 random characters; the database keeps
//!   their SHA-256 with the account, the session's CSRF token and its end (7 days).
//!   `HttpOnly; SameSite=Lax; Path=/`, and `Secure` when the server is reached over https
//!   (its advertised URL, or `X-Forwarded-Proto: https` when trusted proxies are
//!   configured).
//! - CSRF: every POST carries a `csrf` field equal to the session's token (a synchronizer
//!   token); the sign-in and sign-up forms, which have no session yet, carry one equal to
//!   the `openrail_csrf` cookie (double submit). A request whose `Origin` names another
//!   host is refused too.
//! - Failed sign-ins are counted in the database (so every process of one deployment
//!   shares the count): at most 5 per email and 20 per client address in 15 minutes, then
//!   429 until the window passes. A successful sign-in clears the email's count. The client
//!   address is the peer's, or what a trusted proxy forwarded
//!   ([`crate::hardening::client_ip`]).
//! - Sign-up answers the same redirect to `/login?signed_up` whether the email was new or
//!   taken (the owner then signs in), refuses the most common passwords, and is limited
//!   per client address (counted with the failed sign-ins, same window).

use std::collections::HashMap;
use std::sync::OnceLock;

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use axum::Form;
use axum::extract::{ConnectInfo, FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use openrail_domain::AccountId;
use openrail_store::dashboard::{DashboardSession, SignUp};
use openrail_store::ids::{hash_secret, random_id};
use openrail_store::now_ms;
use rand::RngCore;
use subtle::ConstantTimeEq;

use super::DashError;
use super::html::{csrf_field, esc, page};
use crate::AppState;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "openrail_session";
/// The pre-session CSRF cookie's name.
pub const CSRF_COOKIE: &str = "openrail_csrf";
/// How long a session lasts.
pub const SESSION_TTL_MS: i64 = 7 * 24 * 3600 * 1000;
/// The window of the failed sign-in limit.
pub const FAILURE_WINDOW_MS: i64 = 15 * 60 * 1000;
/// Failed sign-ins allowed per email in the window.
pub const MAX_FAILURES_PER_EMAIL: i64 = 5;
/// Failed sign-ins allowed per client address in the window.
pub const MAX_FAILURES_PER_ADDRESS: i64 = 20;
/// Shortest password accepted.
pub const MIN_PASSWORD_CHARS: usize = 10;

/// A signed-in request: its session.
#[derive(Debug, Clone)]
pub struct Session(pub DashboardSession);

impl FromRequestParts<AppState> for Session {
    type Rejection = DashError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, DashError> {
        let secret = cookie(&parts.headers, SESSION_COOKIE).ok_or(DashError::SignedOut)?;
        state
            .store
            .dashboard()
            .session(&hash_secret(&secret), now_ms())
            .await?
            .map(Session)
            .ok_or(DashError::SignedOut)
    }
}

/// The value of cookie `name`, if sent.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim().to_string())
}

/// Whether the browser reached this server over https: its advertised URL says so, or a
/// trusted proxy in front (`from_proxy`) sent `X-Forwarded-Proto: https`.
fn over_https(advertise_url: Option<&str>, from_proxy: bool, headers: &HeaderMap) -> bool {
    advertise_url.is_some_and(|u| u.starts_with("https://"))
        || (from_proxy
            && headers
                .get("x-forwarded-proto")
                .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"https")))
}

/// A `Set-Cookie` value: HttpOnly, SameSite=Lax, Path=/, Secure over https.
pub(crate) fn set_cookie(
    state: &AppState,
    headers: &HeaderMap,
    name: &str,
    value: &str,
    max_age_s: i64,
) -> HeaderValue {
    // Without connection info (an in-process call) a forwarded proto is believed only
    // when proxies are configured at all.
    let from_proxy = !state.config.trusted_proxies.is_empty();
    let secure = if over_https(state.config.advertise_url.as_deref(), from_proxy, headers) {
        "; Secure"
    } else {
        ""
    };
    HeaderValue::from_str(&format!(
        "{name}={value}; Max-Age={max_age_s}; Path=/; HttpOnly; SameSite=Lax{secure}"
    ))
    .expect("cookie values are ascii")
}

/// Refuses a POST whose `Origin` names another host, or whose `csrf` field is not
/// `expected` (compared in constant time).
pub fn check_post(
    headers: &HeaderMap,
    form: &HashMap<String, String>,
    expected: &str,
) -> Result<(), DashError> {
    if !same_origin(headers) {
        return Err(DashError::Csrf);
    }
    let given = form.get("csrf").map(String::as_str).unwrap_or("");
    if expected.is_empty() || !bool::from(given.as_bytes().ct_eq(expected.as_bytes())) {
        return Err(DashError::Csrf);
    }
    Ok(())
}

/// Whether the request's `Origin`, when it sends one, names the host it was sent to.
pub fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin_host = origin
        .to_str()
        .ok()
        .and_then(|o| o.split_once("://"))
        .map(|(_, h)| h);
    host.is_some() && origin_host == host
}

/// Checks a signed-in POST: the session's token.
pub fn check_session_post(
    session: &Session,
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Result<(), DashError> {
    check_post(headers, form, &session.0.csrf_token)
}

fn client_address(
    state: &AppState,
    conn: Option<&ConnectInfo<std::net::SocketAddr>>,
    headers: &HeaderMap,
) -> String {
    crate::hardening::client_address(conn, headers, &state.config.trusted_proxies)
}

fn normalize_email(s: &str) -> String {
    s.trim().to_lowercase()
}

fn plausible_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && s.len() <= 254
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Longest business name, in characters.
pub const MAX_BUSINESS_NAME_CHARS: usize = 100;

/// The business name a form gave: trimmed, `None` when empty; refused (with what to fix)
/// when longer than [`MAX_BUSINESS_NAME_CHARS`], when it holds a control or bidirectional
/// formatting character (the API's free-text rule), or when it looks like an email
/// address (payers are told who asks by name, never by an address that may pass for
/// someone else's).
pub fn business_name_of(raw: &str) -> Result<Option<String>, String> {
    let name = raw.trim();
    if name.is_empty() {
        return Ok(None);
    }
    if name.chars().count() > MAX_BUSINESS_NAME_CHARS {
        return Err(format!(
            "Keep the business name to {MAX_BUSINESS_NAME_CHARS} characters."
        ));
    }
    if crate::types::Text::check(name).is_err() {
        return Err(
            "Write the business name as plain text, without control or text-direction characters."
                .into(),
        );
    }
    if name.contains('@') {
        return Err("Enter the business's name, not an email address.".into());
    }
    Ok(Some(name.to_string()))
}

/// An argon2id hash of `password` (PHC string), computed off the runtime.
pub async fn hash_password(password: String) -> Result<String, DashError> {
    tokio::task::spawn_blocking(move || {
        let mut salt = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut salt);
        let salt = SaltString::encode_b64(&salt).map_err(|e| DashError::Hash(e.to_string()))?;
        argon2::Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| DashError::Hash(e.to_string()))
    })
    .await
    .map_err(|e| DashError::Hash(e.to_string()))?
}

/// Whether `password` matches `phc` (false for an unreadable hash).
pub async fn verify_password(password: String, phc: String) -> Result<bool, DashError> {
    tokio::task::spawn_blocking(move || {
        let Ok(parsed) = PasswordHash::new(&phc) else {
            return false;
        };
        argon2::Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
    .await
    .map_err(|e| DashError::Hash(e.to_string()))
}

/// A hash no password matches in practice, checked for unknown emails (equal timing).
async fn dummy_hash() -> Result<String, DashError> {
    static DUMMY: OnceLock<String> = OnceLock::new();
    if let Some(h) = DUMMY.get() {
        return Ok(h.clone());
    }
    let h = hash_password(random_id("", 32)).await?;
    Ok(DUMMY.get_or_init(|| h).clone())
}

/// What a form page says on top.
#[derive(Debug, Clone, Copy)]
enum Msg<'a> {
    /// What to fix.
    Error(&'a str),
    /// What happened.
    Notice(&'a str),
}

/// The page of a sign-in or sign-up form; sets the pre-session CSRF cookie when missing.
fn form_page(
    state: &AppState,
    headers: &HeaderMap,
    status: StatusCode,
    signup: bool,
    email: &str,
    business_name: &str,
    message: Option<Msg<'_>>,
) -> Response {
    let token = cookie(headers, CSRF_COOKIE)
        .filter(|t| t.len() == 32 && t.bytes().all(|b| b.is_ascii_alphanumeric()))
        .unwrap_or_else(|| random_id("", 32));
    let (title, action, button, other) = if signup {
        (
            "Create a testnet account",
            "/signup",
            "Create account",
            "Have an account? <a href=\"/login\">Sign in</a>.",
        )
    } else {
        (
            "Sign in",
            "/login",
            "Sign in",
            "New here? <a href=\"/signup\">Create a testnet account</a>.",
        )
    };
    let lead = if signup {
        "A testnet account moves test money on local chains and the simulated bank. You get an API key right after."
    } else {
        "Sign in to your Openrail account."
    };
    let error = match message {
        Some(Msg::Error(e)) => format!("<div class=\"notice bad\" role=\"alert\">{}</div>", esc(e)),
        Some(Msg::Notice(n)) => {
            format!("<div class=\"notice ok\" role=\"status\">{}</div>", esc(n))
        }
        None => String::new(),
    };
    let (autocomplete, hint) = if signup {
        (
            "new-password",
            format!(
                "<p id=\"pw-hint\" class=\"lead\">At least {MIN_PASSWORD_CHARS} characters.</p>"
            ),
        )
    } else {
        ("current-password", String::new())
    };
    let described = if signup {
        " aria-describedby=\"pw-hint\""
    } else {
        ""
    };
    let business = if signup {
        format!(
            "<div><label for=\"business_name\">Business name <span class=\"empty\">(optional)</span></label>\
             <input id=\"business_name\" name=\"business_name\" type=\"text\" autocomplete=\"organization\" \
             maxlength=\"{MAX_BUSINESS_NAME_CHARS}\" aria-describedby=\"bn-hint\" value=\"{value}\">\
             <p id=\"bn-hint\" class=\"lead\">Shown to payers on the page where they authorize your \
             mandates and payments, marked as unverified. Your email is never shown to them. You can \
             change it later in Settings.</p></div>",
            value = esc(business_name),
        )
    } else {
        String::new()
    };
    let body = format!(
        r#"<div class="card"><h1>{title}</h1><p class="lead">{lead}</p>{error}
<form class="stack" method="post" action="{action}">{csrf}
<div><label for="email">Email</label><input id="email" name="email" type="email" autocomplete="email" required value="{email}"></div>
<div><label for="password">Password</label><input id="password" name="password" type="password" autocomplete="{autocomplete}" required{described}>{hint}</div>
{business}<div><button type="submit">{button}</button></div>
</form><p>{other}</p></div>"#,
        csrf = csrf_field(&token),
        email = esc(email),
    );
    let mut res = (status, page(title, None, &body)).into_response();
    res.headers_mut().append(
        header::SET_COOKIE,
        set_cookie(state, headers, CSRF_COOKIE, &token, 3600 * 24),
    );
    res
}

/// `GET /signup`
pub async fn signup_page(State(state): State<AppState>, headers: HeaderMap) -> Response {
    form_page(&state, &headers, StatusCode::OK, true, "", "", None)
}

/// What `/login?signed_up` says: the same whether the email was new or not.
pub const SIGNED_UP_NOTICE: &str = "Account request received. Sign in with the email and password you chose (if that email already had an account, its own password signs in).";

/// `GET /login` (`?signed_up` after a sign-up: the notice above).
pub async fn login_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> Response {
    let signed_up = query
        .as_deref()
        .is_some_and(|q| q.split('&').any(|p| p == "signed_up"));
    let notice = signed_up.then_some(Msg::Notice(SIGNED_UP_NOTICE));
    form_page(&state, &headers, StatusCode::OK, false, "", "", notice)
}

/// Starts a session of `account_id` and sends the browser to the dashboard.
async fn start_session(
    state: &AppState,
    headers: &HeaderMap,
    account_id: &AccountId,
) -> Result<Response, DashError> {
    let secret = random_id("", 32);
    let now = now_ms();
    state
        .store
        .dashboard()
        .create_session(
            &hash_secret(&secret),
            account_id,
            &random_id("", 32),
            now,
            now + SESSION_TTL_MS,
        )
        .await?;
    let mut res = Redirect::to("/dashboard").into_response();
    res.headers_mut().append(
        header::SET_COOKIE,
        set_cookie(
            state,
            headers,
            SESSION_COOKIE,
            &secret,
            SESSION_TTL_MS / 1000,
        ),
    );
    Ok(res)
}

fn pre_session_token(headers: &HeaderMap) -> String {
    cookie(headers, CSRF_COOKIE).unwrap_or_default()
}

/// The email (lowercased) and password of a sign-in or sign-up form, once its
/// pre-session CSRF token and origin are checked.
fn credentials(
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Result<(String, String), DashError> {
    check_post(headers, form, &pre_session_token(headers))?;
    let email = normalize_email(form.get("email").map(String::as_str).unwrap_or(""));
    Ok((email, form.get("password").cloned().unwrap_or_default()))
}

/// `POST /signup`: a new testnet account. Whether the email was new or already had an
/// account, the answer is the same redirect to `/login?signed_up` (and takes about as
/// long: the password is hashed either way), so sign-up tells no one which emails have
/// accounts; the new account's owner then signs in. At most
/// [`crate::ApiConfig::max_signups_per_address`] attempts per client address in
/// [`FAILURE_WINDOW_MS`], then 429. Common passwords ([`crate::hardening::is_common_password`])
/// are refused.
pub async fn signup(
    State(state): State<AppState>,
    conn: Option<axum::Extension<ConnectInfo<std::net::SocketAddr>>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    let (email, password) = credentials(&headers, &form)?;
    let business_raw = form.get("business_name").map(String::as_str).unwrap_or("");
    let refuse = |msg: &str| {
        Ok(form_page(
            &state,
            &headers,
            StatusCode::UNPROCESSABLE_ENTITY,
            true,
            &email,
            business_raw,
            Some(Msg::Error(msg)),
        ))
    };
    if !plausible_email(&email) {
        return refuse("Enter an email address, like name@example.com.");
    }
    if password.chars().count() < MIN_PASSWORD_CHARS || password.len() > 1024 {
        return refuse(&format!(
            "Choose a password of at least {MIN_PASSWORD_CHARS} characters."
        ));
    }
    if crate::hardening::is_common_password(&password) {
        return refuse(
            "That password is on the list of the most common passwords: choose another.",
        );
    }
    let business_name = match business_name_of(business_raw) {
        Ok(b) => b,
        Err(msg) => return refuse(&msg),
    };
    let now = now_ms();
    let since = now - FAILURE_WINDOW_MS;
    let by_address = format!(
        "signup:{}",
        client_address(&state, conn.as_ref().map(|c| &c.0), &headers)
    );
    if state
        .store
        .dashboard()
        .login_failures(&by_address, since)
        .await?
        >= state.config.max_signups_per_address
    {
        return Err(DashError::TooManySignUps {
            retry_after_secs: (FAILURE_WINDOW_MS / 1000) as u64,
        });
    }
    // Counted with the failed sign-ins (one table, one window), before the costly hash.
    state
        .store
        .dashboard()
        .record_login_failure(&[&by_address], now, since)
        .await?;
    let hash = hash_password(password).await?;
    match state
        .store
        .dashboard()
        .sign_up(&email, &hash, business_name.as_deref(), now)
        .await?
    {
        SignUp::Created(_) | SignUp::EmailTaken => {
            Ok(Redirect::to("/login?signed_up").into_response())
        }
    }
}

/// `POST /login`
pub async fn login(
    State(state): State<AppState>,
    conn: Option<axum::Extension<ConnectInfo<std::net::SocketAddr>>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    let (email, password) = credentials(&headers, &form)?;
    let now = now_ms();
    let by_email = format!("email:{email}");
    let by_address = format!(
        "ip:{}",
        client_address(&state, conn.as_ref().map(|c| &c.0), &headers)
    );
    let since = now - FAILURE_WINDOW_MS;
    if state
        .store
        .dashboard()
        .login_failures(&by_email, since)
        .await?
        >= MAX_FAILURES_PER_EMAIL
        || state
            .store
            .dashboard()
            .login_failures(&by_address, since)
            .await?
            >= MAX_FAILURES_PER_ADDRESS
    {
        return Err(DashError::TooManyAttempts {
            retry_after_secs: (FAILURE_WINDOW_MS / 1000) as u64,
        });
    }
    let user = state.store.dashboard().user(&email).await?;
    let phc = match &user {
        Some(u) => u.password_hash.clone(),
        None => dummy_hash().await?,
    };
    let good = verify_password(password, phc).await? && user.is_some();
    match user {
        Some(u) if good => {
            state
                .store
                .dashboard()
                .clear_login_failures(&by_email)
                .await?;
            start_session(&state, &headers, &u.account_id).await
        }
        _ => {
            state
                .store
                .dashboard()
                .record_login_failure(&[&by_email, &by_address], now, since)
                .await?;
            Ok(form_page(
                &state,
                &headers,
                StatusCode::UNAUTHORIZED,
                false,
                &email,
                "",
                Some(Msg::Error(
                    "That email and password do not match an account.",
                )),
            ))
        }
    }
}

/// `POST /logout`: ends the session and clears the cookie.
pub async fn logout(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    check_session_post(&session, &headers, &form)?;
    if let Some(secret) = cookie(&headers, SESSION_COOKIE) {
        state
            .store
            .dashboard()
            .end_session(&hash_secret(&secret), now_ms())
            .await?;
    }
    let mut res = Redirect::to("/login").into_response();
    res.headers_mut().append(
        header::SET_COOKIE,
        set_cookie(&state, &headers, SESSION_COOKIE, "", 0),
    );
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn form(csrf: &str) -> HashMap<String, String> {
        HashMap::from([("csrf".to_string(), csrf.to_string())])
    }

    #[test]
    fn a_post_needs_the_token_and_a_same_site_origin() {
        let same = headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "http://127.0.0.1:8080"),
        ]);
        assert!(check_post(&same, &form("t0k3n"), "t0k3n").is_ok());
        assert!(check_post(&same, &form("other"), "t0k3n").is_err());
        assert!(check_post(&same, &HashMap::new(), "t0k3n").is_err());
        assert!(
            check_post(&same, &form(""), "").is_err(),
            "no expected token: refused"
        );
        let cross = headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "http://evil.example"),
        ]);
        assert!(check_post(&cross, &form("t0k3n"), "t0k3n").is_err());
        let null = headers(&[("host", "127.0.0.1:8080"), ("origin", "null")]);
        assert!(check_post(&null, &form("t0k3n"), "t0k3n").is_err());
        let no_origin = headers(&[("host", "127.0.0.1:8080")]);
        assert!(check_post(&no_origin, &form("t0k3n"), "t0k3n").is_ok());
    }

    #[test]
    fn cookies_are_secure_over_https_only() {
        assert!(!over_https(None, true, &headers(&[])));
        assert!(!over_https(
            Some("http://10.0.0.1:8080"),
            true,
            &headers(&[])
        ));
        assert!(over_https(
            Some("https://pay.example"),
            false,
            &headers(&[])
        ));
        let forwarded = headers(&[("x-forwarded-proto", "HTTPS")]);
        assert!(over_https(None, true, &forwarded));
        assert!(
            !over_https(None, false, &forwarded),
            "believed only from a trusted proxy"
        );
    }

    #[test]
    fn cookies_are_read_by_name() {
        let h = headers(&[("cookie", "a=1; openrail_session=abc; b=2")]);
        assert_eq!(cookie(&h, SESSION_COOKIE).as_deref(), Some("abc"));
        assert_eq!(cookie(&h, "openrail"), None);
    }

    #[test]
    fn emails_are_checked_loosely() {
        assert!(plausible_email("dev@example.com"));
        for bad in [
            "",
            "dev",
            "dev@",
            "@example.com",
            "dev@example",
            "d v@example.com",
        ] {
            assert!(!plausible_email(bad), "{bad}");
        }
    }

    #[test]
    fn business_names_are_plain_names() {
        assert_eq!(business_name_of("  Acme Ltd "), Ok(Some("Acme Ltd".into())));
        assert_eq!(business_name_of("   "), Ok(None));
        for bad in [
            "refunds@yourbank.example",
            "Acme\u{202E}dtL",
            "Acme\u{0}",
            "Acme\nLtd",
        ] {
            assert!(business_name_of(bad).is_err(), "{bad:?}");
        }
        assert!(business_name_of(&"x".repeat(MAX_BUSINESS_NAME_CHARS + 1)).is_err());
    }

    #[tokio::test]
    async fn passwords_hash_with_argon2id_and_verify() {
        let h = hash_password("correct horse".into()).await.unwrap();
        assert!(h.starts_with("$argon2id$"), "{h}");
        assert!(
            verify_password("correct horse".into(), h.clone())
                .await
                .unwrap()
        );
        assert!(!verify_password("wrong horse".into(), h).await.unwrap());
        assert!(
            !verify_password("x".into(), "not a hash".into())
                .await
                .unwrap()
        );
    }
}
