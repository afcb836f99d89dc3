//! The outbound transaction journal's and the outbox's vocabulary: what a journaled
//! operator transaction does ([`TxKind`]) and where it stands ([`TxStatus`]), what a row of
//! the outbox asks the engine to do ([`WorkKind`]), and what a transaction or a row of the
//! outbox is for ([`Intent`]: an object, or one leg of a payment or a pull's payout). The
//! journal itself (its rows and queries) is the store's; the chain's submitter names these
//! when it signs and records.
//!
//! An intent is stored as text (a transaction's `intents` JSON array, its
//! `chain_tx_intents` rows, the outbox's `intent` column, and hashed into a router
//! transfer's on-chain reference): [`Intent`]'s `Display` writes that text and `FromStr`
//! reads it back; text that is no intent is an [`IntentError`].

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use crate::{AttestationId, MandateId, PaymentId, PullId, SessionKeyId};

string_enum!(
    /// What a journaled operator transaction does.
    TxKind {
        /// `createMandate` / `createMandateWithSignature` (intent: the mandate).
        CreateMandate = "create_mandate",
        /// `cancelMandate` (intent: the mandate).
        CancelMandate = "cancel_mandate",
        /// `issueSessionKey` (intent: the key).
        IssueSessionKey = "issue_session_key",
        /// `revokeSessionKey` (intent: the key).
        RevokeSessionKey = "revoke_session_key",
        /// `pullBatch` (intents: its pulls, in item order).
        PullBatch = "pull_batch",
        /// `settle` / `settleWithSignature` (intent: a payment leg or a pull's payout).
        Settle = "settle",
        /// A zero-value self-send that takes the nonce of a transaction the submitter gave
        /// up on (past its fee cap or deadline); carries no intent.
        CancelNonce = "cancel_nonce",
        /// `AttestationRegistry.attest` (intent: the identity attestation).
        Attest = "attest",
        /// `AttestationRegistry.revoke` (intent: the identity attestation).
        RevokeAttestation = "revoke_attestation",
        /// `AttestationMirror.record` of an attestation's receipt (intent: the attestation).
        MirrorAttested = "mirror_attested",
        /// `AttestationMirror.record` of a revocation's receipt (intent: the attestation).
        MirrorRevoked = "mirror_revoked",
    }
);

string_enum!(
    /// Where a journaled transaction stands.
    TxStatus {
        /// Signed and journaled; broadcast or about to be; fate not known yet.
        Signed = "signed",
        /// Mined and succeeded.
        Succeeded = "succeeded",
        /// Mined and reverted.
        Reverted = "reverted",
        /// Refused by the node, or its nonce taken by a cancellation or an outside
        /// transaction: never mined, and nothing else carries its work.
        Rejected = "rejected",
        /// Never mined, and another transaction carries its work: a variant of the same
        /// nonce with other fees (one of them was mined), or the work re-sent under a new
        /// nonce. Marked only once that other transaction is journaled, so an intent never
        /// has every transaction dead while its work goes on.
        Replaced = "replaced",
    }
);

string_enum!(
    /// What a row of the outbox asks the engine to do. The first five send one operator
    /// transaction of the same name (and are done once its outcome is recorded); the last
    /// two drive an object through legs that take from seconds to days (bank transfers,
    /// router transfers), step by step, until it is final.
    WorkKind {
        /// Create a mandate on chain.
        CreateMandate = "create_mandate",
        /// Issue a session key on chain.
        IssueSessionKey = "issue_session_key",
        /// Cancel a mandate on chain.
        CancelMandate = "cancel_mandate",
        /// Revoke a session key on chain.
        RevokeSessionKey = "revoke_session_key",
        /// Send a debit pull (batched with the others in flight).
        PullBatch = "pull_batch",
        /// Drive a payment (`pay_…`): its legs, then any refund owed.
        Payment = "payment",
        /// Drive the bank leg and payout of an authorized pull on a bank-funded mandate.
        Payout = "payout",
        /// Attest an identity attestation on the attestation chain's registry.
        Attest = "attest",
        /// Revoke an identity attestation on the attestation chain's registry.
        RevokeAttestation = "revoke_attestation",
        /// Record an attestation's receipt in the settlement chain's attestation mirror.
        MirrorAttested = "mirror_attested",
        /// Record a revocation's receipt in the settlement chain's attestation mirror.
        MirrorRevoked = "mirror_revoked",
    }
);

impl WorkKind {
    /// The one transaction this work sends (`None` for the work that drives an object
    /// through several legs).
    pub fn tx_kind(self) -> Option<TxKind> {
        match self {
            WorkKind::CreateMandate => Some(TxKind::CreateMandate),
            WorkKind::IssueSessionKey => Some(TxKind::IssueSessionKey),
            WorkKind::CancelMandate => Some(TxKind::CancelMandate),
            WorkKind::RevokeSessionKey => Some(TxKind::RevokeSessionKey),
            WorkKind::PullBatch => Some(TxKind::PullBatch),
            WorkKind::Attest => Some(TxKind::Attest),
            WorkKind::RevokeAttestation => Some(TxKind::RevokeAttestation),
            WorkKind::MirrorAttested => Some(TxKind::MirrorAttested),
            WorkKind::MirrorRevoked => Some(TxKind::MirrorRevoked),
            WorkKind::Payment | WorkKind::Payout => None,
        }
    }

    /// The work that sends one transaction of `kind` (`None` for a payment's legs, which
    /// are sent by driving work).
    pub fn sending(kind: TxKind) -> Option<WorkKind> {
        WorkKind::ALL
            .iter()
            .copied()
            .find(|w| w.tx_kind() == Some(kind))
    }
}

/// What a journaled transaction carries, and what a row of the outbox is for: the object it
/// acts on, or one leg of a payment or of a pull's payout. Its text (`Display`, `FromStr`,
/// serde) is the object's id, with `:source`, `:refund` or `:payout` after it for a leg
/// that is not the object's own transaction.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Intent {
    /// A mandate (`man_…`): its create and cancel transactions, and their work.
    Mandate(MandateId),
    /// A session key (`sk_…`): its issue and revoke transactions, and their work.
    SessionKey(SessionKeyId),
    /// A debit pull (`pull_…`): its item of a `pullBatch`, and its `pull_batch` and
    /// `payout` work.
    Pull(PullId),
    /// A payment (`pay_…`): its own router transfer to the destination, and its `payment`
    /// work.
    Payment(PaymentId),
    /// The router transfer that takes a payment's funds from its source wallet
    /// (`pay_…:source`; a payment with a bank leg).
    PaymentSource(PaymentId),
    /// The router transfer that pays a payment's refund back to its source wallet
    /// (`pay_…:refund`).
    PaymentRefund(PaymentId),
    /// The treasury's router transfer paying out a bank-funded pull (`pull_…:payout`).
    Payout(PullId),
    /// An identity attestation (`att_…`): its attest, revoke and mirror transactions, and
    /// their work.
    Attestation(AttestationId),
}

/// Text that is no [`Intent`] (see [`Intent`]'s `FromStr`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an intent: {0:?}")]
pub struct IntentError(pub String);

/// What follows the id in a leg's text.
const SOURCE: &str = "source";
const REFUND: &str = "refund";
const PAYOUT: &str = "payout";

impl Intent {
    /// The id of the object it is for (a payment's, for its legs; a pull's, for its
    /// payout).
    pub fn object_id(&self) -> &str {
        match self {
            Intent::Mandate(id) => id.as_str(),
            Intent::SessionKey(id) => id.as_str(),
            Intent::Pull(id) | Intent::Payout(id) => id.as_str(),
            Intent::Payment(id) | Intent::PaymentSource(id) | Intent::PaymentRefund(id) => {
                id.as_str()
            }
            Intent::Attestation(id) => id.as_str(),
        }
    }

    /// What follows the object's id in the text, if anything.
    fn leg(&self) -> Option<&'static str> {
        match self {
            Intent::PaymentSource(_) => Some(SOURCE),
            Intent::PaymentRefund(_) => Some(REFUND),
            Intent::Payout(_) => Some(PAYOUT),
            Intent::Mandate(_)
            | Intent::SessionKey(_)
            | Intent::Pull(_)
            | Intent::Payment(_)
            | Intent::Attestation(_) => None,
        }
    }

    /// The stored text (as `Display`), borrowed from the id when it is only the id.
    pub fn text(&self) -> Cow<'_, str> {
        match self.leg() {
            None => Cow::Borrowed(self.object_id()),
            Some(leg) => Cow::Owned(format!("{}:{leg}", self.object_id())),
        }
    }
}

impl fmt::Display for Intent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.object_id())?;
        match self.leg() {
            Some(leg) => write!(f, ":{leg}"),
            None => Ok(()),
        }
    }
}

impl FromStr for Intent {
    type Err = IntentError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parsed = match s.split_once(':') {
            Some((id, SOURCE)) => PaymentId::parse(id).map(Intent::PaymentSource),
            Some((id, REFUND)) => PaymentId::parse(id).map(Intent::PaymentRefund),
            Some((id, PAYOUT)) => PullId::parse(id).map(Intent::Payout),
            Some(_) => None,
            None => MandateId::parse(s)
                .map(Intent::Mandate)
                .or_else(|| SessionKeyId::parse(s).map(Intent::SessionKey))
                .or_else(|| PullId::parse(s).map(Intent::Pull))
                .or_else(|| PaymentId::parse(s).map(Intent::Payment))
                .or_else(|| AttestationId::parse(s).map(Intent::Attestation)),
        };
        parsed.ok_or_else(|| IntentError(s.to_string()))
    }
}

impl serde::Serialize for Intent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Intent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn id<T>(parse: fn(&str) -> Option<T>, s: &str) -> T {
        parse(s).expect("an id")
    }

    /// Every variant, with the text it is stored as.
    fn every_variant() -> Vec<(Intent, &'static str)> {
        vec![
            (Intent::Mandate(id(MandateId::parse, "man_1")), "man_1"),
            (Intent::SessionKey(id(SessionKeyId::parse, "sk_1")), "sk_1"),
            (Intent::Pull(id(PullId::parse, "pull_1")), "pull_1"),
            (Intent::Payment(id(PaymentId::parse, "pay_1")), "pay_1"),
            (
                Intent::PaymentSource(id(PaymentId::parse, "pay_1")),
                "pay_1:source",
            ),
            (
                Intent::PaymentRefund(id(PaymentId::parse, "pay_1")),
                "pay_1:refund",
            ),
            (Intent::Payout(id(PullId::parse, "pull_1")), "pull_1:payout"),
            (
                Intent::Attestation(id(AttestationId::parse, "att_1")),
                "att_1",
            ),
        ]
    }

    #[test]
    fn each_variant_has_its_stored_text() {
        for (intent, text) in every_variant() {
            assert_eq!(intent.to_string(), text);
            assert_eq!(intent.text(), text);
            assert_eq!(text.parse::<Intent>(), Ok(intent.clone()));
            let json = serde_json::to_string(&intent).expect("serializes");
            assert_eq!(json, format!("\"{text}\""));
            assert_eq!(serde_json::from_str::<Intent>(&json).ok(), Some(intent));
        }
        // Every variant is in the list above, once (a new one fails to compile here until
        // it is named, and the count fails until it is listed).
        let variant = |i: &Intent| match i {
            Intent::Mandate(_) => 0,
            Intent::SessionKey(_) => 1,
            Intent::Pull(_) => 2,
            Intent::Payment(_) => 3,
            Intent::PaymentSource(_) => 4,
            Intent::PaymentRefund(_) => 5,
            Intent::Payout(_) => 6,
            Intent::Attestation(_) => 7,
        };
        let listed: std::collections::BTreeSet<u8> =
            every_variant().iter().map(|(i, _)| variant(i)).collect();
        assert_eq!(listed, (0..8).collect());
    }

    #[test]
    fn a_leg_names_the_object_it_is_for() {
        let pay = id(PaymentId::parse, "pay_1");
        assert_eq!(Intent::PaymentRefund(pay.clone()).object_id(), "pay_1");
        assert_eq!(Intent::Payment(pay).object_id(), "pay_1");
        let pull = id(PullId::parse, "pull_1");
        assert_eq!(Intent::Payout(pull).object_id(), "pull_1");
    }

    #[test]
    fn text_that_is_no_intent_is_refused() {
        for text in [
            "",
            ":",
            "man_",
            "pull_",
            "acct_1",
            "key_1",
            "evt_1",
            "idv_1",
            "xyz",
            "man_ab-c",
            "man_1:source",
            "sk_1:refund",
            "pull_1:source",
            "pull_1:refund",
            "pay_1:payout",
            "att_1:payout",
            "pay_1:",
            "pay_1:sources",
            "pay_1:source:source",
            "pay_1:Source",
            ":source",
            "pay_:source",
            " pay_1",
            "pay_1 ",
        ] {
            assert_eq!(
                text.parse::<Intent>(),
                Err(IntentError(text.to_string())),
                "{text:?}"
            );
            assert!(serde_json::from_str::<Intent>(&format!("{text:?}")).is_err());
        }
        let long = format!("pull_{}", "a".repeat(65));
        assert!(long.parse::<Intent>().is_err());
    }

    /// Any intent, its id's characters as `parse` allows them.
    fn any_intent() -> impl Strategy<Value = Intent> {
        let rest = "[A-Za-z0-9_]{1,64}";
        prop_oneof![
            rest.prop_map(|r| Intent::Mandate(id(MandateId::parse, &format!("man_{r}")))),
            rest.prop_map(|r| Intent::SessionKey(id(SessionKeyId::parse, &format!("sk_{r}")))),
            rest.prop_map(|r| Intent::Pull(id(PullId::parse, &format!("pull_{r}")))),
            rest.prop_map(|r| Intent::Payment(id(PaymentId::parse, &format!("pay_{r}")))),
            rest.prop_map(|r| Intent::PaymentSource(id(PaymentId::parse, &format!("pay_{r}")))),
            rest.prop_map(|r| Intent::PaymentRefund(id(PaymentId::parse, &format!("pay_{r}")))),
            rest.prop_map(|r| Intent::Payout(id(PullId::parse, &format!("pull_{r}")))),
            rest.prop_map(|r| Intent::Attestation(id(AttestationId::parse, &format!("att_{r}")))),
        ]
    }

    proptest! {
        #[test]
        fn display_then_parse_is_the_same_intent(intent in any_intent()) {
            let text = intent.to_string();
            prop_assert_eq!(intent.text(), text.as_str());
            prop_assert_eq!(text.parse::<Intent>(), Ok(intent.clone()));
            let json = serde_json::to_string(&intent).expect("serializes");
            prop_assert_eq!(serde_json::from_str::<Intent>(&json).ok(), Some(intent));
        }

        #[test]
        fn parse_then_display_is_the_same_text(text in "[a-z]{1,5}_[A-Za-z0-9_]{1,8}(:[a-z]{0,7})?") {
            if let Ok(intent) = text.parse::<Intent>() {
                prop_assert_eq!(intent.to_string(), text);
            }
        }
    }
}
