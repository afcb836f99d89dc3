//! The OpenAPI 3.1 document, generated from the same route table that builds the router
//! ([`ROUTES`]), so a served route cannot go undocumented. Schemas are written next to the
//! renderings they describe (`views`); an end-to-end test validates real responses against
//! them.

use axum::routing::{MethodRouter, delete, get, post};
use openrail_store::events::EventType;
use serde_json::{Map, Value, json};

use crate::{AppState, agentic, bank, events, payments, webhooks};

/// Every operation of the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `POST /v1/mandates`
    CreateMandate,
    /// `GET /v1/mandates`
    ListMandates,
    /// `GET /v1/mandates/{id}`
    GetMandate,
    /// `POST /v1/mandates/{id}/cancel`
    CancelMandate,
    /// `POST /v1/mandates/{id}/authorize`
    AuthorizeMandate,
    /// `POST /v1/session-keys`
    CreateSessionKey,
    /// `GET /v1/session-keys`
    ListSessionKeys,
    /// `GET /v1/session-keys/{id}`
    GetSessionKey,
    /// `DELETE /v1/session-keys/{id}`
    RevokeSessionKey,
    /// `POST /v1/debit-pulls`
    CreateDebitPull,
    /// `GET /v1/debit-pulls`
    ListDebitPulls,
    /// `GET /v1/debit-pulls/{id}`
    GetDebitPull,
    /// `POST /v1/payments`
    CreatePayment,
    /// `GET /v1/payments`
    ListPayments,
    /// `GET /v1/payments/{id}`
    GetPayment,
    /// `POST /v1/payments/{id}/authorize`
    AuthorizePayment,
    /// `POST /v1/bank-accounts`
    CreateBankAccount,
    /// `GET /v1/bank-accounts/{id}`
    GetBankAccount,
    /// `GET /v1/events`
    ListEvents,
    /// `GET /v1/events/{id}`
    GetEvent,
    /// `POST /v1/events/{id}/redeliver`
    RedeliverEvent,
    /// `POST /v1/webhook-endpoints`
    CreateWebhookEndpoint,
    /// `GET /v1/webhook-endpoints`
    ListWebhookEndpoints,
    /// `GET /v1/webhook-endpoints/{id}`
    GetWebhookEndpoint,
    /// `POST /v1/webhook-endpoints/{id}`
    UpdateWebhookEndpoint,
    /// `DELETE /v1/webhook-endpoints/{id}`
    DeleteWebhookEndpoint,
    /// `POST /v1/webhook-endpoints/{id}/rotate-secret`
    RotateWebhookSecret,
    /// `GET /v1/webhook-endpoints/{id}/deliveries`
    ListWebhookDeliveries,
    /// `GET /v1/openapi.json`
    OpenApi,
}

/// One route: operation, method, path (axum syntax, which is also OpenAPI's).
#[derive(Debug, Clone, Copy)]
pub struct Route {
    /// The operation.
    pub op: Op,
    /// `get`, `post` or `delete`.
    pub method: &'static str,
    /// Path with `{id}` parameters.
    pub path: &'static str,
}

/// The route table: the router is built from it and the document describes it.
pub const ROUTES: &[Route] = &[
    Route {
        op: Op::CreateMandate,
        method: "post",
        path: "/v1/mandates",
    },
    Route {
        op: Op::ListMandates,
        method: "get",
        path: "/v1/mandates",
    },
    Route {
        op: Op::GetMandate,
        method: "get",
        path: "/v1/mandates/{id}",
    },
    Route {
        op: Op::CancelMandate,
        method: "post",
        path: "/v1/mandates/{id}/cancel",
    },
    Route {
        op: Op::AuthorizeMandate,
        method: "post",
        path: "/v1/mandates/{id}/authorize",
    },
    Route {
        op: Op::CreateSessionKey,
        method: "post",
        path: "/v1/session-keys",
    },
    Route {
        op: Op::ListSessionKeys,
        method: "get",
        path: "/v1/session-keys",
    },
    Route {
        op: Op::GetSessionKey,
        method: "get",
        path: "/v1/session-keys/{id}",
    },
    Route {
        op: Op::RevokeSessionKey,
        method: "delete",
        path: "/v1/session-keys/{id}",
    },
    Route {
        op: Op::CreateDebitPull,
        method: "post",
        path: "/v1/debit-pulls",
    },
    Route {
        op: Op::ListDebitPulls,
        method: "get",
        path: "/v1/debit-pulls",
    },
    Route {
        op: Op::GetDebitPull,
        method: "get",
        path: "/v1/debit-pulls/{id}",
    },
    Route {
        op: Op::CreatePayment,
        method: "post",
        path: "/v1/payments",
    },
    Route {
        op: Op::ListPayments,
        method: "get",
        path: "/v1/payments",
    },
    Route {
        op: Op::GetPayment,
        method: "get",
        path: "/v1/payments/{id}",
    },
    Route {
        op: Op::AuthorizePayment,
        method: "post",
        path: "/v1/payments/{id}/authorize",
    },
    Route {
        op: Op::CreateBankAccount,
        method: "post",
        path: "/v1/bank-accounts",
    },
    Route {
        op: Op::GetBankAccount,
        method: "get",
        path: "/v1/bank-accounts/{id}",
    },
    Route {
        op: Op::ListEvents,
        method: "get",
        path: "/v1/events",
    },
    Route {
        op: Op::GetEvent,
        method: "get",
        path: "/v1/events/{id}",
    },
    Route {
        op: Op::RedeliverEvent,
        method: "post",
        path: "/v1/events/{id}/redeliver",
    },
    Route {
        op: Op::CreateWebhookEndpoint,
        method: "post",
        path: "/v1/webhook-endpoints",
    },
    Route {
        op: Op::ListWebhookEndpoints,
        method: "get",
        path: "/v1/webhook-endpoints",
    },
    Route {
        op: Op::GetWebhookEndpoint,
        method: "get",
        path: "/v1/webhook-endpoints/{id}",
    },
    Route {
        op: Op::UpdateWebhookEndpoint,
        method: "post",
        path: "/v1/webhook-endpoints/{id}",
    },
    Route {
        op: Op::DeleteWebhookEndpoint,
        method: "delete",
        path: "/v1/webhook-endpoints/{id}",
    },
    Route {
        op: Op::RotateWebhookSecret,
        method: "post",
        path: "/v1/webhook-endpoints/{id}/rotate-secret",
    },
    Route {
        op: Op::ListWebhookDeliveries,
        method: "get",
        path: "/v1/webhook-endpoints/{id}/deliveries",
    },
    Route {
        op: Op::OpenApi,
        method: "get",
        path: "/v1/openapi.json",
    },
];

/// What an operation documents: summary, request schema, success responses.
struct Doc {
    summary: &'static str,
    request: Option<&'static str>,
    responses: &'static [(u16, &'static str)],
    errors: &'static [u16],
}

/// The route serving `method` on `path` (a concrete path: `{id}` matches one segment).
pub fn route_of(method: &str, path: &str) -> Option<&'static Route> {
    ROUTES.iter().find(|r| {
        r.method.eq_ignore_ascii_case(method) && {
            let (mut want, mut got) = (r.path.split('/'), path.split('/'));
            loop {
                match (want.next(), got.next()) {
                    (None, None) => break true,
                    (Some(w), Some(g)) if w == g || (w.starts_with('{') && !g.is_empty()) => {}
                    _ => break false,
                }
            }
        }
    })
}

impl Op {
    /// The handler serving this operation.
    pub fn handler(self) -> MethodRouter<AppState> {
        match self {
            Op::CreateMandate => post(agentic::create_mandate),
            Op::ListMandates => get(agentic::list_mandates),
            Op::GetMandate => get(agentic::get_mandate),
            Op::CancelMandate => post(agentic::cancel_mandate),
            Op::AuthorizeMandate => post(agentic::authorize_mandate),
            Op::CreateSessionKey => post(agentic::create_session_key),
            Op::ListSessionKeys => get(agentic::list_session_keys),
            Op::GetSessionKey => get(agentic::get_session_key),
            Op::RevokeSessionKey => delete(agentic::revoke_session_key),
            Op::CreateDebitPull => post(agentic::create_pull),
            Op::ListDebitPulls => get(agentic::list_pulls),
            Op::GetDebitPull => get(agentic::get_pull),
            Op::CreatePayment => post(payments::create_payment),
            Op::ListPayments => get(payments::list_payments),
            Op::GetPayment => get(payments::get_payment),
            Op::AuthorizePayment => post(payments::authorize_payment),
            Op::CreateBankAccount => post(bank::create_bank_account),
            Op::GetBankAccount => get(bank::get_bank_account),
            Op::ListEvents => get(events::list_events),
            Op::GetEvent => get(events::get_event),
            Op::RedeliverEvent => post(webhooks::redeliver_event),
            Op::CreateWebhookEndpoint => post(webhooks::create_webhook_endpoint),
            Op::ListWebhookEndpoints => get(webhooks::list_webhook_endpoints),
            Op::GetWebhookEndpoint => get(webhooks::get_webhook_endpoint),
            Op::UpdateWebhookEndpoint => post(webhooks::update_webhook_endpoint),
            Op::DeleteWebhookEndpoint => delete(webhooks::delete_webhook_endpoint),
            Op::RotateWebhookSecret => post(webhooks::rotate_webhook_secret),
            Op::ListWebhookDeliveries => get(webhooks::list_webhook_deliveries),
            Op::OpenApi => get(|| async { axum::Json(document()) }),
        }
    }

    /// The `operationId`.
    pub fn id(self) -> &'static str {
        match self {
            Op::CreateMandate => "createMandate",
            Op::ListMandates => "listMandates",
            Op::GetMandate => "getMandate",
            Op::CancelMandate => "cancelMandate",
            Op::AuthorizeMandate => "authorizeMandate",
            Op::CreateSessionKey => "createSessionKey",
            Op::ListSessionKeys => "listSessionKeys",
            Op::GetSessionKey => "getSessionKey",
            Op::RevokeSessionKey => "revokeSessionKey",
            Op::CreateDebitPull => "createDebitPull",
            Op::ListDebitPulls => "listDebitPulls",
            Op::GetDebitPull => "getDebitPull",
            Op::CreatePayment => "createPayment",
            Op::ListPayments => "listPayments",
            Op::GetPayment => "getPayment",
            Op::AuthorizePayment => "authorizePayment",
            Op::CreateBankAccount => "createBankAccount",
            Op::GetBankAccount => "getBankAccount",
            Op::ListEvents => "listEvents",
            Op::GetEvent => "getEvent",
            Op::RedeliverEvent => "redeliverEvent",
            Op::CreateWebhookEndpoint => "createWebhookEndpoint",
            Op::ListWebhookEndpoints => "listWebhookEndpoints",
            Op::GetWebhookEndpoint => "getWebhookEndpoint",
            Op::UpdateWebhookEndpoint => "updateWebhookEndpoint",
            Op::DeleteWebhookEndpoint => "deleteWebhookEndpoint",
            Op::RotateWebhookSecret => "rotateWebhookSecret",
            Op::ListWebhookDeliveries => "listWebhookDeliveries",
            Op::OpenApi => "getOpenApi",
        }
    }

    fn doc(self) -> Doc {
        const W: &[u16] = &[400, 401, 403, 404, 409, 413, 415, 422, 429, 503];
        const R: &[u16] = &[400, 401, 403, 404, 429, 503];
        match self {
            Op::CreateMandate => Doc {
                summary: "Create a mandate (a ceiling per epoch, enforced on chain)",
                request: Some("MandateCreate"),
                responses: &[(201, "Mandate"), (202, "Mandate")],
                errors: W,
            },
            Op::ListMandates => Doc {
                summary: "List mandates",
                request: None,
                responses: &[(200, "MandateList")],
                errors: R,
            },
            Op::GetMandate => Doc {
                summary: "Retrieve a mandate",
                request: None,
                responses: &[(200, "Mandate")],
                errors: R,
            },
            Op::CancelMandate => Doc {
                summary: "Cancel a mandate; its keys can no longer pull",
                request: None,
                responses: &[(200, "Mandate"), (202, "Mandate")],
                errors: W,
            },
            Op::AuthorizeMandate => Doc {
                summary: "Give the payer's EIP-712 signature of a mandate (status requires_authorization); the mandate is then created on chain",
                request: Some("AuthorizationCreate"),
                responses: &[(200, "Mandate"), (202, "Mandate")],
                errors: W,
            },
            Op::AuthorizePayment => Doc {
                summary: "Give the payer's EIP-712 signature of a wallet payment (status requires_authorization); the payment then runs",
                request: Some("AuthorizationCreate"),
                responses: &[(200, "Payment"), (202, "Payment")],
                errors: W,
            },
            Op::CreateSessionKey => Doc {
                summary: "Issue a session key (returns its agent secret once)",
                request: Some("SessionKeyCreate"),
                responses: &[(201, "SessionKey"), (202, "SessionKey")],
                errors: W,
            },
            Op::ListSessionKeys => Doc {
                summary: "List session keys",
                request: None,
                responses: &[(200, "SessionKeyList")],
                errors: R,
            },
            Op::GetSessionKey => Doc {
                summary: "Retrieve a session key",
                request: None,
                responses: &[(200, "SessionKey")],
                errors: R,
            },
            Op::RevokeSessionKey => Doc {
                summary: "Revoke a session key",
                request: None,
                responses: &[(200, "SessionKey"), (202, "SessionKey")],
                errors: W,
            },
            Op::CreateDebitPull => Doc {
                summary: "Pull against a session key (checked on chain; 422 with pull_id when declined)",
                request: Some("DebitPullCreate"),
                responses: &[(201, "DebitPull"), (202, "DebitPull")],
                errors: W,
            },
            Op::ListDebitPulls => Doc {
                summary: "List debit pulls",
                request: None,
                responses: &[(200, "DebitPullList")],
                errors: R,
            },
            Op::GetDebitPull => Doc {
                summary: "Retrieve a debit pull",
                request: None,
                responses: &[(200, "DebitPull")],
                errors: R,
            },
            Op::CreatePayment => Doc {
                summary: "Create a one-time payment (settled atomically on chain)",
                request: Some("PaymentCreate"),
                responses: &[(201, "Payment"), (202, "Payment")],
                errors: W,
            },
            Op::ListPayments => Doc {
                summary: "List payments",
                request: None,
                responses: &[(200, "PaymentList")],
                errors: R,
            },
            Op::GetPayment => Doc {
                summary: "Retrieve a payment",
                request: None,
                responses: &[(200, "Payment")],
                errors: R,
            },
            Op::CreateBankAccount => Doc {
                summary: "Create a simulated bank account (testnet) with a chosen behaviour",
                request: Some("BankAccountCreate"),
                responses: &[(201, "BankAccount")],
                errors: W,
            },
            Op::GetBankAccount => Doc {
                summary: "Retrieve a simulated bank account, its balance and transfers",
                request: None,
                responses: &[(200, "BankAccount")],
                errors: R,
            },
            Op::ListEvents => Doc {
                summary: "List events, newest first (filters: type — one type or `debit_pull.*`; object_id; created[gte] — unix seconds or RFC 3339)",
                request: None,
                responses: &[(200, "EventList")],
                errors: R,
            },
            Op::GetEvent => Doc {
                summary: "Retrieve an event",
                request: None,
                responses: &[(200, "Event")],
                errors: R,
            },
            Op::RedeliverEvent => Doc {
                summary: "Deliver an event again (body `{}`: to every enabled endpoint that wants its type; `{\"endpoint\": \"we_…\"}`: to that one); the same webhook-id",
                request: Some("RedeliverCreate"),
                responses: &[(200, "WebhookDeliveryList")],
                errors: W,
            },
            Op::CreateWebhookEndpoint => Doc {
                summary: "Create a webhook endpoint (returns its signing secret once)",
                request: Some("WebhookEndpointCreate"),
                responses: &[(201, "WebhookEndpoint")],
                errors: W,
            },
            Op::ListWebhookEndpoints => Doc {
                summary: "List webhook endpoints",
                request: None,
                responses: &[(200, "WebhookEndpointList")],
                errors: R,
            },
            Op::GetWebhookEndpoint => Doc {
                summary: "Retrieve a webhook endpoint",
                request: None,
                responses: &[(200, "WebhookEndpoint")],
                errors: R,
            },
            Op::UpdateWebhookEndpoint => Doc {
                summary: "Update a webhook endpoint (url, enabled_events, description, status)",
                request: Some("WebhookEndpointUpdate"),
                responses: &[(200, "WebhookEndpoint")],
                errors: W,
            },
            Op::DeleteWebhookEndpoint => Doc {
                summary: "Delete a webhook endpoint and its deliveries",
                request: None,
                responses: &[(200, "DeletedWebhookEndpoint")],
                errors: W,
            },
            Op::RotateWebhookSecret => Doc {
                summary: "Rotate the signing secret (returned once); the old one keeps signing beside it for 24 hours",
                request: None,
                responses: &[(200, "WebhookEndpoint")],
                errors: W,
            },
            Op::ListWebhookDeliveries => Doc {
                summary: "List an endpoint's deliveries, newest first (attempts, last status code, latency, next retry)",
                request: None,
                responses: &[(200, "WebhookDeliveryList")],
                errors: R,
            },
            Op::OpenApi => Doc {
                summary: "This document",
                request: None,
                responses: &[(200, "OpenApi")],
                errors: &[],
            },
        }
    }
}

fn r(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

const STR: &str = "string";

fn nullable(t: &str) -> Value {
    json!({ "type": [t, "null"] })
}

fn object(required: &[&str], props: Value) -> Value {
    json!({ "type": "object", "required": required, "properties": props, "additionalProperties": false })
}

fn list_of(item: &str) -> Value {
    object(
        &["object", "url", "data", "has_more"],
        json!({
            "object": { "const": "list" },
            "url": { "type": STR },
            "data": { "type": "array", "items": r(item) },
            "has_more": { "type": "boolean" },
        }),
    )
}

fn schemas() -> Value {
    let amount = json!({ "type": STR, "pattern": "^[0-9]+\\.[0-9]{2}$", "description": "Decimal major units" });
    let amount_in = json!({ "oneOf": [{ "type": "number" }, { "type": STR }], "description": "Decimal major units, exact; a JSON number or a string" });
    let time = json!({ "type": STR, "format": "date-time" });
    let event_types: Vec<&str> = std::iter::once("*")
        .chain(EventType::ALL.iter().map(|t| t.as_str()))
        .collect();
    let onchain = object(
        &["chain_id", "contract", "id", "tx_hash"],
        json!({ "chain_id": { "type": "integer" }, "contract": { "type": STR }, "id": { "type": STR }, "tx_hash": nullable(STR) }),
    );
    let epoch = object(
        &["starts_at", "ends_at", "spent", "remaining"],
        json!({ "starts_at": time, "ends_at": time, "spent": amount, "remaining": amount }),
    );
    let authorization = json!({
        "description": "How the payer consented. `payer_signature` (wallet payers and sources): the EIP-712 typed data to sign with eth_signTypedData_v4 or `cast wallet sign --data`, until `expires_at`; then POST …/authorize with the signature. `bank_mandate`: a bank-account payer's bank mandate; the treasury funds the chain side.",
        "oneOf": [
            object(&["method", "signer", "typed_data", "expires_at", "signature", "authorized_at"], json!({
                "method": { "const": "payer_signature" },
                "signer": { "type": STR },
                "typed_data": object(&["types", "primaryType", "domain", "message"], json!({
                    "types": { "type": "object" }, "primaryType": { "type": STR },
                    "domain": { "type": "object" }, "message": { "type": "object" },
                })),
                "expires_at": time,
                "signature": nullable(STR),
                "authorized_at": { "oneOf": [time, { "type": "null" }] },
            })),
            object(&["method"], json!({ "method": { "const": "bank_mandate" } })),
        ],
    });
    let domain = object(
        &["name", "version", "chainId", "verifyingContract"],
        json!({
            "name": { "const": "Openrail" }, "version": { "const": "1" },
            "chainId": { "type": "integer" }, "verifyingContract": { "type": STR },
        }),
    );
    json!({
        "AuthorizationCreate": object(&["signature"], json!({
            "signature": { "type": STR, "pattern": "^0x[0-9a-fA-F]{130}$", "description": "The payer's 65-byte signature of `authorization.typed_data`" },
        })),
        "MandateCreate": object(&["payer_account_id", "max_amount", "currency", "interval"], json!({
            "payer_account_id": { "type": STR, "description": "Payer wallet address (0x…; the payer must sign, see `authorization`) or a bank account (ba_…)" },
            "max_amount": amount_in,
            "currency": { "type": STR, "enum": ["USD", "EUR", "usd", "eur"] },
            "interval": { "type": STR, "enum": ["daily", "weekly", "monthly", "yearly"] },
            "purpose": { "type": STR, "maxLength": 500 },
        })),
        "Mandate": object(&["id", "object", "livemode", "created_at", "payer_account_id", "max_amount", "currency", "interval", "purpose", "status", "current_epoch", "onchain"], json!({
            "id": { "type": STR, "pattern": "^man_" },
            "object": { "const": "mandate" },
            "livemode": { "type": "boolean" },
            "created_at": time,
            "payer_account_id": { "type": STR },
            "max_amount": amount,
            "currency": { "type": STR, "enum": ["USD", "EUR"] },
            "interval": { "type": STR, "enum": ["daily", "weekly", "monthly", "yearly"] },
            "purpose": nullable(STR),
            "status": { "type": STR, "enum": ["requires_authorization", "pending", "active", "canceled", "failed"] },
            "current_epoch": epoch,
            "onchain": onchain,
            "authorization": authorization.clone(),
        })),
        "SessionKeyCreate": object(&["mandate_id", "expires_in"], json!({
            "mandate_id": { "type": STR },
            "expires_in": { "type": "integer", "minimum": 60, "maximum": 31_536_000 },
            "max_amount": amount_in,
            "allowed_destinations": { "type": "array", "items": { "type": STR }, "maxItems": 20 },
            "signer": { "type": STR, "description": "An agent's address: every pull on the key then needs its EIP-712 DebitPull signature, checked on chain" },
        })),
        "SessionKey": object(&["id", "object", "livemode", "created_at", "mandate_id", "status", "expires_at", "max_amount", "currency", "allowed_destinations", "current_epoch", "onchain"], json!({
            "id": { "type": STR, "pattern": "^sk_" },
            "object": { "const": "session_key" },
            "livemode": { "type": "boolean" },
            "created_at": time,
            "mandate_id": { "type": STR },
            "status": { "type": STR, "enum": ["pending", "active", "expired", "revoked", "failed"] },
            "expires_at": time,
            "max_amount": { "oneOf": [amount, { "type": "null" }] },
            "currency": { "type": STR },
            "allowed_destinations": { "type": "array", "items": { "type": STR } },
            "current_epoch": epoch,
            "onchain": onchain,
            "secret": { "oneOf": [{ "type": STR, "pattern": "^sks_" }, { "type": "null" }], "description": "Only in the creation response; a replay of the creation (same Idempotency-Key) answers null with secret_redacted: the secret is never stored" },
            "secret_redacted": { "type": "boolean" },
            "signer": nullable(STR),
            "eip712_domain": { "oneOf": [domain, { "type": "null" }], "description": "The domain of the DebitPull signatures a key with a signer needs" },
        })),
        "DebitPullCreate": object(&["session_key_id", "amount"], json!({
            "session_key_id": { "type": STR },
            "amount": amount_in,
            "destination": { "type": STR, "description": "Wallet address; must be allow-listed when the key has a list" },
            "description": { "type": STR, "maxLength": 500 },
            "signature": { "type": STR, "description": "Keys with a signer: the agent's EIP-712 signature of DebitPull(bytes32 keyId,address destination,uint256 amount,uint256 nonce,uint256 deadline), keyId = the key's onchain.id, amount in token units (6 decimals)" },
            "nonce": { "oneOf": [{ "type": "integer", "minimum": 0 }, { "type": STR, "pattern": "^[0-9]+$" }], "description": "Keys with a signer: the agent's nonce (each works once per key, any order)" },
            "deadline": { "type": "integer", "minimum": 0, "description": "Keys with a signer: unix seconds after which the signature is void" },
        })),
        "DebitPull": object(&["id", "object", "livemode", "created_at", "session_key_id", "mandate_id", "amount", "currency", "destination", "description", "status", "decline_code", "failure_reason", "authorized_at", "onchain"], json!({
            "id": { "type": STR, "pattern": "^pull_" },
            "object": { "const": "debit_pull" },
            "livemode": { "type": "boolean" },
            "created_at": time,
            "session_key_id": { "type": STR },
            "mandate_id": { "type": STR },
            "amount": amount,
            "currency": { "type": STR },
            "destination": { "type": STR },
            "description": nullable(STR),
            "status": { "type": STR, "enum": ["pending", "authorized", "settled", "declined", "failed"] },
            "decline_code": nullable(STR),
            "failure_reason": nullable(STR),
            "authorized_at": { "oneOf": [time, { "type": "null" }] },
            "onchain": object(&["chain_id", "tx_hash"], json!({ "chain_id": { "type": "integer" }, "tx_hash": nullable(STR) })),
        })),
        "BankAccountCreate": object(&["owner_name", "currency"], json!({
            "owner_name": { "type": STR, "maxLength": 200 },
            "currency": { "type": STR, "enum": ["USD", "EUR", "usd", "eur"] },
            "balance": amount_in,
            "behavior": { "type": STR, "enum": ["settles", "insufficient_funds", "closed", "delayed", "fails_late"] },
            "delay_seconds": { "type": "integer", "minimum": 0, "maximum": 3600 },
        })),
        "BankAccount": object(&["id", "object", "livemode", "created_at", "owner_name", "currency", "balance", "available_balance", "behavior", "delay_seconds", "transfers"], json!({
            "id": { "type": STR, "pattern": "^ba_" },
            "object": { "const": "bank_account" },
            "livemode": { "type": "boolean" },
            "created_at": time,
            "owner_name": { "type": STR },
            "currency": { "type": STR, "enum": ["USD", "EUR"] },
            "balance": amount,
            "available_balance": { "type": STR, "pattern": "^[0-9]+\\.[0-9]{2}$", "description": "The balance minus what pending debits hold: what a new debit may take" },
            "behavior": { "type": STR, "enum": ["settles", "insufficient_funds", "closed", "delayed", "fails_late"] },
            "delay_seconds": { "type": "integer" },
            "transfers": { "type": "array", "items": r("BankTransfer") },
        })),
        "BankTransfer": object(&["id", "object", "bank_account_id", "direction", "amount", "status", "failure_reason", "created_at", "updated_at"], json!({
            "id": { "type": STR, "pattern": "^btr_" },
            "object": { "const": "bank_transfer" },
            "bank_account_id": { "type": STR, "pattern": "^ba_" },
            "direction": { "type": STR, "enum": ["debit", "credit"] },
            "amount": amount,
            "status": { "type": STR, "enum": ["pending", "settled", "failed"] },
            "failure_reason": nullable(STR),
            "created_at": time,
            "updated_at": time,
        })),
        "Event": object(&["id", "object", "type", "livemode", "created_at", "data"], json!({
            "id": { "type": STR, "pattern": "^evt_" },
            "object": { "const": "event" },
            "type": { "type": STR, "enum": EventType::ALL.iter().map(|t| t.as_str()).collect::<Vec<_>>() },
            "livemode": { "type": "boolean" },
            "created_at": time,
            "data": object(&["object"], json!({
                "object": {
                    "description": "The object as it was at the moment of the event",
                    "oneOf": [r("Mandate"), r("SessionKey"), r("DebitPull"), r("Payment"), r("BankTransfer"), r("WebhookEndpoint")],
                },
            })),
        })),
        "EventList": list_of("Event"),
        "WebhookEndpointCreate": object(&["url", "enabled_events"], json!({
            "url": { "type": STR, "description": "Where deliveries are POSTed. Mainnet: https to a public address. Testnet: also http to localhost or 127.0.0.1" },
            "enabled_events": { "type": "array", "items": { "type": STR, "enum": event_types.clone() }, "minItems": 1, "description": "[\"*\"] for every type" },
            "description": { "type": STR, "maxLength": 500 },
        })),
        "WebhookEndpointUpdate": object(&[], json!({
            "url": { "type": STR },
            "enabled_events": { "type": "array", "items": { "type": STR, "enum": event_types.clone() }, "minItems": 1 },
            "description": nullable(STR),
            "status": { "type": STR, "enum": ["enabled", "disabled"], "description": "enabled clears the failure record" },
        })),
        "WebhookEndpoint": object(&["id", "object", "livemode", "created_at", "url", "description", "enabled_events", "status", "disabled_reason", "failing_since", "previous_secret_expires_at"], json!({
            "id": { "type": STR, "pattern": "^we_" },
            "object": { "const": "webhook_endpoint" },
            "livemode": { "type": "boolean" },
            "created_at": time,
            "url": { "type": STR },
            "description": nullable(STR),
            "enabled_events": { "type": "array", "items": { "type": STR } },
            "status": { "type": STR, "enum": ["enabled", "disabled"] },
            "disabled_reason": { "type": ["string", "null"], "enum": ["failing", null], "description": "failing: every attempt failed for longer than the server allows (the webhook_endpoint.disabled event says so)" },
            "failing_since": { "oneOf": [time, { "type": "null" }], "description": "The first failed attempt since the last success" },
            "previous_secret_expires_at": { "oneOf": [time, { "type": "null" }], "description": "Until then the secret before the last rotation signs too (a second v1 signature)" },
            "secret": { "oneOf": [{ "type": STR, "pattern": "^whsec_" }, { "type": "null" }], "description": "Only in the creation and rotation responses (a replay with the same Idempotency-Key answers null with secret_redacted)" },
            "secret_redacted": { "type": "boolean" },
        })),
        "WebhookEndpointList": list_of("WebhookEndpoint"),
        "DeletedWebhookEndpoint": object(&["id", "object", "deleted"], json!({
            "id": { "type": STR, "pattern": "^we_" },
            "object": { "const": "webhook_endpoint" },
            "deleted": { "const": true },
        })),
        "RedeliverCreate": object(&[], json!({
            "endpoint": { "type": STR, "pattern": "^we_", "description": "Only this endpoint (whatever its enabled_events)" },
        })),
        "WebhookDelivery": object(&["id", "object", "endpoint_id", "event_id", "redelivery", "status", "attempts", "last_status_code", "last_error", "latency_ms", "last_attempt_at", "next_attempt_at", "created_at"], json!({
            "id": { "type": STR, "pattern": "^whd_" },
            "object": { "const": "webhook_delivery" },
            "endpoint_id": { "type": STR, "pattern": "^we_" },
            "event_id": { "type": STR, "pattern": "^evt_" },
            "redelivery": { "type": "boolean" },
            "status": { "type": STR, "enum": ["pending", "succeeded", "failed"] },
            "attempts": { "type": "integer" },
            "last_status_code": { "type": ["integer", "null"] },
            "last_error": nullable(STR),
            "latency_ms": { "type": ["integer", "null"] },
            "last_attempt_at": { "oneOf": [time, { "type": "null" }] },
            "next_attempt_at": { "oneOf": [time, { "type": "null" }], "description": "While pending: the next attempt" },
            "created_at": time,
        })),
        "WebhookDeliveryList": list_of("WebhookDelivery"),
        "PaymentCreate": object(&["amount", "currency", "source", "destination"], json!({
            "amount": amount_in,
            "currency": { "type": STR, "enum": ["USD", "EUR", "usd", "eur"] },
            "source": object(&["type", "id"], json!({
                "type": { "type": STR, "enum": ["wallet", "bank_account"] },
                "id": { "type": STR, "description": "Wallet address (0x…) that approved the router, or ba_…" },
            })),
            "destination": object(&["type", "address"], json!({
                "type": { "type": STR, "enum": ["wallet", "bank_account"] },
                "address": { "type": STR, "description": "Wallet address (0x…) or ba_…" },
            })),
        })),
        "Payment": object(&["id", "object", "livemode", "created_at", "amount", "currency", "source", "destination", "status", "failure_reason", "refund_status", "onchain"], json!({
            "id": { "type": STR, "pattern": "^pay_" },
            "object": { "const": "payment" },
            "livemode": { "type": "boolean" },
            "created_at": time,
            "amount": amount,
            "currency": { "type": STR, "enum": ["USD", "EUR"] },
            "source": object(&["type", "id"], json!({ "type": { "type": STR }, "id": { "type": STR } })),
            "destination": object(&["type", "address"], json!({ "type": { "type": STR }, "address": { "type": STR } })),
            "status": { "type": STR, "enum": ["requires_authorization", "pending", "processing", "succeeded", "failed"] },
            "authorization": authorization,
            "failure_reason": nullable(STR),
            "refund_status": {
                "type": ["string", "null"],
                "enum": ["pending", "succeeded", "failed", null],
                "description": "Set when the destination leg failed after the source leg: the amount goes back to the source (pending, then succeeded, or failed when the refund itself failed)"
            },
            "onchain": object(&["chain_id", "tx_hash"], json!({ "chain_id": { "type": "integer" }, "tx_hash": nullable(STR) })),
        })),
        "PaymentList": list_of("Payment"),
        "MandateList": list_of("Mandate"),
        "SessionKeyList": list_of("SessionKey"),
        "DebitPullList": list_of("DebitPull"),
        "Problem": {
            "type": "object",
            "required": ["type", "title", "status", "detail", "code"],
            "properties": {
                "type": { "type": STR }, "title": { "type": STR }, "status": { "type": "integer" },
                "detail": { "type": STR }, "code": { "type": STR }, "param": { "type": STR },
                "request_id": { "type": STR }, "pull_id": { "type": STR },
                "remaining": amount, "resets_at": time,
            },
        },
        "OpenApi": { "type": "object", "required": ["openapi", "paths"] },
    })
}

/// The OpenAPI 3.1 document.
pub fn document() -> Value {
    let mut paths = Map::new();
    for route in ROUTES {
        let doc = route.op.doc();
        let mut responses = Map::new();
        for (status, schema) in doc.responses {
            responses.insert(
                status.to_string(),
                json!({ "description": schema, "content": { "application/json": { "schema": r(schema) } } }),
            );
        }
        for status in doc.errors {
            responses.insert(
                status.to_string(),
                json!({ "description": "Problem", "content": { "application/problem+json": { "schema": r("Problem") } } }),
            );
        }
        let mut op =
            json!({ "operationId": route.op.id(), "summary": doc.summary, "responses": responses });
        if route.path.contains("{id}") {
            op["parameters"] = json!([{ "name": "id", "in": "path", "required": true, "schema": { "type": STR } }]);
        }
        if let Some(req) = doc.request {
            op["requestBody"] = json!({ "required": true, "content": { "application/json": { "schema": r(req) } } });
        }
        let entry = paths
            .entry(route.path.to_string())
            .or_insert_with(|| json!({}));
        entry[route.method] = op;
    }
    json!({
        "openapi": "3.1.0",
        "info": { "title": "Openrail API", "version": "v1" },
        "servers": [{ "url": "/" }],
        "security": [{ "bearer": [] }],
        "components": {
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer", "description": "sk_testnet_… / sk_mainnet_… API keys, or a session key's sks_… secret" } },
            "schemas": schemas(),
        },
        "paths": paths,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_of_matches_concrete_paths() {
        let op = |m, p| route_of(m, p).map(|r| r.op);
        assert_eq!(op("POST", "/v1/debit-pulls"), Some(Op::CreateDebitPull));
        assert_eq!(op("get", "/v1/debit-pulls/pull_1"), Some(Op::GetDebitPull));
        assert_eq!(
            op("POST", "/v1/mandates/man_1/cancel"),
            Some(Op::CancelMandate)
        );
        assert_eq!(
            op("DELETE", "/v1/session-keys/sk_1"),
            Some(Op::RevokeSessionKey)
        );
        // An empty segment, an extra segment, another method: no route.
        assert_eq!(op("GET", "/v1/mandates/"), None);
        assert_eq!(op("GET", "/v1/mandates/man_1/extra"), None);
        assert_eq!(op("PUT", "/v1/mandates"), None);
    }
}
