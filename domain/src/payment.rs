//! A one-time payment, wallet or bank to wallet or bank, and the refund owed to its source
//! when its destination leg fails. Its id (`pay_…`) and both lifecycles, with the
//! transitions they allow.

use crate::ids::typed_id;
use crate::status::lifecycle;

typed_id!(
    /// A one-time payment (`pay_…`).
    PaymentId = "pay_"
);

string_enum!(
    /// Lifecycle of a payment.
    PaymentStatus {
        /// Waiting for the payer's signature (wallet sources); nothing moves until then.
        RequiresAuthorization = "requires_authorization",
        /// Accepted, nothing sent yet.
        Pending = "pending",
        /// Its transaction (or bank transfer) is under way.
        Processing = "processing",
        /// Money arrived.
        Succeeded = "succeeded",
        /// It did not; `failure_reason` says why.
        Failed = "failed",
        /// Withdrawn by the developer while it waited for its payer's signature; nothing
        /// moved, and its authorization can no longer be given.
        Canceled = "canceled",
    }
);

impl PaymentStatus {
    /// The statuses a payment may move to `self` from (none: only a new payment has it).
    pub fn sources(self) -> &'static [PaymentStatus] {
        use PaymentStatus::*;
        match self {
            RequiresAuthorization => &[],
            Pending => &[RequiresAuthorization],
            Processing => &[Pending],
            Succeeded | Failed => &[Processing],
            Canceled => &[RequiresAuthorization],
        }
    }
}

lifecycle!(PaymentStatus, starts: [RequiresAuthorization, Pending]);

string_enum!(
    /// A refund owed to a payment's source after its destination leg failed.
    RefundStatus {
        /// Owed, not yet back at the source.
        Pending = "pending",
        /// Back at the source.
        Succeeded = "succeeded",
        /// The refund itself failed: an operator must act (logged as an error).
        Failed = "failed",
    }
);

impl RefundStatus {
    /// The statuses a refund may move to `self` from (none: it starts owed).
    pub fn sources(self) -> &'static [RefundStatus] {
        use RefundStatus::*;
        match self {
            Pending => &[],
            Succeeded | Failed => &[Pending],
        }
    }
}

lifecycle!(RefundStatus, starts: [Pending]);

kinds!(TxKind:
    /// What a payment's transactions do.
    PaymentTx of Payment {
        /// `settle` / `settleWithSignature`, a router transfer (intent: a payment or one of
        /// its legs, or a pull's payout).
        Settle = "settle",
    }
);

kinds!(WorkKind:
    /// What the outbox asks the engine to do for a payment.
    PaymentWork of Payment {
        /// Drive the payment: its legs, then any refund owed.
        DrivePayment = "payment",
    }
);

impl PaymentWork {
    /// None: a payment is driven step by step, each leg its own transfer.
    pub fn tx_kind(self) -> Option<crate::TxKind> {
        match self {
            PaymentWork::DrivePayment => None,
        }
    }
}

events!(
    /// What happens to a payment: the types of its events.
    PaymentEvent of Payment {
        /// A payment was created.
        PaymentCreated = "payment.created",
        /// A payment waits for its payer's signature.
        PaymentRequiresAuthorization = "payment.requires_authorization",
        /// The payer signed; the payment will run.
        PaymentAuthorized = "payment.authorized",
        /// The payment's transaction or bank transfer is under way.
        PaymentProcessing = "payment.processing",
        /// The money arrived.
        PaymentSucceeded = "payment.succeeded",
        /// The payment failed (`failure_reason`).
        PaymentFailed = "payment.failed",
        /// The developer withdrew the payment before its payer signed; nothing moved.
        PaymentCanceled = "payment.canceled",
        /// A refund owed to the payment's source arrived.
        PaymentRefundSucceeded = "payment.refund_succeeded",
        /// A refund owed to the payment's source failed.
        PaymentRefundFailed = "payment.refund_failed",
    }
);

impl crate::EventType {
    /// The event of a payment moving to `s` (`pending` after creation: the payer signed).
    pub fn of_payment(s: PaymentStatus) -> crate::EventType {
        match s {
            PaymentStatus::RequiresAuthorization => crate::EventType::PaymentRequiresAuthorization,
            PaymentStatus::Pending => crate::EventType::PaymentAuthorized,
            PaymentStatus::Processing => crate::EventType::PaymentProcessing,
            PaymentStatus::Succeeded => crate::EventType::PaymentSucceeded,
            PaymentStatus::Failed => crate::EventType::PaymentFailed,
            PaymentStatus::Canceled => crate::EventType::PaymentCanceled,
        }
    }
    /// The event of a refund ending in `s` (none for `pending`: the payment's failure says so).
    pub fn of_refund(s: RefundStatus) -> Option<crate::EventType> {
        match s {
            RefundStatus::Pending => None,
            RefundStatus::Succeeded => Some(crate::EventType::PaymentRefundSucceeded),
            RefundStatus::Failed => Some(crate::EventType::PaymentRefundFailed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Lifecycle;

    #[test]
    fn what_ends_stays_ended() {
        use PaymentStatus as P;
        for s in [P::Succeeded, P::Failed, P::Canceled] {
            assert!(s.is_final(), "{s:?}");
        }
        assert!(!P::Processing.is_final());
        assert!(RefundStatus::Succeeded.is_final() && RefundStatus::Failed.is_final());
    }

    #[test]
    fn names_round_trip() {
        for s in PaymentStatus::ALL {
            assert_eq!(PaymentStatus::parse(s.as_str()), Some(*s));
        }
    }
}
