//! Bank rails. Testnet has a simulated bank, persisted in the database and asynchronous
//! like a real rail: a transfer is `pending` until it is due, then settles or fails as the
//! account's chosen behaviour says; a `fails_late` debit first settles, then is returned.
//! The rules ([`next`]) are sans-IO; [`SimulatedBank`] applies them through the store.

use openrail_domain::{BankAccountId, FailureReason};
use openrail_store::bank::{BankTransfer, Behavior, Direction, TransferStatus};
use openrail_store::{Store, StoreError, now_ms};

/// The bank's decision for a transfer that is due.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// New status.
    pub status: TransferStatus,
    /// Why it failed.
    pub failure_reason: Option<FailureReason>,
    /// Change of the account's balance, minor units.
    pub balance_delta: i64,
    /// Change of the amount pending debits hold, minor units (a pending debit holds its
    /// amount from its start until it settles or fails).
    pub held_delta: i64,
    /// When the transfer is next due (`None`: final).
    pub next_due: Option<i64>,
}

/// What happens to `t` at `now`, on an account with `behavior`, `balance` and `delay_ms`;
/// `None` while it is not due or already final.
pub fn next(
    t: &BankTransfer,
    behavior: Behavior,
    balance: i64,
    delay_ms: i64,
    now: i64,
) -> Option<Transition> {
    if now < t.due_at || t.due_at == i64::MAX {
        return None;
    }
    let amount = i64::try_from(t.amount).unwrap_or(i64::MAX);
    // A pending debit's hold is released whatever becomes of it.
    let release = if t.status == TransferStatus::Pending && t.direction == Direction::Debit {
        -amount
    } else {
        0
    };
    let fail = |reason| Transition {
        status: TransferStatus::Failed,
        failure_reason: Some(reason),
        balance_delta: 0,
        held_delta: release,
        next_due: None,
    };
    match (t.status, t.direction) {
        (TransferStatus::Pending, _) if behavior == Behavior::Closed => {
            Some(fail(FailureReason::AccountClosed))
        }
        // `balance` includes what this debit holds, so this holds only for debits that
        // started without a hold (before holds existed).
        (TransferStatus::Pending, Direction::Debit)
            if behavior == Behavior::InsufficientFunds || balance < amount =>
        {
            Some(fail(FailureReason::InsufficientFunds))
        }
        (TransferStatus::Pending, Direction::Debit) => Some(Transition {
            status: TransferStatus::Settled,
            failure_reason: None,
            balance_delta: -amount,
            held_delta: release,
            // A late failure comes back one more delay after looking settled.
            next_due: (behavior == Behavior::FailsLate).then_some(now + delay_ms),
        }),
        (TransferStatus::Pending, Direction::Credit) => Some(Transition {
            status: TransferStatus::Settled,
            failure_reason: None,
            balance_delta: amount,
            held_delta: 0,
            next_due: None,
        }),
        (TransferStatus::Settled, Direction::Debit) if behavior == Behavior::FailsLate => {
            Some(Transition {
                status: TransferStatus::Failed,
                failure_reason: Some(FailureReason::Returned),
                balance_delta: amount,
                held_delta: 0,
                next_due: None,
            })
        }
        (TransferStatus::Settled | TransferStatus::Failed, _) => None,
    }
}

/// Errors of a bank rail.
#[derive(Debug, thiserror::Error)]
pub enum BankError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No such bank account.
    #[error("no such bank account")]
    UnknownAccount,
}

impl BankError {
    /// Whether retrying may succeed.
    pub fn is_transient(&self) -> bool {
        match self {
            BankError::Store(e) => e.is_transient(),
            BankError::UnknownAccount => false,
        }
    }
}

/// A bank rail: debits and credits identified by an idempotency key (asking twice with one
/// key returns the first transfer, never a second one).
pub trait BankRail: Send + Sync {
    /// Starts a debit of `amount` minor units.
    fn debit(
        &self,
        bank_account_id: &BankAccountId,
        amount: u64,
        idempotency_key: &str,
    ) -> impl Future<Output = Result<BankTransfer, BankError>> + Send;
    /// Starts a credit of `amount` minor units.
    fn credit(
        &self,
        bank_account_id: &BankAccountId,
        amount: u64,
        idempotency_key: &str,
    ) -> impl Future<Output = Result<BankTransfer, BankError>> + Send;
}

/// Testnet's simulated bank.
#[derive(Debug, Clone)]
pub struct SimulatedBank {
    store: Store,
}

impl SimulatedBank {
    /// A simulated bank over `store`.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    async fn start(
        &self,
        bank_account_id: &BankAccountId,
        direction: Direction,
        amount: u64,
        key: &str,
    ) -> Result<BankTransfer, BankError> {
        let transfer = match self
            .store
            // The simulated bank keeps its own time.
            .bank()
            .start_transfer(bank_account_id, direction, amount, key, now_ms())
            .await
        {
            Err(StoreError::NotFound) => return Err(BankError::UnknownAccount),
            other => other?,
        };
        openrail_store::crash::point(openrail_store::crash::AFTER_BANK_CALL);
        Ok(transfer)
    }

    /// Applies every transition due at `now`; returns how many transfers changed.
    pub async fn process_due(&self, now: i64) -> Result<usize, BankError> {
        let mut changed = 0;
        for (t, account) in self.store.bank().due_transfers(now, 100).await? {
            if let Some(tr) = next(&t, account.behavior, account.balance, account.delay_ms, now) {
                let applied = self
                    .store
                    .bank()
                    .apply_transition(
                        &t,
                        tr.status,
                        tr.failure_reason,
                        (tr.balance_delta, tr.held_delta),
                        tr.next_due.unwrap_or(i64::MAX),
                        now,
                    )
                    .await?;
                changed += usize::from(applied);
            }
        }
        Ok(changed)
    }

    /// Applies due transitions every `poll`, forever (the simulated bank's own clock; run
    /// by the process holding the settlement chain's lease).
    pub async fn run(self, poll: std::time::Duration) {
        loop {
            if let Err(e) = self.process_due(now_ms()).await {
                tracing::warn!(error = %e, "simulated bank step failed");
            }
            tokio::time::sleep(poll).await;
        }
    }
}

impl BankRail for SimulatedBank {
    async fn debit(
        &self,
        bank_account_id: &BankAccountId,
        amount: u64,
        key: &str,
    ) -> Result<BankTransfer, BankError> {
        self.start(bank_account_id, Direction::Debit, amount, key)
            .await
    }

    async fn credit(
        &self,
        bank_account_id: &BankAccountId,
        amount: u64,
        key: &str,
    ) -> Result<BankTransfer, BankError> {
        self.start(bank_account_id, Direction::Credit, amount, key)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transfer(
        direction: Direction,
        status: TransferStatus,
        amount: u64,
        due_at: i64,
    ) -> BankTransfer {
        BankTransfer {
            id: openrail_domain::BankTransferId::parse("btr_x").expect("an id"),
            bank_account_id: BankAccountId::parse("ba_x").expect("an id"),
            direction,
            amount,
            status,
            failure_reason: None,
            due_at,
            created_at: 0,
            updated_at: 0,
        }
    }

    #[test]
    fn nothing_happens_before_due() {
        let t = transfer(Direction::Debit, TransferStatus::Pending, 5, 100);
        assert_eq!(next(&t, Behavior::Settles, 10, 1000, 99), None);
    }

    #[test]
    fn behaviours() {
        let debit = transfer(Direction::Debit, TransferStatus::Pending, 5, 100);
        let settled = next(&debit, Behavior::Settles, 10, 1000, 100).unwrap();
        assert_eq!(
            (
                settled.status,
                settled.balance_delta,
                settled.held_delta,
                settled.next_due
            ),
            (TransferStatus::Settled, -5, -5, None)
        );
        let poor = next(&debit, Behavior::Settles, 4, 1000, 100).unwrap();
        assert_eq!(
            (poor.status, poor.failure_reason),
            (
                TransferStatus::Failed,
                Some(FailureReason::InsufficientFunds)
            )
        );
        let forced = next(&debit, Behavior::InsufficientFunds, 1_000, 1000, 100).unwrap();
        assert_eq!(
            forced.failure_reason,
            Some(FailureReason::InsufficientFunds)
        );
        let closed = next(&debit, Behavior::Closed, 1_000, 1000, 100).unwrap();
        assert_eq!(
            (
                closed.failure_reason,
                closed.balance_delta,
                closed.held_delta
            ),
            (Some(FailureReason::AccountClosed), 0, -5)
        );
        let late = next(&debit, Behavior::FailsLate, 10, 1000, 100).unwrap();
        assert_eq!(
            (late.status, late.next_due),
            (TransferStatus::Settled, Some(1100))
        );
        let looked_settled = transfer(Direction::Debit, TransferStatus::Settled, 5, 1100);
        let returned = next(&looked_settled, Behavior::FailsLate, 5, 1000, 1100).unwrap();
        assert_eq!(
            (
                returned.status,
                returned.failure_reason,
                returned.balance_delta
            ),
            (TransferStatus::Failed, Some(FailureReason::Returned), 5)
        );
        let credit = transfer(Direction::Credit, TransferStatus::Pending, 7, 100);
        assert_eq!(
            next(&credit, Behavior::Settles, 0, 1000, 100)
                .unwrap()
                .balance_delta,
            7
        );
        // Final states never move again.
        assert_eq!(
            next(
                &transfer(Direction::Debit, TransferStatus::Failed, 5, 0),
                Behavior::FailsLate,
                0,
                0,
                1
            ),
            None
        );
        assert_eq!(
            next(
                &transfer(Direction::Credit, TransferStatus::Settled, 5, i64::MAX),
                Behavior::Settles,
                0,
                0,
                i64::MAX - 1
            ),
            None
        );
    }
}
