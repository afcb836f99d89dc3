//! Domain types that cross crates — money, currencies, intervals and their calendar epochs —
//! kept sans-IO and unit-tested in place. From the API issue on, this crate also holds every
//! SQL query and the migrations runner; it knows nothing of HTTP or chains.

/// An enum stored and shown by name.
macro_rules! string_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vm])* $variant),+ }
        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The stored and API name.
            pub fn as_str(self) -> &'static str { match self { $($name::$variant => $text),+ } }
            /// Parses the stored name.
            pub fn parse(s: &str) -> Option<Self> { match s { $($text => Some($name::$variant),)+ _ => None } }
        }
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> { s.serialize_str(self.as_str()) }
        }
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
                Self::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown {} {s:?}", stringify!($name))))
            }
        }
    };
}

pub mod accounts;
pub mod agentic;
pub mod bank;
pub mod consent;
pub mod crash;
pub mod dashboard;
pub mod db;
pub mod epoch;
pub mod events;
mod exec;
mod group;
pub mod ids;
mod inline;
pub mod journal;
pub mod lease;
pub mod money;
pub mod outbox;
pub mod payments;
pub mod stages;
pub mod testing;
pub mod webhooks;

pub use db::{Backend, Store, StoreError};
pub use epoch::{Epoch, Interval};
pub use ids::{
    AccountId, ApiKeyId, BankAccountId, BankTransferId, EventId, MandateId, Mode, PaymentId,
    PullId, SessionKeyId, WebhookDeliveryId, WebhookEndpointId,
};
pub use money::{Amount, AmountError, Currency};

/// Now, in unix milliseconds.
pub fn now_ms() -> i64 {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970");
    i64::try_from(d.as_millis()).expect("milliseconds fit in i64")
}
