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

/// An on-chain object's transaction kinds (`$name`, a [`string_enum!`], with `TxKind`) or
/// work kinds (with `WorkKind`), each also a constant of the composite
/// (`TxKind::CreateMandate`), so that the rest of the house names a kind without knowing
/// which object's enum holds it. Used in the object's module; the object's `on_chain`
/// part of its line in [`objects!`] names the enums.
macro_rules! kinds {
    ($composite:ident: $(#[$m:meta])* $name:ident of $on:ident { $($(#[$vm:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        string_enum!($(#[$m])* $name { $($(#[$vm])* $variant = $text),+ });
        #[allow(non_upper_case_globals)]
        impl $crate::$composite {
            $($(#[$vm])* pub const $variant: $crate::$composite = $crate::$composite::$on($name::$variant);)+
        }
    };
}

/// What the journal and the outbox name, composed from the `on_chain` parts of
/// [`objects!`]' lines: [`Intent`] (an object, or a leg of one, as `man_…` or
/// `pay_…:source`), [`TxKind`] (what a journaled transaction does: each object's kinds,
/// and `CancelNonce`, the submitter's own) and [`WorkKind`] (what a row of the outbox
/// asks the engine to do). Each object declares its kinds in its module with [`kinds!`]
/// and says in its work enum's `tx_kind` which transaction each work sends.
macro_rules! on_chain {
    ($($on:ident($id:ident): $tx:ident, $work:ident $(legs { $($(#[$lm:meta])* $leg:ident = $legtext:literal),+ })?;)+) => {
        /// What a journaled transaction carries, and what a row of the outbox is for: the
        /// object it acts on, or one leg of it (a payment's transfer from its source, a
        /// pull's payout). Its text (`Display`, `FromStr`, serde) is the object's id, with
        /// the leg's name after a colon for a leg (`pay_…:source`).
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Intent {
            $(
                #[doc = concat!("The ", stringify!($on), " itself: its transactions and its work.")]
                $on($id),
                $($($(#[$lm])* $leg($id),)+)?
            )+
        }

        impl Intent {
            /// The id of the object it is for (for a leg, its object's).
            pub fn object_id(&self) -> &str {
                match self {
                    $(Intent::$on(id) $($(| Intent::$leg(id))+)? => id.as_str(),)+
                }
            }

            /// What follows the object's id in the text, if anything.
            fn leg(&self) -> Option<&'static str> {
                match self {
                    $(
                        Intent::$on(_) => None,
                        $($(Intent::$leg(_) => Some($legtext),)+)?
                    )+
                }
            }

            /// The stored text (as `Display`), borrowed from the id when it is only the id.
            pub fn text(&self) -> std::borrow::Cow<'_, str> {
                match self.leg() {
                    None => std::borrow::Cow::Borrowed(self.object_id()),
                    Some(leg) => std::borrow::Cow::Owned(format!("{}:{leg}", self.object_id())),
                }
            }
        }

        impl std::fmt::Display for Intent {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.object_id())?;
                match self.leg() {
                    Some(leg) => write!(f, ":{leg}"),
                    None => Ok(()),
                }
            }
        }

        impl std::str::FromStr for Intent {
            type Err = journal::IntentError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                let parsed = match s.split_once(':') {
                    $($($(Some((id, $legtext)) => $id::parse(id).map(Intent::$leg),)+)?)+
                    Some(_) => None,
                    None => None$(.or_else(|| $id::parse(s).map(Intent::$on)))+,
                };
                parsed.ok_or_else(|| journal::IntentError(s.to_string()))
            }
        }

        impl serde::Serialize for Intent {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for Intent {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }

        /// What a journaled operator transaction does: one of an on-chain object's kinds
        /// (each also a constant, `TxKind::CreateMandate`), or the submitter's own
        /// cancellation.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum TxKind {
            $(
                #[doc = concat!("A transaction of a ", stringify!($on), "'s.")]
                $on($tx),
            )+
            /// A zero-value self-send that takes the nonce of a transaction the submitter
            /// gave up on (past its fee cap or deadline); carries no intent.
            CancelNonce,
        }

        impl TxKind {
            /// Every kind, object by object, each object's in declaration order.
            pub fn all() -> Vec<TxKind> {
                let mut all = Vec::new();
                $(all.extend($tx::ALL.iter().map(|k| TxKind::$on(*k)));)+
                all.push(TxKind::CancelNonce);
                all
            }

            /// The stored name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(TxKind::$on(k) => k.as_str(),)+
                    TxKind::CancelNonce => "cancel_nonce",
                }
            }

            /// Parses the stored name.
            pub fn parse(s: &str) -> Option<Self> {
                $(if let Some(k) = $tx::parse(s) { return Some(TxKind::$on(k)); })+
                (s == "cancel_nonce").then_some(TxKind::CancelNonce)
            }
        }

        /// What a row of the outbox asks the engine to do: one of an on-chain object's
        /// kinds of work (each also a constant, `WorkKind::PullBatch`). Work whose
        /// `tx_kind` is some sends one transaction of that kind (and is done once its
        /// outcome is recorded); the rest drives its object through legs that take from
        /// seconds to days (bank transfers, router transfers), step by step.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum WorkKind {
            $(
                #[doc = concat!("Work for a ", stringify!($on), ".")]
                $on($work),
            )+
        }

        impl WorkKind {
            /// Every kind, object by object, each object's in declaration order.
            pub fn all() -> Vec<WorkKind> {
                let mut all = Vec::new();
                $(all.extend($work::ALL.iter().map(|k| WorkKind::$on(*k)));)+
                all
            }

            /// The stored name.
            pub fn as_str(self) -> &'static str {
                match self { $(WorkKind::$on(k) => k.as_str(),)+ }
            }

            /// Parses the stored name.
            pub fn parse(s: &str) -> Option<Self> {
                $(if let Some(k) = $work::parse(s) { return Some(WorkKind::$on(k)); })+
                None
            }

            /// The one transaction this work sends (`None` for work that drives its object
            /// through several legs).
            pub fn tx_kind(self) -> Option<TxKind> {
                match self { $(WorkKind::$on(k) => k.tx_kind(),)+ }
            }

            /// The work that sends one transaction of `kind` (`None` for a kind only
            /// driving work sends).
            pub fn sending(kind: TxKind) -> Option<WorkKind> {
                // Called for every journaled transaction's fate: no list is built.
                $(
                    if let Some(w) = $work::ALL.iter().copied().find(|w| w.tx_kind() == Some(kind)) {
                        return Some(WorkKind::$on(w));
                    }
                )+
                None
            }
        }

        $crate::string_serde!(TxKind, "transaction kind");
        $crate::string_serde!(WorkKind, "work kind");
    };
}

/// Serde by name for a composed kind with `as_str` and `parse`.
#[doc(hidden)]
#[macro_export]
macro_rules! string_serde {
    ($name:ident, $what:literal) => {
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
                Self::parse(&s).ok_or_else(|| {
                    serde::de::Error::custom(format!(concat!("unknown ", $what, " {:?}"), s))
                })
            }
        }
    };
}

/// The object modules, declared here and nowhere else: `pub mod m; pub use m::*;` for each,
/// and, for an object whose changes are events, its kind (`ObjectKind`), the enum of its
/// events (declared in its module with [`events!`]) and the wildcard a list filter names all
/// of them by. [`EventType`] and [`ObjectKind`] are composed from these lines, so a new
/// object adds its module and this one line.
macro_rules! objects {
    ($($module:ident
        $({ $(#[$km:meta])* $kind:ident: $event:ident = $wildcard:literal })?
        $(on_chain $on:ident($id:ident): $tx:ident, $work:ident $(legs { $($(#[$lm:meta])* $leg:ident = $legtext:literal),+ })?)?
    ),+ $(,)?) => {
        $(pub mod $module; pub use $module::*;)+

        on_chain! { $($($on($id): $tx, $work $(legs { $($(#[$lm])* $leg = $legtext),+ })?;)?)+ }

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
    } on_chain Mandate(MandateId): MandateTx, MandateWork,
    session_key {
        /// `sk_…`
        SessionKey: SessionKeyEvent = "session_key.*"
    } on_chain SessionKey(SessionKeyId): SessionKeyTx, SessionKeyWork,
    pulls {
        /// `pull_…`
        DebitPull: DebitPullEvent = "debit_pull.*"
    } on_chain Pull(PullId): PullTx, PullWork legs {
        /// The treasury's router transfer paying out a bank-funded pull (`pull_…:payout`).
        Payout = "payout"
    },
    payment {
        /// `pay_…`
        Payment: PaymentEvent = "payment.*"
    } on_chain Payment(PaymentId): PaymentTx, PaymentWork legs {
        /// The router transfer that takes a payment's funds from its source wallet
        /// (`pay_…:source`; a payment with a bank leg).
        PaymentSource = "source",
        /// The router transfer that pays a payment's refund back to its source wallet
        /// (`pay_…:refund`).
        PaymentRefund = "refund"
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
    } on_chain Attestation(AttestationId): AttestationTx, AttestationWork,
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
