//! The identity pages, under one navigation entry (`/dashboard/identity`) with its own
//! sub-navigation: verification sessions (list; a session's page with its status timeline,
//! last error and issued credential; on testnet the form that starts one and the submit and
//! cancel buttons), attestations on the attestation chain (list; an attestation's page
//! with its uid, transaction and timeline; attest an issued credential in one click;
//! revoke) and the credentials this account issued. Sessions and attestations are read and
//! changed through the `/v1/identity` handlers, called in-process for the signed-in
//! account like the other pages; the issued credentials through the store's list (the API
//! has none).

use std::collections::HashMap;

use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{Html, IntoResponse, Redirect, Response};
use openrail_store::{Mode, now_ms};
use serde_json::{Value, json};

use super::DashError;
use super::auth::{Session, check_session_post};
use super::html::{csrf_field, esc, page, url_component};
use super::pages::{
    ListPage, PAGE, after_action, answered, api_query, chrome, cursor_error, fields_of, list_of,
    list_query, on_object, principal, status_cell, text, when,
};
use crate::AppState;

/// The navigation entry every identity page sits under.
const NAV: &str = "/dashboard/identity";
const VERIFICATIONS: &str = "/dashboard/identity/verifications";
const ATTESTATIONS: &str = "/dashboard/identity/attestations";
const CREDENTIALS: &str = "/dashboard/identity/credentials";

/// The identity pages, in their sub-navigation's order.
const SUBSECTIONS: &[(&str, &str)] = &[
    (VERIFICATIONS, "Verifications"),
    (ATTESTATIONS, "Attestations"),
    (CREDENTIALS, "Issued credentials"),
];

/// How often a page whose object waits for an answer (a session being checked, an
/// attestation on its way) reloads itself, ms.
const REFRESH_MS: u32 = 2000;

/// The sub-navigation, `current` marked.
fn subnav(current: &str) -> String {
    let items: String = SUBSECTIONS
        .iter()
        .map(|(path, name)| {
            let cur = if *path == current {
                " aria-current=\"page\""
            } else {
                ""
            };
            format!("<li><a href=\"{path}\"{cur}>{name}</a></li>")
        })
        .collect();
    format!("<nav class=\"subsections\" aria-label=\"Identity\"><ul>{items}</ul></nav>")
}

/// A signed-in identity page.
fn identity_page(s: &Session, title: &str, body: &str) -> Html<String> {
    page(title, Some(chrome(s, NAV)), body)
}

/// `GET /dashboard/identity`: its first page.
pub async fn index(_s: Session) -> Redirect {
    Redirect::to(VERIFICATIONS)
}

/// A `<dl>` of (term, HTML value) pairs; empty values are left out.
fn facts(rows: &[(&str, String)]) -> String {
    let mut out = String::from("<dl class=\"facts\">");
    for (term, value) in rows.iter().filter(|(_, v)| !v.is_empty()) {
        out.push_str(&format!("<dt>{term}</dt><dd>{value}</dd>"));
    }
    out.push_str("</dl>");
    out
}

/// `v` as escaped `<code>`, or nothing when empty.
fn code(v: &str) -> String {
    if v.is_empty() {
        String::new()
    } else {
        format!("<code>{}</code>", esc(v))
    }
}

/// A POST button of one object: the session's CSRF token, a visible `label`, an accessible
/// `aria` name; `confirm` asks first (the dashboard's script; without it the form posts).
fn action_form(
    csrf: &str,
    action: &str,
    label: &str,
    aria: &str,
    class: &str,
    confirm: Option<&str>,
) -> String {
    let confirm = confirm
        .map(|c| format!(" data-confirm=\"{}\"", esc(c)))
        .unwrap_or_default();
    format!(
        "<form class=\"inline\" method=\"post\" action=\"{action}\"{confirm}>{csrf}\
         <button type=\"submit\" class=\"{class}\" aria-label=\"{aria}\">{label}</button></form>",
        action = esc(action),
        csrf = csrf_field(csrf),
        aria = esc(aria),
    )
}

/// The status timeline of object `id`: its events, oldest first, each with the status its
/// snapshot shows and, for a failed check, the reason.
async fn timeline(state: &AppState, s: &Session, id: &str) -> Result<String, DashError> {
    let query = HashMap::from([
        ("object_id".to_string(), id.to_string()),
        ("limit".to_string(), "100".to_string()),
    ]);
    let res = crate::events::list_events(
        State(state.clone()),
        axum::Extension(principal(s)),
        Query(query),
    )
    .await?;
    let (mut events, _) = list_of(res).await?;
    events.reverse();
    if events.is_empty() {
        return Ok("<p class=\"empty\">No events yet.</p>".into());
    }
    let mut out = String::from("<ol class=\"timeline\">");
    for e in &events {
        let object = &e["data"]["object"];
        let reason = match text(object, &["last_error", "reason"]) {
            "" => String::new(),
            r if text(object, &["status"]) == "requires_input" => {
                format!(" — <span class=\"reason\">{}</span>", esc(r))
            }
            _ => String::new(),
        };
        out.push_str(&format!(
            "<li><span class=\"when\">{at}</span> {status} <code>{kind}</code>{reason}</li>",
            at = esc(text(e, &["created_at"])),
            status = status_cell(text(object, &["status"])),
            kind = esc(text(e, &["type"])),
        ));
    }
    out.push_str("</ol>");
    Ok(out)
}

/// A notice that the page reloads itself while its object waits (the dashboard's script
/// reads `data-refresh`), with a link to do it by hand.
fn waiting(path: &str, what: &str) -> String {
    format!(
        "<p class=\"notice\" role=\"status\" data-refresh=\"{REFRESH_MS}\">{what} \
         This page refreshes itself every {secs} seconds until then. \
         <a href=\"{path}\">Refresh now</a></p>",
        what = esc(what),
        secs = REFRESH_MS / 1000,
        path = esc(path),
    )
}

/// A created object's page (post/redirect/get): `{prefix}/{id}` of the handler's answer,
/// or the API's problem.
async fn to_created(res: Response, prefix: &str) -> Result<Response, DashError> {
    if !res.status().is_success() {
        return after_action(res, prefix).await;
    }
    let (_, v) = super::json_of(res).await?;
    Ok(Redirect::to(&format!("{prefix}/{}", url_component(text(&v, &["id"])))).into_response())
}

// ------------------------------------------------------------------ verification sessions

/// The form that starts a session (testnet: the simulated provider answers it).
fn verification_form(csrf: &str) -> String {
    use openrail_store::verifications::{Scenario, VerificationType};
    let types: String = VerificationType::ALL
        .iter()
        .map(|t| {
            format!(
                "<option value=\"{v}\">{v} ({c})</option>",
                v = t.as_str(),
                c = t.credential_type()
            )
        })
        .collect();
    let outcomes: String = Scenario::ALL
        .iter()
        .map(|o| {
            let said = match o {
                Scenario::Verified => "verified (about half a second)",
                Scenario::Failed => "failed (the first check fails; submit again to pass)",
                Scenario::Slow => "slow (verified after about five seconds)",
            };
            format!("<option value=\"{}\">{said}</option>", o.as_str())
        })
        .collect();
    format!(
        r#"<h2>Start a verification</h2>
<form class="row" method="post" action="{VERIFICATIONS}">{csrf}
<div><label for="type">Type</label><select id="type" name="type">{types}</select></div>
<div><label for="subject">Subject wallet</label><input id="subject" name="subject" required placeholder="0x…" autocomplete="off" spellcheck="false" maxlength="42"></div>
<div><label for="outcome">Simulated outcome</label><select id="outcome" name="outcome">{outcomes}</select></div>
<div><label for="failure_reason">Failure reason</label><input id="failure_reason" name="failure_reason" maxlength="500" aria-describedby="reason-hint"></div>
<button type="submit">Create session</button></form>
<p id="reason-hint" class="lead">Testnet's provider is simulated: the outcome says what it answers once you submit the session; the failure reason is what a failed check says (optional).</p>"#,
        csrf = csrf_field(csrf),
    )
}

/// The submit and cancel buttons of a session waiting for input.
fn session_actions(csrf: &str, id: &str) -> String {
    let base = format!("{VERIFICATIONS}/{}", url_component(id));
    format!(
        "{} {}",
        action_form(
            csrf,
            &format!("{base}/submit"),
            "Submit",
            &format!("Submit session {id}"),
            "",
            None
        ),
        action_form(
            csrf,
            &format!("{base}/cancel"),
            "Cancel",
            &format!("Cancel session {id}"),
            "danger",
            Some("Cancel this verification session? A canceled session cannot be submitted.")
        ),
    )
}

/// Whether this account can start sessions here: testnet only (mainnet has no provider).
fn sessions_startable(state: &AppState, s: &Session) -> bool {
    principal(s).mode() == Mode::Testnet && state.testnet.is_some()
}

/// `GET /dashboard/identity/verifications`
pub async fn verifications(
    State(state): State<AppState>,
    s: Session,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, DashError> {
    let lq = list_query(&q);
    let res = crate::verifications::list_verifications(
        State(state.clone()),
        axum::Extension(principal(&s)),
        Query(api_query(&lq)),
    )
    .await?;
    let (data, has_more) = list_of(res).await?;
    let csrf = &s.0.csrf_token;
    let rows: Vec<(String, Vec<String>)> = data
        .iter()
        .map(|v| {
            let id = text(v, &["id"]).to_string();
            let st = text(v, &["status"]);
            let error = match text(v, &["last_error", "reason"]) {
                "" => String::new(),
                r => format!("<br><span class=\"reason\">{}</span>", esc(r)),
            };
            let actions = if st == "requires_input" {
                session_actions(csrf, &id)
            } else {
                String::new()
            };
            let cells = vec![
                format!(
                    "<a href=\"{VERIFICATIONS}/{url}\"><code>{id}</code></a>",
                    url = url_component(&id),
                    id = esc(&id)
                ),
                format!(
                    "{}<br><span class=\"empty\">{}</span>",
                    esc(text(v, &["type"])),
                    esc(text(v, &["credential_type"]))
                ),
                code(text(v, &["subject"])),
                format!("{}{error}", status_cell(st)),
                esc(text(v, &["created_at"])),
                actions,
            ];
            (id, cells)
        })
        .collect();
    let form = if sessions_startable(&state, &s) {
        verification_form(csrf)
    } else {
        "<p class=\"lead\">Verification sessions need a provider: testnet's is simulated; mainnet has none yet.</p>".into()
    };
    let heading = format!(
        "{nav}<h1>Verifications</h1><p class=\"lead\">Sessions that check whether a wallet is a person, \
         is financially healthy or is an agent; a verified session issues the matching credential.</p>\
         {form}<h2>Your sessions</h2>",
        nav = subnav(VERIFICATIONS),
    );
    Ok(ListPage {
        path: VERIFICATIONS,
        nav: NAV,
        title: "Verifications",
        heading,
        filter: None,
        caption: "Verification sessions",
        columns: &["Session", "Type", "Subject", "Status", "Created", "Actions"],
    }
    .render(&s, &lq, &rows, has_more))
}

/// `POST /dashboard/identity/verifications`: the API's create; then the session's page.
pub async fn create_verification(
    State(state): State<AppState>,
    s: Session,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    check_session_post(&s, &headers, &form)?;
    let field = |k: &str| form.get(k).map(|v| v.trim()).unwrap_or("").to_string();
    let mut simulate = serde_json::Map::new();
    let outcome = field("outcome");
    if !outcome.is_empty() {
        simulate.insert("outcome".into(), Value::String(outcome));
    }
    let reason = field("failure_reason");
    if !reason.is_empty() {
        simulate.insert("failure_reason".into(), Value::String(reason));
    }
    let mut body = json!({ "type": field("type"), "subject": field("subject") });
    if !simulate.is_empty() {
        body["simulate"] = Value::Object(simulate);
    }
    let res = answered(
        crate::verifications::create_verification(
            State(state.clone()),
            axum::Extension(principal(&s)),
            HeaderMap::new(),
            fields_of(&body)?,
        )
        .await,
    );
    to_created(res, VERIFICATIONS).await
}

/// `GET /dashboard/identity/verifications/{id}`: the session, its timeline, its credential.
pub async fn verification(
    State(state): State<AppState>,
    s: Session,
    Path(id): Path<String>,
) -> Result<Html<String>, DashError> {
    let p = principal(&s);
    let res = crate::verifications::get_verification(
        State(state.clone()),
        axum::Extension(p.clone()),
        Path(id.clone()),
    )
    .await?;
    let (_, v) = super::json_of(res).await?;
    let id = text(&v, &["id"]).to_string();
    let path = format!("{VERIFICATIONS}/{}", url_component(&id));
    let csrf = &s.0.csrf_token;
    let st = text(&v, &["status"]);
    let last_error = match (
        text(&v, &["last_error", "code"]),
        text(&v, &["last_error", "reason"]),
    ) {
        ("", _) => String::new(),
        (c, r) => format!(
            "<code>{}</code>: <span class=\"reason\">{}</span>",
            esc(c),
            esc(r)
        ),
    };
    let simulated = match text(&v, &["simulate", "failure_reason"]) {
        "" => esc(text(&v, &["simulate", "outcome"])),
        r => format!(
            "{} (failure reason: {})",
            esc(text(&v, &["simulate", "outcome"])),
            esc(r)
        ),
    };
    let mut body = format!(
        "{nav}<p><a href=\"{VERIFICATIONS}\">All verifications</a></p><h1>Verification <code>{id}</code></h1>",
        nav = subnav(VERIFICATIONS),
        id = esc(&id),
    );
    match st {
        "processing" => body.push_str(&waiting(&path, "The provider is checking this session.")),
        "requires_input" if !last_error.is_empty() => body.push_str(&format!(
            "<div class=\"notice bad\" role=\"alert\">The last check failed: {last_error}. \
             Submit the session again to retry.</div>"
        )),
        _ => {}
    }
    body.push_str(&facts(&[
        ("Status", status_cell(st)),
        ("Type", esc(text(&v, &["type"]))),
        ("Credential type", esc(text(&v, &["credential_type"]))),
        ("Subject", code(text(&v, &["subject"]))),
        ("Simulated outcome", simulated),
        ("Last error", last_error),
        ("Created", esc(text(&v, &["created_at"]))),
    ]));
    if st == "requires_input" {
        body.push_str(&format!(
            "<div class=\"row\">{}</div>",
            session_actions(csrf, &id)
        ));
    }
    let credential_id = text(&v, &["credential_id"]);
    if st == "verified" && !credential_id.is_empty() {
        body.push_str(
            &issued_credential(&state, &s, &id, credential_id, text(&v, &["subject"])).await?,
        );
    }
    body.push_str("<h2>Timeline</h2>");
    body.push_str(&timeline(&state, &s, &id).await?);
    Ok(identity_page(&s, "Verification", &body))
}

/// A verified session's credential: its id and type, the signed JSON, its attestations
/// and the button that attests it.
async fn issued_credential(
    state: &AppState,
    s: &Session,
    session: &str,
    credential_id: &str,
    subject: &str,
) -> Result<String, DashError> {
    let p = principal(s);
    let res = crate::verifications::get_verification_credential(
        State(state.clone()),
        axum::Extension(p.clone()),
        Path(session.to_string()),
    )
    .await?;
    let (_, doc) = super::json_of(res).await?;
    let vc = &doc["verifiableCredential"];
    let pretty = serde_json::to_string_pretty(vc).unwrap_or_default();
    let ctype = vc["type"]
        .as_array()
        .and_then(|t| t.last())
        .and_then(Value::as_str)
        .unwrap_or("");
    // Its attestations: those about the subject that name this credential.
    let query = HashMap::from([
        ("subject".to_string(), subject.to_string()),
        ("limit".to_string(), "100".to_string()),
    ]);
    let res = crate::attestations::list_attestations(
        State(state.clone()),
        axum::Extension(p),
        Query(query),
    )
    .await?;
    let (atts, _) = list_of(res).await?;
    let links: Vec<String> = atts
        .iter()
        .filter(|a| text(a, &["credential_id"]) == credential_id)
        .map(|a| {
            let aid = text(a, &["id"]);
            format!(
                "<li><a href=\"{ATTESTATIONS}/{url}\"><code>{id}</code></a> {status}</li>",
                url = url_component(aid),
                id = esc(aid),
                status = status_cell(text(a, &["status"])),
            )
        })
        .collect();
    let attested = if links.is_empty() {
        "<p class=\"empty\">Not attested yet.</p>".to_string()
    } else {
        format!("<ul class=\"plain\">{}</ul>", links.join(""))
    };
    Ok(format!(
        "<h2>Issued credential</h2>{facts}\
         <details><summary>The signed credential (JSON)</summary><pre class=\"json\" tabindex=\"0\" aria-label=\"The signed credential\">{json}</pre></details>\
         <h3>Attestations</h3>{attested}{attest}",
        facts = facts(&[("Credential", code(credential_id)), ("Type", esc(ctype)),]),
        json = esc(&pretty),
        attest = attest_form(&s.0.csrf_token, credential_id),
    ))
}

/// The one-click attestation of credential `id` (issued by this account).
fn attest_form(csrf: &str, id: &str) -> String {
    format!(
        "<form class=\"inline\" method=\"post\" action=\"{ATTESTATIONS}\">{csrf}\
         <input type=\"hidden\" name=\"credential_id\" value=\"{id}\">\
         <button type=\"submit\" aria-label=\"Attest credential {id} on chain\">Attest on chain</button></form>",
        csrf = csrf_field(csrf),
        id = esc(id),
    )
}

/// `POST /dashboard/identity/verifications/{id}/submit`: the API's submit.
pub async fn submit_verification(
    State(state): State<AppState>,
    s: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    check_session_post(&s, &headers, &form)?;
    let back = format!("{VERIFICATIONS}/{}", url_component(&id));
    on_object(&state, &s, id, &back, |st, p, _, id| {
        crate::verifications::submit_verification(st, p, id)
    })
    .await
}

/// `POST /dashboard/identity/verifications/{id}/cancel`: the API's cancel.
pub async fn cancel_verification(
    State(state): State<AppState>,
    s: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    check_session_post(&s, &headers, &form)?;
    let back = format!("{VERIFICATIONS}/{}", url_component(&id));
    on_object(&state, &s, id, &back, |st, p, _, id| {
        crate::verifications::cancel_verification(st, p, id)
    })
    .await
}

// ------------------------------------------------------------------ attestations

/// A transaction on chain `chain_id`: its hash, shortened, and its block as the journal
/// knows it.
async fn tx_of(state: &AppState, chain_id: u64, tx: &str) -> Result<String, DashError> {
    if tx.is_empty() {
        return Ok("<span class=\"empty\">not sent</span>".into());
    }
    let blocks = state.store.dashboard().tx_blocks(chain_id, &[tx]).await?;
    let block = match blocks.get(tx) {
        Some(b) => format!("block {b}"),
        None => "<span class=\"empty\">block pending</span>".into(),
    };
    Ok(format!("{}<br>{block}", short_code(tx)))
}

/// A long hex value as `<code>` showing its ends, the whole in its title.
fn short_code(v: &str) -> String {
    if v.is_empty() {
        return "<span class=\"empty\">none yet</span>".into();
    }
    let short = if v.len() > 14 {
        format!("{}…{}", &v[..10], &v[v.len() - 4..])
    } else {
        v.to_string()
    };
    format!("<code title=\"{}\">{}</code>", esc(v), esc(&short))
}

/// The revoke button of an attestation that can still be revoked (pending or active).
fn revoke_form(csrf: &str, id: &str, status: &str) -> String {
    if !matches!(status, "active" | "pending") {
        return String::new();
    }
    action_form(
        csrf,
        &format!("{ATTESTATIONS}/{}/revoke", url_component(id)),
        "Revoke",
        &format!("Revoke attestation {id}"),
        "danger",
        Some("Revoke this attestation on chain? Revocation is final."),
    )
}

/// `GET /dashboard/identity/attestations`
pub async fn attestations(
    State(state): State<AppState>,
    s: Session,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, DashError> {
    let lq = list_query(&q);
    let res = crate::attestations::list_attestations(
        State(state.clone()),
        axum::Extension(principal(&s)),
        Query(api_query(&lq)),
    )
    .await?;
    let (data, has_more) = list_of(res).await?;
    let csrf = &s.0.csrf_token;
    let rows: Vec<(String, Vec<String>)> = data
        .iter()
        .map(|a| {
            let id = text(a, &["id"]).to_string();
            let st = text(a, &["status"]);
            let cells = vec![
                format!(
                    "<a href=\"{ATTESTATIONS}/{url}\"><code>{id}</code></a>",
                    url = url_component(&id),
                    id = esc(&id)
                ),
                status_cell(st),
                esc(text(a, &["credential_type"])),
                code(text(a, &["recipient"])),
                a["chain_id"]
                    .as_u64()
                    .map_or(String::new(), |c| c.to_string()),
                short_code(a["uid"].as_str().unwrap_or("")),
                short_code(a["tx_hash"].as_str().unwrap_or("")),
                esc(text(a, &["created_at"])),
                revoke_form(csrf, &id, st),
            ];
            (id, cells)
        })
        .collect();
    let heading = format!(
        "{nav}<h1>Attestations</h1><p class=\"lead\">Credentials attested on the attestation chain's \
         registry: the credential's digest, type, issuer and expiry, never its claims. An attestation \
         is <code>expired</code> once its credential's validity ended. Attest a credential from its \
         verification session or from <a href=\"{CREDENTIALS}\">Issued credentials</a>.</p>",
        nav = subnav(ATTESTATIONS),
    );
    Ok(ListPage {
        path: ATTESTATIONS,
        nav: NAV,
        title: "Attestations",
        heading,
        filter: None,
        caption: "Attestations",
        columns: &[
            "Attestation",
            "Status",
            "Type",
            "Recipient",
            "Chain",
            "UID",
            "Transaction",
            "Created",
            "Actions",
        ],
    }
    .render(&s, &lq, &rows, has_more))
}

/// `POST /dashboard/identity/attestations`: attests a credential this account issued
/// (`credential_id`) through the API; then the attestation's page.
pub async fn create_attestation(
    State(state): State<AppState>,
    s: Session,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    check_session_post(&s, &headers, &form)?;
    let body = json!({
        "credential_id": form.get("credential_id").cloned().unwrap_or_default(),
    });
    // Waits a little for the chain; a pending attestation's page refreshes itself.
    let mut prefer = HeaderMap::new();
    prefer.insert("prefer", HeaderValue::from_static("wait=5"));
    let res = answered(
        crate::attestations::create_attestation(
            State(state.clone()),
            axum::Extension(principal(&s)),
            prefer,
            fields_of(&body)?,
        )
        .await,
    );
    to_created(res, ATTESTATIONS).await
}

/// `GET /dashboard/identity/attestations/{id}`
pub async fn attestation(
    State(state): State<AppState>,
    s: Session,
    Path(id): Path<String>,
) -> Result<Html<String>, DashError> {
    let res = crate::attestations::get_attestation(
        State(state.clone()),
        axum::Extension(principal(&s)),
        Path(id.clone()),
    )
    .await?;
    let (_, a) = super::json_of(res).await?;
    let id = text(&a, &["id"]).to_string();
    let path = format!("{ATTESTATIONS}/{}", url_component(&id));
    let st = text(&a, &["status"]);
    let chain_id = a["chain_id"].as_u64().unwrap_or(0);
    let mut body = format!(
        "{nav}<p><a href=\"{ATTESTATIONS}\">All attestations</a></p><h1>Attestation <code>{id}</code></h1>",
        nav = subnav(ATTESTATIONS),
        id = esc(&id),
    );
    match st {
        "pending" => body.push_str(&waiting(
            &path,
            "Its transaction is on its way to the attestation chain.",
        )),
        "expired" => body.push_str(
            "<div class=\"notice\" role=\"status\">Its credential's validity ended: verifiers \
             no longer count it.</div>",
        ),
        _ => {}
    }
    let list = match (
        text(&a, &["status_list_credential"]),
        a["status_list_index"].as_u64(),
    ) {
        ("", _) => String::new(),
        (l, Some(i)) => format!("{} index {i}", code(l)),
        (l, None) => code(l),
    };
    body.push_str(&facts(&[
        ("Status", status_cell(st)),
        ("Recipient", code(text(&a, &["recipient"]))),
        ("Credential type", esc(text(&a, &["credential_type"]))),
        (
            "Credential",
            code(a["credential_id"].as_str().unwrap_or("")),
        ),
        ("Issuer", code(text(&a, &["issuer"]))),
        ("Credential digest", code(text(&a, &["credential_digest"]))),
        ("Expires", esc(a["expires_at"].as_str().unwrap_or("never"))),
        ("Status list", list),
        ("Chain", chain_id.to_string()),
        ("Registry", code(text(&a, &["registry"]))),
        ("Schema", code(text(&a, &["schema"]))),
        ("UID", code(a["uid"].as_str().unwrap_or(""))),
        (
            "Transaction",
            tx_of(&state, chain_id, a["tx_hash"].as_str().unwrap_or("")).await?,
        ),
        ("Revoked", esc(a["revoked_at"].as_str().unwrap_or(""))),
        ("Created", esc(text(&a, &["created_at"]))),
    ]));
    let revoke = revoke_form(&s.0.csrf_token, &id, st);
    if !revoke.is_empty() {
        body.push_str(&format!("<div class=\"row\">{revoke}</div>"));
    }
    body.push_str("<h2>Timeline</h2>");
    body.push_str(&timeline(&state, &s, &id).await?);
    Ok(identity_page(&s, "Attestation", &body))
}

/// `POST /dashboard/identity/attestations/{id}/revoke`: the API's revoke; then its page.
pub async fn revoke_attestation(
    State(state): State<AppState>,
    s: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, DashError> {
    check_session_post(&s, &headers, &form)?;
    let back = format!("{ATTESTATIONS}/{}", url_component(&id));
    on_object(&state, &s, id, &back, |st, p, _, id| {
        let mut prefer = HeaderMap::new();
        prefer.insert("prefer", HeaderValue::from_static("wait=5"));
        crate::attestations::revoke_attestation(st, p, prefer, id)
    })
    .await
}

// ------------------------------------------------------------------ issued credentials

/// `GET /dashboard/identity/credentials`: the credentials this account issued (through
/// `POST /v1/identity/credentials/issue` or a verified session), each attestable.
pub async fn credentials(
    State(state): State<AppState>,
    s: Session,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, DashError> {
    let lq = list_query(&q);
    let p = principal(&s);
    let page_ = state
        .store
        .identity()
        .list_issued_credentials(p.scope(), PAGE, lq.after.as_deref())
        .await
        .map_err(cursor_error)?;
    let now = now_ms();
    let csrf = &s.0.csrf_token;
    let rows: Vec<(String, Vec<String>)> = page_
        .data
        .iter()
        .map(|c| {
            let status = match (c.revoked_at, c.valid_until) {
                (Some(_), _) => "revoked",
                (None, Some(t)) if t <= now => "expired",
                (None, _) if c.digest.is_empty() => "signing",
                (None, _) => "active",
            };
            let action = if status == "active" {
                attest_form(csrf, &c.id)
            } else {
                String::new()
            };
            let cells = vec![
                code(&c.id),
                esc(&c.credential_type),
                code(c.subject.as_deref().unwrap_or("")),
                match c.revoked_at {
                    Some(at) => format!("{}<br>{}", status_cell(status), when(at)),
                    None => status_cell(status),
                },
                c.valid_until.map_or("no end".to_string(), when),
                when(c.created_at),
                action,
            ];
            (c.id.clone(), cells)
        })
        .collect();
    let heading = format!(
        "{nav}<h1>Issued credentials</h1><p class=\"lead\">Credentials Openrail issued for you as \
         this mode's issuer — by <code>POST /v1/identity/credentials/issue</code> or a verified \
         session. Openrail keeps their type, subject and revocation slot, never their claims.</p>",
        nav = subnav(CREDENTIALS),
    );
    Ok(ListPage {
        path: CREDENTIALS,
        nav: NAV,
        title: "Issued credentials",
        heading,
        filter: None,
        caption: "Issued credentials",
        columns: &[
            "Credential",
            "Type",
            "Subject",
            "Status",
            "Valid until",
            "Issued",
            "Actions",
        ],
    }
    .render(&s, &lq, &rows, page_.has_more))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subnavigation_marks_the_current_page_only() {
        let n = subnav(ATTESTATIONS);
        assert_eq!(n.matches("aria-current").count(), 1);
        assert!(n.contains(&format!(
            "<a href=\"{ATTESTATIONS}\" aria-current=\"page\">"
        )));
    }

    #[test]
    fn action_forms_escape_what_they_carry() {
        let f = action_form(
            "t\"",
            "/x?a=1&b",
            "Go",
            "Go <x>",
            "danger",
            Some("Sure \"?\""),
        );
        assert!(f.contains("value=\"t&quot;\""));
        assert!(f.contains("action=\"/x?a=1&amp;b\""));
        assert!(f.contains("aria-label=\"Go &lt;x&gt;\""));
        assert!(f.contains("data-confirm=\"Sure &quot;?&quot;\""));
        assert!(short_code("0x0123456789abcdef0123").contains("0x01234567…0123"));
    }
}
