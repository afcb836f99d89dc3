//! The request and response types of webhook endpoints and their deliveries: the
//! endpoints' request bodies and a redelivery's, the [`WebhookEndpoint`] and
//! [`WebhookDelivery`] as the API shows them and their lists, and the leaf schemas of
//! their own fields and statuses, written in the shared vocabulary of [`crate::types`].
//! Their renderings of the store's rows are in `views`.

use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::types::{
    DeletedTrue, FreeText, Text, Timestamp, leaf_schema, list_new, list_type, object_tag,
    request_body,
};

leaf_schema!(
    /// A webhook URL.
    WebhookUrl = json!({
        "type": "string",
        "pattern": "^https?://[^\\s/?#]+[^\\s]*$",
        "maxLength": 2048,
        "description": "Where deliveries are POSTed. Mainnet: https to a host that resolves to public addresses only. Testnet: also http, and localhost or 127.0.0.1. Checked when set: a host that does not resolve, or resolves to an address the mode may not deliver to, is 400 `url_not_allowed`.",
        "examples": ["http://127.0.0.1:3000/webhooks"],
    })
);

leaf_schema!(
    /// What a webhook endpoint subscribes to.
    EnabledEvent = json!({
        "type": "string",
        "enum": std::iter::once("*").chain(openrail_store::events::EventType::all().into_iter().map(|t| t.as_str())).collect::<Vec<_>>(),
        "description": "An event type, or \"*\" (alone) for every type",
    })
);

leaf_schema!(
    /// Status of a webhook endpoint.
    EndpointStatus = json!({
        "type": "string",
        "enum": openrail_store::webhooks::EndpointStatus::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    })
);

leaf_schema!(
    /// Status of a webhook delivery.
    DeliveryStatus = json!({
        "type": "string",
        "enum": openrail_store::webhooks::DeliveryStatus::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    })
);

request_body!(
    /// `POST /v1/webhook-endpoints`.
    #[schema(example = json!({"url": "http://127.0.0.1:3000/webhooks", "enabled_events": ["debit_pull.authorized", "payment.succeeded"]}))]
    pub struct WebhookEndpointCreate {
        /// Where deliveries are POSTed.
        #[schema(value_type = WebhookUrl)]
        pub url: String,
        /// Event types, each once, or `["*"]` for every type.
        #[schema(value_type = Vec<EnabledEvent>, min_items = 1, max_items = 64)]
        pub enabled_events: Vec<String>,
        /// Free text, up to 500 characters, without control or bidirectional formatting characters.
        #[schema(value_type = Option<FreeText>)]
        pub description: Option<Text>,
    }
);

request_body!(
    /// `POST /v1/webhook-endpoints/{id}`: what to change (absent fields stay).
    pub struct WebhookEndpointUpdate {
        /// A new URL (the same rules as at creation).
        #[schema(value_type = Option<WebhookUrl>)]
        pub url: Option<String>,
        /// New event types.
        #[schema(value_type = Option<Vec<EnabledEvent>>, min_items = 1, max_items = 64)]
        pub enabled_events: Option<Vec<String>>,
        /// A new description (`null` clears it); free text as at creation.
        #[schema(value_type = Option<FreeText>)]
        pub description: Option<Text>,
        /// `enabled` (clears the failure record) or `disabled`.
        #[schema(value_type = Option<EndpointStatus>)]
        pub status: Option<String>,
    }
);

request_body!(
    /// `POST /v1/events/{id}/redeliver`: `{}` for every enabled endpoint that wants the
    /// event's type, or one endpoint.
    pub struct RedeliverCreate {
        /// Only this endpoint (`we_…`), whatever its enabled_events.
        #[schema(pattern = "^we_")]
        pub endpoint: Option<String>,
    }
);

object_tag!(
    /// `"webhook_endpoint"`
    WebhookEndpointTag = "webhook_endpoint"
);
object_tag!(
    /// `"webhook_delivery"`
    WebhookDeliveryTag = "webhook_delivery"
);

/// A webhook endpoint (its secret only at creation and rotation).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WebhookEndpoint {
    /// `we_…`
    #[schema(pattern = "^we_")]
    pub id: String,
    /// Always `webhook_endpoint`.
    pub object: WebhookEndpointTag,
    /// Mainnet or testnet.
    pub livemode: bool,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// Where deliveries go.
    pub url: String,
    /// Free text.
    pub description: Option<String>,
    /// The event types delivered (`["*"]`: all).
    #[schema(value_type = Vec<EnabledEvent>)]
    pub enabled_events: Vec<&'static str>,
    /// enabled or disabled.
    #[schema(value_type = EndpointStatus)]
    pub status: &'static str,
    /// `failing`: every attempt failed for longer than the server allows (the
    /// `webhook_endpoint.disabled` event says so).
    #[schema(value_type = Option<DisabledReason>)]
    pub disabled_reason: Option<String>,
    /// The first failed attempt since the last success.
    #[schema(value_type = Option<Timestamp>)]
    pub failing_since: Option<String>,
    /// Until then the secret before the last rotation signs too (a second v1 signature).
    #[schema(value_type = Option<Timestamp>)]
    pub previous_secret_expires_at: Option<String>,
    /// The signing secret (`whsec_…`): only in the creation and rotation responses (a
    /// replay with the same Idempotency-Key answers null with `secret_redacted`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^whsec_")]
    pub secret: Option<String>,
    /// True in a replayed creation or rotation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_redacted: Option<bool>,
}

leaf_schema!(
    /// Why an endpoint was disabled.
    DisabledReason = json!({ "type": "string", "enum": ["failing"] })
);

/// A deleted webhook endpoint.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DeletedWebhookEndpoint {
    /// `we_…`
    #[schema(pattern = "^we_")]
    pub id: String,
    /// Always `webhook_endpoint`.
    pub object: WebhookEndpointTag,
    /// Always true.
    #[schema(value_type = DeletedTrue)]
    pub deleted: bool,
}

/// One delivery of an event to an endpoint, with its last attempt.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WebhookDelivery {
    /// `whd_…`
    #[schema(pattern = "^whd_")]
    pub id: String,
    /// Always `webhook_delivery`.
    pub object: WebhookDeliveryTag,
    /// The endpoint.
    #[schema(pattern = "^we_")]
    pub endpoint_id: String,
    /// The event.
    #[schema(pattern = "^evt_")]
    pub event_id: String,
    /// Asked for with `POST /v1/events/{id}/redeliver`.
    pub redelivery: bool,
    /// Lifecycle.
    #[schema(value_type = DeliveryStatus)]
    pub status: &'static str,
    /// Attempts so far.
    pub attempts: i64,
    /// The last attempt's HTTP status.
    pub last_status_code: Option<i64>,
    /// The last attempt's error.
    pub last_error: Option<String>,
    /// The last attempt's latency.
    pub latency_ms: Option<i64>,
    /// The last attempt.
    #[schema(value_type = Option<Timestamp>)]
    pub last_attempt_at: Option<String>,
    /// While pending: the next attempt.
    #[schema(value_type = Option<Timestamp>)]
    pub next_attempt_at: Option<String>,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
}

list_type!(
    /// A page of webhook endpoints.
    WebhookEndpointList of WebhookEndpoint
);
list_type!(
    /// A page of webhook deliveries.
    WebhookDeliveryList of WebhookDelivery
);

list_new!(
    WebhookEndpointList of WebhookEndpoint,
    WebhookDeliveryList of WebhookDelivery
);
