//! The payment driver: the engine's steps for a payment and for the bank leg and payout of
//! a bank-funded pull. The engine (in the chain's lease holder) claims their driving work
//! from the outbox and calls [`PaymentDriver::drive_payment`] or
//! [`PaymentDriver::drive_payout`] until the object is final; every step reads where the
//! object stands from the database and the transaction journal, so a restart picks each one
//! up where it stood. Each router transfer is journaled with its [`Intent`], whose text is
//! also hashed into the transfer's on-chain reference. A wallet-to-wallet payment is one
//! router transfer ([`Intent::Payment`], `<payment>`); a payment with a bank leg has two
//! legs:
//!
//! - Source leg. A bank account is debited (idempotency key `<payment>:debit`, so a restart
//!   never debits twice) and the leg is done when the debit is final (settled and past any
//!   return window); a wallet pays the treasury through the router
//!   ([`Intent::PaymentSource`], `<payment>:source`; one journaled transaction per payment:
//!   a restart waits for the journaled one, never sends another).
//! - Destination leg. A wallet is paid from the treasury through the router
//!   ([`Intent::Payment`]; same rule); a bank account is credited (key
//!   `<payment>:credit`).
//!
//! A failed leg fails the payment with its reason (the bank's, or `insufficient_funds`
//! when the router refuses the payer's transfer). When the destination leg fails after the
//! source leg succeeded, the payment fails owing a refund (`refund_status = pending`, in
//! the same statement) and the driver sends the amount back to the source: a bank account
//! is credited (key `<payment>:refund`), a wallet is paid from the treasury
//! ([`Intent::PaymentRefund`], `<payment>:refund`, one journaled transaction). The refund
//! ends `succeeded`, or `failed` (logged as an error: an operator must act). A bank-funded
//! pull's payout is the treasury's transfer [`Intent::Payout`] (`<pull>:payout`).
//!
//! [`service`]: what a request for a payment means (`prepare`, then `accept`).

pub mod service;

use std::collections::BTreeMap;

use alloy::primitives::{Address, Bytes, U256, keccak256};
use alloy::sol_types::SolCall;
use openrail_chain::bindings::SettlementRouter;
use openrail_chain::submitter::Submitter;
use openrail_domain::PaymentWork;
use openrail_domain::journal::Intent;
use openrail_domain::{BankAccountId, FailureReason, PaymentId, PullId};
use openrail_store::bank::TransferStatus;
use openrail_store::journal::{TxKind, TxStatus};
use openrail_store::outbox::Work;
use openrail_store::payments::{PartyKind, Payment, PaymentStatus, RefundStatus};
use openrail_store::{Currency, Store, StoreError, now_ms};

use openrail_relayer::bank::{BankError, BankRail, SimulatedBank};

/// Who pays or is paid on chain in a leg: the treasury, or a wallet (its address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Party<'a> {
    Treasury,
    Wallet(&'a str),
}

/// Where an on-chain leg stands, read from the journal.
enum Leg {
    NotSent,
    InFlight,
    Done(String),
    /// Mined and reverted (`transaction_reverted`, refined for a wallet source by
    /// [`PaymentDriver::why_reverted`]) or refused by the node (`transaction_failed`).
    Failed {
        reason: FailureReason,
        hash: String,
    },
}

/// The bank account a payment names as its source or destination (an id that is none is
/// an unknown account, as the bank would say).
fn bank_account(id: &str) -> Result<BankAccountId, PaymentError> {
    BankAccountId::parse(id).ok_or(PaymentError::Bank(BankError::UnknownAccount))
}

/// Where a step of driving work left its object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drive {
    /// Final: nothing is left to do (close the work).
    Done,
    /// It moved and may move again at once.
    Moved,
    /// It waits for something outside (a bank transfer, a confirmation): try again later.
    Waiting,
}

/// Errors of a driving step.
#[derive(Debug, thiserror::Error)]
pub enum PaymentError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The bank rail failed.
    #[error(transparent)]
    Bank(#[from] BankError),
}

/// Drives payments and bank-funded pulls' payouts on one settlement chain.
#[derive(Clone)]
pub struct PaymentDriver {
    store: Store,
    bank: SimulatedBank,
    submitter: Submitter,
    router: Address,
    treasury: Address,
    tokens: BTreeMap<Currency, Address>,
    reader: alloy::providers::DynProvider,
}

impl PaymentDriver {
    /// A driver paying out through `router` from `treasury` with `submitter`.
    pub fn new(
        store: Store,
        submitter: Submitter,
        router: Address,
        treasury: Address,
        tokens: BTreeMap<Currency, Address>,
        reader: alloy::providers::DynProvider,
    ) -> Self {
        Self {
            reader,
            bank: SimulatedBank::new(store.clone()),
            store,
            submitter,
            router,
            treasury,
            tokens,
        }
    }

    /// One step of payment `id`: as far as it can go now. `Done` once it is final
    /// (succeeded, or failed owing no refund).
    pub async fn drive_payment(&self, id: &PaymentId) -> Result<Drive, PaymentError> {
        let p = self.store.payments().get_unscoped(id).await?;
        if p.is_final() {
            return Ok(Drive::Done);
        }
        if p.status == PaymentStatus::RequiresAuthorization {
            // Queued only once authorized: nothing may move without the payer's signature.
            tracing::error!(payment = %id, "payment work queued before its authorization; dropped");
            return Ok(Drive::Done);
        }
        let moved = self.advance(&p).await?;
        Ok(
            if self.store.payments().get_unscoped(id).await?.is_final() {
                Drive::Done
            } else if moved {
                Drive::Moved
            } else {
                Drive::Waiting
            },
        )
    }

    /// One step of the bank leg and payout of pull `id` (authorized on a bank-funded
    /// mandate). `Done` once the pull is `settled` or `failed`; `Waiting` while the
    /// transaction that authorized it is not confirmed, or a reorganisation sent it back to
    /// `pending` (it is authorized again, or fails, from the chain).
    pub async fn drive_payout(&self, id: &PullId) -> Result<Drive, PaymentError> {
        use openrail_store::agentic::PullStatus;
        let Some(pull) = self.store.pulls().bank_funded(id).await? else {
            tracing::error!(pull = %id, "payout work for a pull without a bank-funded mandate; dropped");
            return Ok(Drive::Done);
        };
        match pull.status {
            PullStatus::Authorized if pull.confirmed => {}
            PullStatus::Authorized | PullStatus::Pending => return Ok(Drive::Waiting),
            PullStatus::Declined | PullStatus::Settled | PullStatus::Failed => {
                return Ok(Drive::Done);
            }
        }
        let moved = self.settle_pull(&pull).await?;
        Ok(match self.store.pulls().bank_funded(id).await? {
            Some(p) if p.status == PullStatus::Authorized && moved => Drive::Moved,
            Some(p) if p.status == PullStatus::Authorized => Drive::Waiting,
            _ => Drive::Done,
        })
    }

    /// The bank leg and payout of an authorized pull of a bank-funded mandate. The chain
    /// authorized it on a deferred mandate: the ceiling is used, nothing moved. Debit the
    /// payer's bank account exactly once (key `<pull>:debit`); only once the debit is final
    /// (settled and past any return window) does the treasury pay the destination
    /// ([`Intent::Payout`], one journaled `settle`), and the pull ends `settled` when that is
    /// confirmed. A failed or returned debit ends the pull `failed` with the bank's reason
    /// and nothing paid; a payout the chain refuses credits the debit back (key
    /// `<pull>:refund`) and ends it `failed` (`payout_failed`).
    async fn settle_pull(
        &self,
        pull: &openrail_store::agentic::BankFundedPull,
    ) -> Result<bool, PaymentError> {
        use openrail_store::agentic::PullStatus;
        let debit = self
            .bank
            .debit(
                &pull.bank_account_id,
                pull.amount,
                &format!("{}:debit", pull.pull_id),
            )
            .await?;
        match debit.status {
            TransferStatus::Pending => return Ok(false),
            TransferStatus::Settled if debit.due_at != i64::MAX => return Ok(false),
            TransferStatus::Failed => {
                let reason = debit.failure_reason.unwrap_or(FailureReason::BankFailure);
                return Ok(self
                    .store
                    .pulls()
                    .finish_bank_leg(&pull.pull_id, PullStatus::Failed, Some(reason), now_ms())
                    .await?);
            }
            TransferStatus::Settled => {}
        }
        let intent = Intent::Payout(pull.pull_id.clone());
        match self.leg_status(&intent).await? {
            Leg::InFlight => Ok(false),
            Leg::NotSent => {
                let (Ok(to), Some(token)) = (
                    pull.destination.parse::<Address>(),
                    self.tokens.get(&pull.currency),
                ) else {
                    tracing::error!(pull = %pull.pull_id, "bank-funded pull has an unusable destination or currency");
                    return Ok(false);
                };
                let call = SettlementRouter::settleCall {
                    r#ref: keccak256(intent.text().as_bytes()),
                    token: *token,
                    to,
                    amount: openrail_chain::token_units(pull.amount, pull.currency),
                };
                if let Err(e) = self
                    .submitter
                    .call_raw(
                        self.router,
                        call.abi_encode().into(),
                        TxKind::Settle,
                        &intent,
                    )
                    .await
                {
                    tracing::warn!(pull = %pull.pull_id, error = %e, "pull payout not confirmed");
                }
                Ok(true)
            }
            Leg::Done(_) => Ok(self
                .store
                .pulls()
                .finish_bank_leg(&pull.pull_id, PullStatus::Settled, None, now_ms())
                .await?),
            Leg::Failed { hash, .. } => {
                tracing::error!(pull = %pull.pull_id, tx = %hash, "the treasury's payout failed; crediting the debit back");
                let refund = self
                    .bank
                    .credit(
                        &pull.bank_account_id,
                        pull.amount,
                        &format!("{}:refund", pull.pull_id),
                    )
                    .await?;
                if refund.status == TransferStatus::Pending {
                    return Ok(false);
                }
                Ok(self
                    .store
                    .pulls()
                    .finish_bank_leg(
                        &pull.pull_id,
                        PullStatus::Failed,
                        Some(FailureReason::PayoutFailed),
                        now_ms(),
                    )
                    .await?)
            }
        }
    }

    async fn advance(&self, p: &Payment) -> Result<bool, PaymentError> {
        if p.refund_status == Some(RefundStatus::Pending) {
            return self.refund(p).await;
        }
        let from_bank = p.source_type == PartyKind::BankAccount;
        let to_bank = p.destination_type == PartyKind::BankAccount;
        if !from_bank && !to_bank {
            return self.wallet_to_wallet(p).await;
        }
        let source_intent = Intent::PaymentSource(p.id.clone());
        if p.status == PaymentStatus::Pending {
            if from_bank {
                self.bank
                    .debit(
                        &bank_account(&p.source_id)?,
                        p.amount,
                        &format!("{}:debit", p.id),
                    )
                    .await?;
            } else {
                // Mark processing first: the transaction's fate is read from the journal.
                if !self.start_processing(p).await? {
                    return Ok(false);
                }
                self.send_leg(
                    p,
                    Party::Wallet(&p.source_id),
                    Party::Treasury,
                    &source_intent,
                )
                .await;
                return Ok(true);
            }
            return Ok(self.start_processing(p).await?);
        }
        // Source leg.
        if from_bank {
            let Some(debit) = self
                .store
                .bank()
                .transfer_by_key(&format!("{}:debit", p.id))
                .await?
            else {
                return Ok(false);
            };
            match debit.status {
                TransferStatus::Pending => return Ok(false),
                TransferStatus::Failed => {
                    let reason = debit.failure_reason.unwrap_or(FailureReason::BankFailure);
                    return self.fail(p, reason, None).await;
                }
                // Settled but still inside its return window: wait.
                TransferStatus::Settled if debit.due_at != i64::MAX => return Ok(false),
                TransferStatus::Settled => {}
            }
        } else {
            match self.leg_status(&source_intent).await? {
                Leg::InFlight => return Ok(false),
                Leg::Failed { reason, hash } => {
                    let reason = self.why_reverted(p, reason).await;
                    return self.fail(p, reason, Some(&hash)).await;
                }
                Leg::Done(_) => {}
                Leg::NotSent => {
                    self.send_leg(
                        p,
                        Party::Wallet(&p.source_id),
                        Party::Treasury,
                        &source_intent,
                    )
                    .await;
                    return Ok(false);
                }
            }
        }
        // Destination leg.
        if to_bank {
            let credit = self
                .bank
                .credit(
                    &bank_account(&p.destination_address)?,
                    p.amount,
                    &format!("{}:credit", p.id),
                )
                .await?;
            return match credit.status {
                TransferStatus::Pending => Ok(false),
                TransferStatus::Settled => Ok(self.succeed(p, None).await?),
                TransferStatus::Failed => Ok(self
                    .store
                    .payments()
                    .fail_owing_refund(
                        &p.id,
                        credit.failure_reason.unwrap_or(FailureReason::BankFailure),
                        None,
                        now_ms(),
                    )
                    .await?),
            };
        }
        let payout_intent = Intent::Payment(p.id.clone());
        match self.leg_status(&payout_intent).await? {
            Leg::InFlight => Ok(false),
            Leg::Done(hash) => Ok(self.succeed(p, Some(&hash)).await?),
            Leg::Failed { hash, .. } => Ok(self
                .store
                .payments()
                .fail_owing_refund(&p.id, FailureReason::PayoutFailed, Some(&hash), now_ms())
                .await?),
            Leg::NotSent => {
                self.send_leg(
                    p,
                    Party::Treasury,
                    Party::Wallet(&p.destination_address),
                    &payout_intent,
                )
                .await;
                Ok(true)
            }
        }
    }

    /// A wallet-to-wallet payment: one router transfer from the source wallet to the
    /// destination (intent and on-chain reference: the payment id). `processing` is
    /// recorded before the transfer is sent, so its fate is always read from the journal.
    async fn wallet_to_wallet(&self, p: &Payment) -> Result<bool, PaymentError> {
        if p.status == PaymentStatus::Pending && !self.start_processing(p).await? {
            return Ok(false);
        }
        let intent = Intent::Payment(p.id.clone());
        match self.leg_status(&intent).await? {
            Leg::InFlight => Ok(false),
            Leg::NotSent => {
                self.send_leg(
                    p,
                    Party::Wallet(&p.source_id),
                    Party::Wallet(&p.destination_address),
                    &intent,
                )
                .await;
                Ok(true)
            }
            Leg::Done(hash) => Ok(self.succeed(p, Some(&hash)).await?),
            Leg::Failed { reason, hash } => {
                let reason = self.why_reverted(p, reason).await;
                self.fail(p, reason, Some(&hash)).await
            }
        }
    }

    /// Sends a failed payment's amount back to its source.
    async fn refund(&self, p: &Payment) -> Result<bool, PaymentError> {
        let outcome = if p.source_type == PartyKind::BankAccount {
            let credit = self
                .bank
                .credit(
                    &bank_account(&p.source_id)?,
                    p.amount,
                    &format!("{}:refund", p.id),
                )
                .await?;
            match credit.status {
                TransferStatus::Pending => return Ok(false),
                TransferStatus::Settled => RefundStatus::Succeeded,
                TransferStatus::Failed => RefundStatus::Failed,
            }
        } else {
            let intent = Intent::PaymentRefund(p.id.clone());
            match self.leg_status(&intent).await? {
                Leg::InFlight => return Ok(false),
                Leg::NotSent => {
                    self.send_leg(p, Party::Treasury, Party::Wallet(&p.source_id), &intent)
                        .await;
                    return Ok(true);
                }
                Leg::Done(_) => RefundStatus::Succeeded,
                Leg::Failed { .. } => RefundStatus::Failed,
            }
        };
        if outcome == RefundStatus::Failed {
            tracing::error!(payment = %p.id, source = %p.source_id, "refund to the payment's source failed; an operator must act");
        }
        Ok(self
            .store
            .payments()
            .finish_refund(&p.id, outcome, now_ms())
            .await?)
    }

    /// `pending` → `processing`; false when another step moved it first.
    async fn start_processing(&self, p: &Payment) -> Result<bool, StoreError> {
        self.store
            .payments()
            .set_status(
                &p.id,
                PaymentStatus::Pending,
                PaymentStatus::Processing,
                None,
                None,
                now_ms(),
            )
            .await
    }

    /// `processing` → `succeeded`, with the transaction that finished it.
    async fn succeed(&self, p: &Payment, tx: Option<&str>) -> Result<bool, StoreError> {
        self.store
            .payments()
            .set_status(
                &p.id,
                PaymentStatus::Processing,
                PaymentStatus::Succeeded,
                None,
                tx,
                now_ms(),
            )
            .await
    }

    /// What a reverted leg paid by the payment's source wallet ran into: its balance
    /// (`insufficient_funds`), its allowance to the router (`allowance_insufficient`), else
    /// `transaction_reverted` (a signature past its deadline, a token's own refusal…) —
    /// never `insufficient_funds` by default.
    async fn why_reverted(&self, p: &Payment, reason: FailureReason) -> FailureReason {
        if reason != FailureReason::TransactionReverted || p.source_type != PartyKind::Wallet {
            return reason;
        }
        let (Ok(from), Some(token)) =
            (p.source_id.parse::<Address>(), self.tokens.get(&p.currency))
        else {
            return reason;
        };
        let amount = openrail_chain::token_units(p.amount, p.currency);
        use openrail_chain::diagnose::{TransferFailure, transfer_failure};
        match transfer_failure(&self.reader, *token, from, self.router, amount).await {
            Ok(TransferFailure::TokenRefused) | Err(_) => reason,
            Ok(f) => FailureReason::of_decline(f.reason()).unwrap_or(reason),
        }
    }

    async fn fail(
        &self,
        p: &Payment,
        reason: FailureReason,
        tx: Option<&str>,
    ) -> Result<bool, PaymentError> {
        Ok(self
            .store
            .payments()
            .set_status(
                &p.id,
                PaymentStatus::Processing,
                PaymentStatus::Failed,
                Some(reason),
                tx,
                now_ms(),
            )
            .await?)
    }

    /// The fate of the journaled transaction carrying `intent`.
    async fn leg_status(&self, intent: &Intent) -> Result<Leg, PaymentError> {
        Ok(
            match self.store.payments().tx_status_for_intent(intent).await? {
                None => Leg::NotSent,
                Some(tx) => match tx.status {
                    TxStatus::Signed => Leg::InFlight,
                    // Mined but not yet confirmed: nothing follows from it yet (no bank leg, no
                    // final status), since a reorganisation could still undo it.
                    TxStatus::Succeeded | TxStatus::Reverted if !tx.confirmed => Leg::InFlight,
                    TxStatus::Succeeded => Leg::Done(tx.hash),
                    TxStatus::Reverted => Leg::Failed {
                        reason: FailureReason::TransactionReverted,
                        hash: tx.hash,
                    },
                    TxStatus::Rejected => Leg::Failed {
                        reason: FailureReason::TransactionFailed,
                        hash: tx.hash,
                    },
                    // Marked only once another transaction carries the leg, which the journal's
                    // order reads first; seen alone, that one is still being journaled.
                    TxStatus::Replaced => Leg::InFlight,
                },
            },
        )
    }

    /// Sends one router transfer for `intent` and waits for it; its fate is read back from
    /// the journal on the next step. From the
    /// treasury it is the operator's `settle`; from a payer wallet it is
    /// `settleWithSignature` with the payment's stored authorization (the router moves a
    /// wallet's tokens only as the wallet signed).
    async fn send_leg(&self, p: &Payment, from: Party<'_>, to: Party<'_>, intent: &Intent) {
        let parse = |who: Party<'_>| match who {
            Party::Treasury => Some(self.treasury),
            Party::Wallet(a) => a.parse::<Address>().ok(),
        };
        let (Some(from_addr), Some(to), Some(token)) =
            (parse(from), parse(to), self.tokens.get(&p.currency))
        else {
            tracing::error!(payment = %p.id, "payment leg has an unusable address or currency");
            return;
        };
        let amount = openrail_chain::token_units(p.amount, p.currency);
        // The on-chain reference is the hash of the intent's text (what the payer signed).
        let r#ref = keccak256(intent.text().as_bytes());
        let input: Bytes = if from == Party::Treasury {
            SettlementRouter::settleCall {
                r#ref,
                token: *token,
                to,
                amount,
            }
            .abi_encode()
            .into()
        } else {
            let auth = match self.store.consent().get(p.id.as_str()).await {
                Ok(Some(a)) => a,
                Ok(None) => {
                    tracing::error!(payment = %p.id, "wallet payment without an authorization");
                    return;
                }
                Err(e) => {
                    tracing::warn!(payment = %p.id, error = %e, "authorization unreadable");
                    return;
                }
            };
            let (Ok(nonce), Some(Ok(signature))) = (
                U256::from_str_radix(&auth.nonce, 10),
                auth.signature.as_deref().map(str::parse::<Bytes>),
            ) else {
                tracing::error!(payment = %p.id, "wallet payment's authorization is unusable");
                return;
            };
            SettlementRouter::settleWithSignatureCall {
                r#ref,
                token: *token,
                from: from_addr,
                to,
                amount,
                nonce,
                deadline: U256::from(u64::try_from(auth.deadline).unwrap_or_default()),
                signature,
            }
            .abi_encode()
            .into()
        };
        if let Err(e) = self
            .submitter
            .call_raw(self.router, input, TxKind::Settle, intent)
            .await
        {
            tracing::warn!(payment = %p.id, error = %e, "payment leg not confirmed");
        }
    }
}
/// Runs a payment's work: one step of driving it (its legs, then any refund owed).
/// `driver`: none until the engine leads (never so once `lead` started it), when the work
/// is tried later rather than claimed again on every pass.
pub(crate) async fn run(
    driver: Option<&PaymentDriver>,
    kind: PaymentWork,
    w: &Work,
) -> Result<crate::Next, crate::Left> {
    let Intent::Payment(id) = &w.intent else {
        return Ok(crate::corrupt(w));
    };
    match (kind, driver) {
        (PaymentWork::DrivePayment, Some(d)) => crate::drive(d.drive_payment(id).await, w),
        (PaymentWork::DrivePayment, None) => Ok(crate::Next::Later),
    }
}
