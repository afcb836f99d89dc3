//! What a service refuses, in the domain's words: the API maps each variant to one HTTP
//! problem (`api::error`), so a service never speaks HTTP.

use openrail_chain::ChainError;
use openrail_store::agentic::DeclineReason;
use openrail_store::{AmountError, StoreError};

/// Why a service refused a request.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// A field's value is unusable.
    #[error("{param} {detail}")]
    Invalid {
        /// The field.
        param: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// An amount is malformed or out of range for its currency.
    #[error("{param} {error}")]
    Amount {
        /// The field.
        param: &'static str,
        /// What is wrong with it.
        error: AmountError,
    },
    /// An object the request names does not exist for this account and mode.
    #[error("no such {kind}: {id}")]
    Missing {
        /// The kind of object.
        kind: &'static str,
        /// The id named.
        id: String,
    },
    /// Refused before anything is sent, with the reason a chain decline would carry.
    #[error("{detail}")]
    Declined {
        /// Why.
        reason: DeclineReason,
        /// Said for a person.
        detail: String,
    },
    /// A signed authorization was past its deadline (unix seconds).
    #[error("the authorization expired at {deadline}")]
    AuthorizationExpired {
        /// When it expired.
        deadline: i64,
    },
    /// The object's state rules the request out (HTTP 409).
    #[error("{detail}")]
    Conflict {
        /// Which conflict.
        code: Conflict,
        /// Said for a person.
        detail: String,
    },
    /// A session key's ceiling above its mandate's.
    #[error("the key's ceiling {key} exceeds the mandate's {mandate}")]
    KeyCeilingExceedsMandate {
        /// The key's ceiling, as asked.
        key: String,
        /// The mandate's ceiling.
        mandate: String,
    },
    /// A session key outside what its mandate's payer signed: a destination not among the
    /// payees, or a signer other than the named agent.
    #[error("{detail}")]
    KeyOutsideMandate {
        /// The field at fault (`allowed_destinations` or `signer`).
        param: &'static str,
        /// Said for a person.
        detail: String,
    },
    /// A wallet lacks the identity a mandate requires (HTTP 403): no active, unexpired
    /// attestation of the kind recorded on the settlement chain.
    #[error("the {holder} {wallet} holds no active {kind} attestation the mandate requires")]
    IdentityRequirementUnmet {
        /// `payer` or `signer`.
        holder: &'static str,
        /// The wallet (checksummed; zero for a key without a signer).
        wallet: String,
        /// The kind of credential required.
        kind: &'static str,
    },
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The chain could not be asked (a contract wallet's signature check).
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// A row the service wrote itself is unusable.
    #[error("{0}")]
    Internal(String),
}

/// A request the object's state rules out: one code each, the API's `code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conflict {
    /// A payment past its payer's signature (pending, processing or final) cannot be
    /// canceled.
    PaymentNotCancelable,
    /// A canceled payment cannot be authorized: its link was withdrawn.
    PaymentCanceled,
    /// A credential with this `id` was already issued.
    CredentialExists,
    /// A revoked credential stays revoked.
    CredentialRevoked,
    /// Only a verification session waiting for input may be submitted.
    VerificationNotSubmittable,
    /// Only a verification session waiting for input may be canceled.
    VerificationNotCancelable,
    /// A verification session issues its credential only once verified.
    VerificationNotVerified,
    /// An agent credential names the key's signer: a key without one has none.
    SessionKeyWithoutSigner,
}

impl Conflict {
    /// Every conflict.
    pub const ALL: &'static [Conflict] = &[
        Conflict::PaymentNotCancelable,
        Conflict::PaymentCanceled,
        Conflict::CredentialExists,
        Conflict::CredentialRevoked,
        Conflict::VerificationNotSubmittable,
        Conflict::VerificationNotCancelable,
        Conflict::VerificationNotVerified,
        Conflict::SessionKeyWithoutSigner,
    ];

    /// The API's `code`.
    pub fn as_str(self) -> &'static str {
        match self {
            Conflict::PaymentNotCancelable => "payment_not_cancelable",
            Conflict::PaymentCanceled => "payment_canceled",
            Conflict::CredentialExists => "credential_exists",
            Conflict::CredentialRevoked => "credential_revoked",
            Conflict::VerificationNotSubmittable => "verification_not_submittable",
            Conflict::VerificationNotCancelable => "verification_not_cancelable",
            Conflict::VerificationNotVerified => "verification_not_verified",
            Conflict::SessionKeyWithoutSigner => "session_key_without_signer",
        }
    }
}

impl ServiceError {
    /// For a read of the `kind` object `id` the request named: not found is
    /// [`ServiceError::Missing`], any other failure the store's.
    pub fn missing<'a>(kind: &'static str, id: &'a str) -> impl FnOnce(StoreError) -> Self + 'a {
        move |e| match e {
            StoreError::NotFound => ServiceError::Missing {
                kind,
                id: id.to_string(),
            },
            other => ServiceError::Store(other),
        }
    }
}
