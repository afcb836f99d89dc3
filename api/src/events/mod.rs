//! `GET /v1/events` and `GET /v1/events/{id}`: what happened to the account's objects,
//! newest first. Each event renders its object as it was at that moment (see
//! [`crate::represent`]).

pub mod types;

use std::collections::HashMap;

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use openrail_domain::EventId;
use openrail_store::events::{Event, EventFilter, EventType, ObjectKind, TypeFilter};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::AppState;
use crate::agentic::{missing, no_more_query, paging};
use crate::body::invalid;
use crate::context::Principal;
use crate::error::ApiError;
use crate::rfc3339::rfc3339_ms;
use crate::route::{LinkArg, Param, READ, Route, route, schema};

/// An event as the API shows it.
pub(crate) fn render(state: &AppState, e: &Event) -> Result<types::Event, ApiError> {
    Ok(types::Event {
        id: e.id.to_string(),
        object: types::EventTag,
        kind: e.kind.as_str(),
        livemode: e.mode.livemode(),
        created_at: rfc3339_ms(e.created_at),
        data: types::EventData {
            object: crate::ApiObject::of(state, &e.snapshot, e.created_at)?,
        },
    })
}

/// `type=`: one type, or every type of one object (`debit_pull.*`).
fn type_filter(v: &str) -> Result<TypeFilter, ApiError> {
    if let Some(t) = EventType::parse(v) {
        return Ok(TypeFilter::One(t));
    }
    let object = ObjectKind::ALL.iter().copied().find(|k| k.wildcard() == v);
    object
        .map(TypeFilter::Object)
        .ok_or_else(|| invalid("type", "must be an event type, or mandate.*, session_key.*, debit_pull.*, payment.*, bank_account.transfer.*, webhook_endpoint.*, identity.verification.* or identity.attestation.*"))
}

/// `created[gte]=`: unix seconds or RFC 3339, as unix ms.
fn created_gte(v: &str) -> Result<i64, ApiError> {
    if let Ok(s) = v.parse::<i64>() {
        return s
            .checked_mul(1000)
            .filter(|ms| *ms >= 0)
            .ok_or_else(|| invalid("created[gte]", "must be unix seconds or an RFC 3339 time"));
    }
    OffsetDateTime::parse(v, &Rfc3339)
        .ok()
        .and_then(|t| i64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok())
        .ok_or_else(|| invalid("created[gte]", "must be unix seconds or an RFC 3339 time"))
}

fn account_only(p: &Principal) -> Result<(), ApiError> {
    match p {
        Principal::Agent { .. } => Err(ApiError::Forbidden(
            "events are read with the account's API key, not a session key's secret".into(),
        )),
        Principal::Account(_) | Principal::Dashboard { .. } => Ok(()),
    }
}

/// This module's operations, in the order the document lists them (the router and the
/// document take every handler module's: [`crate::openapi::ROUTES`]).
pub const OPERATIONS: &[&Route] = &[&LIST_EVENTS, &GET_EVENT];

/// The operation [`list_events`] serves.
pub const LIST_EVENTS: Route = route!(get "/v1/events", "listEvents", list_events)
    .doc("List events", "Newest first. Every state change of the account's objects is one event, whose `data.object` is the object as a GET answered at that moment.")
    .ok(200, schema::<types::EventList>())
    .errors(READ)
    .query(&[Param::Limit, Param::StartingAfter, Param::EventType, Param::ObjectId, Param::CreatedGte])
    .links(&[
        ("GetEvent", GET_EVENT.id, LinkArg::Path("$response.body#/data/0/id")),
        ("RedeliverEvent", crate::webhooks::REDELIVER_EVENT.id, LinkArg::Path("$response.body#/data/0/id")),
    ]);

/// `GET /v1/events`
pub async fn list_events(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Query(mut q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    let (limit, after) = paging(&mut q)?;
    let kind = q.remove("type").map(|t| type_filter(&t)).transpose()?;
    let object_id = q.remove("object_id");
    let created = q
        .remove("created[gte]")
        .map(|c| created_gte(&c))
        .transpose()?;
    no_more_query(q)?;
    let filter = EventFilter {
        kind,
        object_id: object_id.as_deref(),
        created_gte: created,
    };
    let page = state
        .store
        .events()
        .list(p.scope(), filter, limit, after.as_deref())
        .await?;
    let data = page
        .data
        .iter()
        .map(|e| render(&state, e))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((
        StatusCode::OK,
        axum::Json(types::EventList::new(
            crate::types::ListTag,
            "/v1/events".into(),
            data,
            page.has_more,
        )),
    )
        .into_response())
}

/// The operation [`get_event`] serves.
pub const GET_EVENT: Route = route!(get "/v1/events/{id}", "getEvent", get_event)
    .doc("Retrieve an event", "")
    .ok(200, schema::<types::Event>())
    .errors(READ)
    .path_id("evt_");

/// `GET /v1/events/{id}`
pub async fn get_event(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    no_more_query(q)?;
    let id = crate::agentic::id_of("event", &id, EventId::parse)?;
    let e = state
        .store
        .events()
        .get(p.scope(), &id)
        .await
        .map_err(missing("event", id.as_str()))?;
    Ok((StatusCode::OK, axum::Json(render(&state, &e)?)).into_response())
}
