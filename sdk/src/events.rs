//! Events: every state change, with the object as it was then.

use serde::{Deserialize, Serialize};

use crate::http::HasId;
use crate::{Client, Error, ListParams, Pages};

/// An event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// `evt_…`.
    pub id: String,
    /// `debit_pull.authorized`, `mandate.activated`, ….
    #[serde(rename = "type")]
    pub kind: String,
    /// `{"object": …}`: the object as it was at that moment.
    pub data: serde_json::Value,
    /// Testnet or mainnet.
    pub livemode: bool,
    /// RFC 3339.
    pub created_at: String,
}

impl HasId for Event {
    fn id(&self) -> &str {
        &self.id
    }
}

/// The event routes (from [`Client::events`]).
#[derive(Debug, Clone, Copy)]
pub struct Events<'a>(pub(crate) &'a Client);

impl Events<'_> {
    /// An event.
    pub async fn get(&self, id: &str) -> Result<Event, Error> {
        self.0.get(&format!("/v1/events/{id}")).await
    }

    /// The events, newest first (filters `type`, `object_id`, `created[gte]`).
    pub fn list(&self, params: ListParams) -> Pages<Event> {
        self.0.pages("/v1/events", params)
    }
}
