//! The relayer's payment worker: drives payments funded from a bank account.
//!
//! bank → wallet: debit the bank account (idempotency key `<payment>:debit`, so a restart
//! never debits twice); when the debit is final (settled, and past any return window),
//! pay the wallet from the treasury through the router (one journaled transaction per
//! payment: a restart waits for the journaled one instead of sending another); the payment
//! fails with the bank's reason when the debit fails or is returned.

use std::collections::BTreeMap;
use std::time::Duration;

use alloy::primitives::{Address, U256, keccak256};
use openrail_chain::bindings::SettlementRouter;
use openrail_chain::submitter::Submitter;
use openrail_store::bank::TransferStatus;
use openrail_store::money::TOKEN_DECIMALS;
use openrail_store::payments::{Payment, PaymentStatus};
use openrail_store::{Currency, Store, StoreError, now_ms};

use crate::bank::{BankError, BankRail, SimulatedBank};

/// Errors of a worker step.
#[derive(Debug, thiserror::Error)]
pub enum PaymentError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The bank rail failed.
    #[error(transparent)]
    Bank(#[from] BankError),
}

/// Drives bank-funded payments on one settlement chain.
#[derive(Clone)]
pub struct PaymentWorker {
    store: Store,
    bank: SimulatedBank,
    submitter: Submitter,
    router: Address,
    treasury: Address,
    tokens: BTreeMap<Currency, Address>,
}

impl PaymentWorker {
    /// A worker paying out through `router` from `treasury` with `submitter`.
    pub fn new(
        store: Store,
        submitter: Submitter,
        router: Address,
        treasury: Address,
        tokens: BTreeMap<Currency, Address>,
    ) -> Self {
        Self {
            bank: SimulatedBank::new(store.clone()),
            store,
            submitter,
            router,
            treasury,
            tokens,
        }
    }

    /// Moves every open bank-funded payment as far as it can go now.
    pub async fn step(&self) -> Result<usize, PaymentError> {
        self.bank.process_due(now_ms()).await?;
        let mut moved = 0;
        for p in self.store.open_bank_payments(100).await? {
            moved += usize::from(self.advance(&p).await?);
        }
        Ok(moved)
    }

    async fn advance(&self, p: &Payment) -> Result<bool, PaymentError> {
        let debit_key = format!("{}:debit", p.id);
        if p.status == PaymentStatus::Pending {
            self.bank.debit(&p.source_id, p.amount, &debit_key).await?;
            return Ok(self
                .store
                .set_payment_status(
                    &p.id,
                    PaymentStatus::Pending,
                    PaymentStatus::Processing,
                    None,
                    None,
                )
                .await?);
        }
        let Some(debit) = self.store.bank_transfer_by_key(&debit_key).await? else {
            return Ok(false);
        };
        match debit.status {
            TransferStatus::Pending => Ok(false),
            TransferStatus::Failed => {
                let reason = debit.failure_reason.as_deref().unwrap_or("bank_failure");
                Ok(self
                    .store
                    .set_payment_status(
                        &p.id,
                        PaymentStatus::Processing,
                        PaymentStatus::Failed,
                        Some(reason),
                        None,
                    )
                    .await?)
            }
            // Settled but still inside its return window: wait.
            TransferStatus::Settled if debit.due_at != i64::MAX => Ok(false),
            TransferStatus::Settled => self.pay_out(p).await,
        }
    }

    /// The on-chain leg: treasury → wallet, once per payment.
    async fn pay_out(&self, p: &Payment) -> Result<bool, PaymentError> {
        match self.store.tx_status_for_intent(&p.id).await? {
            None => {}
            Some((status, hash)) => {
                let to = match status.as_str() {
                    "succeeded" => PaymentStatus::Succeeded,
                    "reverted" | "rejected" => PaymentStatus::Failed,
                    _ => return Ok(false), // in flight: its receipt will settle it
                };
                let reason = (to == PaymentStatus::Failed).then_some("payout_failed");
                return Ok(self
                    .store
                    .set_payment_status(&p.id, PaymentStatus::Processing, to, reason, Some(&hash))
                    .await?);
            }
        }
        let Ok(to) = p.destination_address.parse::<Address>() else {
            return Ok(self
                .store
                .set_payment_status(
                    &p.id,
                    PaymentStatus::Processing,
                    PaymentStatus::Failed,
                    Some("invalid_destination"),
                    None,
                )
                .await?);
        };
        let Some(token) = self.tokens.get(&p.currency) else {
            return Ok(self
                .store
                .set_payment_status(
                    &p.id,
                    PaymentStatus::Processing,
                    PaymentStatus::Failed,
                    Some("currency_unavailable"),
                    None,
                )
                .await?);
        };
        let scale = U256::from(10u64).pow(U256::from(TOKEN_DECIMALS - p.currency.decimals()));
        let call = SettlementRouter::settleCall {
            r#ref: keccak256(p.id.as_bytes()),
            token: *token,
            from: self.treasury,
            to,
            amount: U256::from(p.amount) * scale,
        };
        let (status, reason, tx) = match self
            .submitter
            .call(self.router, call, "settle", &p.id)
            .await
        {
            Ok(m) if m.success => (PaymentStatus::Succeeded, None, Some(m.tx_hash.to_string())),
            Ok(m) => (
                PaymentStatus::Failed,
                Some("payout_failed"),
                Some(m.tx_hash.to_string()),
            ),
            // Unknown fate (e.g. shutting down): the journal decides on the next step.
            Err(e) => {
                tracing::warn!(payment = %p.id, error = %e, "payout not confirmed");
                return Ok(false);
            }
        };
        Ok(self
            .store
            .set_payment_status(
                &p.id,
                PaymentStatus::Processing,
                status,
                reason,
                tx.as_deref(),
            )
            .await?)
    }

    /// Steps forever, every `poll`.
    pub async fn run(self, poll: Duration) {
        loop {
            if let Err(e) = self.step().await {
                tracing::warn!(error = %e, "payment worker step failed");
            }
            tokio::time::sleep(poll).await;
        }
    }
}
