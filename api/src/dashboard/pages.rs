//! The signed-in pages: API keys, and what the account's integration did.

use std::collections::HashMap;

use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use openrail_domain::ApiKeyId;
use openrail_store::{Mode, now_ms};
use serde_json::Value;

use super::DashError;
use super::auth::{self, Session, check_session_post};
use super::html::{Chrome, csrf_field, esc, page};
use crate::AppState;
use crate::context::Principal;
use crate::hardening::{NEW_KEY_COOKIE, open_new_key, seal_new_key};

/// The signed-in account as an API caller: its testnet scope. Dashboard actions call the
/// `/v1` handlers and services with it, so they do exactly what the API does.
pub(crate) fn principal(s: &Session) -> Principal {
    Principal::Dashboard {
        account_id: s.0.account_id.clone(),
        mode: Mode::Testnet,
    }
}

/// Unix ms as `2026-11-25 15:04 UTC`.
pub(crate) fn when(ms: i64) -> String {
    let Ok(t) = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000) else {
        return ms.to_string();
    };
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute()
    )
}

pub(super) fn chrome<'a>(s: &'a Session, current: &'a str) -> Chrome<'a> {
    Chrome {
        email: &s.0.email,
        csrf: &s.0.csrf_token,
        current,
    }
}

/// The API keys page, with `created` (a new key's secret, shown this once) on top.
async fn keys_page(
    state: &AppState,
    s: &Session,
    headers: &HeaderMap,
    created: Option<(&str, &str)>,
) -> Result<Html<String>, DashError> {
    let keys = state.store.api_keys().list(Some(&s.0.account_id)).await?;
    let csrf = csrf_field(&s.0.csrf_token);
    let mut body = String::from(
        "<h1>API keys</h1><p class=\"lead\">A key authenticates your server to the API: \
         <code>Authorization: Bearer sk_testnet_…</code>. Testnet keys move test money only.</p>",
    );
    if let Some((key, secret)) = created {
        body.push_str(&format!(
            r#"<div class="notice ok" role="status"><h2>Your new key <code>{id}</code></h2>
<p>Copy it now: it is shown only this once and stored only as a hash.</p>
<div class="secret"><code id="new-secret">{secret}</code>
<button type="button" class="secondary" data-copy="new-secret">Copy</button></div>
<p id="new-secret-status" aria-live="polite"></p>
<p>Try it: <code>curl -s {base}/v1/mandates -H "Authorization: Bearer {secret}"</code></p></div>"#,
            id = esc(key),
            secret = esc(secret),
            base = esc(&base_url(state, headers)),
        ));
    }
    let mainnet = if state.mainnet.is_some() {
        format!(
            "<form class=\"inline\" method=\"post\" action=\"/dashboard/keys\">{csrf}\
             <input type=\"hidden\" name=\"mode\" value=\"mainnet\">\
             <button type=\"submit\" class=\"secondary\">Create a mainnet key</button></form>"
        )
    } else {
        "<button type=\"button\" disabled aria-describedby=\"mainnet-why\">Create a mainnet key</button>\
         <p id=\"mainnet-why\" class=\"lead\">Mainnet keys are disabled: this server has no mainnet \
         network configured, so a mainnet key could not move money. They become available once \
         the operator configures mainnet.</p>"
            .to_string()
    };
    body.push_str(&format!(
        "<div class=\"row\"><form class=\"inline\" method=\"post\" action=\"/dashboard/keys\">{csrf}\
         <input type=\"hidden\" name=\"mode\" value=\"testnet\">\
         <button type=\"submit\">Create a testnet key</button></form> {mainnet}</div>"
    ));
    body.push_str("<h2>Your keys</h2>");
    if keys.is_empty() {
        body.push_str("<p class=\"empty\">No keys yet.</p>");
    } else {
        body.push_str(
            "<div class=\"table-wrap\"><table class=\"stack\"><caption class=\"skip\">API keys</caption>\
             <thead><tr><th scope=\"col\">Key</th><th scope=\"col\">Mode</th><th scope=\"col\">Created</th>\
             <th scope=\"col\">Last used</th><th scope=\"col\">Status</th><th scope=\"col\"><span class=\"skip\">Actions</span></th></tr></thead><tbody>",
        );
        for k in &keys {
            let prefix = format!("sk_{}_…{}", k.mode.as_str(), k.last4);
            let (status, action) = match k.revoked_at {
                Some(at) => (
                    format!(
                        "<span class=\"status status-revoked\">revoked</span> {}",
                        when(at)
                    ),
                    String::new(),
                ),
                None => (
                    "<span class=\"status status-active\">active</span>".to_string(),
                    format!(
                        "<form class=\"inline\" method=\"post\" action=\"/dashboard/keys/{id}/revoke\">{csrf}\
                         <button type=\"submit\" class=\"danger\" aria-label=\"Revoke key {label}\">Revoke</button></form>",
                        id = esc(k.id.as_str()),
                        label = esc(&prefix),
                    ),
                ),
            };
            body.push_str(&format!(
                "<tr id=\"{id}\"><td data-label=\"Key\"><code>{prefix}</code></td><td data-label=\"Mode\">{mode}</td>\
                 <td data-label=\"Created\">{created}</td><td data-label=\"Last used\">{used}</td>\
                 <td data-label=\"Status\"><div>{status}</div></td><td data-label=\"Actions\">{action}</td></tr>",
                id = esc(k.id.as_str()),
                prefix = esc(&prefix),
                mode = k.mode.as_str(),
                created = when(k.created_at),
                used = k.last_used_at.map_or("never".to_string(), when),
            ));
        }
        body.push_str("</tbody></table></div>");
    }
    Ok(page("API keys", Some(chrome(s, "/dashboard")), &body))
}

/// The API's base URL as the browser reached it (the advertised URL when configured).
fn base_url(state: &AppState, headers: &HeaderMap) -> String {
    if let Some(url) = &state.config.advertise_url {
        return url.clone();
    }
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    format!("http://{host}")
}

/// `GET /dashboard`: the API keys.
pub async fn keys(
    State(state): State<AppState>,
    s: Session,
    headers: HeaderMap,
) -> Result<Response, DashError> {
    // A key just created (post/redirect/get): its secret, sealed for this session, comes
    // in a cookie this answer clears — a reload shows the list without it.
    let sealed = auth::cookie(&headers, NEW_KEY_COOKIE);
    let created = match (&sealed, auth::cookie(&headers, auth::SESSION_COOKIE)) {
        (Some(sealed), Some(session)) => open_new_key(&session, sealed, now_ms()),
        _ => None,
    };
    let page = keys_page(
        &state,
        &s,
        &headers,
        created
            .as_ref()
            .map(|(id, secret)| (id.as_str(), secret.as_str())),
    )
    .await?;
    let mut res = page.into_response();
    if sealed.is_some() {
        res.headers_mut().append(
            axum::http::header::SET_COOKIE,
            auth::set_cookie(&state, &headers, NEW_KEY_COOKIE, "", 0),
        );
    }
    Ok(res)
}

/// `POST /dashboard/keys`: a new key; redirects (303) to `/dashboard`, which shows its
/// secret this once (see [`keys`]): reloading that page never mints a second key.
pub async fn create_key(
    State(state): State<AppState>,
    s: Session,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    check_session_post(&s, &headers, &form)?;
    let mode = match form.get("mode").map(String::as_str) {
        Some("testnet") | None => Mode::Testnet,
        Some("mainnet") if state.mainnet.is_some() => Mode::Mainnet,
        Some("mainnet") => {
            return Err(DashError::Form(
                "Mainnet keys are disabled until this server has a mainnet network.".into(),
            ));
        }
        Some(_) => return Err(DashError::Form("Choose testnet or mainnet.".into())),
    };
    let session = auth::cookie(&headers, auth::SESSION_COOKIE).ok_or(DashError::SignedOut)?;
    let now = now_ms();
    let (key, secret) = state
        .store
        .api_keys()
        .create(&s.0.account_id, mode, now)
        .await?;
    let sealed = seal_new_key(&session, key.id.as_str(), &secret, now + 60_000);
    let mut res = Redirect::to("/dashboard").into_response();
    res.headers_mut().append(
        axum::http::header::SET_COOKIE,
        auth::set_cookie(&state, &headers, NEW_KEY_COOKIE, &sealed, 60),
    );
    Ok(res)
}

/// `POST /dashboard/keys/{id}/revoke`
pub async fn revoke_key(
    State(state): State<AppState>,
    s: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    check_session_post(&s, &headers, &form)?;
    let missing = || DashError::Form("No such key in this account.".into());
    // What is not a key's id names no key of this account.
    let id = ApiKeyId::parse(&id).ok_or_else(missing)?;
    match state
        .store
        .api_keys()
        .revoke_of_account(&s.0.account_id, &id, now_ms())
        .await
    {
        Ok(()) => Ok(Redirect::to("/dashboard").into_response()),
        Err(openrail_store::StoreError::NotFound) => Err(missing()),
        Err(e) => Err(e.into()),
    }
}

// ------------------------------------------------------------------ settings

/// The settings page: the business name payers see, with `error` (what to fix, and the
/// value sent) or a saved notice on top.
async fn settings_page(
    state: &AppState,
    s: &Session,
    saved: bool,
    error: Option<(&str, &str)>,
) -> Result<Response, DashError> {
    let account = state.store.accounts().get(&s.0.account_id).await?;
    let value = match error {
        Some((_, sent)) => sent.to_string(),
        None => account.business_name.clone().unwrap_or_default(),
    };
    let notice = match (error, saved) {
        (Some((msg, _)), _) => format!(
            "<div class=\"notice bad\" role=\"alert\" id=\"settings-error\">{}</div>",
            esc(msg)
        ),
        (None, true) => "<div class=\"notice ok\" role=\"status\">Saved.</div>".to_string(),
        (None, false) => String::new(),
    };
    let shown = super::consent::who_asks(&account);
    let body = format!(
        r#"<h1>Settings</h1>{notice}
<h2>Business name</h2>
<p class="lead">Payers see this name on the page where they authorize your mandates and payments,
marked as unverified: Openrail does not verify business names yet. Your sign-in email is never shown to them.</p>
<form class="stack" method="post" action="/dashboard/settings">{csrf}
<div><label for="business_name">Business name</label>
<input id="business_name" name="business_name" type="text" autocomplete="organization" maxlength="{max}" aria-describedby="bn-now" value="{value}">
<p id="bn-now" class="lead">Payers now read: {shown}. Leave it empty to show no name.</p></div>
<div><button type="submit">Save</button></div>
</form>
<h2>Sign-in</h2><p>You sign in as <code>{email}</code>.</p>"#,
        csrf = csrf_field(&s.0.csrf_token),
        max = super::auth::MAX_BUSINESS_NAME_CHARS,
        value = esc(&value),
        email = esc(&s.0.email),
    );
    let status = if error.is_some() {
        StatusCode::UNPROCESSABLE_ENTITY
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        page("Settings", Some(chrome(s, "/dashboard/settings")), &body),
    )
        .into_response())
}

/// `GET /dashboard/settings`
pub async fn settings(
    State(state): State<AppState>,
    s: Session,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, DashError> {
    settings_page(&state, &s, q.contains_key("saved"), None).await
}

/// `POST /dashboard/settings`: a new business name (empty: none), unverified.
pub async fn save_settings(
    State(state): State<AppState>,
    s: Session,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    check_session_post(&s, &headers, &form)?;
    let sent = form.get("business_name").map(String::as_str).unwrap_or("");
    match super::auth::business_name_of(sent) {
        Ok(name) => {
            state
                .store
                .accounts()
                .set_business_name(&s.0.account_id, name.as_deref())
                .await?;
            Ok(Redirect::to("/dashboard/settings?saved").into_response())
        }
        Err(msg) => settings_page(&state, &s, false, Some((&msg, sent))).await,
    }
}

// ------------------------------------------------------------------ what the integration did

/// Rows per page of every list.
pub(super) const PAGE: u32 = 20;

/// A string member of a JSON object (`""` when absent or not a string).
pub(super) fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    let mut cur = v;
    for p in path {
        cur = &cur[*p];
    }
    cur.as_str().unwrap_or("")
}

pub(super) fn status_cell(status: &str) -> String {
    format!(
        "<span class=\"status status-{s}\">{s}</span>",
        s = esc(status)
    )
}

/// A transaction hash with its block (as the journal knows it) and an explorer link when
/// a template is configured.
fn tx_cell(state: &AppState, tx: &str, blocks: &HashMap<String, u64>) -> String {
    if tx.is_empty() {
        return "<span class=\"empty\">not sent</span>".to_string();
    }
    let short = if tx.len() > 14 {
        format!("{}…{}", &tx[..10], &tx[tx.len() - 4..])
    } else {
        tx.to_string()
    };
    let hash = match &state.config.explorer_tx_url {
        Some(t) => format!(
            "<a href=\"{}\" class=\"mono\" title=\"{}\">{}</a>",
            esc(&t.replace("{tx}", tx)),
            esc(tx),
            esc(&short)
        ),
        None => format!("<code title=\"{}\">{}</code>", esc(tx), esc(&short)),
    };
    match blocks.get(tx) {
        Some(b) => format!("{hash}<br>block {b}"),
        None => format!("{hash}<br><span class=\"empty\">block pending</span>"),
    }
}

/// The blocks of the transactions (`onchain.tx_hash`) of `objects`, as the API shows them.
async fn blocks_of(state: &AppState, objects: &[Value]) -> Result<HashMap<String, u64>, DashError> {
    let Some(net) = &state.testnet else {
        return Ok(HashMap::new());
    };
    let hashes: Vec<&str> = objects
        .iter()
        .map(|v| text(v, &["onchain", "tx_hash"]))
        .filter(|t| !t.is_empty())
        .collect();
    Ok(state
        .store
        .dashboard()
        .tx_blocks(net.chain_id, &hashes)
        .await?)
}

/// The status filter and paging of a list page, from its query.
#[derive(Debug, Default)]
pub(super) struct ListQuery {
    pub(super) status: Option<String>,
    pub(super) after: Option<String>,
    pub(super) kind: Option<String>,
}

pub(super) fn list_query(q: &HashMap<String, String>) -> ListQuery {
    let nonempty = |k: &str| q.get(k).filter(|v| !v.is_empty()).cloned();
    ListQuery {
        status: nonempty("status"),
        after: nonempty("starting_after"),
        kind: nonempty("type"),
    }
}

/// The objects and `has_more` of a `/v1` list handler's answer.
pub(super) async fn list_of(res: Response) -> Result<(Vec<Value>, bool), DashError> {
    let (_, mut list) = super::json_of(res).await?;
    let data = match list["data"].take() {
        Value::Array(a) => a,
        _ => Vec::new(),
    };
    Ok((data, list["has_more"].as_bool().unwrap_or(false)))
}

/// The `/v1` list query of a page: its size and cursor.
pub(super) fn api_query(q: &ListQuery) -> HashMap<String, String> {
    let mut query = HashMap::from([("limit".to_string(), PAGE.to_string())]);
    if let Some(a) = &q.after {
        query.insert("starting_after".into(), a.clone());
    }
    query
}

/// A status filter form over `statuses`.
fn filter_form(
    path: &str,
    name: &str,
    label: &str,
    options: &[&str],
    chosen: Option<&str>,
) -> String {
    let mut opts = "<option value=\"\">All</option>".to_string();
    for o in options {
        let sel = if Some(*o) == chosen { " selected" } else { "" };
        opts.push_str(&format!(
            "<option value=\"{o}\"{sel}>{o}</option>",
            o = esc(o)
        ));
    }
    format!(
        "<form class=\"row\" method=\"get\" action=\"{path}\"><div><label for=\"filter-{name}\">{label}</label>\
         <select id=\"filter-{name}\" name=\"{name}\">{opts}</select></div><button type=\"submit\" class=\"secondary\">Filter</button></form>"
    )
}

/// The table of a list page: `headers`, rows of (id, cells already HTML), and the pager.
fn table(
    caption: &str,
    headers: &[&str],
    rows: &[(String, Vec<String>)],
    next: Option<String>,
    first: Option<String>,
) -> String {
    if rows.is_empty() {
        return "<p class=\"empty\">Nothing here yet.</p>".to_string();
    }
    let mut out = format!(
        "<div class=\"table-wrap\"><table class=\"stack\"><caption class=\"skip\">{}</caption><thead><tr>",
        esc(caption)
    );
    for h in headers {
        out.push_str(&format!("<th scope=\"col\">{h}</th>"));
    }
    out.push_str("</tr></thead><tbody>");
    for (id, cells) in rows {
        out.push_str(&format!("<tr id=\"{}\">", esc(id)));
        for (h, c) in headers.iter().zip(cells) {
            out.push_str(&format!("<td data-label=\"{h}\"><div>{c}</div></td>"));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div><nav class=\"pager\" aria-label=\"Pages\">");
    if let Some(f) = first {
        out.push_str(&format!("<a href=\"{}\">Newest</a>", esc(&f)));
    }
    if let Some(n) = next {
        out.push_str(&format!("<a href=\"{}\">Older</a>", esc(&n)));
    }
    out.push_str("</nav>");
    out
}

/// The links of the pager: `path` with the filter, and `starting_after` the last row.
fn pager(
    path: &str,
    q: &ListQuery,
    filter_name: &str,
    last: Option<&str>,
    has_more: bool,
) -> (Option<String>, Option<String>) {
    let filter = match (filter_name, &q.status, &q.kind) {
        ("status", Some(s), _) | ("type", _, Some(s)) => {
            format!("{filter_name}={}&", super::html::url_component(s))
        }
        _ => String::new(),
    };
    let next = last.filter(|_| has_more).map(|l| {
        format!(
            "{path}?{filter}starting_after={}",
            super::html::url_component(l)
        )
    });
    let first = q
        .after
        .as_ref()
        .map(|_| match filter.trim_end_matches('&') {
            "" => path.to_string(),
            f => format!("{path}?{f}"),
        });
    (next, first)
}

fn unknown_status(what: &str) -> DashError {
    DashError::Form(format!("Unknown {what} status."))
}

pub(super) fn cursor_error(e: openrail_store::StoreError) -> DashError {
    match e {
        openrail_store::StoreError::UnknownCursor => {
            DashError::Form("That page no longer exists: start from the newest.".into())
        }
        other => other.into(),
    }
}

/// A query's filter value parsed with `parse` (`None`: no filter); an unknown one is the
/// form's error, naming `what`.
fn filter_of<T>(
    value: Option<&str>,
    parse: impl Fn(&str) -> Option<T>,
    what: &str,
) -> Result<Option<T>, DashError> {
    value
        .map(|v| parse(v).ok_or_else(|| unknown_status(what)))
        .transpose()
}

/// The frame every list page shares: its heading (already HTML), an optional filter, the
/// table of its rows and the pager.
pub(super) struct ListPage<'a> {
    /// The page's path: the filter's and the pager's links.
    pub(super) path: &'a str,
    /// The navigation entry it sits under.
    pub(super) nav: &'a str,
    /// The document's title.
    pub(super) title: &'a str,
    /// What comes before the filter and the table (HTML).
    pub(super) heading: String,
    /// The filter: query parameter (`status` or `type`), label, and its options.
    pub(super) filter: Option<(&'a str, &'a str, Vec<&'a str>)>,
    /// The table's caption (for screen readers) and column headers.
    pub(super) caption: &'a str,
    pub(super) columns: &'a [&'a str],
}

impl ListPage<'_> {
    /// The page of `rows` (id, cells already HTML) for query `q`, with an older link when
    /// the list `has_more`.
    pub(super) fn render(
        &self,
        s: &Session,
        q: &ListQuery,
        rows: &[(String, Vec<String>)],
        has_more: bool,
    ) -> Html<String> {
        let name = self.filter.as_ref().map_or("", |f| f.0);
        let last = rows.last().map(|r| r.0.as_str());
        let (next, first) = pager(self.path, q, name, last, has_more);
        let filter = match &self.filter {
            Some((name, label, options)) => {
                let chosen = if *name == "type" { &q.kind } else { &q.status };
                filter_form(self.path, name, label, options, chosen.as_deref())
            }
            None => String::new(),
        };
        let body = format!(
            "{}{filter}{}",
            self.heading,
            table(self.caption, self.columns, rows, next, first)
        );
        page(self.title, Some(chrome(s, self.nav)), &body)
    }
}

/// `GET /dashboard/mandates`: status, this epoch's spend as a bar, cancel, the consent link.
pub async fn mandates(
    State(state): State<AppState>,
    s: Session,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, DashError> {
    use openrail_store::agentic::MandateStatus;
    let q = list_query(&q);
    let status = filter_of(q.status.as_deref(), MandateStatus::parse, "mandate")?;
    let p = principal(&s);
    let page_ = state
        .store
        .mandates()
        .list_in(p.scope(), status, PAGE, q.after.as_deref())
        .await
        .map_err(cursor_error)?;
    let mut views = Vec::new();
    for m in &page_.data {
        views.push(
            serde_json::to_value(crate::agentic::render_mandate(&state, m).await?)
                .unwrap_or_default(),
        );
    }
    let blocks = blocks_of(&state, &views).await?;
    let csrf = csrf_field(&s.0.csrf_token);
    let rows: Vec<(String, Vec<String>)> = views
        .iter()
        .map(|v| {
            let id = text(v, &["id"]).to_string();
            let cur = text(v, &["currency"]);
            let max: f64 = text(v, &["max_amount"]).parse().unwrap_or(0.0);
            let spent_s = text(v, &["current_epoch", "spent"]);
            let spent: f64 = spent_s.parse().unwrap_or(0.0);
            let pct = if max > 0.0 { (spent / max * 100.0).clamp(0.0, 100.0) } else { 0.0 };
            // In steps of 5 % through a class (the pages' policy allows no inline style);
            // anything spent shows at least one step.
            let step = (0..=100u32).step_by(5).find(|s| f64::from(*s) >= pct).unwrap_or(100);
            let bar = format!(
                "<div class=\"bar\" role=\"meter\" aria-valuemin=\"0\" aria-valuemax=\"{max}\" aria-valuenow=\"{spent}\" \
                 aria-label=\"Spent this epoch\"><span class=\"w{step}\"></span></div>\
                 {spent_s} of {max_s} {cur} spent, {left} left<br><span class=\"empty\">until {ends}</span>",
                spent_s = esc(spent_s),
                max_s = esc(text(v, &["max_amount"])),
                cur = esc(cur),
                left = esc(text(v, &["current_epoch", "remaining"])),
                ends = esc(text(v, &["current_epoch", "ends_at"])),
            );
            let st = text(v, &["status"]);
            let action = match st {
                "active" | "pending" => format!(
                    "<form class=\"inline\" method=\"post\" action=\"/dashboard/mandates/{id}/cancel\">{csrf}\
                     <button type=\"submit\" class=\"danger\" aria-label=\"Cancel mandate {id}\">Cancel</button></form>",
                    id = esc(&id)
                ),
                "requires_authorization" => format!(
                    "<a href=\"/authorize/{id}\">Payer's consent link</a>",
                    id = esc(&id)
                ),
                _ => String::new(),
            };
            let cells = vec![
                format!(
                    "<code>{}</code><br>{}{}",
                    esc(&id),
                    esc(v["purpose"].as_str().unwrap_or("")),
                    requirements_line(&v["requirements"])
                ),
                format!("<code>{}</code>", esc(text(v, &["payer_account_id"]))),
                format!(
                    "{} {} {}",
                    esc(text(v, &["max_amount"])),
                    esc(cur),
                    esc(text(v, &["interval"]))
                ),
                bar,
                status_cell(st),
                tx_cell(&state, text(v, &["onchain", "tx_hash"]), &blocks),
                action,
            ];
            (id, cells)
        })
        .collect();
    Ok(ListPage {
        path: "/dashboard/mandates",
        nav: "/dashboard/mandates",
        title: "Mandates",
        heading: "<h1>Mandates</h1><p class=\"lead\">What payers allowed, and how much of this epoch's allowance is spent.</p>".into(),
        filter: Some(("status", "Status", MandateStatus::ALL.iter().map(|s| s.as_str()).collect())),
        caption: "Mandates",
        columns: &["Mandate", "Payer", "Limit", "This epoch", "Status", "On chain", "Actions"],
    }
    .render(&s, &q, &rows, page_.has_more))
}

/// A `/v1` handler's result as a response (its problem when it refused).
pub(super) fn answered(r: Result<Response, crate::error::ApiError>) -> Response {
    r.unwrap_or_else(IntoResponse::into_response)
}

/// A `/v1` handler's answer as the dashboard's result: the redirect back on success, the
/// API's problem otherwise.
pub(super) async fn after_action(res: Response, back: &str) -> Result<Response, DashError> {
    if res.status().is_success() {
        return Ok(Redirect::to(back).into_response());
    }
    let (status, body) = super::json_of(res).await?;
    let detail = text(&body, &["detail"]).to_string();
    let title = text(&body, &["title"]).to_string();
    let html = page(
        "Not done",
        None,
        &format!(
            "<h1>{}</h1><p role=\"alert\">{}</p><p><a href=\"{}\">Back</a></p>",
            esc(&title),
            esc(&detail),
            esc(back)
        ),
    );
    Ok((status, html).into_response())
}

/// One `/v1` action on object `id` (cancel, revoke) for the signed-in account, then back
/// to `back` (or the API's problem).
pub(super) async fn on_object<F, Fut>(
    state: &AppState,
    s: &Session,
    id: String,
    back: &str,
    handler: F,
) -> Result<Response, DashError>
where
    F: FnOnce(State<AppState>, axum::Extension<Principal>, HeaderMap, Path<String>) -> Fut,
    Fut: std::future::Future<Output = Result<Response, crate::error::ApiError>>,
{
    let res = handler(
        State(state.clone()),
        axum::Extension(principal(s)),
        HeaderMap::new(),
        Path(id),
    )
    .await;
    after_action(answered(res), back).await
}

/// `POST /dashboard/mandates/{id}/cancel`: the API's cancel, for this account.
pub async fn cancel_mandate(
    State(state): State<AppState>,
    s: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    check_session_post(&s, &headers, &form)?;
    on_object(
        &state,
        &s,
        id,
        "/dashboard/mandates",
        crate::agentic::cancel_mandate,
    )
    .await
}

/// `POST /dashboard/payments/{id}/cancel`: the API's cancel (a payment still waiting for
/// its payer), for this account.
pub async fn cancel_payment(
    State(state): State<AppState>,
    s: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    check_session_post(&s, &headers, &form)?;
    on_object(
        &state,
        &s,
        id,
        "/dashboard/payments",
        crate::payments::cancel_payment,
    )
    .await
}

/// `GET /dashboard/session-keys`: keys, their epoch's use, revoke.
pub async fn session_keys(
    State(state): State<AppState>,
    s: Session,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, DashError> {
    use openrail_store::agentic::KeyFilter;
    let lq = list_query(&q);
    let status = filter_of(lq.status.as_deref(), KeyFilter::parse, "session key")?;
    let p = principal(&s);
    let page_ = state
        .store
        .keys()
        .list_in(p.scope(), None, status, now_ms(), PAGE, lq.after.as_deref())
        .await
        .map_err(cursor_error)?;
    let mut data = Vec::new();
    for k in &page_.data {
        let m = state.store.mandates().get(p.scope(), &k.mandate_id).await?;
        data.push(
            serde_json::to_value(crate::agentic::render_key(&state, k, &m).await?)
                .unwrap_or_default(),
        );
    }
    let has_more = page_.has_more;
    let blocks = blocks_of(&state, &data).await?;
    let csrf = csrf_field(&s.0.csrf_token);
    let rows: Vec<(String, Vec<String>)> = data
        .iter()
        .map(|v| {
            let id = text(v, &["id"]).to_string();
            let st = text(v, &["status"]);
            let action = if matches!(st, "active" | "pending") {
                format!(
                    "<form class=\"inline\" method=\"post\" action=\"/dashboard/session-keys/{id}/revoke\">{csrf}\
                     <button type=\"submit\" class=\"danger\" aria-label=\"Revoke session key {id}\">Revoke</button></form>",
                    id = esc(&id)
                )
            } else {
                String::new()
            };
            let cells = vec![
                format!("<code>{}</code>", esc(&id)),
                format!("<code>{}</code>", esc(text(v, &["mandate_id"]))),
                format!(
                    "{} of {} {} spent",
                    esc(text(v, &["current_epoch", "spent"])),
                    esc(v["max_amount"].as_str().unwrap_or("the mandate's limit")),
                    esc(text(v, &["currency"]))
                ),
                esc(text(v, &["expires_at"])),
                status_cell(st),
                tx_cell(&state, text(v, &["onchain", "tx_hash"]), &blocks),
                action,
            ];
            (id, cells)
        })
        .collect();
    Ok(ListPage {
        path: "/dashboard/session-keys",
        nav: "/dashboard/session-keys",
        title: "Session keys",
        heading: "<h1>Session keys</h1><p class=\"lead\">The keys your agents pull with.</p>"
            .into(),
        filter: Some((
            "status",
            "Status",
            KeyFilter::ALL.iter().map(|s| s.as_str()).collect(),
        )),
        caption: "Session keys",
        columns: &[
            "Key",
            "Mandate",
            "This epoch",
            "Expires",
            "Status",
            "On chain",
            "Actions",
        ],
    }
    .render(&s, &lq, &rows, has_more))
}

/// `POST /dashboard/session-keys/{id}/revoke`: the API's revoke.
pub async fn revoke_session_key(
    State(state): State<AppState>,
    s: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    check_session_post(&s, &headers, &form)?;
    on_object(
        &state,
        &s,
        id,
        "/dashboard/session-keys",
        crate::agentic::revoke_session_key,
    )
    .await
}

/// `GET /dashboard/pulls`
pub async fn pulls(
    State(state): State<AppState>,
    s: Session,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, DashError> {
    use openrail_store::agentic::PullStatus;
    let q = list_query(&q);
    let status = filter_of(q.status.as_deref(), PullStatus::parse, "pull")?;
    let p = principal(&s);
    let page_ = state
        .store
        .pulls()
        .list_in(p.scope(), None, status, PAGE, q.after.as_deref())
        .await
        .map_err(cursor_error)?;
    let chain_id = state.testnet.as_ref().map_or(0, |n| n.chain_id);
    let views: Vec<Value> = page_
        .data
        .iter()
        .map(|x| serde_json::to_value(crate::agentic::views::pull(x, chain_id)).unwrap_or_default())
        .collect();
    let blocks = blocks_of(&state, &views).await?;
    let rows: Vec<(String, Vec<String>)> = views
        .iter()
        .map(|v| {
            let id = text(v, &["id"]).to_string();
            let reason = [text(v, &["decline_code"]), text(v, &["failure_reason"])]
                .into_iter()
                .filter(|r| !r.is_empty())
                .map(esc)
                .collect::<Vec<_>>()
                .join(" ");
            let cells = vec![
                format!(
                    "<code>{}</code><br>{}",
                    esc(&id),
                    esc(v["description"].as_str().unwrap_or(""))
                ),
                format!(
                    "{} {}",
                    esc(text(v, &["amount"])),
                    esc(text(v, &["currency"]))
                ),
                format!("<code>{}</code>", esc(text(v, &["session_key_id"]))),
                format!("<code>{}</code>", esc(text(v, &["destination"]))),
                format!("{} {reason}", status_cell(text(v, &["status"]))),
                esc(text(v, &["created_at"])),
                tx_cell(&state, text(v, &["onchain", "tx_hash"]), &blocks),
            ];
            (id, cells)
        })
        .collect();
    Ok(ListPage {
        path: "/dashboard/pulls",
        nav: "/dashboard/pulls",
        title: "Pulls",
        heading:
            "<h1>Pulls</h1><p class=\"lead\">Debit pulls your agents made against session keys.</p>"
                .into(),
        filter: Some((
            "status",
            "Status",
            PullStatus::ALL.iter().map(|s| s.as_str()).collect(),
        )),
        caption: "Pulls",
        columns: &[
            "Pull",
            "Amount",
            "Session key",
            "Destination",
            "Status",
            "Created",
            "On chain",
        ],
    }
    .render(&s, &q, &rows, page_.has_more))
}

/// `GET /dashboard/payments`
pub async fn payments(
    State(state): State<AppState>,
    s: Session,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, DashError> {
    use openrail_store::payments::PaymentStatus;
    let q = list_query(&q);
    let status = filter_of(q.status.as_deref(), PaymentStatus::parse, "payment")?;
    let p = principal(&s);
    let page_ = state
        .store
        .payments()
        .list_in(p.scope(), status, PAGE, q.after.as_deref())
        .await
        .map_err(cursor_error)?;
    let mut views = Vec::new();
    for x in &page_.data {
        views.push(
            serde_json::to_value(crate::payments::render(&state, x).await?).unwrap_or_default(),
        );
    }
    let blocks = blocks_of(&state, &views).await?;
    let csrf = csrf_field(&s.0.csrf_token);
    let rows: Vec<(String, Vec<String>)> = views
        .iter()
        .map(|v| {
            let id = text(v, &["id"]).to_string();
            let st = text(v, &["status"]);
            let consent = if st == "requires_authorization" {
                format!(
                    "<br><a href=\"/authorize/{id}\">Payer's consent link</a>\
                     <form class=\"inline\" method=\"post\" action=\"/dashboard/payments/{id}/cancel\">{csrf}\
                     <button type=\"submit\" class=\"danger\" aria-label=\"Withdraw payment {id}\">Withdraw</button></form>",
                    id = esc(&id)
                )
            } else {
                String::new()
            };
            let cells = vec![
                format!("<code>{}</code>", esc(&id)),
                format!(
                    "{} {}",
                    esc(text(v, &["amount"])),
                    esc(text(v, &["currency"]))
                ),
                format!(
                    "{} <code>{}</code>",
                    esc(text(v, &["source", "type"])),
                    esc(text(v, &["source", "id"]))
                ),
                format!(
                    "{} <code>{}</code>",
                    esc(text(v, &["destination", "type"])),
                    esc(text(v, &["destination", "address"]))
                ),
                format!(
                    "{} {}{consent}",
                    status_cell(st),
                    esc(v["failure_reason"].as_str().unwrap_or(""))
                ),
                esc(text(v, &["created_at"])),
                tx_cell(&state, text(v, &["onchain", "tx_hash"]), &blocks),
            ];
            (id, cells)
        })
        .collect();
    Ok(ListPage {
        path: "/dashboard/payments",
        nav: "/dashboard/payments",
        title: "Payments",
        heading: "<h1>Payments</h1><p class=\"lead\">One-time payments between wallets and bank accounts.</p>".into(),
        filter: Some(("status", "Status", PaymentStatus::ALL.iter().map(|s| s.as_str()).collect())),
        caption: "Payments",
        columns: &["Payment", "Amount", "From", "To", "Status", "Created", "On chain"],
    }
    .render(&s, &q, &rows, page_.has_more))
}

/// Calls a `/v1` create handler in-process with `body` as its JSON request.
pub(super) fn fields_of(body: &Value) -> Result<crate::body::Fields, DashError> {
    Ok(crate::body::Fields::parse(axum::body::Bytes::from(
        body.to_string(),
    ))?)
}

/// `GET /dashboard/bank-accounts`: simulated bank accounts, and the form that makes one.
pub async fn bank_accounts(
    State(state): State<AppState>,
    s: Session,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, DashError> {
    let q = list_query(&q);
    let p = principal(&s);
    let page_ = state
        .store
        .bank()
        .list_accounts(p.scope(), PAGE, q.after.as_deref())
        .await
        .map_err(cursor_error)?;
    let rows: Vec<(String, Vec<String>)> = page_
        .data
        .iter()
        .map(|a| {
            let v = serde_json::to_value(crate::bank::account_view(a, &[])).unwrap_or_default();
            let id = text(&v, &["id"]).to_string();
            let cells = vec![
                format!("<code>{}</code>", esc(&id)),
                esc(text(&v, &["owner_name"])),
                format!(
                    "{} {}",
                    esc(text(&v, &["balance"])),
                    esc(text(&v, &["currency"]))
                ),
                format!(
                    "{} {}",
                    esc(text(&v, &["available_balance"])),
                    esc(text(&v, &["currency"]))
                ),
                format!("{}, {} s", esc(text(&v, &["behavior"])), v["delay_seconds"]),
                esc(text(&v, &["created_at"])),
            ];
            (id, cells)
        })
        .collect();
    let behaviors: String = openrail_store::bank::Behavior::ALL
        .iter()
        .map(|b| format!("<option value=\"{b}\">{b}</option>", b = b.as_str()))
        .collect();
    let heading = format!(
        r#"<h1>Bank accounts</h1><p class="lead">Simulated bank accounts (testnet): pay from them or to them, and choose how their transfers behave.</p>
<h2>Create a simulated bank account</h2>
<form class="row" method="post" action="/dashboard/bank-accounts">{csrf}
<div><label for="owner_name">Holder's name</label><input id="owner_name" name="owner_name" required maxlength="200"></div>
<div><label for="currency">Currency</label><select id="currency" name="currency"><option>USD</option><option>EUR</option></select></div>
<div><label for="balance">Starting balance</label><input id="balance" name="balance" inputmode="decimal" value="1000.00"></div>
<div><label for="behavior">Behaviour</label><select id="behavior" name="behavior">{behaviors}</select></div>
<div><label for="delay_seconds">Delay (seconds)</label><input id="delay_seconds" name="delay_seconds" type="number" min="0" max="3600" value="2"></div>
<button type="submit">Create</button></form>
<h2>Your bank accounts</h2>"#,
        csrf = csrf_field(&s.0.csrf_token),
    );
    Ok(ListPage {
        path: "/dashboard/bank-accounts",
        nav: "/dashboard/bank-accounts",
        title: "Bank accounts",
        heading,
        filter: None,
        caption: "Bank accounts",
        columns: &[
            "Account",
            "Holder",
            "Balance",
            "Available",
            "Behaviour",
            "Created",
        ],
    }
    .render(&s, &q, &rows, page_.has_more))
}

/// `POST /dashboard/bank-accounts`: the API's create.
pub async fn create_bank_account(
    State(state): State<AppState>,
    s: Session,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    check_session_post(&s, &headers, &form)?;
    let mut body = serde_json::Map::new();
    for k in ["owner_name", "currency", "balance", "behavior"] {
        if let Some(v) = form.get(k).filter(|v| !v.is_empty()) {
            body.insert(k.into(), Value::String(v.clone()));
        }
    }
    if let Some(d) = form.get("delay_seconds").filter(|v| !v.is_empty()) {
        let d: u64 = d
            .parse()
            .map_err(|_| DashError::Form("The delay is a whole number of seconds.".into()))?;
        body.insert("delay_seconds".into(), Value::from(d));
    }
    let res = answered(
        crate::bank::create_bank_account(
            State(state.clone()),
            axum::Extension(principal(&s)),
            fields_of(&Value::Object(body))?,
        )
        .await,
    );
    after_action(res, "/dashboard/bank-accounts").await
}

/// `GET /dashboard/events`: the account's events, filtered by type, with redelivery.
pub async fn events(
    State(state): State<AppState>,
    s: Session,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, DashError> {
    let lq = list_query(&q);
    let mut query = api_query(&lq);
    if let Some(t) = &lq.kind {
        query.insert("type".into(), t.clone());
    }
    let res = crate::events::list_events(
        State(state.clone()),
        axum::Extension(principal(&s)),
        Query(query),
    )
    .await?;
    let (data, has_more) = list_of(res).await?;
    let csrf = csrf_field(&s.0.csrf_token);
    let rows: Vec<(String, Vec<String>)> = data
        .iter()
        .map(|v| {
            let id = text(v, &["id"]).to_string();
            let object = &v["data"]["object"];
            let cells = vec![
                format!("<code>{}</code>", esc(&id)),
                esc(text(v, &["type"])),
                format!(
                    "<code>{}</code> {}",
                    esc(text(object, &["id"])),
                    status_cell(text(object, &["status"]))
                ),
                esc(text(v, &["created_at"])),
                format!(
                    "<form class=\"inline\" method=\"post\" action=\"/dashboard/events/{id}/redeliver\">{csrf}\
                     <button type=\"submit\" class=\"secondary\" aria-label=\"Redeliver event {id} to every endpoint\">Redeliver</button></form>",
                    id = esc(&id)
                ),
            ];
            (id, cells)
        })
        .collect();
    Ok(ListPage {
        path: "/dashboard/events",
        nav: "/dashboard/events",
        title: "Events",
        heading: "<h1>Events</h1><p class=\"lead\">Every change of your objects, newest first, as webhooks deliver them.</p>".into(),
        filter: Some((
            "type",
            "Type",
            openrail_store::events::EventType::all().into_iter().map(|t| t.as_str()).collect(),
        )),
        caption: "Events",
        columns: &["Event", "Type", "Object", "Created", "Actions"],
    }
    .render(&s, &lq, &rows, has_more))
}

/// `POST /dashboard/events/{id}/redeliver`: the API's redelivery (to every endpoint, or
/// the one named).
pub async fn redeliver_event(
    State(state): State<AppState>,
    s: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    check_session_post(&s, &headers, &form)?;
    let mut body = serde_json::Map::new();
    let back = match form.get("endpoint_id").filter(|v| !v.is_empty()) {
        Some(e) => {
            body.insert("endpoint_id".into(), Value::String(e.clone()));
            format!("/dashboard/webhooks/{}", super::html::url_component(e))
        }
        None => "/dashboard/events".to_string(),
    };
    let res = answered(
        crate::webhooks::redeliver_event(
            State(state.clone()),
            axum::Extension(principal(&s)),
            Path(id),
            fields_of(&Value::Object(body))?,
        )
        .await,
    );
    after_action(res, &back).await
}

/// `GET /dashboard/webhooks`: endpoints, and the form that makes one.
pub async fn webhooks(
    State(state): State<AppState>,
    s: Session,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, DashError> {
    let lq = list_query(&q);
    let query = api_query(&lq);
    let res = crate::webhooks::list_webhook_endpoints(
        State(state.clone()),
        axum::Extension(principal(&s)),
        Query(query),
    )
    .await?;
    let (data, has_more) = list_of(res).await?;
    let rows: Vec<(String, Vec<String>)> = data
        .iter()
        .map(|v| {
            let id = text(v, &["id"]).to_string();
            let events: Vec<String> = v["enabled_events"]
                .as_array()
                .map(|a| a.iter().filter_map(|e| e.as_str()).map(esc).collect())
                .unwrap_or_default();
            let cells = vec![
                format!(
                    "<a href=\"/dashboard/webhooks/{id}\"><code>{id}</code></a>",
                    id = esc(&id)
                ),
                format!("<code>{}</code>", esc(text(v, &["url"]))),
                events.join(", "),
                status_cell(text(v, &["status"])),
                esc(text(v, &["created_at"])),
            ];
            (id, cells)
        })
        .collect();
    let heading = format!(
        r#"<h1>Webhooks</h1><p class="lead">Endpoints that receive your events, signed (Standard Webhooks).</p>
<h2>Add an endpoint</h2>
<form class="row" method="post" action="/dashboard/webhooks">{csrf}
<div><label for="url">URL</label><input id="url" name="url" type="url" required placeholder="https://example.com/webhooks"></div>
<div><label for="enabled_events">Event types</label><input id="enabled_events" name="enabled_events" value="*" aria-describedby="events-hint"></div>
<button type="submit">Add endpoint</button></form>
<p id="events-hint" class="lead">Comma-separated types (for example <code>debit_pull.authorized, mandate.activated</code>), or <code>*</code> for every type.</p>
<h2>Your endpoints</h2>"#,
        csrf = csrf_field(&s.0.csrf_token),
    );
    Ok(ListPage {
        path: "/dashboard/webhooks",
        nav: "/dashboard/webhooks",
        title: "Webhooks",
        heading,
        filter: None,
        caption: "Webhook endpoints",
        columns: &["Endpoint", "URL", "Events", "Status", "Created"],
    }
    .render(&s, &lq, &rows, has_more))
}

/// `POST /dashboard/webhooks`: the API's create; its signing secret is shown once.
pub async fn create_webhook(
    State(state): State<AppState>,
    s: Session,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    check_session_post(&s, &headers, &form)?;
    let events: Vec<Value> = form
        .get("enabled_events")
        .map(String::as_str)
        .unwrap_or("*")
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|e| Value::String(e.to_string()))
        .collect();
    let body = serde_json::json!({
        "url": form.get("url").cloned().unwrap_or_default(),
        "enabled_events": events,
    });
    let res = answered(
        crate::webhooks::create_webhook_endpoint(
            State(state.clone()),
            axum::Extension(principal(&s)),
            fields_of(&body)?,
        )
        .await,
    );
    if !res.status().is_success() {
        return after_action(res, "/dashboard/webhooks").await;
    }
    let (_, v) = super::json_of(res).await?;
    let id = text(&v, &["id"]);
    let body = format!(
        r#"<h1>Endpoint added</h1><div class="notice ok" role="status"><p>Endpoint <code>{id}</code> receives events at <code>{url}</code>.</p>
<p>Its signing secret, shown only this once:</p><div class="secret"><code id="new-secret">{secret}</code>
<button type="button" class="secondary" data-copy="new-secret">Copy</button></div><p id="new-secret-status" aria-live="polite"></p></div>
<p><a href="/dashboard/webhooks/{id}">Its deliveries</a> · <a href="/dashboard/webhooks">All endpoints</a></p>"#,
        id = esc(id),
        url = esc(text(&v, &["url"])),
        secret = esc(text(&v, &["secret"])),
    );
    let mut res = (
        StatusCode::CREATED,
        page(
            "Endpoint added",
            Some(chrome(&s, "/dashboard/webhooks")),
            &body,
        ),
    )
        .into_response();
    res.headers_mut().insert(
        axum::http::header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    Ok(res)
}

/// `GET /dashboard/webhooks/{id}`: an endpoint's deliveries, each redeliverable.
pub async fn webhook_deliveries(
    State(state): State<AppState>,
    s: Session,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, DashError> {
    let lq = list_query(&q);
    let query = api_query(&lq);
    let res = crate::webhooks::list_webhook_deliveries(
        State(state.clone()),
        axum::Extension(principal(&s)),
        Path(id.clone()),
        Query(query),
    )
    .await?;
    let (data, has_more) = list_of(res).await?;
    let csrf = csrf_field(&s.0.csrf_token);
    let rows: Vec<(String, Vec<String>)> = data
        .iter()
        .map(|v| {
            let did = text(v, &["id"]).to_string();
            let event = text(v, &["event_id"]);
            let cells = vec![
                format!("<code>{}</code>", esc(&did)),
                format!("<code>{}</code>", esc(event)),
                status_cell(text(v, &["status"])),
                format!(
                    "{} attempt(s){}{}",
                    v["attempts"].as_i64().unwrap_or(0),
                    v["last_status_code"]
                        .as_i64()
                        .map(|c| format!(", last answer HTTP {c}"))
                        .unwrap_or_default(),
                    v["last_error"]
                        .as_str()
                        .map(|e| format!(", {}", esc(e)))
                        .unwrap_or_default()
                ),
                esc(text(v, &["created_at"])),
                format!(
                    "<form class=\"inline\" method=\"post\" action=\"/dashboard/events/{event}/redeliver\">{csrf}\
                     <input type=\"hidden\" name=\"endpoint_id\" value=\"{endpoint}\">\
                     <button type=\"submit\" class=\"secondary\" aria-label=\"Redeliver event {event}\">Redeliver</button></form>",
                    event = esc(event),
                    endpoint = esc(&id),
                ),
            ];
            (did, cells)
        })
        .collect();
    let path = format!("/dashboard/webhooks/{}", super::html::url_component(&id));
    Ok(ListPage {
        path: &path,
        nav: "/dashboard/webhooks",
        title: "Deliveries",
        heading: format!(
            "<h1>Deliveries of <code>{}</code></h1><p><a href=\"/dashboard/webhooks\">All endpoints</a></p>",
            esc(&id)
        ),
        filter: None,
        caption: "Deliveries",
        columns: &["Delivery", "Event", "Status", "Attempts", "Created", "Actions"],
    }
    .render(&s, &lq, &rows, has_more))
}

/// A mandate's identity requirements, one line under its id (empty when it has none).
fn requirements_line(r: &serde_json::Value) -> String {
    let mut parts = Vec::new();
    if let Some(k) = r["payer"].as_str() {
        parts.push(format!("payer: {}", esc(k)));
    }
    if let Some(k) = r["agent"].as_str() {
        parts.push(format!("agent: {}", esc(k)));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "<br><span class=\"empty\">requires {}</span>",
        parts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pager_keeps_the_filter_and_follows_the_last_row() {
        let q = ListQuery {
            status: Some("active".into()),
            after: None,
            kind: None,
        };
        let (next, first) = pager("/dashboard/mandates", &q, "status", Some("man_x"), true);
        assert_eq!(
            next.as_deref(),
            Some("/dashboard/mandates?status=active&starting_after=man_x")
        );
        assert_eq!(first, None, "the first page has no link to itself");
        let (next, _) = pager("/dashboard/mandates", &q, "status", Some("man_x"), false);
        assert_eq!(next, None, "the last page has no older link");
        let q = ListQuery {
            status: None,
            after: Some("ba_y".into()),
            kind: None,
        };
        let (next, first) = pager("/dashboard/bank-accounts", &q, "", Some("ba z"), true);
        assert_eq!(
            next.as_deref(),
            Some("/dashboard/bank-accounts?starting_after=ba%20z")
        );
        assert_eq!(first.as_deref(), Some("/dashboard/bank-accounts"));
    }

    #[test]
    fn times_read_as_utc_minutes() {
        assert_eq!(when(0), "1970-01-01 00:00 UTC");
        assert_eq!(when(1_795_622_400_000), "2026-11-25 16:00 UTC");
    }
}
