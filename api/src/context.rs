//! What a request carries while it is served — its id, its caller, its idempotency claim —
//! for handlers, errors and middleware alike. Handlers and errors depend on this module, not
//! on the middleware, so the middleware (which renders objects through the handlers when it
//! recovers an idempotent request) is the only one of them that depends on the handlers.

use openrail_domain::{AccountId, SessionKeyId};
use openrail_store::Mode;
use openrail_store::accounts::Principal as KeyPrincipal;

use crate::AppState;
use openrail_store::StoreError;

tokio::task_local! {
    /// The id of the request being served.
    pub static REQUEST_ID: String;
    /// The idempotency claim (credential id, key) of the request being served, if any.
    pub(crate) static IDEMPOTENCY_CLAIM: (String, String);
}

/// Inside a request with an `Idempotency-Key`: links its claim to the object at `path`
/// that the request is about to create (call it before writing the object), so a retry
/// after a crash gets that object. Elsewhere it does nothing.
pub(crate) async fn link_created(state: &AppState, path: &str) -> Result<(), StoreError> {
    if let Ok((cred, key)) = IDEMPOTENCY_CLAIM.try_with(Clone::clone) {
        state.store.idempotency().link(&cred, &key, path).await?;
    }
    Ok(())
}

/// The current request id, if inside a request.
pub fn current_request_id() -> Option<String> {
    REQUEST_ID.try_with(Clone::clone).ok()
}

/// Who is calling.
#[derive(Debug, Clone)]
pub enum Principal {
    /// An account's API key: everything of that account in that mode.
    Account(KeyPrincipal),
    /// A session key's agent secret: only pulls on that key and reads of the key and its pulls.
    Agent {
        /// The session key.
        session_key_id: SessionKeyId,
        /// Its account.
        account_id: AccountId,
        /// Its mode.
        mode: Mode,
    },
    /// The dashboard acting for an account (a signed-in session, or the hosted consent
    /// page reading the object it shows to its payer): everything of that account in that
    /// mode, as its API key may. No API key: it calls the handlers directly, never
    /// through authentication, rate limits or idempotency.
    Dashboard {
        /// The account.
        account_id: AccountId,
        /// The mode.
        mode: Mode,
    },
}

impl Principal {
    /// The account.
    pub fn account_id(&self) -> &AccountId {
        match self {
            Principal::Account(p) => &p.account_id,
            Principal::Agent { account_id, .. } | Principal::Dashboard { account_id, .. } => {
                account_id
            }
        }
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        match self {
            Principal::Account(p) => p.mode,
            Principal::Agent { mode, .. } | Principal::Dashboard { mode, .. } => *mode,
        }
    }

    /// The credential's id, for rate limits and idempotency: the API key's, or the
    /// session key's (the dashboard, which has none, answers with its account's; no
    /// credential's id is an account's).
    pub fn credential_id(&self) -> &str {
        match self {
            Principal::Account(p) => p.key_id.as_str(),
            Principal::Agent { session_key_id, .. } => session_key_id.as_str(),
            Principal::Dashboard { account_id, .. } => account_id.as_str(),
        }
    }

    /// Store scope of this principal.
    pub fn scope(&self) -> openrail_store::agentic::Scope<'_> {
        openrail_store::agentic::Scope {
            account_id: self.account_id(),
            mode: self.mode(),
        }
    }
}
