//! A (simulated) bank account and the transfers on it, the bank legs of payments and
//! pulls. Their ids (`ba_…`, `btr_…`) and a transfer's lifecycle, with the transitions it
//! allows.

use crate::ids::typed_id;
use crate::status::lifecycle;

typed_id!(
    /// A (simulated) bank account (`ba_…`).
    BankAccountId = "ba_"
);
typed_id!(
    /// A transfer on a (simulated) bank account (`btr_…`).
    BankTransferId = "btr_"
);

string_enum!(
    /// Lifecycle of a bank transfer.
    TransferStatus {
        /// Not yet due.
        Pending = "pending",
        /// Money moved (a `fails_late` debit may still be returned).
        Settled = "settled",
        /// Did not move, or was returned.
        Failed = "failed",
    }
);

impl TransferStatus {
    /// The statuses a transfer may move to `self` from: `failed` after `settled` is a
    /// debit returned late.
    pub fn sources(self) -> &'static [TransferStatus] {
        use TransferStatus::*;
        match self {
            Pending => &[],
            Settled => &[Pending],
            Failed => &[Pending, Settled],
        }
    }
}

lifecycle!(TransferStatus, starts: [Pending]);

events!(
    /// What happens to a bank transfer: the types of its events.
    BankTransferEvent of BankTransfer {
        /// A simulated bank transfer started.
        BankTransferCreated = "bank_account.transfer.created",
        /// It settled.
        BankTransferSettled = "bank_account.transfer.settled",
        /// It failed (`failure_reason`).
        BankTransferFailed = "bank_account.transfer.failed",
    }
);

impl crate::EventType {
    /// The event of a bank transfer moving to `s` (`pending`: it started).
    pub fn of_transfer(s: TransferStatus) -> crate::EventType {
        match s {
            TransferStatus::Pending => crate::EventType::BankTransferCreated,
            TransferStatus::Settled => crate::EventType::BankTransferSettled,
            TransferStatus::Failed => crate::EventType::BankTransferFailed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Lifecycle;

    #[test]
    fn what_ends_stays_ended() {
        assert!(TransferStatus::Failed.is_final() && !TransferStatus::Settled.is_final());
    }
}
