//! The domain of Openrail without I/O: money and currencies (`money`), intervals and their
//! calendar epochs (`epoch`), one module per object with its typed id, its lifecycle and
//! its events (`account`, `mandate`, `session_key`, `pulls`, `payment`, `bank`, `event`,
//! `webhook`, `verification`, `attestation`; `pulls` also says how a debit pull ends on
//! chain: decline reasons and its resolution), declared by the one list `objects!`,
//! which re-exports each here (`openrail_domain::MandateId`,
//! `openrail_domain::MandateStatus`) and composes [`EventType`] and [`ObjectKind`] from
//! what each declares with `events!`; what the objects share (`ids`: the `typed_id!`
//! macro, secrets' hashes and the mode; `status`: the [`status::Lifecycle`] trait and
//! `lifecycle!`, which also tests each lifecycle's shape), the journal's transaction kinds
//! and statuses, the outbox's work and the intents both carry (`journal`), and the process instrumentation every layer passes through
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
pub mod failure;
pub mod ids;
pub mod journal;
pub mod money;
pub mod stages;
pub mod status;

pub use epoch::{Epoch, Interval};
pub use failure::FailureReason;
pub use money::{Amount, AmountError, Currency};

/// An object's events: `$event`, a [`string_enum!`] of their types, and each as a constant
/// of [`EventType`] (`EventType::MandateCreated`), so that the rest of the house names an
/// event type without knowing which object's enum holds it. Used in the object's module;
/// the object's line in [`objects!`] names the enum.
macro_rules! events {
    ($(#[$m:meta])* $event:ident of $kind:ident { $($(#[$vm:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        string_enum!($(#[$m])* $event { $($(#[$vm])* $variant = $text),+ });
        #[allow(non_upper_case_globals)]
        impl $crate::EventType {
            $($(#[$vm])* pub const $variant: $crate::EventType = $crate::EventType::$kind($event::$variant);)+
        }
    };
}

/// The object modules, declared here and nowhere else: `pub mod m; pub use m::*;` for each,
/// and, for an object whose changes are events, its kind (`ObjectKind`), the enum of its
/// events (declared in its module with [`events!`]) and the wildcard a list filter names all
/// of them by. [`EventType`] and [`ObjectKind`] are composed from these lines, so a new
/// object adds its module and this one line.
macro_rules! objects {
    ($($module:ident $({ $(#[$km:meta])* $kind:ident: $event:ident = $wildcard:literal })?),+ $(,)?) => {
        $(pub mod $module; pub use $module::*;)+

        /// The kind of object an event is about.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ObjectKind { $($($(#[$km])* $kind,)?)+ }

        impl ObjectKind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [ObjectKind] = &[$($(ObjectKind::$kind,)?)+];

            /// What a list filter names every event of this kind by (`debit_pull.*`).
            pub fn wildcard(self) -> &'static str {
                match self { $($(ObjectKind::$kind => $wildcard,)?)+ }
            }

            /// The types of this kind's events, in declaration order.
            pub fn events(self) -> Vec<EventType> {
                match self { $($(ObjectKind::$kind => $event::ALL.iter().map(|e| EventType::$kind(*e)).collect(),)?)+ }
            }
        }

        /// What happened: one of an object's events (each also a constant,
        /// `EventType::MandateCreated`). Stored and shown by its name, `mandate.created`;
        /// the part before the last dot names the object.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum EventType { $($($(#[$km])* $kind($event),)?)+ }

        impl EventType {
            /// Every type, object by object, each object's in declaration order.
            pub fn all() -> Vec<EventType> {
                ObjectKind::ALL.iter().flat_map(|k| k.events()).collect()
            }

            /// The kind of object the event is about.
            pub fn object(self) -> ObjectKind {
                match self { $($(EventType::$kind(_) => ObjectKind::$kind,)?)+ }
            }

            /// The stored and API name.
            pub fn as_str(self) -> &'static str {
                match self { $($(EventType::$kind(e) => e.as_str(),)?)+ }
            }

            /// Parses the stored name.
            pub fn parse(s: &str) -> Option<Self> {
                $($(if let Some(e) = $event::parse(s) { return Some(EventType::$kind(e)); })?)+
                None
            }
        }

        impl serde::Serialize for EventType {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for EventType {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
                Self::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown event type {s:?}")))
            }
        }
    };
}

objects! {
    mandate {
        /// `man_…`
        Mandate: MandateEvent = "mandate.*"
    },
    session_key {
        /// `sk_…`
        SessionKey: SessionKeyEvent = "session_key.*"
    },
    pulls {
        /// `pull_…`
        DebitPull: DebitPullEvent = "debit_pull.*"
    },
    payment {
        /// `pay_…`
        Payment: PaymentEvent = "payment.*"
    },
    bank {
        /// `btr_…`
        BankTransfer: BankTransferEvent = "bank_account.transfer.*"
    },
    webhook {
        /// `we_…`
        WebhookEndpoint: WebhookEndpointEvent = "webhook_endpoint.*"
    },
    verification {
        /// `idv_…`
        IdentityVerification: IdentityVerificationEvent = "identity.verification.*"
    },
    attestation {
        /// `att_…`
        Attestation: AttestationEvent = "identity.attestation.*"
    },
    account,
    event,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_round_trips() {
        let all = EventType::all();
        assert_eq!(all.len(), 39);
        for t in &all {
            assert_eq!(EventType::parse(t.as_str()), Some(*t));
        }
    }

    #[test]
    fn status_events_are_about_their_object() {
        for s in MandateStatus::ALL {
            assert_eq!(EventType::of_mandate(*s).object(), ObjectKind::Mandate);
        }
        for s in KeyStatus::ALL {
            if let Some(t) = EventType::of_key(*s) {
                assert_eq!(t.object(), ObjectKind::SessionKey);
            }
        }
        for s in PullStatus::ALL {
            assert_eq!(EventType::of_pull(*s).object(), ObjectKind::DebitPull);
        }
        for s in PaymentStatus::ALL {
            assert_eq!(EventType::of_payment(*s).object(), ObjectKind::Payment);
        }
        for s in TransferStatus::ALL {
            assert_eq!(
                EventType::of_transfer(*s).object(),
                ObjectKind::BankTransfer
            );
        }
        for s in VerificationStatus::ALL {
            assert_eq!(
                EventType::of_verification(*s).object(),
                ObjectKind::IdentityVerification
            );
        }
    }

    /// Names are unique across objects (`parse` takes the first object whose enum knows
    /// a name), and each names its object by the kind's wildcard.
    #[test]
    fn each_type_is_named_once_under_its_object() {
        let all = EventType::all();
        for t in &all {
            assert_eq!(
                all.iter().filter(|u| u.as_str() == t.as_str()).count(),
                1,
                "{t:?}"
            );
            let prefix = t.object().wildcard().trim_end_matches('*');
            assert!(t.as_str().starts_with(prefix), "{t:?} under {prefix}");
            let rest = &t.as_str()[prefix.len()..];
            assert!(!rest.is_empty() && !rest.contains('.'), "{t:?}");
        }
        for k in ObjectKind::ALL {
            assert!(!k.events().is_empty(), "{k:?} has no events");
        }
    }
}
