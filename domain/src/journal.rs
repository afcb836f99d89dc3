//! The outbound transaction journal's and the outbox's vocabulary: what a journaled
//! operator transaction does ([`TxKind`]) and where it stands ([`TxStatus`]), what a row of
//! the outbox asks the engine to do ([`WorkKind`]), and what a transaction or a row of the
//! outbox is for ([`Intent`]: an object, or one leg of a payment or a pull's payout). The
//! journal itself (its rows and queries) is the store's; the chain's submitter names these
//! when it signs and records.
//!
//! [`Intent`], [`TxKind`] and [`WorkKind`] are composed from the on-chain objects' lines in
//! `objects!` (`crate::lib`): each object declares its transaction and work kinds in its
//! own module (`MandateTx`, `MandateWork`, …, with `kinds!`), so a new on-chain object
//! adds nothing here.
//!
//! An intent is stored as text (a transaction's `intents` JSON array, its
//! `chain_tx_intents` rows, the outbox's `intent` column, and hashed into a router
//! transfer's on-chain reference): [`Intent`]'s `Display` writes that text and `FromStr`
//! reads it back; text that is no intent is an [`IntentError`].

pub use crate::{Intent, TxKind, WorkKind};

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

impl TxStatus {
    /// What an object's transition reads of this status.
    pub fn fate(self) -> Fate {
        match self {
            TxStatus::Succeeded => Fate::Succeeded,
            TxStatus::Reverted | TxStatus::Rejected => Fate::Failed,
            TxStatus::Signed | TxStatus::Replaced => Fate::Open,
        }
    }
}

/// A journaled transaction's fate as an object's transition reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Mined and succeeded.
    Succeeded,
    /// Mined and reverted, or refused with nothing else carrying its work.
    Failed,
    /// Not known yet, or another transaction carries its work: nothing follows from it.
    Open,
}

/// Text that is no [`Intent`] (see [`Intent`]'s `FromStr`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an intent: {0:?}")]
pub struct IntentError(pub String);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AttestationId, MandateId, PaymentId, PullId, SessionKeyId};
    use proptest::prelude::*;

    #[test]
    fn every_kind_has_one_name_and_round_trips() {
        let txs = TxKind::all();
        let names: std::collections::BTreeSet<_> = txs.iter().map(|k| k.as_str()).collect();
        assert_eq!(names.len(), txs.len(), "transaction kind names are unique");
        for k in &txs {
            assert_eq!(TxKind::parse(k.as_str()), Some(*k));
            let json = serde_json::to_string(k).expect("serializes");
            assert_eq!(serde_json::from_str::<TxKind>(&json).ok(), Some(*k));
        }
        let works = WorkKind::all();
        let names: std::collections::BTreeSet<_> = works.iter().map(|k| k.as_str()).collect();
        assert_eq!(names.len(), works.len(), "work kind names are unique");
        for w in &works {
            assert_eq!(WorkKind::parse(w.as_str()), Some(*w));
            // Work that sends one transaction is the only work sending that kind.
            if let Some(tx) = w.tx_kind() {
                assert_eq!(WorkKind::sending(tx), Some(*w));
            }
        }
        assert_eq!(TxKind::parse("cancel_nonce"), Some(TxKind::CancelNonce));
        assert_eq!(WorkKind::sending(TxKind::CancelNonce), None);
        assert_eq!(WorkKind::sending(TxKind::Settle), None);
        assert_eq!(TxKind::parse("payment"), None);
        assert_eq!(WorkKind::parse("settle"), None);
        // The names stored before the kinds were split by object.
        let stored = [
            "create_mandate",
            "cancel_mandate",
            "issue_session_key",
            "revoke_session_key",
            "pull_batch",
            "settle",
            "cancel_nonce",
            "attest",
            "revoke_attestation",
            "mirror_attested",
            "mirror_revoked",
        ];
        assert_eq!(names_of(&txs), stored.iter().copied().collect());
        let stored = [
            "create_mandate",
            "issue_session_key",
            "cancel_mandate",
            "revoke_session_key",
            "pull_batch",
            "payment",
            "payout",
            "attest",
            "revoke_attestation",
            "mirror_attested",
            "mirror_revoked",
        ];
        assert_eq!(
            works
                .iter()
                .map(|w| w.as_str())
                .collect::<std::collections::BTreeSet<_>>(),
            stored.iter().copied().collect()
        );
    }

    fn names_of(kinds: &[TxKind]) -> std::collections::BTreeSet<&'static str> {
        kinds.iter().map(|k| k.as_str()).collect()
    }

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
