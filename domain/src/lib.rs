//! The domain of Openrail without I/O: money and currencies (`money`), intervals and their
//! calendar epochs (`epoch`), one module per object with its typed id and its lifecycle
//! (`account`, `mandate`, `session_key`, `pulls`, `payment`, `bank`, `event`, `webhook`,
//! `verification`, `attestation`; `pulls` also says how a debit pull ends on chain:
//! decline reasons and its resolution), each re-exported here
//! (`openrail_domain::MandateId`, `openrail_domain::MandateStatus`), what the objects share (`ids`: the `typed_id!`
//! macro, secrets' hashes and the mode; `status`: the [`status::Lifecycle`] trait and
//! `lifecycle!`, which also tests each lifecycle's shape), the journal's transaction kinds
//! and statuses (`journal`), and the process instrumentation every layer passes through
//! (`crash`: named crash points for the crash tests, behind the `crash-points` feature;
//! `stages`: latency stage marks for the bench). Every other crate builds on these, and
//! the chain crate on these only (not on the store); this crate depends on no other crate
//! of the workspace. Nothing here reads a database, a chain or the network (a new id reads
//! the clock and the OS RNG; a stage mark is a `TRACE` event), so all of it is unit- and
//! property-tested in place. The optional `sqlx` feature makes each id a `sqlx::Any` text
//! column, for the store.

#[doc(hidden)]
pub use serde as __serde;

/// An enum stored and shown by name: `ALL`, `as_str`, `parse`, and serde by that name.
#[macro_export]
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
        impl $crate::__serde::Serialize for $name {
            fn serialize<S: $crate::__serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> { s.serialize_str(self.as_str()) }
        }
        impl<'de> $crate::__serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str> as $crate::__serde::Deserialize>::deserialize(d)?;
                Self::parse(&s).ok_or_else(|| $crate::__serde::de::Error::custom(format!("unknown {} {s:?}", stringify!($name))))
            }
        }
    };
}

pub mod crash;
pub mod epoch;
pub mod ids;
pub mod journal;
pub mod money;
pub mod stages;
pub mod status;

pub mod account;
pub mod attestation;
pub mod bank;
pub mod event;
pub mod mandate;
pub mod payment;
pub mod pulls;
pub mod session_key;
pub mod verification;
pub mod webhook;

pub use account::*;
pub use attestation::*;
pub use bank::*;
pub use epoch::{Epoch, Interval};
pub use event::*;
pub use mandate::*;
pub use money::{Amount, AmountError, Currency};
pub use payment::*;
pub use pulls::*;
pub use session_key::*;
pub use verification::*;
pub use webhook::*;
