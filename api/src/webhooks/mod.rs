//! `/v1/webhook-endpoints` (where an account's events of one mode are delivered), their
//! deliveries, and `POST /v1/events/{id}/redeliver`. Delivery itself is the lease
//! holder's (`openrail-webhooks`); these handlers only read and write rows.

pub mod types;
mod views;

use std::collections::HashMap;
use std::time::Duration;

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use openrail_domain::{EventId, WebhookEndpointId};
use openrail_store::webhooks::{EnabledEvents, EndpointChange, WebhookEndpoint, new_secret};
use openrail_store::{Mode, now_ms};
use serde::Serialize;

use self::types::{RedeliverCreate, WebhookEndpointCreate, WebhookEndpointUpdate};
use crate::AppState;
use crate::agentic::{account_only, id_of, missing, no_more_query, paging};
use crate::body::{Fields, invalid};
use crate::context::{Principal, link_created};
use crate::delivery;
use crate::error::ApiError;
use crate::route::{LIST, LinkArg, READ, Route, WRITE, route, schema};
use crate::types::{RequestBody, Text};

/// How long the secret before a rotation keeps signing beside the new one.
pub const ROTATION_OVERLAP: Duration = Duration::from_secs(24 * 3600);

/// Most event types an endpoint may list.
const MAX_EVENT_TYPES: usize = 64;

type ApiResult = Result<Response, ApiError>;

fn json_response<T: Serialize>(status: StatusCode, v: T) -> Response {
    (status, axum::Json(v)).into_response()
}

/// `enabled_events`: `["*"]` or known event types (a repeated one counts once).
fn enabled_events(types: Vec<String>) -> Result<EnabledEvents, ApiError> {
    const P: &str = "enabled_events";
    if types.len() > MAX_EVENT_TYPES {
        return Err(invalid(P, "lists too many event types"));
    }
    EnabledEvents::parse(&types).map_err(|e| ApiError::ParameterInvalid {
        param: P.into(),
        detail: e.to_string(),
    })
}

/// The endpoint URL as stored: checked for `mode` under the process's webhook targets,
/// normalized (see [`delivery::check_url`]).
async fn checked_url(state: &AppState, mode: Mode, url: &str) -> Result<String, ApiError> {
    delivery::check_endpoint(state.config.webhook_targets, mode, url)
        .await
        .map(|u| u.to_string())
        .map_err(|e| match e {
            delivery::DeliveryError::UrlRefused(detail) => ApiError::WebhookUrlRefused { detail },
            delivery::DeliveryError::Store(e) => ApiError::Store(e),
            delivery::DeliveryError::BadSecret => ApiError::Internal(e.to_string()),
        })
}

/// This module's operations, in the order the document lists them (the router and the
/// document take every handler module's: [`crate::openapi::ROUTES`]).
pub const OPERATIONS: &[&Route] = &[
    &REDELIVER_EVENT,
    &CREATE_WEBHOOK_ENDPOINT,
    &LIST_WEBHOOK_ENDPOINTS,
    &GET_WEBHOOK_ENDPOINT,
    &UPDATE_WEBHOOK_ENDPOINT,
    &DELETE_WEBHOOK_ENDPOINT,
    &ROTATE_WEBHOOK_SECRET,
    &LIST_WEBHOOK_DELIVERIES,
];

/// The operation [`create_webhook_endpoint`] serves.
pub const CREATE_WEBHOOK_ENDPOINT: Route = route!(post "/v1/webhook-endpoints", "createWebhookEndpoint", create_webhook_endpoint)
    .doc("Create a webhook endpoint", "Answers its signing secret (`whsec_…`) once. Deliveries are signed as Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`) and retried over three days.")
    .body(schema::<types::WebhookEndpointCreate>())
    .ok(201, schema::<types::WebhookEndpoint>())
    .errors(WRITE)
    .links(&[
        ("GetWebhookEndpoint", GET_WEBHOOK_ENDPOINT.id, LinkArg::Id),
        ("UpdateWebhookEndpoint", UPDATE_WEBHOOK_ENDPOINT.id, LinkArg::Id),
        ("RotateWebhookSecret", ROTATE_WEBHOOK_SECRET.id, LinkArg::Id),
        ("ListWebhookDeliveries", LIST_WEBHOOK_DELIVERIES.id, LinkArg::Id),
        ("DeleteWebhookEndpoint", DELETE_WEBHOOK_ENDPOINT.id, LinkArg::Id),
    ]);

/// `POST /v1/webhook-endpoints`: the endpoint with its `secret`, shown this once.
pub async fn create_webhook_endpoint(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    fields: Fields,
) -> ApiResult {
    account_only(&p)?;
    let WebhookEndpointCreate {
        url,
        enabled_events: events,
        description,
    } = WebhookEndpointCreate::read(fields)?;
    let text = description.map(|Text(t)| t);
    let events = enabled_events(events)?;
    let url = checked_url(&state, p.mode(), &url).await?;
    let now = now_ms();
    let endpoint = WebhookEndpoint::new(p.account_id(), p.mode(), url, text, events, now);
    let secret = new_secret();
    link_created(&state, &format!("/v1/webhook-endpoints/{}", endpoint.id)).await?;
    state
        .store
        .webhooks()
        .create_endpoint(&endpoint, &secret)
        .await?;
    let mut v = views::webhook_endpoint(&endpoint);
    v.secret = Some(secret);
    Ok(json_response(StatusCode::CREATED, v))
}

/// The operation [`get_webhook_endpoint`] serves.
pub const GET_WEBHOOK_ENDPOINT: Route =
    route!(get "/v1/webhook-endpoints/{id}", "getWebhookEndpoint", get_webhook_endpoint)
        .doc("Retrieve a webhook endpoint", "")
        .ok(200, schema::<types::WebhookEndpoint>())
        .errors(READ)
        .path_id("we_");

/// `GET /v1/webhook-endpoints/{id}`
pub async fn get_webhook_endpoint(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
) -> ApiResult {
    account_only(&p)?;
    let id = id_of("webhook_endpoint", &id, WebhookEndpointId::parse)?;
    let e = state
        .store
        .webhooks()
        .endpoint(p.scope(), &id)
        .await
        .map_err(missing("webhook_endpoint", id.as_str()))?;
    Ok(json_response(StatusCode::OK, views::webhook_endpoint(&e)))
}

/// The operation [`list_webhook_endpoints`] serves.
pub const LIST_WEBHOOK_ENDPOINTS: Route =
    route!(get "/v1/webhook-endpoints", "listWebhookEndpoints", list_webhook_endpoints)
        .doc("List webhook endpoints", "Newest first.")
        .ok(200, schema::<types::WebhookEndpointList>())
        .errors(READ)
        .query(LIST);

/// `GET /v1/webhook-endpoints`
pub async fn list_webhook_endpoints(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Query(mut q): Query<HashMap<String, String>>,
) -> ApiResult {
    account_only(&p)?;
    let (limit, after) = paging(&mut q)?;
    no_more_query(q)?;
    let page = state
        .store
        .webhooks()
        .list_endpoints(p.scope(), limit, after.as_deref())
        .await?;
    let data = page.data.iter().map(views::webhook_endpoint).collect();
    Ok(json_response(
        StatusCode::OK,
        types::WebhookEndpointList::new(
            crate::types::ListTag,
            "/v1/webhook-endpoints".into(),
            data,
            page.has_more,
        ),
    ))
}

/// The operation [`update_webhook_endpoint`] serves.
pub const UPDATE_WEBHOOK_ENDPOINT: Route = route!(post "/v1/webhook-endpoints/{id}", "updateWebhookEndpoint", update_webhook_endpoint)
    .doc("Update a webhook endpoint", "Change `url`, `enabled_events`, `description` or `status` (`enabled` clears the failure record).")
    .body(schema::<types::WebhookEndpointUpdate>())
    .ok(200, schema::<types::WebhookEndpoint>())
    .errors(WRITE)
    .path_id("we_");

/// `POST /v1/webhook-endpoints/{id}`: change `url`, `enabled_events`, `description` or
/// `status` (`enabled` / `disabled`; enabling clears the failure record).
pub async fn update_webhook_endpoint(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
    fields: Fields,
) -> ApiResult {
    account_only(&p)?;
    let id = id_of("webhook_endpoint", &id, WebhookEndpointId::parse)?;
    // `"description": null` clears it; an absent description stays.
    let has_description = fields.peek_present("description");
    let WebhookEndpointUpdate {
        url,
        enabled_events: events,
        description,
        status,
    } = WebhookEndpointUpdate::read(fields)?;
    let text = description.map(|Text(t)| t);
    let enabled = match status.as_deref() {
        None => None,
        Some("enabled") => Some(true),
        Some("disabled") => Some(false),
        Some(_) => return Err(invalid("status", "must be enabled or disabled")),
    };
    let change = EndpointChange {
        url: match url {
            Some(u) => Some(checked_url(&state, p.mode(), &u).await?),
            None => None,
        },
        enabled_events: events.map(enabled_events).transpose()?,
        description: has_description.then_some(text),
        enabled,
    };
    let e = state
        .store
        .webhooks()
        .update_endpoint(p.scope(), &id, &change, now_ms())
        .await
        .map_err(missing("webhook_endpoint", id.as_str()))?;
    Ok(json_response(StatusCode::OK, views::webhook_endpoint(&e)))
}

/// The operation [`delete_webhook_endpoint`] serves.
pub const DELETE_WEBHOOK_ENDPOINT: Route =
    route!(delete "/v1/webhook-endpoints/{id}", "deleteWebhookEndpoint", delete_webhook_endpoint)
        .doc(
            "Delete a webhook endpoint",
            "The endpoint and its deliveries are gone.",
        )
        .ok(200, schema::<types::DeletedWebhookEndpoint>())
        .errors(WRITE)
        .path_id("we_");

/// `DELETE /v1/webhook-endpoints/{id}`: the endpoint and its deliveries are gone.
pub async fn delete_webhook_endpoint(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
) -> ApiResult {
    account_only(&p)?;
    let id = id_of("webhook_endpoint", &id, WebhookEndpointId::parse)?;
    let e = state
        .store
        .webhooks()
        .delete_endpoint(p.scope(), &id)
        .await
        .map_err(missing("webhook_endpoint", id.as_str()))?;
    Ok(json_response(
        StatusCode::OK,
        types::DeletedWebhookEndpoint {
            id: e.id.to_string(),
            object: types::WebhookEndpointTag,
            deleted: true,
        },
    ))
}

/// The operation [`rotate_webhook_secret`] serves.
pub const ROTATE_WEBHOOK_SECRET: Route = route!(post "/v1/webhook-endpoints/{id}/rotate-secret", "rotateWebhookSecret", rotate_webhook_secret)
    .doc("Rotate a webhook endpoint's secret", "The new secret is answered once; the old one keeps signing beside it (a second `v1` signature) for 24 hours.")
    .ok(200, schema::<types::WebhookEndpoint>())
    .errors(WRITE)
    .path_id("we_");

/// `POST /v1/webhook-endpoints/{id}/rotate-secret`: a new `secret`, shown this once; the
/// old one keeps signing beside it for 24 hours.
pub async fn rotate_webhook_secret(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
) -> ApiResult {
    account_only(&p)?;
    let id = id_of("webhook_endpoint", &id, WebhookEndpointId::parse)?;
    let now = now_ms();
    let secret = new_secret();
    let overlap = i64::try_from(ROTATION_OVERLAP.as_millis()).unwrap_or(i64::MAX / 2);
    let e = state
        .store
        .webhooks()
        .rotate_secret(p.scope(), &id, &secret, now + overlap, now)
        .await
        .map_err(missing("webhook_endpoint", id.as_str()))?;
    let mut v = views::webhook_endpoint(&e);
    v.secret = Some(secret);
    Ok(json_response(StatusCode::OK, v))
}

/// The operation [`list_webhook_deliveries`] serves.
pub const LIST_WEBHOOK_DELIVERIES: Route = route!(get "/v1/webhook-endpoints/{id}/deliveries", "listWebhookDeliveries", list_webhook_deliveries)
    .doc("List an endpoint's deliveries", "Newest first: attempts, last status code, latency, next retry.")
    .ok(200, schema::<types::WebhookDeliveryList>())
    .errors(READ)
    .path_id("we_")
    .query(LIST);

/// `GET /v1/webhook-endpoints/{id}/deliveries`: newest first.
pub async fn list_webhook_deliveries(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
    Query(mut q): Query<HashMap<String, String>>,
) -> ApiResult {
    account_only(&p)?;
    let id = id_of("webhook_endpoint", &id, WebhookEndpointId::parse)?;
    let (limit, after) = paging(&mut q)?;
    no_more_query(q)?;
    state
        .store
        .webhooks()
        .endpoint(p.scope(), &id)
        .await
        .map_err(missing("webhook_endpoint", id.as_str()))?;
    let page = state
        .store
        .webhooks()
        .list_deliveries(p.scope(), &id, limit, after.as_deref())
        .await?;
    let data = page.data.iter().map(views::webhook_delivery).collect();
    Ok(json_response(
        StatusCode::OK,
        types::WebhookDeliveryList::new(
            crate::types::ListTag,
            format!("/v1/webhook-endpoints/{id}/deliveries"),
            data,
            page.has_more,
        ),
    ))
}

/// The operation [`redeliver_event`] serves.
pub const REDELIVER_EVENT: Route = route!(post "/v1/events/{id}/redeliver", "redeliverEvent", redeliver_event)
    .doc("Deliver an event again", "`{}`: to every enabled endpoint that wants its type; `{\"endpoint\": \"we_…\"}`: to that one. The same `webhook-id` as the first delivery.")
    .body(schema::<types::RedeliverCreate>())
    .ok(200, schema::<types::WebhookDeliveryList>())
    .errors(WRITE)
    .path_id("evt_");

/// `POST /v1/events/{id}/redeliver` (`{}` or `{"endpoint": "we_…"}`): the event is
/// delivered again, to that endpoint or to every enabled endpoint that wants its type.
pub async fn redeliver_event(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
    fields: Fields,
) -> ApiResult {
    account_only(&p)?;
    let id = id_of("event", &id, EventId::parse)?;
    let RedeliverCreate { endpoint } = RedeliverCreate::read(fields)?;
    let endpoint = endpoint
        .map(|e| id_of("webhook_endpoint", &e, WebhookEndpointId::parse))
        .transpose()?;
    let deliveries = state
        .store
        .webhooks()
        .redeliver(p.scope(), &id, endpoint.as_ref(), now_ms())
        .await
        .map_err(|e| match (e, &endpoint) {
            // The event is looked up first: a missing endpoint is the other 404.
            (openrail_store::StoreError::NotFound, Some(ep)) => ApiError::ResourceMissing {
                kind: "event or webhook_endpoint",
                id: format!("{id} / {ep}"),
            },
            (e, _) => missing("event", id.as_str())(e),
        })?;
    let data = deliveries.iter().map(views::webhook_delivery).collect();
    Ok(json_response(
        StatusCode::OK,
        types::WebhookDeliveryList::new(
            crate::types::ListTag,
            format!("/v1/events/{id}/redeliver"),
            data,
            false,
        ),
    ))
}

impl crate::represent::Represent for openrail_store::events::WebhookEndpointSnapshot {
    type View = types::WebhookEndpoint;
    fn represent(&self, _state: &AppState, _now: i64) -> Result<types::WebhookEndpoint, ApiError> {
        Ok(views::webhook_endpoint(&self.webhook_endpoint))
    }
}
