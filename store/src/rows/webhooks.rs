//! A webhook endpoint's row (what its events carry: never its secrets).

use super::corrupt;
use crate::db::StoreError;
use crate::exec::{Exec, Record, Stmt};
use crate::ids::Mode;
use openrail_domain::{AccountId, WebhookEndpointId};

string_enum!(
    /// Whether an endpoint receives deliveries.
    EndpointStatus {
        /// Deliveries are attempted.
        Enabled = "enabled",
        /// Nothing is sent (disabled by its owner, or after failing for too long).
        Disabled = "disabled",
    }
);

/// A webhook endpoint, without its secrets (also what its events carry).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WebhookEndpoint {
    /// `we_…`
    pub id: WebhookEndpointId,
    /// Owner.
    pub account_id: AccountId,
    /// The mode of the events it receives.
    pub mode: Mode,
    /// Where deliveries are POSTed.
    pub url: String,
    /// Free text.
    pub description: Option<String>,
    /// Event types delivered (stored as `["*"]` for all, or the types' names).
    pub enabled_events: openrail_domain::EnabledEvents,
    /// Enabled or disabled.
    pub status: EndpointStatus,
    /// Why it is disabled ([`DISABLED_FAILING`], or `null` when its owner disabled it).
    pub disabled_reason: Option<String>,
    /// Unix ms of the first failed attempt since the last success.
    pub failing_since: Option<i64>,
    /// Until when (unix ms) the secret before the last rotation still signs.
    pub previous_secret_expires_at: Option<i64>,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms.
    pub updated_at: i64,
}

pub(crate) const ENDPOINT_COLS: &str = "id, account_id, mode, url, description, enabled_events, status, \
     disabled_reason, failing_since, previous_secret_expires_at, created_at, updated_at";

pub(crate) fn endpoint_of(r: &impl Record) -> Result<WebhookEndpoint, StoreError> {
    let mode = r.string("mode")?;
    let status = r.string("status")?;
    let events = r.string("enabled_events")?;
    Ok(WebhookEndpoint {
        id: WebhookEndpointId::from_trusted(r.string("id")?),
        account_id: AccountId::from_trusted(r.string("account_id")?),
        mode: Mode::parse(&mode).ok_or_else(|| corrupt("mode", &mode))?,
        url: r.string("url")?,
        description: r.text("description")?,
        enabled_events: serde_json::from_str(&events)
            .map_err(|_| corrupt("enabled_events", &events))?,
        status: EndpointStatus::parse(&status).ok_or_else(|| corrupt("status", &status))?,
        disabled_reason: r.text("disabled_reason")?,
        failing_since: r.int("failing_since")?,
        previous_secret_expires_at: r.int("previous_secret_expires_at")?,
        created_at: r.integer("created_at")?,
        updated_at: r.integer("updated_at")?,
    })
}

/// Endpoint `id` as it is inside `conn`'s transaction (for its events' snapshots).
pub(crate) async fn endpoint_in(
    conn: &mut impl Exec,
    id: &WebhookEndpointId,
) -> Result<WebhookEndpoint, StoreError> {
    let mut q = Stmt::new(
        conn.backend(),
        format!("SELECT {ENDPOINT_COLS} FROM webhook_endpoints WHERE id = $1"),
    );
    q.push(id.as_str());
    let rows = conn.fetch(&q).await?;
    endpoint_of(rows.first().ok_or(StoreError::NotFound)?)
}

/// What a webhook endpoint's events hold: the row (never its secrets).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WebhookEndpointSnapshot {
    /// The row.
    pub webhook_endpoint: WebhookEndpoint,
}

impl WebhookEndpointSnapshot {
    /// Endpoint `id` as it is now inside `conn`'s transaction, with its owner and mode.
    pub(crate) async fn read_in(
        conn: &mut impl Exec,
        id: &str,
        _now: i64,
    ) -> Result<(Self, openrail_domain::AccountId, crate::ids::Mode), StoreError> {
        let id = WebhookEndpointId::parse(id).ok_or(StoreError::NotFound)?;
        let e = endpoint_in(conn, &id).await?;
        let (account, mode) = (e.account_id.clone(), e.mode);
        Ok((
            WebhookEndpointSnapshot {
                webhook_endpoint: e,
            },
            account,
            mode,
        ))
    }
}
