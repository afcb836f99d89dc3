//! The renderings of webhook endpoints and deliveries as their API types
//! ([`super::types`]). Times are RFC 3339 UTC.

use super::types;
use crate::rfc3339::rfc3339_ms;
use openrail_store::webhooks::{Delivery, WebhookEndpoint};

/// A webhook endpoint (never its secret; creation and rotation add `secret` once).
pub fn webhook_endpoint(e: &WebhookEndpoint) -> types::WebhookEndpoint {
    types::WebhookEndpoint {
        id: e.id.to_string(),
        object: types::WebhookEndpointTag,
        livemode: e.mode.livemode(),
        created_at: rfc3339_ms(e.created_at),
        url: e.url.clone(),
        description: e.description.clone(),
        enabled_events: e.enabled_events.names(),
        status: e.status.as_str(),
        disabled_reason: e.disabled_reason.clone(),
        failing_since: e.failing_since.map(rfc3339_ms),
        previous_secret_expires_at: e.previous_secret_expires_at.map(rfc3339_ms),
        secret: None,
        secret_redacted: None,
    }
}

/// One delivery of an event to an endpoint, with its last attempt.
pub fn webhook_delivery(d: &Delivery) -> types::WebhookDelivery {
    types::WebhookDelivery {
        id: d.id.to_string(),
        object: types::WebhookDeliveryTag,
        endpoint_id: d.endpoint_id.to_string(),
        event_id: d.event_id.to_string(),
        redelivery: d.redelivery,
        status: d.status.as_str(),
        attempts: d.attempts,
        last_status_code: d.last_status_code,
        last_error: d.last_error.clone(),
        latency_ms: d.last_latency_ms,
        last_attempt_at: d.last_attempt_at.map(rfc3339_ms),
        next_attempt_at: d.next_attempt_at.map(rfc3339_ms),
        created_at: rfc3339_ms(d.created_at),
    }
}
