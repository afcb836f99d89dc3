//! The hosted payer-consent page, `/authorize/{man_…|pay_…}`: the link a developer sends to
//! the payer of a wallet mandate or payment. It states the terms in words, connects an
//! EIP-1193 wallet, asks it for `eth_signTypedData_v4` of the typed data the API shows in
//! `authorization.typed_data`, and posts the signature back here, which hands it to the
//! same handler as `POST /v1/mandates/{id}/authorize` (or `/v1/payments/{id}/authorize`),
//! called in-process for the object's account — the same checks, the same service call,
//! the same answer. No session: the signature is the payer's whole consent, checked
//! before anything is sent (and again on chain), so anyone holding the link can at most
//! deliver the payer's own signature. A post whose `Origin` names another host is refused.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use openrail_domain::{AccountId, MandateId, PaymentId};
use openrail_store::accounts::Account;
use openrail_store::{StoreError, now_ms};
use serde_json::Value;

use super::html::{esc, page};
use super::{DashError, json_of};
use crate::AppState;
use crate::body::Fields;
use crate::context::Principal;
use crate::error::ApiError;
use crate::types::refused_in_text;

const JS: &str = include_str!("../../assets/dashboard/consent.js");

/// `GET /assets/consent.js`
pub async fn js() -> Response {
    super::html::script(JS)
}

/// What a consent link names: a mandate or a payment, with the caller it belongs to.
enum Subject {
    Mandate(MandateId, Principal),
    Payment(PaymentId, Principal),
}

fn owner(account_id: AccountId, mode: openrail_store::Mode) -> Principal {
    Principal::Dashboard { account_id, mode }
}

/// The object `id` names, or 404.
async fn subject(state: &AppState, id: &str) -> Result<Subject, DashError> {
    let missing = || {
        DashError::Api(ApiError::ResourceMissing {
            kind: "authorization link",
            id: id.to_string(),
        })
    };
    let found = if let Some(mid) = MandateId::parse(id) {
        state
            .store
            .mandates()
            .get_unscoped(&mid)
            .await
            .map(|m| Subject::Mandate(mid, owner(m.account_id, m.mode)))
    } else if let Some(pid) = PaymentId::parse(id) {
        state
            .store
            .payments()
            .get_unscoped(&pid)
            .await
            .map(|p| Subject::Payment(pid, owner(p.account_id, p.mode)))
    } else {
        return Err(missing());
    };
    match found {
        Ok(s) => Ok(s),
        Err(StoreError::NotFound) => Err(missing()),
        Err(e) => Err(e.into()),
    }
}

/// The object as `GET /v1/…/{id}` shows it to its owner.
async fn object(state: &AppState, s: &Subject) -> Result<Value, DashError> {
    let res = match s {
        Subject::Mandate(id, p) => {
            crate::agentic::get_mandate(
                State(state.clone()),
                axum::Extension(p.clone()),
                Path(id.to_string()),
            )
            .await?
        }
        Subject::Payment(id, p) => {
            crate::payments::get_payment(
                State(state.clone()),
                axum::Extension(p.clone()),
                Path(id.to_string()),
            )
            .await?
        }
    };
    Ok(json_of(res).await?.1)
}

fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    let mut cur = v;
    for p in path {
        cur = &cur[*p];
    }
    cur.as_str().unwrap_or("")
}

/// "per day" for `daily`, …
fn per(interval: &str) -> &'static str {
    match interval {
        "daily" => "per day",
        "weekly" => "per week",
        "monthly" => "per month",
        "yearly" => "per year",
        _ => "per period",
    }
}

/// When a mandate's ceiling starts again: the calendar boundary of its interval, in UTC
/// (the contract's epochs, `store::epoch`).
fn boundary(interval: &str) -> &'static str {
    match interval {
        "daily" => "every day at 00:00 UTC",
        "weekly" => "every Monday at 00:00 UTC",
        "monthly" => "on the 1st of every month at 00:00 UTC",
        "yearly" => "every 1 January at 00:00 UTC",
        _ => "at the start of every period (UTC)",
    }
}

/// What a mandate requires of identity, as a payer reads it (HTML).
fn identity_html(r: &serde_json::Value) -> String {
    let kind = |k: &str| match k {
        "personhood" => "a personhood credential (one human)",
        "financial_health" => "a financial-health credential",
        "agent" => "an agent credential",
        _ => "a credential",
    };
    let mut parts = Vec::new();
    if let Some(k) = r["payer"].as_str() {
        parts.push(format!("you (the payer) must hold {}", kind(k)));
    }
    if let Some(k) = r["agent"].as_str() {
        parts.push(format!("every key's agent must hold {}", kind(k)));
    }
    if parts.is_empty() {
        return "None required.".into();
    }
    format!(
        "While {}, attested by <code>{}</code> and recorded on chain, pulls can happen; once one \
         is revoked or expires the contract refuses every pull. <span class=\"empty\">(part of what \
         you sign)</span>",
        parts.join(" and "),
        esc(r["attester"].as_str().unwrap_or(""))
    )
}

/// The payees of a mandate as a payer reads them (HTML): each address, the account's
/// settlement wallet (`settlement`) named as such.
fn payees_html(payees: &[String], settlement: Option<&str>) -> String {
    if payees.is_empty() {
        return "Any address (a bank-account payer)".into();
    }
    let items: Vec<String> = payees
        .iter()
        .map(|p| {
            if settlement.is_some_and(|s| s.eq_ignore_ascii_case(p)) {
                format!(
                    "<li><code>{}</code> (Openrail's settlement wallet, which pays the business)</li>",
                    esc(p)
                )
            } else {
                format!("<li><code>{}</code></li>", esc(p))
            }
        })
        .collect();
    format!("<ul class=\"payees\">{}</ul>", items.join(""))
}

/// Who asks, as a payer reads it (HTML): the account's business name, marked unverified
/// until Openrail verified it, or a neutral phrase when it gave none. Never the account's
/// sign-in email, nor its operator-given name.
pub fn who_asks(account: &Account) -> String {
    match (&account.business_name, account.business_verified) {
        (Some(name), false) => format!(
            "<strong class=\"who\">{}</strong> <span class=\"unverified\">(unverified business name)</span>",
            esc(&plain(name))
        ),
        (Some(name), true) => format!(
            "<strong class=\"who\">{}</strong> <span class=\"verified\">(business name verified by Openrail)</span>",
            esc(&plain(name))
        ),
        (None, _) => {
            "<strong class=\"who\">An unverified business (no name given)</strong>".to_string()
        }
    }
}

/// `s` with every control or bidirectional formatting character (refused by the API's
/// free text, but perhaps stored before that rule) shown as U+FFFD.
fn plain(s: &str) -> String {
    s.chars()
        .map(|c| if refused_in_text(c) { '\u{FFFD}' } else { c })
        .collect()
}

/// Why a link offers nothing to sign, when it offers nothing.
enum Closed {
    /// The authorization's deadline passed before the payer signed.
    Expired,
    /// The developer withdrew the request before the payer signed (canceled unsigned).
    Withdrawn,
}

/// `GET /authorize/{id}`: the terms, the wallet buttons, or the outcome.
pub async fn page_of(state: &AppState, id: &str) -> Result<Response, DashError> {
    let s = subject(state, id).await?;
    let v = object(state, &s).await?;
    let (account_id, object_id) = match &s {
        Subject::Mandate(m, p) => (p.account_id().clone(), m.to_string()),
        Subject::Payment(pay, p) => (p.account_id().clone(), pay.to_string()),
    };
    let who = who_asks(&state.store.accounts().get(&account_id).await?);
    let status = text(&v, &["status"]);
    let method = text(&v, &["authorization", "method"]);
    let signer = text(&v, &["authorization", "signer"]);
    let expires = text(&v, &["authorization", "expires_at"]);
    let auth = if method == "payer_signature" {
        state.store.consent().get(&object_id).await?
    } else {
        None
    };
    let unsigned = auth.as_ref().is_some_and(|a| a.signature.is_none());
    let closed = match status {
        "requires_authorization"
            if auth.as_ref().is_some_and(|a| {
                openrail_engine::consent::not_expired(a.deadline, now_ms()).is_err()
            }) =>
        {
            Some(Closed::Expired)
        }
        "canceled" if unsigned => Some(Closed::Withdrawn),
        _ => None,
    };
    let awaiting = status == "requires_authorization" && closed.is_none();
    let (kind, title, sentence, terms, cancel) = match &s {
        Subject::Mandate(..) => {
            let amount = format!("{} {}", text(&v, &["max_amount"]), text(&v, &["currency"]));
            let interval = text(&v, &["interval"]);
            let per = per(interval);
            let purpose = v["purpose"].as_str().map(plain);
            let payer = text(&v, &["payer_account_id"]);
            let settlement = match &s {
                Subject::Mandate(_, p) => crate::agentic::network(state, p)
                    .ok()
                    .map(|n| n.default_destination.to_checksum(None)),
                Subject::Payment(..) => None,
            };
            let payees: Vec<String> = v["payees"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|p| p.as_str())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let payee_list = payees_html(&payees, settlement.as_deref());
            let agent = v["agent"].as_str();
            let sentence = format!(
                "{who} asks to take up to <strong>{amount} {per}</strong> from your wallet <code>{payer}</code>, \
                 paid only to {to}{purpose}, until you cancel.",
                amount = esc(&amount),
                payer = esc(payer),
                to = if payees.len() == 1 {
                    format!("<code>{}</code>", esc(&payees[0]))
                } else {
                    format!("the {} addresses below", payees.len())
                },
                purpose = purpose
                    .as_deref()
                    .map(|p| format!(", for “{}”", esc(p)))
                    .unwrap_or_default(),
            );
            let terms = format!(
                "<dt>Who</dt><dd>{who}</dd><dt>Up to</dt><dd>{amount} {per}</dd>\
                 <dt>When it resets</dt><dd id=\"epoch-truth\">The allowance is counted per calendar {period} in UTC and starts \
                 again {boundary}, not {window} after a payment. So up to twice the ceiling ({amount} just before \
                 the boundary and {amount} again just after it) can be taken within a short time around a boundary.</dd>\
                 <dt>Currency</dt><dd>{currency} (a test stablecoin on testnet)</dd>\
                 <dt>Paid to</dt><dd id=\"payees\">{payee_list} <span class=\"empty\">(part of what you sign: the contract refuses \
                 to pay anyone else, whoever asks)</span></dd>\
                 <dt>Agent</dt><dd id=\"agent\">{agent}</dd>\
                 <dt>Identity</dt><dd id=\"identity\">{identity}</dd>\
                 <dt>Purpose</dt><dd>{purpose} <span class=\"empty\">(written by the business and part of what you sign; \
                 not checked by Openrail)</span></dd>\
                 <dt>From</dt><dd><code>{payer}</code></dd>\
                 <dt>How long</dt><dd>Until you cancel it</dd>\
                 <dt>Who else can act</dt><dd id=\"keys\">Openrail's operator key sends the pulls: it can take at most the amount above, \
                 and only to the addresses above. The contract's owner can pause payments and replace the operator, but a new \
                 operator can act only two days after it is announced on chain, and is bound by the same terms.</dd>",
                agent = match agent {
                    Some(a) => format!(
                        "Only keys held by the agent <code>{}</code> can pull: each pull needs its signature.",
                        esc(a)
                    ),
                    None => "Not named: the business's keys may pull without an agent's signature."
                        .into(),
                },
                identity = identity_html(&v["requirements"]),
                amount = esc(&amount),
                period = per.trim_start_matches("per "),
                boundary = boundary(interval),
                window = match interval {
                    "daily" => "24 hours",
                    "weekly" => "7 days",
                    "monthly" => "a month",
                    "yearly" => "a year",
                    _ => "a full period",
                },
                currency = esc(text(&v, &["currency"])),
                purpose = esc(purpose.as_deref().unwrap_or("Not stated")),
                payer = esc(payer),
            );
            let cancel = format!(
                "You can end this mandate at any time, alone, on chain: from <code>{payer}</code>, call \
                 <code>cancelMandate({onchain})</code> on the contract <code>{contract}</code> \
                 (chain {chain}). No one else's permission is needed.",
                payer = esc(payer),
                onchain = esc(text(&v, &["onchain", "id"])),
                contract = esc(text(&v, &["onchain", "contract"])),
                chain = v["onchain"]["chain_id"],
            );
            ("mandate", "Authorize a mandate", sentence, terms, cancel)
        }
        Subject::Payment(..) => {
            let amount = format!("{} {}", text(&v, &["amount"]), text(&v, &["currency"]));
            let from = text(&v, &["source", "id"]);
            let to = text(&v, &["destination", "address"]);
            let sentence = format!(
                "{who} asks you to pay <strong>{amount}</strong> once from your wallet <code>{from}</code> to <code>{to}</code>.",
                amount = esc(&amount),
                from = esc(from),
                to = esc(to),
            );
            let terms = format!(
                "<dt>Who</dt><dd>{who}</dd><dt>Amount</dt><dd>{amount}, once</dd><dt>From</dt><dd><code>{from}</code></dd><dt>To</dt><dd><code>{to}</code></dd>",
                amount = esc(&amount),
                from = esc(from),
                to = esc(to),
            );
            let cancel = "A payment moves once. Until you sign, nothing moves; your signature can be used for this payment only, once.".to_string();
            ("payment", "Authorize a payment", sentence, terms, cancel)
        }
    };
    let notice = |class: &str, words: &str| {
        format!(
            "<div class=\"notice {class}\" role=\"status\" id=\"consent-result\"><strong>{words}</strong> Status: <span class=\"status status-{st}\">{st}</span>.</div>",
            st = esc(status),
        )
    };
    let action = if method != "payer_signature" {
        "<div class=\"notice\">This one needs no wallet signature: a bank account pays it.</div>"
            .to_string()
    } else if let Some(closed) = &closed {
        // Nothing to sign: no buttons, no typed data, no script.
        match closed {
            Closed::Expired => notice(
                "bad",
                &format!(
                    "This link has expired: it could be signed until {expires}, and that time has passed. \
                     There is nothing to sign here. If you still want this {kind}, ask the business for a new link.",
                    expires = esc(expires)
                ),
            ),
            Closed::Withdrawn => notice(
                "bad",
                &format!(
                    "This {kind} request was withdrawn by the business before it was signed. There is nothing to sign here, and nothing was taken."
                ),
            ),
        }
    } else if awaiting {
        let data = serde_json::json!({
            "id": id,
            "signer": signer,
            "typed_data": v["authorization"]["typed_data"],
        });
        // JSON inside <script>: `<` escaped so no text can close the element.
        let data = data.to_string().replace('<', "\\u003c");
        format!(
            r#"<p>Sign with the wallet <code>{signer}</code> before {expires}.</p>
<div class="row"><button type="button" id="connect">Connect wallet</button>
<button type="button" id="sign" disabled>Sign and authorize</button></div>
<p id="consent-status" role="status" aria-live="polite"></p>
<script type="application/json" id="consent-data">{data}</script>
<script src="/assets/consent.js" defer></script>"#,
            signer = esc(signer),
            expires = esc(expires),
        )
    } else {
        let (class, words) = match status {
            "active" | "succeeded" => ("ok", "Authorized: it is active on chain."),
            "pending" | "processing" => ("ok", "Authorized: the chain is confirming it."),
            "canceled" => ("bad", "This mandate was canceled."),
            "failed" => ("bad", "This failed; ask for a new link."),
            _ => ("", "See its status below."),
        };
        notice(class, words)
    };
    let (title, lead) = match &closed {
        Some(Closed::Expired) => ("This link has expired", "What was asked:".to_string()),
        Some(Closed::Withdrawn) => ("This request was withdrawn", "What was asked:".to_string()),
        None => (title, sentence),
    };
    // A closed link asks nothing: no advice on signing, nothing on chain to cancel later.
    let (trust, later) = if closed.is_some() {
        (String::new(), String::new())
    } else {
        (
            "<p class=\"lead\" id=\"who-note\">Openrail runs this page for the business; it has not verified who they are \
             unless it says so above. Sign only if you know them and expected this request.</p>"
                .to_string(),
            format!("<h2>Cancelling later</h2><p>{cancel}</p>"),
        )
    };
    let body = format!(
        r#"<div class="card"><h1>{title}</h1><p>{lead}</p>
<dl class="terms">{terms}</dl>{trust}
<h2>Your signature</h2>{action}
{later}</div>"#,
        title = esc(title),
    );
    Ok(page(title, None, &body).into_response())
}

/// `GET /authorize/{id}`
pub async fn show(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match page_of(&state, &id).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

/// `POST /authorize/{id}` with `{"signature": "0x…"}`: the API's authorize handler's
/// answer (the object, or a problem).
pub async fn submit(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !super::auth::same_origin(&headers) {
        return ApiError::Forbidden("cross-site authorization posts are refused".into())
            .into_response();
    }
    let answer = async {
        let s = subject(&state, &id).await.map_err(|e| match e {
            DashError::Api(a) => a,
            other => ApiError::Internal(other.to_string()),
        })?;
        let fields = Fields::parse(body)?;
        let no_prefer = HeaderMap::new();
        match s {
            Subject::Mandate(mid, p) => {
                crate::agentic::authorize_mandate(
                    State(state.clone()),
                    axum::Extension(p),
                    no_prefer,
                    Path(mid.to_string()),
                    fields,
                )
                .await
            }
            Subject::Payment(pid, p) => {
                crate::payments::authorize_payment(
                    State(state.clone()),
                    axum::Extension(p),
                    no_prefer,
                    Path(pid.to_string()),
                    fields,
                )
                .await
            }
        }
    };
    match answer.await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}
