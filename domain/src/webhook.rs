//! A webhook endpoint and each delivery of an event to it. Their ids (`we_…`, `whd_…`);
//! their statuses are the store's.

use crate::ids::typed_id;

typed_id!(
    /// A webhook endpoint (`we_…`).
    WebhookEndpointId = "we_"
);
typed_id!(
    /// One delivery of an event to a webhook endpoint (`whd_…`).
    WebhookDeliveryId = "whd_"
);

events!(
    /// What happens to a webhook endpoint: the types of its events.
    WebhookEndpointEvent of WebhookEndpoint {
        /// A webhook endpoint failed for too long and was disabled.
        WebhookEndpointDisabled = "webhook_endpoint.disabled",
    }
);
