//! Payer consent in the API: the view of the authorization a wallet payer is asked for
//! (typed data for `eth_signTypedData_v4`, a deadline). The check of the signature it sends
//! back is the services' (`openrail_engine::consent::check_given`: ECDSA like the
//! contracts, or ERC-1271 through an `eth_call`); the chain checks every signature again.

use alloy::primitives::Address;
use openrail_chain::consent::TypedMessage;
use openrail_store::consent::Authorization;
use serde_json::Value;

use crate::rfc3339::{rfc3339_ms, rfc3339_s};
use crate::types::Consent;
pub use openrail_engine::consent::{mandate_message, payment_message};
use openrail_engine::network::Network;

/// The `authorization` member of a mandate or payment a wallet must sign for.
pub fn view(a: &Authorization, typed_data: Value) -> Consent {
    Consent::PayerSignature {
        signer: a.signer.clone(),
        typed_data,
        expires_at: rfc3339_s(a.deadline),
        signature: a.signature.clone(),
        authorized_at: a.authorized_at.map(rfc3339_ms),
    }
}

/// The `authorization` member of a mandate or payment whose payer is a bank account: the
/// bank mandate is the consent, and the treasury funds the chain side.
pub fn bank_mandate_view() -> Consent {
    Consent::BankMandate
}

/// The `authorization` member for `a` of `message` on `net`'s verifying contract.
pub fn view_of<M: TypedMessage>(
    a: &Authorization,
    message: &M,
    net: &Network,
    verifier: Address,
) -> Consent {
    view(a, message.typed_data(net.chain_id, verifier))
}
