//! The request and response types of one-time payments: [`PaymentCreate`] (with its
//! source and destination), the [`Payment`] as the API shows it and its list, and the leaf
//! schemas of its own statuses and parties, written in the shared vocabulary of
//! [`crate::types`]. Its rendering of the store's row is in `views`.

use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::types::{
    AmountInput, AmountString, AmountText, Consent, CurrencyCode, CurrencyInput, FailureCode,
    Money, OnChainTx, Party, Timestamp, leaf_schema, list_new, list_type, object_tag, request_body,
};

/// The schema of a payment's party: its `type` decides what its id is (the struct reads
/// both members; this says which pairs the server accepts).
fn party_schema(id: &str, what: &str) -> Value {
    json!({
        "description": what,
        "oneOf": [
            {
                "type": "object",
                "required": ["type", id],
                "properties": {
                    "type": { "const": "wallet" },
                    id: { "$ref": "#/components/schemas/Address" },
                },
                "additionalProperties": false,
            },
            {
                "type": "object",
                "required": ["type", id],
                "properties": {
                    "type": { "const": "bank_account" },
                    id: { "type": "string", "pattern": "^ba_[0-9A-Za-z]+$", "description": "A simulated bank account" },
                },
                "additionalProperties": false,
            },
        ],
    })
}

leaf_schema!(
    /// A payment's source in a request ([`PaymentSource`]).
    PaymentSourceInput = party_schema("id", "Where the money comes from: a wallet (which approved the router and signs the payment) or a simulated bank account")
);

leaf_schema!(
    /// A payment's destination in a request ([`PaymentDestination`]).
    PaymentDestinationInput = party_schema("address", "Where the money goes: a wallet or a simulated bank account")
);

leaf_schema!(
    /// Status of a payment.
    PaymentStatus = json!({
        "type": "string",
        "enum": openrail_store::payments::PaymentStatus::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "description": "requires_authorization (a wallet source must sign) → pending → processing (sent) → succeeded | failed",
    })
);

leaf_schema!(
    /// A payment's refund.
    RefundStatus = json!({
        "type": ["string", "null"],
        "enum": openrail_store::payments::RefundStatus::ALL.iter().map(|s| Value::from(s.as_str())).chain([Value::Null]).collect::<Vec<_>>(),
        "description": "Set when the destination leg failed after the source leg: the amount goes back to the source (pending, then succeeded, or failed when the refund itself failed); null when no money moved",
    })
);

leaf_schema!(
    /// Kind of a payment's source or destination.
    PartyType = json!({
        "type": "string",
        "enum": openrail_store::payments::PartyKind::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    })
);

request_body!(
    /// Where a payment's money comes from.
    pub struct PaymentSource {
        /// `wallet` or `bank_account`.
        #[schema(value_type = PartyType)]
        pub r#type: String,
        /// A wallet address (which approved the router and signs the payment) or a bank account `ba_…`.
        #[schema(value_type = Party)]
        pub id: String,
    }
);

request_body!(
    /// Where a payment's money goes.
    pub struct PaymentDestination {
        /// `wallet` or `bank_account`.
        #[schema(value_type = PartyType)]
        pub r#type: String,
        /// A wallet address or a bank account `ba_…`.
        #[schema(value_type = Party)]
        pub address: String,
    }
);

request_body!(
    /// `POST /v1/payments`: a one-time payment. The destination must differ from the
    /// source (else 400 `parameter_invalid`, `param: destination.address`).
    #[schema(example = json!({"amount": "12.50", "currency": "USD", "source": {"type": "wallet", "id": "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"}, "destination": {"type": "wallet", "address": "0x90F79bf6EB2c4f870365E785982E1f101E93b906"}}))]
    pub struct PaymentCreate {
        /// ISO 4217 code.
        #[schema(value_type = CurrencyInput)]
        pub currency: String,
        /// Major units.
        #[schema(value_type = AmountInput)]
        pub amount: AmountText,
        /// The source.
        #[schema(value_type = PaymentSourceInput)]
        pub source: PaymentSource,
        /// The destination.
        #[schema(value_type = PaymentDestinationInput)]
        pub destination: PaymentDestination,
    }
);

object_tag!(
    /// `"payment"`
    PaymentTag = "payment"
);

/// A payment's source as shown.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PaymentSourceView {
    /// `wallet` or `bank_account`.
    #[serde(rename = "type")]
    #[schema(value_type = PartyType)]
    pub kind: &'static str,
    /// The wallet address or `ba_…`.
    pub id: String,
}

/// A payment's destination as shown.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PaymentDestinationView {
    /// `wallet` or `bank_account`.
    #[serde(rename = "type")]
    #[schema(value_type = PartyType)]
    pub kind: &'static str,
    /// The wallet address or `ba_…`.
    pub address: String,
}

/// A one-time payment.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Payment {
    /// `pay_…`
    #[schema(pattern = "^pay_")]
    pub id: String,
    /// Always `payment`.
    pub object: PaymentTag,
    /// Mainnet or testnet.
    pub livemode: bool,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// How much.
    #[schema(value_type = AmountString)]
    pub amount: Money,
    /// ISO 4217 code.
    #[schema(value_type = CurrencyCode)]
    pub currency: &'static str,
    /// Where the money comes from.
    pub source: PaymentSourceView,
    /// Where it goes.
    pub destination: PaymentDestinationView,
    /// Lifecycle.
    #[schema(value_type = PaymentStatus)]
    pub status: &'static str,
    /// Why it failed (status failed).
    #[schema(value_type = FailureCode)]
    pub failure_reason: Option<&'static str>,
    /// The refund a failed payment owes, if any.
    #[schema(value_type = RefundStatus)]
    pub refund_status: Option<&'static str>,
    /// Its transaction.
    pub onchain: OnChainTx,
    /// The source's consent (a wallet's EIP-712 signature, or a bank mandate).
    pub authorization: Option<Consent>,
}

list_type!(
    /// A page of payments.
    PaymentList of Payment
);

list_new!(
    PaymentList of Payment
);

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Bytes;
    use serde_json::Value;

    use crate::body::Fields;
    use crate::error::ApiError;
    use crate::types::RequestBody;

    fn fields(json: Value) -> Fields {
        Fields::parse(Bytes::from(json.to_string())).unwrap()
    }

    #[test]
    fn payment_create_reads_its_fields_by_their_schema_names() {
        let p = PaymentCreate::read(fields(json!({
            "currency": "USD", "amount": "1", "source": {"type": "wallet", "id": "0x"},
            "destination": {"type": "bank_account", "address": "ba_1"},
        })))
        .unwrap();
        assert_eq!(p.destination.r#type, "bank_account");
        assert!(matches!(
            PaymentCreate::read(fields(json!({
                "currency": "USD", "amount": "1", "source": {"type": "wallet", "id": "0x", "x": 1},
                "destination": {"type": "bank_account", "address": "ba_1"},
            }))),
            Err(ApiError::ParameterUnknown { param }) if param == "source.x"
        ));
    }
}
