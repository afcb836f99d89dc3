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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Lifecycle;

    #[test]
    fn what_ends_stays_ended() {
        assert!(TransferStatus::Failed.is_final() && !TransferStatus::Settled.is_final());
    }
}
