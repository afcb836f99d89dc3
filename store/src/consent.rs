//! Payer consent: what a payer is asked to sign for a mandate or a payment from its wallet
//! (the object's terms are its own row; the nonce and deadline are here), and the signature
//! once given. Moving an object out of `requires_authorization` and storing the signature
//! happen in one database transaction, so two concurrent authorizations never both send.

use crate::agentic::{Guard, MandateStatus, move_mandate_in};
use crate::db::{Store, StoreError};
use crate::exec::{Exec, Stmt};
use crate::outbox::WorkKind;
use crate::payments::{PaymentChange, PaymentStatus, move_payment_in};
pub use crate::rows::consent::Authorization;
pub(crate) use crate::rows::consent::{authorization_in, insert_authorization_in};
use openrail_domain::journal::Intent;
use openrail_domain::{MandateId, PaymentId};

/// Payer consent: what a payer is asked to sign, and the signature once given (`store.consent()`).
#[derive(Debug, Clone, Copy)]
pub struct Consent<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on payer consent ([`Consent`]).
    pub fn consent(&self) -> Consent<'_> {
        Consent(self)
    }
}

/// The object whose authorization is recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authorizable {
    /// A mandate (`mandates`).
    Mandate(MandateId),
    /// A payment (`payments`).
    Payment(PaymentId),
}

impl Authorizable {
    /// Its id.
    pub fn id(&self) -> &str {
        match self {
            Authorizable::Mandate(id) => id.as_str(),
            Authorizable::Payment(id) => id.as_str(),
        }
    }
}

impl Consent<'_> {
    /// Records what `a.signer` is asked to sign. Insert it before the object's row (or
    /// with it: [`Mandates::insert_with`](crate::agentic::Mandates::insert_with), [`Payments::insert_with`](crate::payments::Payments::insert_with)).
    pub async fn insert(self, a: &Authorization) -> Result<(), StoreError> {
        let a = a.clone();
        self.0
            .write(move |mut tx| {
                Box::pin(async move { insert_authorization_in(&mut tx, &a).await })
            })
            .await
    }

    /// The authorization of `object_id`, if one was asked for.
    pub async fn get(self, object_id: &str) -> Result<Option<Authorization>, StoreError> {
        authorization_in(&mut crate::rows::Reads(self.0), object_id).await
    }

    /// Stores the signature and moves the object from `requires_authorization` to
    /// `pending`, in one transaction. Returns false (nothing changed) when the object was
    /// no longer waiting for authorization.
    pub async fn authorize(
        self,
        what: Authorizable,
        signature: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let signature = signature.to_owned();
        let done = self
            .0
            .write_or_undo(move |mut tx| {
                Box::pin(async move {
                    // The signature first, so the event's snapshot shows it; undone (the
                    // body returns `None`) when the object was no longer waiting.
                    let q = Stmt::new(
                        tx.backend(),
                        "UPDATE authorizations SET signature = $2, authorized_at = $3 WHERE object_id = $1"
                            .into(),
                    )
                    .bind(what.id())
                    .bind(signature.as_str())
                    .bind(now_ms);
                    tx.execute(&q).await?;
                    // The object moves, and can then be sent: its work is queued in the
                    // same transaction.
                    let (moved, lookup, intent, work) = match &what {
                        Authorizable::Mandate(id) => {
                            let moved = move_mandate_in(
                                &mut tx,
                                id.as_str(),
                                MandateStatus::Pending,
                                None,
                                Guard::None,
                                now_ms,
                            )
                            .await?;
                            let intent = Intent::Mandate(id.clone());
                            (moved, crate::outbox::OF_MANDATE, intent, WorkKind::CreateMandate)
                        }
                        Authorizable::Payment(id) => {
                            let change = PaymentChange::to(PaymentStatus::Pending);
                            let from = PaymentStatus::RequiresAuthorization;
                            let moved =
                                move_payment_in(&mut tx, id.as_str(), from, &change, now_ms)
                                    .await?;
                            let intent = Intent::Payment(id.clone());
                            (moved, crate::outbox::OF_PAYMENT, intent, WorkKind::DrivePayment)
                        }
                    };
                    if !moved {
                        return Ok(None);
                    }
                    crate::outbox::enqueue_for(&mut tx, lookup, &intent, work, now_ms).await?;
                    Ok(Some(()))
                })
            })
            .await?;
        Ok(done.is_some())
    }
}

impl crate::agentic::Mandates<'_> {
    /// Withdraws a mandate's request to sign at `now` (unix ms): `requires_authorization` →
    /// `canceled`, nothing having been sent. Returns false when it was no longer waiting.
    pub async fn cancel_unauthorized(
        self,
        mandate_id: &MandateId,
        now: i64,
    ) -> Result<bool, StoreError> {
        let mandate_id = mandate_id.clone();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    // Only from `requires_authorization`: anything else has been sent (or is
                    // final).
                    move_mandate_in(
                        &mut tx,
                        mandate_id.as_str(),
                        MandateStatus::Canceled,
                        None,
                        Guard::Unauthorized,
                        now,
                    )
                    .await
                })
            })
            .await
    }
}
