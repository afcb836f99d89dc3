//! Testnet's simulated bank: accounts with a chosen behaviour and their transfers. The rules
//! that move transfers live in `openrail-relayer` (sans-IO); this module stores them.

use crate::exec::{Exec, Record, Stmt};

use crate::db::{Store, StoreError};
use crate::events::{self, EventType};
use crate::ids::Mode;
use crate::money::Currency;
pub use crate::rows::bank::{BankTransfer, Direction};
pub(crate) use crate::rows::bank::{TRANSFER_COLS, transfer_of};
use crate::rows::{Page, Scope};
use openrail_domain::FailureReason;
pub use openrail_domain::TransferStatus;
use openrail_domain::{AccountId, BankAccountId, BankTransferId};

/// Testnet's simulated bank: its accounts and their transfers (`store.bank()`).
#[derive(Debug, Clone, Copy)]
pub struct Bank<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on the testnet's simulated bank ([`Bank`]).
    pub fn bank(&self) -> Bank<'_> {
        Bank(self)
    }
}

string_enum!(
    /// How a simulated account behaves.
    Behavior {
        /// Transfers settle after the account's delay.
        Settles = "settles",
        /// Debits fail for insufficient funds.
        InsufficientFunds = "insufficient_funds",
        /// Every transfer fails: the account is closed.
        Closed = "closed",
        /// Transfers settle after a longer delay.
        Delayed = "delayed",
        /// Debits look settled, then are returned one delay later.
        FailsLate = "fails_late",
    }
);

impl Behavior {
    /// The delay an account gets when none is asked for, ms.
    pub fn default_delay_ms(self) -> i64 {
        match self {
            Behavior::Delayed | Behavior::FailsLate => 5_000,
            Behavior::Settles | Behavior::InsufficientFunds | Behavior::Closed => 1_000,
        }
    }
}

/// A simulated bank account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BankAccount {
    /// `ba_…`
    pub id: BankAccountId,
    /// Owner (developer account).
    pub account_id: AccountId,
    /// Mode.
    pub mode: Mode,
    /// Account holder.
    pub owner_name: String,
    /// Currency.
    pub currency: Currency,
    /// Balance, minor units (settled transfers only).
    pub balance: i64,
    /// Held by pending debits, minor units: `balance - held` is available.
    pub held: i64,
    /// Simulated behaviour.
    pub behavior: Behavior,
    /// How long a transfer stays pending, ms.
    pub delay_ms: i64,
    /// Unix ms.
    pub created_at: i64,
}

const ACCOUNT_COLS: &str =
    "id, account_id, mode, owner_name, currency, balance, behavior, delay_ms, created_at, held";

fn corrupt(what: &str, v: &str) -> StoreError {
    StoreError::Corrupt(format!("{what} {v:?}"))
}

fn account_of(r: &impl Record) -> Result<BankAccount, StoreError> {
    account_prefixed(r, "")
}

/// A bank account from columns named `<prefix><column>` (joins alias them).
fn account_prefixed(r: &impl Record, prefix: &str) -> Result<BankAccount, StoreError> {
    let col = |c: &str| format!("{prefix}{c}");
    let mode = r.string(&col("mode"))?;
    let currency = r.string(&col("currency"))?;
    let behavior = r.string(&col("behavior"))?;
    Ok(BankAccount {
        id: BankAccountId::from_trusted(r.string(&col("id"))?),
        account_id: AccountId::from_trusted(r.string(&col("account_id"))?),
        mode: Mode::parse(&mode).ok_or_else(|| corrupt("mode", &mode))?,
        owner_name: r.string(&col("owner_name"))?,
        currency: Currency::parse(&currency).ok_or_else(|| corrupt("currency", &currency))?,
        balance: r.integer(&col("balance"))?,
        behavior: Behavior::parse(&behavior).ok_or_else(|| corrupt("behavior", &behavior))?,
        delay_ms: r.integer(&col("delay_ms"))?,
        created_at: r.integer(&col("created_at"))?,
        held: r.integer(&col("held"))?,
    })
}

impl Bank<'_> {
    /// Creates a simulated bank account.
    pub async fn create_account(self, a: &BankAccount) -> Result<(), StoreError> {
        let q = self
            .0
            .stmt(format!(
                "INSERT INTO bank_accounts ({ACCOUNT_COLS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)"
            ))
            .bind(a.id.as_str())
            .bind(a.account_id.as_str())
            .bind(a.mode.as_str())
            .bind(&a.owner_name)
            .bind(a.currency.code())
            .bind(a.balance)
            .bind(a.behavior.as_str())
            .bind(a.delay_ms)
            .bind(a.created_at)
            .bind(a.held);
        self.0.execute(q).await?;
        Ok(())
    }

    /// A bank account of this account and mode.
    pub async fn account(
        self,
        scope: Scope<'_>,
        id: &BankAccountId,
    ) -> Result<BankAccount, StoreError> {
        account_of(
            &self
                .0
                .scoped_row("bank_accounts", ACCOUNT_COLS, scope, id.as_str())
                .await?,
        )
    }

    /// Bank accounts, newest first.
    pub async fn list_accounts(
        self,
        scope: Scope<'_>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<BankAccount>, StoreError> {
        let (rows, has_more) = self
            .0
            .list_rows(
                "bank_accounts",
                ACCOUNT_COLS,
                scope,
                &[],
                limit,
                starting_after,
            )
            .await?;
        Ok(Page {
            data: rows.iter().map(account_of).collect::<Result<_, _>>()?,
            has_more,
        })
    }

    /// The transfers of a bank account, newest first (at most 100).
    pub async fn transfers(
        self,
        bank_account_id: &BankAccountId,
    ) -> Result<Vec<BankTransfer>, StoreError> {
        let q = self
            .0
            .stmt(format!(
                "SELECT {TRANSFER_COLS} FROM bank_transfers WHERE bank_account_id = $1 ORDER BY created_at DESC, id DESC LIMIT 100"
            ))
            .bind(bank_account_id.as_str());
        let rows = self.0.fetch(&q).await?;
        rows.iter().map(transfer_of).collect()
    }

    /// Starts a transfer, once per idempotency key: a second call with the same key returns
    /// the first transfer. A debit holds its amount out of the available balance (`balance
    /// - held`) in the same database transaction, with one conditional statement, so
    /// concurrent debits never spend one balance twice; when it is not available the debit
    /// is recorded failed at once with `insufficient_funds` and holds nothing.
    pub async fn start_transfer(
        self,
        bank_account_id: &BankAccountId,
        direction: Direction,
        amount: u64,
        idempotency_key: &str,
        now: i64,
    ) -> Result<BankTransfer, StoreError> {
        let q = self
            .0
            .stmt("SELECT delay_ms FROM bank_accounts WHERE id = $1")
            .bind(bank_account_id.as_str());
        let delay = self.0.fetch_one(&q).await?.integer("delay_ms")?;

        let amount = i64::try_from(amount).unwrap_or(i64::MAX);
        let id = BankTransferId::new();
        let bank_account_id = bank_account_id.clone();
        let key = idempotency_key.to_owned();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    let q = Stmt::new(
                        tx.backend(),
                        format!(
                            "INSERT INTO bank_transfers ({TRANSFER_COLS}, idempotency_key) VALUES ($1,$2,$3,$4,'pending',NULL,$5,$6,$6,$7) \
                             ON CONFLICT (idempotency_key) DO NOTHING"
                        ),
                    )
                    .bind(id.as_str())
                    .bind(bank_account_id.as_str())
                    .bind(direction.as_str())
                    .bind(amount)
                    .bind(now + delay)
                    .bind(now)
                    .bind(&key);
                    let created = tx.execute(&q).await? == 1;
                    if created {
                        events::record(&mut tx, EventType::BankTransferCreated, id.as_str(), now)
                            .await?;
                    }
                    if created && direction == Direction::Debit {
                        let q = Stmt::new(
                            tx.backend(),
                            "UPDATE bank_accounts SET held = held + $2 WHERE id = $1 AND balance - held >= $2"
                                .into(),
                        )
                        .bind(bank_account_id.as_str())
                        .bind(amount);
                        if tx.execute(&q).await? == 0 {
                            let (from, due) = (TransferStatus::Pending, now + delay);
                            let change =
                                (TransferStatus::Failed, Some(FailureReason::InsufficientFunds), i64::MAX);
                            move_transfer_in(&mut tx, &id, (from, due), change, now).await?;
                        }
                    }
                    Ok(())
                })
            })
            .await?;
        let q = self
            .0
            .stmt(format!(
                "SELECT {TRANSFER_COLS} FROM bank_transfers WHERE idempotency_key = $1"
            ))
            .bind(idempotency_key);
        transfer_of(&self.0.fetch_one(&q).await?)
    }

    /// Transfers due at `now` with their accounts, oldest first.
    pub async fn due_transfers(
        self,
        now: i64,
        limit: u32,
    ) -> Result<Vec<(BankTransfer, BankAccount)>, StoreError> {
        let cols: String = TRANSFER_COLS
            .split(", ")
            .map(|c| format!("t.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let acols: String = ACCOUNT_COLS
            .split(", ")
            .map(|c| format!("a.{c} AS a_{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let q = self
            .0
            .stmt(format!(
                "SELECT {cols}, {acols} FROM bank_transfers t JOIN bank_accounts a ON a.id = t.bank_account_id \
                 WHERE t.status IN ('pending', 'settled') AND t.due_at <= $1 ORDER BY t.due_at, t.id LIMIT {limit}"
            ))
            .bind(now);
        let rows = self.0.fetch(&q).await?;
        rows.iter()
            .map(|r| Ok((transfer_of(r)?, account_prefixed(r, "a_")?)))
            .collect()
    }

    /// Moves a transfer from the state it was read in to `status`, the account's balance
    /// by `balance_delta` and its held amount by `held_delta`, in one transaction. Returns
    /// false when another worker moved it first.
    pub async fn apply_transition(
        self,
        t: &BankTransfer,
        status: TransferStatus,
        failure_reason: Option<FailureReason>,
        (balance_delta, held_delta): (i64, i64),
        next_due: i64,
        now: i64,
    ) -> Result<bool, StoreError> {
        let t = t.clone();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    let change = (status, failure_reason, next_due);
                    if !move_transfer_in(&mut tx, &t.id, (t.status, t.due_at), change, now).await? {
                        return Ok(false);
                    }
                    let q = Stmt::new(
                        tx.backend(),
                        "UPDATE bank_accounts SET balance = balance + $2, held = held + $3 WHERE id = $1"
                            .into(),
                    )
                    .bind(t.bank_account_id.as_str())
                    .bind(balance_delta)
                    .bind(held_delta);
                    tx.execute(&q).await?;
                    Ok(true)
                })
            })
            .await
    }
}

impl Bank<'_> {
    /// The transfer started with `idempotency_key`, if any.
    pub async fn transfer_by_key(
        self,
        idempotency_key: &str,
    ) -> Result<Option<BankTransfer>, StoreError> {
        let q = self
            .0
            .stmt(format!(
                "SELECT {TRANSFER_COLS} FROM bank_transfers WHERE idempotency_key = $1"
            ))
            .bind(idempotency_key);
        let row = self.0.fetch_optional(&q).await?;
        row.as_ref().map(transfer_of).transpose()
    }
}

/// **The one place a bank transfer's status changes after creation**, inside the caller's
/// transaction: moves transfer `id`, still in the status and due time it was read in
/// (`from`), to `(status, failure_reason, next due time)`, as its lifecycle allows
/// ([`TransferStatus::sources`]; otherwise [`StoreError::Transition`], nothing written).
/// Records its event. Returns false when another worker moved it
/// first.
pub(crate) async fn move_transfer_in(
    conn: &mut impl Exec,
    id: &BankTransferId,
    (from, due_at): (TransferStatus, i64),
    (to, failure_reason, next_due): (TransferStatus, Option<FailureReason>, i64),
    now: i64,
) -> Result<bool, StoreError> {
    use openrail_domain::status::Lifecycle;
    // No status follows itself (the table's shape): a "move" to the status it has would
    // apply its balance change a second time.
    if !to.reachable_from(from) {
        return Err(StoreError::Transition(format!(
            "bank transfer {id}: {} → {}",
            from.as_str(),
            to.as_str()
        )));
    }
    let mut q = Stmt::new(
        conn.backend(),
        "UPDATE bank_transfers SET status = $2, failure_reason = $3, due_at = $4, updated_at = $5 \
         WHERE id = $1 AND status = $6 AND due_at = $7"
            .into(),
    );
    q.push(id.as_str())
        .push(to.as_str())
        .push(failure_reason.map(FailureReason::as_str))
        .push(next_due)
        .push(now)
        .push(from.as_str())
        .push(due_at);
    let moved = conn.execute(&q).await? == 1;
    if moved {
        events::record(conn, EventType::of_transfer(to), id.as_str(), now).await?;
    }
    Ok(moved)
}
