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

/// The event types an endpoint receives: every type (`["*"]`), or those listed. Stored and
/// shown as that list of names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnabledEvents {
    /// Every type, now and to come.
    All,
    /// These types, each once, in the order given (never empty).
    Only(Vec<crate::EventType>),
}

/// Why a list of names is not an [`EnabledEvents`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnabledEventsError {
    /// No name at all.
    #[error("must list event types, or [\"*\"] for all")]
    Empty,
    /// `*` beside other names.
    #[error("\"*\" stands alone: it means every type")]
    StarNotAlone,
    /// A name that is no event type.
    #[error("names an unknown event type {0:?}")]
    Unknown(String),
}

impl EnabledEvents {
    /// From the names a client or a row gives: `["*"]`, or known event types (a repeated
    /// one counts once).
    pub fn parse<S: AsRef<str>>(names: &[S]) -> Result<Self, EnabledEventsError> {
        if names.is_empty() {
            return Err(EnabledEventsError::Empty);
        }
        if names.iter().any(|n| n.as_ref() == "*") {
            return if names.len() == 1 {
                Ok(EnabledEvents::All)
            } else {
                Err(EnabledEventsError::StarNotAlone)
            };
        }
        let mut out: Vec<crate::EventType> = Vec::with_capacity(names.len());
        for n in names {
            let t = crate::EventType::parse(n.as_ref())
                .ok_or_else(|| EnabledEventsError::Unknown(n.as_ref().to_string()))?;
            if !out.contains(&t) {
                out.push(t);
            }
        }
        Ok(EnabledEvents::Only(out))
    }

    /// The stored and shown names: `["*"]`, or the types' names.
    pub fn names(&self) -> Vec<&'static str> {
        match self {
            EnabledEvents::All => vec!["*"],
            EnabledEvents::Only(types) => types.iter().map(|t| t.as_str()).collect(),
        }
    }

    /// Whether events of type `t` go to the endpoint.
    pub fn wants(&self, t: crate::EventType) -> bool {
        match self {
            EnabledEvents::All => true,
            EnabledEvents::Only(types) => types.contains(&t),
        }
    }
}

impl serde::Serialize for EnabledEvents {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.names().serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for EnabledEvents {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let names = <Vec<String> as serde::Deserialize>::deserialize(d)?;
        EnabledEvents::parse(&names).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EventType;

    #[test]
    fn enabled_events_parse_match_and_keep_their_names() {
        let all = EnabledEvents::parse(&["*"]).unwrap();
        assert!(all.wants(EventType::PaymentCreated) && all.names() == ["*"]);
        let some = EnabledEvents::parse(&["debit_pull.created", "debit_pull.created"]).unwrap();
        assert_eq!(some.names(), ["debit_pull.created"]);
        assert!(some.wants(EventType::DebitPullCreated));
        assert!(!some.wants(EventType::PaymentCreated));
        assert_eq!(
            EnabledEvents::parse::<&str>(&[]),
            Err(EnabledEventsError::Empty)
        );
        assert_eq!(
            EnabledEvents::parse(&["*", "payment.created"]),
            Err(EnabledEventsError::StarNotAlone)
        );
        assert_eq!(
            EnabledEvents::parse(&["payment.made"]),
            Err(EnabledEventsError::Unknown("payment.made".into()))
        );
        let json = serde_json::to_string(&some).unwrap();
        assert_eq!(json, r#"["debit_pull.created"]"#);
        assert_eq!(serde_json::from_str::<EnabledEvents>(&json).unwrap(), some);
    }
}
