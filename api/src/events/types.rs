//! The response types of events: the [`Event`] (its `data.object` is a [`crate::ApiObject`])
//! and its list, and the leaf schema of event types, written in the shared vocabulary of
//! [`crate::types`].

use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::types::{Timestamp, leaf_schema, list_new, list_type, object_tag};

leaf_schema!(
    /// Type of an event.
    EventType = json!({
        "type": "string",
        "enum": openrail_store::events::EventType::all().into_iter().map(|t| t.as_str()).collect::<Vec<_>>(),
    })
);

object_tag!(
    /// `"event"`
    EventTag = "event"
);

/// What an event carries.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EventData {
    /// The object as it was at the moment of the event.
    pub object: crate::ApiObject,
}

/// Something that happened to one of the account's objects.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Event {
    /// `evt_…`
    #[schema(pattern = "^evt_")]
    pub id: String,
    /// Always `event`.
    pub object: EventTag,
    /// What happened.
    #[serde(rename = "type")]
    #[schema(value_type = EventType)]
    pub kind: &'static str,
    /// Mainnet or testnet.
    pub livemode: bool,
    /// When.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// The object.
    pub data: EventData,
}

list_type!(
    /// A page of events.
    EventList of Event
);

list_new!(
    EventList of Event
);
