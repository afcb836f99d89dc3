//! Why money did not move: the `failure_reason` of a failed bank transfer, payment or
//! debit pull's bank leg, one list for every rail. The bank simulator, the chain's
//! diagnosis of a reverted transfer and the payment driver write these; the API shows
//! them as they are stored.

use crate::pulls::DeclineReason;

string_enum!(
    /// Why a transfer, a payment or a pull's bank leg failed.
    FailureReason {
        /// The source did not hold the amount (a bank account's balance, or a wallet's
        /// token balance when its transfer reverted).
        InsufficientFunds = "insufficient_funds",
        /// A wallet source had not allowed the settlement router the amount.
        AllowanceInsufficient = "allowance_insufficient",
        /// The bank account is closed.
        AccountClosed = "account_closed",
        /// A debit that looked settled was returned by the bank.
        Returned = "returned",
        /// The bank failed the transfer without saying why.
        BankFailure = "bank_failure",
        /// The transaction was mined and reverted (no cause found on chain).
        TransactionReverted = "transaction_reverted",
        /// The node refused the transaction, or it was never mined.
        TransactionFailed = "transaction_failed",
        /// A debit pull's payout to its destination failed (its bank debit is refunded).
        PayoutFailed = "payout_failed",
    }
);

impl FailureReason {
    /// The failure a chain decline stands for, when one does (a reverted transfer
    /// diagnosed as short of balance or allowance).
    pub fn of_decline(d: DeclineReason) -> Option<Self> {
        match d {
            DeclineReason::InsufficientFunds => Some(FailureReason::InsufficientFunds),
            DeclineReason::AllowanceInsufficient => Some(FailureReason::AllowanceInsufficient),
            DeclineReason::SessionKeyRevoked
            | DeclineReason::SessionKeyExpired
            | DeclineReason::MandateNotActive
            | DeclineReason::AllowanceExceeded
            | DeclineReason::DestinationNotAllowed
            | DeclineReason::TransferFailed
            | DeclineReason::SessionKeyNotActive
            | DeclineReason::SignatureRequired
            | DeclineReason::SignatureInvalid
            | DeclineReason::AuthorizationExpired
            | DeclineReason::NonceUsed
            | DeclineReason::IdentityRequirementUnmet => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_declines_keep_their_name() {
        for r in FailureReason::ALL {
            assert_eq!(FailureReason::parse(r.as_str()), Some(*r));
        }
        for d in DeclineReason::ALL {
            if let Some(f) = FailureReason::of_decline(*d) {
                assert_eq!(f.as_str(), d.as_str());
            }
        }
    }
}
