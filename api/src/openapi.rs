//! The OpenAPI 3.1 document, generated: its paths from the same route table that builds
//! the router ([`ROUTES`]), so a served route cannot go undocumented; its schemas from the
//! request and response types the handlers read and answer ([`crate::types`], through
//! [`utoipa::ToSchema`]). `docs/openapi.json` is a committed copy (`make openapi`), checked
//! equal to this by a test, and an end-to-end test validates real responses against it.

use std::borrow::Cow;

use axum::routing::{MethodRouter, delete, get, post};
use openrail_store::agentic::DeclineReason;
use openrail_store::events::EventType;
use serde_json::{Map, Value, json};
use utoipa::ToSchema;
use utoipa::openapi::{RefOr, Schema};

use crate::{
    AppState, account, agent_credentials, agentic, attestations, bank, events, identity, payments,
    verifications, webhooks,
};

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
    /// `POST /v1/session-keys/{id}/credential`
    IssueAgentCredential,
    /// `GET /v1/session-keys/{id}/credential`
    GetAgentCredential,
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
    /// `POST /v1/payments/{id}/cancel`
    CancelPayment,
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
    /// `GET /v1/account`
    GetAccount,
    /// `POST /v1/account`
    UpdateAccount,
    /// `POST /v1/identity/credentials/verify`
    VerifyCredential,
    /// `POST /v1/identity/presentations/verify`
    VerifyPresentation,
    /// `POST /v1/identity/challenges`
    CreateChallenge,
    /// `POST /v1/identity/credentials/issue`
    IssueCredential,
    /// `POST /v1/identity/credentials/status`
    UpdateCredentialStatus,
    /// `GET /v1/identity/status-lists/{id}`
    GetStatusList,
    /// `POST /v1/identity/verifications`
    CreateIdentityVerification,
    /// `GET /v1/identity/verifications`
    ListIdentityVerifications,
    /// `GET /v1/identity/verifications/{id}`
    GetIdentityVerification,
    /// `POST /v1/identity/verifications/{id}/submit`
    SubmitIdentityVerification,
    /// `POST /v1/identity/verifications/{id}/cancel`
    CancelIdentityVerification,
    /// `GET /v1/identity/verifications/{id}/credential`
    GetIdentityVerificationCredential,
    /// `POST /v1/identity/attestations`
    CreateAttestation,
    /// `GET /v1/identity/attestations`
    ListAttestations,
    /// `GET /v1/identity/attestations/{id}`
    GetAttestation,
    /// `POST /v1/identity/attestations/{id}/revoke`
    RevokeAttestation,
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
        op: Op::IssueAgentCredential,
        method: "post",
        path: "/v1/session-keys/{id}/credential",
    },
    Route {
        op: Op::GetAgentCredential,
        method: "get",
        path: "/v1/session-keys/{id}/credential",
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
        op: Op::CancelPayment,
        method: "post",
        path: "/v1/payments/{id}/cancel",
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
        op: Op::GetAccount,
        method: "get",
        path: "/v1/account",
    },
    Route {
        op: Op::UpdateAccount,
        method: "post",
        path: "/v1/account",
    },
    Route {
        op: Op::VerifyCredential,
        method: "post",
        path: "/v1/identity/credentials/verify",
    },
    Route {
        op: Op::VerifyPresentation,
        method: "post",
        path: "/v1/identity/presentations/verify",
    },
    Route {
        op: Op::CreateChallenge,
        method: "post",
        path: "/v1/identity/challenges",
    },
    Route {
        op: Op::IssueCredential,
        method: "post",
        path: "/v1/identity/credentials/issue",
    },
    Route {
        op: Op::UpdateCredentialStatus,
        method: "post",
        path: "/v1/identity/credentials/status",
    },
    Route {
        op: Op::GetStatusList,
        method: "get",
        path: "/v1/identity/status-lists/{id}",
    },
    Route {
        op: Op::CreateIdentityVerification,
        method: "post",
        path: "/v1/identity/verifications",
    },
    Route {
        op: Op::ListIdentityVerifications,
        method: "get",
        path: "/v1/identity/verifications",
    },
    Route {
        op: Op::GetIdentityVerification,
        method: "get",
        path: "/v1/identity/verifications/{id}",
    },
    Route {
        op: Op::SubmitIdentityVerification,
        method: "post",
        path: "/v1/identity/verifications/{id}/submit",
    },
    Route {
        op: Op::CancelIdentityVerification,
        method: "post",
        path: "/v1/identity/verifications/{id}/cancel",
    },
    Route {
        op: Op::GetIdentityVerificationCredential,
        method: "get",
        path: "/v1/identity/verifications/{id}/credential",
    },
    Route {
        op: Op::CreateAttestation,
        method: "post",
        path: "/v1/identity/attestations",
    },
    Route {
        op: Op::ListAttestations,
        method: "get",
        path: "/v1/identity/attestations",
    },
    Route {
        op: Op::GetAttestation,
        method: "get",
        path: "/v1/identity/attestations/{id}",
    },
    Route {
        op: Op::RevokeAttestation,
        method: "post",
        path: "/v1/identity/attestations/{id}/revoke",
    },
    Route {
        op: Op::OpenApi,
        method: "get",
        path: "/v1/openapi.json",
    },
];

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
            Op::IssueAgentCredential => post(agent_credentials::issue_agent_credential),
            Op::GetAgentCredential => get(agent_credentials::get_agent_credential),
            Op::CreateDebitPull => post(agentic::create_pull),
            Op::ListDebitPulls => get(agentic::list_pulls),
            Op::GetDebitPull => get(agentic::get_pull),
            Op::CreatePayment => post(payments::create_payment),
            Op::ListPayments => get(payments::list_payments),
            Op::GetPayment => get(payments::get_payment),
            Op::AuthorizePayment => post(payments::authorize_payment),
            Op::CancelPayment => post(payments::cancel_payment),
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
            Op::GetAccount => get(account::get_account),
            Op::UpdateAccount => post(account::update_account),
            Op::VerifyCredential => post(identity::verify_credential),
            Op::VerifyPresentation => post(identity::verify_presentation),
            Op::CreateChallenge => post(identity::create_challenge),
            Op::IssueCredential => post(identity::issue_credential),
            Op::UpdateCredentialStatus => post(identity::update_credential_status),
            Op::GetStatusList => get(identity::get_status_list),
            Op::CreateIdentityVerification => post(verifications::create_verification),
            Op::ListIdentityVerifications => get(verifications::list_verifications),
            Op::GetIdentityVerification => get(verifications::get_verification),
            Op::SubmitIdentityVerification => post(verifications::submit_verification),
            Op::CancelIdentityVerification => post(verifications::cancel_verification),
            Op::GetIdentityVerificationCredential => {
                get(verifications::get_verification_credential)
            }
            Op::CreateAttestation => post(attestations::create_attestation),
            Op::ListAttestations => get(attestations::list_attestations),
            Op::GetAttestation => get(attestations::get_attestation),
            Op::RevokeAttestation => post(attestations::revoke_attestation),
            Op::OpenApi => get(|| async { axum::Json(served()) }),
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
            Op::IssueAgentCredential => "issueAgentCredential",
            Op::GetAgentCredential => "getAgentCredential",
            Op::CreateDebitPull => "createDebitPull",
            Op::ListDebitPulls => "listDebitPulls",
            Op::GetDebitPull => "getDebitPull",
            Op::CreatePayment => "createPayment",
            Op::ListPayments => "listPayments",
            Op::GetPayment => "getPayment",
            Op::AuthorizePayment => "authorizePayment",
            Op::CancelPayment => "cancelPayment",
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
            Op::GetAccount => "getAccount",
            Op::UpdateAccount => "updateAccount",
            Op::VerifyCredential => "verifyCredential",
            Op::VerifyPresentation => "verifyPresentation",
            Op::CreateChallenge => "createChallenge",
            Op::IssueCredential => "issueCredential",
            Op::UpdateCredentialStatus => "updateCredentialStatus",
            Op::GetStatusList => "getStatusList",
            Op::CreateIdentityVerification => "createIdentityVerification",
            Op::ListIdentityVerifications => "listIdentityVerifications",
            Op::GetIdentityVerification => "getIdentityVerification",
            Op::SubmitIdentityVerification => "submitIdentityVerification",
            Op::CancelIdentityVerification => "cancelIdentityVerification",
            Op::GetIdentityVerificationCredential => "getIdentityVerificationCredential",
            Op::CreateAttestation => "createAttestation",
            Op::ListAttestations => "listAttestations",
            Op::GetAttestation => "getAttestation",
            Op::RevokeAttestation => "revokeAttestation",
            Op::OpenApi => "getOpenApi",
        }
    }

    /// Served without a key, outside the authenticated `/v1` router (no rate limit per
    /// credential, no idempotency).
    pub fn public(self) -> bool {
        matches!(self, Op::OpenApi | Op::GetStatusList)
    }

    /// Served with a key, or without one (rate-limited per client address).
    pub fn anonymous(self) -> bool {
        matches!(self, Op::VerifyCredential)
    }

    /// What the document says of this operation.
    fn doc(self) -> Doc {
        use crate::types as t;
        const W: &[u16] = &[400, 401, 403, 404, 409, 413, 415, 422, 429, 503];
        const R: &[u16] = &[400, 401, 403, 404, 429, 503];
        const V: &[u16] = &[400, 401, 403, 413, 415, 422, 429, 503];
        const LIST: &[Query] = &[Query::Limit, Query::StartingAfter];
        let d = Doc::new;
        match self {
            Op::CreateMandate => d("Create a mandate", "A ceiling per epoch a payer grants, enforced on chain by the allowance state machine. A wallet payer must sign it first: the answer is 201 `requires_authorization` with the EIP-712 typed data to sign (then `POST /v1/mandates/{id}/authorize`). A bank-account payer's bank mandate is its consent: the mandate is created on chain at once (201 `active`, or 202 `pending` while the chain has not answered).")
                .body(name::<t::MandateCreate>)
                .ok(201, name::<t::Mandate>)
                .ok(202, name::<t::Mandate>)
                .errors(W)
                .waits()
                .links(&[
                    ("GetMandate", Op::GetMandate, LinkArg::Id),
                    ("AuthorizeMandate", Op::AuthorizeMandate, LinkArg::Id),
                    ("CancelMandate", Op::CancelMandate, LinkArg::Id),
                    ("CreateSessionKey", Op::CreateSessionKey, LinkArg::Body(&[("mandate_id", "$response.body#/id")])),
                    ("ListSessionKeys", Op::ListSessionKeys, LinkArg::Query("mandate_id")),
                ]),
            Op::ListMandates => d("List mandates", "Newest first.")
                .ok(200, name::<t::MandateList>)
                .errors(R)
                .query(LIST),
            Op::GetMandate => d("Retrieve a mandate", "With its current epoch's use.")
                .ok(200, name::<t::Mandate>)
                .errors(R)
                .path_id("man_"),
            Op::CancelMandate => d("Cancel a mandate", "Cancels it on chain; its keys can no longer pull. A mandate still waiting for its payer's signature (`requires_authorization`) is canceled at once (nothing is on chain), and its consent link (`/authorize/{id}`) says it was withdrawn and offers nothing to sign; authorizing it afterwards is 422 `mandate_not_active`. Canceling a canceled mandate answers it as it is.")
                .ok(200, name::<t::Mandate>)
                .ok(202, name::<t::Mandate>)
                .errors(W)
                .path_id("man_")
                .waits(),
            Op::AuthorizeMandate => d("Authorize a mandate with the payer's signature", "The payer's EIP-712 signature of `authorization.typed_data` (status `requires_authorization`). Checked here (ECDSA, or the wallet's ERC-1271 answer), then the mandate is created on chain. A wrong or malformed signature is 422 `signature_invalid` and changes nothing; after `authorization.expires_at`, 422 `authorization_expired`. Authorizing an authorized mandate answers it as it is.")
                .body(name::<t::AuthorizationCreate>)
                .ok(200, name::<t::Mandate>)
                .ok(202, name::<t::Mandate>)
                .errors(W)
                .path_id("man_")
                .waits(),
            Op::CreateSessionKey => d("Issue a session key", "A key an agent pulls with, under an active mandate, until `expires_at`, within its own ceiling. Answers its bearer `secret` (`sks_…`) once: it may only create pulls on this key and read the key and its pulls.")
                .body(name::<t::SessionKeyCreate>)
                .ok(201, name::<t::SessionKey>)
                .ok(202, name::<t::SessionKey>)
                .errors(W)
                .waits()
                .links(&[
                    ("GetSessionKey", Op::GetSessionKey, LinkArg::Id),
                    ("RevokeSessionKey", Op::RevokeSessionKey, LinkArg::Id),
                    ("IssueAgentCredential", Op::IssueAgentCredential, LinkArg::Id),
                    ("CreateDebitPull", Op::CreateDebitPull, LinkArg::Body(&[("session_key_id", "$response.body#/id")])),
                    ("ListDebitPulls", Op::ListDebitPulls, LinkArg::Query("session_key_id")),
                ]),
            Op::ListSessionKeys => d("List session keys", "Newest first; `mandate_id` filters by mandate. With a session key's secret (`sks_…`): that key alone, so an agent holding only its secret learns its key's id, ceiling and expiry.")
                .ok(200, name::<t::SessionKeyList>)
                .errors(R)
                .query(&[Query::Limit, Query::StartingAfter, Query::MandateId]),
            Op::GetSessionKey => d("Retrieve a session key", "A session key's own secret may read it.")
                .ok(200, name::<t::SessionKey>)
                .errors(R)
                .path_id("sk_"),
            Op::RevokeSessionKey => d("Revoke a session key", "Revokes it on chain; its mandate and sibling keys are unaffected. Revoking a revoked key answers it again.")
                .ok(200, name::<t::SessionKey>)
                .ok(202, name::<t::SessionKey>)
                .errors(W)
                .path_id("sk_")
                .waits(),
            Op::IssueAgentCredential => d("Issue a session key's agent credential", "Openrail, as the issuer of the key's mode (as `issueCredential`: `did:key`, `eddsa-rdfc-2022`, a revocation entry in one of its Bitstring Status Lists), signs a VC 2.0 `AgentCredential` binding the key's agent to what it may pull: `credentialSubject.id` is the key's `signer` as `did:pkh:eip155:<settlement chain>:<signer>`, with the `payer` (`did:pkh`; `payerBankAccount` for a bank-funded mandate), the `mandate` and `sessionKey` ids, the `ceiling` that binds the key (its own `max_amount`, else its mandate's: `amount`, `currency`, `interval`) and its `allowedDestinations` when it has a list; `validUntil` is the key's `expires_at`. Every term is defined in the credential's inline context, so `verifyCredential` verifies it with no network. One per key: 201 the first time, then 200 with the same credential. Revoking the key, or canceling its mandate, revokes it. A key without a `signer` is 409 `session_key_without_signer`; a key that can no longer pull is 422 (`session_key_revoked`, `session_key_expired`, `session_key_not_active`, `mandate_not_active`).")
                .ok(201, || "IssuedCredential".into())
                .ok(200, || "IssuedCredential".into())
                .errors(W)
                .path_id("sk_"),
            Op::GetAgentCredential => d("Retrieve a session key's agent credential", "The `AgentCredential` issued for the key (`{\"verifiableCredential\": {…}}`), whatever its status since (`verifyCredential` says whether it is revoked). The key's own secret may read it. 404 `resource_missing` before one was issued.")
                .ok(200, || "IssuedCredential".into())
                .errors(R)
                .path_id("sk_"),
            Op::CreateDebitPull => d("Pull against a session key", "Checked on chain (batched with concurrent pulls into one `pullBatch`). 201 `authorized` when the chain took it, 202 `pending` while it has not answered; a rule that refuses it is 422 with its `code` (`allowance_exceeded` with `remaining` and `resets_at`), and the declined pull stays readable under `pull_id`. A session key's own secret may pull on its key.")
                .body(name::<t::DebitPullCreate>)
                .ok(201, name::<t::DebitPull>)
                .ok(202, name::<t::DebitPull>)
                .errors(W)
                .waits()
                .links(&[("GetDebitPull", Op::GetDebitPull, LinkArg::Id)]),
            Op::ListDebitPulls => d("List debit pulls", "Newest first; `session_key_id` filters by key (a session key's secret sees only its own).")
                .ok(200, name::<t::DebitPullList>)
                .errors(R)
                .query(&[Query::Limit, Query::StartingAfter, Query::SessionKeyId]),
            Op::GetDebitPull => d("Retrieve a debit pull", "Declined pulls too.")
                .ok(200, name::<t::DebitPull>)
                .errors(R)
                .path_id("pull_"),
            Op::CreatePayment => d("Create a one-time payment", "Wallet → wallet settles atomically through the settlement router once the source wallet signs (201 `requires_authorization` with EIP-712 `Payment` typed data, then `POST /v1/payments/{id}/authorize`). Payments with a bank leg go through the treasury in two legs and answer 201 when final, 202 `processing` while they run.")
                .body(name::<t::PaymentCreate>)
                .ok(201, name::<t::Payment>)
                .ok(202, name::<t::Payment>)
                .errors(W)
                .waits()
                .links(&[
                    ("GetPayment", Op::GetPayment, LinkArg::Id),
                    ("AuthorizePayment", Op::AuthorizePayment, LinkArg::Id),
                    ("CancelPayment", Op::CancelPayment, LinkArg::Id),
                ]),
            Op::ListPayments => d("List payments", "Newest first.")
                .ok(200, name::<t::PaymentList>)
                .errors(R)
                .query(LIST),
            Op::GetPayment => d("Retrieve a payment", "With its legs' outcome and any refund.")
                .ok(200, name::<t::Payment>)
                .errors(R)
                .path_id("pay_"),
            Op::AuthorizePayment => d("Authorize a wallet payment with the payer's signature", "The source wallet's EIP-712 signature of `authorization.typed_data` (status `requires_authorization`); the payment then runs. A wrong or malformed signature is 422 `signature_invalid`; after `expires_at`, 422 `authorization_expired`. Authorizing an authorized payment answers it as it is; a canceled payment is 409 `payment_canceled` (its link was withdrawn).")
                .body(name::<t::AuthorizationCreate>)
                .ok(200, name::<t::Payment>)
                .ok(202, name::<t::Payment>)
                .errors(W)
                .path_id("pay_")
                .waits(),
            Op::CancelPayment => d("Cancel a payment waiting for its payer", "Withdraws a wallet payment the payer has not signed yet (status `requires_authorization`): it becomes `canceled` (event `payment.canceled`), nothing moves, and its consent link (`/authorize/{id}`) says it was withdrawn and offers nothing to sign; authorizing it afterwards is 409 `payment_canceled`. Canceling a canceled payment answers it as it is. A payment past that stage (`pending`, `processing`, `succeeded`, `failed`) is 409 `payment_not_cancelable`.")
                .ok(200, name::<t::Payment>)
                .errors(W)
                .path_id("pay_"),
            Op::CreateBankAccount => d("Create a simulated bank account", "Testnet only (mainnet keys: 503 `mainnet_unavailable`). Choose how its transfers behave with `behavior`, and how long they stay pending with `delay_seconds`.")
                .body(name::<t::BankAccountCreate>)
                .ok(201, name::<t::BankAccount>)
                .errors(W)
                .links(&[
                    ("GetBankAccount", Op::GetBankAccount, LinkArg::Id),
                    ("CreateMandate", Op::CreateMandate, LinkArg::Body(&[("payer_account_id", "$response.body#/id"), ("currency", "$response.body#/currency")])),
                ]),
            Op::GetBankAccount => d("Retrieve a simulated bank account", "Its balance, what pending debits hold, and its latest transfers.")
                .ok(200, name::<t::BankAccount>)
                .errors(R)
                .path_id("ba_"),
            Op::ListEvents => d("List events", "Newest first. Every state change of the account's objects is one event, whose `data.object` is the object as a GET answered at that moment.")
                .ok(200, name::<t::EventList>)
                .errors(R)
                .query(&[Query::Limit, Query::StartingAfter, Query::EventType, Query::ObjectId, Query::CreatedGte])
                .links(&[
                    ("GetEvent", Op::GetEvent, LinkArg::Path("$response.body#/data/0/id")),
                    ("RedeliverEvent", Op::RedeliverEvent, LinkArg::Path("$response.body#/data/0/id")),
                ]),
            Op::GetEvent => d("Retrieve an event", "")
                .ok(200, name::<t::Event>)
                .errors(R)
                .path_id("evt_"),
            Op::RedeliverEvent => d("Deliver an event again", "`{}`: to every enabled endpoint that wants its type; `{\"endpoint\": \"we_…\"}`: to that one. The same `webhook-id` as the first delivery.")
                .body(name::<t::RedeliverCreate>)
                .ok(200, name::<t::WebhookDeliveryList>)
                .errors(W)
                .path_id("evt_"),
            Op::CreateWebhookEndpoint => d("Create a webhook endpoint", "Answers its signing secret (`whsec_…`) once. Deliveries are signed as Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`) and retried over three days.")
                .body(name::<t::WebhookEndpointCreate>)
                .ok(201, name::<t::WebhookEndpoint>)
                .errors(W)
                .links(&[
                    ("GetWebhookEndpoint", Op::GetWebhookEndpoint, LinkArg::Id),
                    ("UpdateWebhookEndpoint", Op::UpdateWebhookEndpoint, LinkArg::Id),
                    ("RotateWebhookSecret", Op::RotateWebhookSecret, LinkArg::Id),
                    ("ListWebhookDeliveries", Op::ListWebhookDeliveries, LinkArg::Id),
                    ("DeleteWebhookEndpoint", Op::DeleteWebhookEndpoint, LinkArg::Id),
                ]),
            Op::ListWebhookEndpoints => d("List webhook endpoints", "Newest first.")
                .ok(200, name::<t::WebhookEndpointList>)
                .errors(R)
                .query(LIST),
            Op::GetWebhookEndpoint => d("Retrieve a webhook endpoint", "")
                .ok(200, name::<t::WebhookEndpoint>)
                .errors(R)
                .path_id("we_"),
            Op::UpdateWebhookEndpoint => d("Update a webhook endpoint", "Change `url`, `enabled_events`, `description` or `status` (`enabled` clears the failure record).")
                .body(name::<t::WebhookEndpointUpdate>)
                .ok(200, name::<t::WebhookEndpoint>)
                .errors(W)
                .path_id("we_"),
            Op::DeleteWebhookEndpoint => d("Delete a webhook endpoint", "The endpoint and its deliveries are gone.")
                .ok(200, name::<t::DeletedWebhookEndpoint>)
                .errors(W)
                .path_id("we_"),
            Op::RotateWebhookSecret => d("Rotate a webhook endpoint's secret", "The new secret is answered once; the old one keeps signing beside it (a second `v1` signature) for 24 hours.")
                .ok(200, name::<t::WebhookEndpoint>)
                .errors(W)
                .path_id("we_"),
            Op::ListWebhookDeliveries => d("List an endpoint's deliveries", "Newest first: attempts, last status code, latency, next retry.")
                .ok(200, name::<t::WebhookDeliveryList>)
                .errors(R)
                .path_id("we_")
                .query(LIST),
            Op::GetAccount => d("Retrieve your account", "The account of the key, as its mode sees it: the chains this server has for the mode, and which of them settles the account's one-time payments (`payments_chain`). Requests never name a chain; agentic debits always settle on the settlement chain.")
                .ok(200, name::<t::Account>)
                .errors(R),
            Op::UpdateAccount => d("Update your account", "Sets the fields given for the key's mode. `payments_chain`: which chain settles the one-time payments the account creates from now on (`settlement`, the default, or `attestation` when the server has that chain for the mode: 400 otherwise). Payments already created keep their chain.")
                .body(name::<t::AccountUpdate>)
                .ok(200, name::<t::Account>)
                .errors(W),
            Op::VerifyCredential => d("Verify a credential", "A W3C Verifiable Credential (VC Data Model 1.1 or 2.0) secured with Data Integrity proofs — `eddsa-rdfc-2022`, `eddsa-jcs-2022`, `ecdsa-rdfc-2019` and `ecdsa-jcs-2019` (P-256, P-384), proof sets and chains — with `did:key` verification methods; its validity period; its Bitstring Status List entries when the list is one this server publishes (any other list: not verified). Nothing is fetched from the network: JSON-LD contexts are built in, and a term no context defines is a failure. 200 `verified: true`; 422 `verified: false` with `problemDetails` (VC Data Model error types). Whether the issuer is trusted is your policy, not part of verification. `options` is accepted and ignored. May be called without a key (rate-limited per address).")
                .body(|| "CredentialVerifyRequest".into())
                .ok(200, || "VerificationResult".into())
                .ok(422, || "VerificationResult".into())
                .errors(V)
                .anonymous(),
            Op::VerifyPresentation => d("Verify a presentation", "A Verifiable Presentation whose proof (purpose `authentication`) carries a challenge this server gave (`POST /v1/identity/challenges`): the challenge is used up here (a replay is 422 `INVALID_CHALLENGE_ERROR`), and `options.domain`, or the challenge's own domain, must match the proof's. Every embedded credential is verified as `verifyCredential` does. 200 verified, 422 not.")
                .body(|| "PresentationVerifyRequest".into())
                .ok(200, || "VerificationResult".into())
                .ok(422, || "VerificationResult".into())
                .errors(V),
            Op::CreateChallenge => d("Create a presentation challenge", "A single-use challenge, valid ten minutes, for a holder to sign into a presentation (optionally bound to a `domain`).")
                .body(|| "ChallengeCreate".into())
                .ok(201, || "IdentityChallenge".into())
                .errors(V),
            Op::IssueCredential => d("Issue a credential", "Openrail signs a VC 2.0 credential as the issuer of the key's mode (`did:key`, Ed25519, `eddsa-rdfc-2022`, purpose `assertionMethod`): it adds `issuer` (or checks it is its own), `id` (`urn:uuid:…`) and `validFrom` when absent, and a revocation entry in one of its Bitstring Status Lists. `proof` and `credentialStatus` may not be given. A term no JSON-LD context defines cannot be signed (400). An `id` issued before is 409 `credential_exists`.")
                .body(|| "CredentialIssueRequest".into())
                .ok(201, || "IssuedCredential".into())
                .errors(W),
            Op::UpdateCredentialStatus => d("Revoke a credential", "Sets the revocation bit of a credential this account issued (`status: true`, the default): final, and its status list says so within a minute. `status: false` for a revoked credential is 409 `credential_revoked`.")
                .body(|| "CredentialStatusUpdate".into())
                .ok(200, || "IdentityCredential".into())
                .errors(W),
            Op::GetStatusList => d("Retrieve a status list", "A Bitstring Status List this server publishes, as a `BitstringStatusListCredential` signed by the issuer of its mode (131,072 entries, GZIP-compressed and multibase-encoded in `encodedList`). No authentication; cacheable for 60 seconds.")
                .ok(200, || "StatusListCredential".into())
                .errors(&[404])
                .path_id("sl_")
                .public(),
            Op::CreateIdentityVerification => d("Create an identity verification session", "Asks whether a wallet (`subject`) is a person (`personhood`), is financially healthy (`financial_health`) or is an agent (`agent`). The session starts in `requires_input` (the person goes through the provider's flow), then `POST …/submit` hands it to the provider (`processing`): a passed check makes it `verified` and Openrail issues the matching credential (`PersonhoodCredential`, `FinancialHealthCredential`, `AgentCredential`; subject `did:pkh:eip155:<settlement chain>:<subject>`, signed as the mode's issuer with a revocation entry; `GET …/credential`); a failed check returns it to `requires_input` with `last_error`. Testnet only: the provider is simulated, answering as `simulate` says (mainnet keys: 503 `mainnet_unavailable`, no real provider is connected). Events: `identity.verification.created`, `.processing`, `.verified`, `.requires_input`, `.canceled`.")
                .body(name::<t::IdentityVerificationCreate>)
                .ok(201, name::<t::IdentityVerification>)
                .errors(W)
                .links(&[
                    ("GetIdentityVerification", Op::GetIdentityVerification, LinkArg::Id),
                    ("SubmitIdentityVerification", Op::SubmitIdentityVerification, LinkArg::Id),
                    ("CancelIdentityVerification", Op::CancelIdentityVerification, LinkArg::Id),
                    ("GetIdentityVerificationCredential", Op::GetIdentityVerificationCredential, LinkArg::Id),
                ]),
            Op::ListIdentityVerifications => d("List identity verification sessions", "Newest first.")
                .ok(200, name::<t::IdentityVerificationList>)
                .errors(R)
                .query(LIST),
            Op::GetIdentityVerification => d("Retrieve an identity verification session", "")
                .ok(200, name::<t::IdentityVerification>)
                .errors(R)
                .path_id("idv_"),
            Op::SubmitIdentityVerification => d("Submit an identity verification session", "The flow is finished: `requires_input` → `processing`, and the provider checks (the simulated one answers in about half a second, `slow` in about five). Clears `last_error`. Any other status is 409 `verification_not_submittable`.")
                .ok(200, name::<t::IdentityVerification>)
                .errors(W)
                .path_id("idv_"),
            Op::CancelIdentityVerification => d("Cancel an identity verification session", "Withdraws a session waiting for input (`requires_input` → `canceled`). Canceling a canceled session answers it as it is; a session being checked or verified is 409 `verification_not_cancelable`.")
                .ok(200, name::<t::IdentityVerification>)
                .errors(W)
                .path_id("idv_"),
            Op::GetIdentityVerificationCredential => d("Retrieve a verified session's credential", "The W3C credential the session issued, signed (`{\"verifiableCredential\": {…}}`), to hand to its holder; `POST /v1/identity/credentials/verify` verifies it and `POST /v1/identity/credentials/status` revokes it. Before the session is verified: 409 `verification_not_verified`.")
                .ok(200, || "IssuedCredential".into())
                .errors(&[400, 401, 403, 404, 409, 429, 503])
                .path_id("idv_"),
            Op::CreateAttestation => d("Attest a credential on chain", "Verifies a credential, then attests it on the mode's attestation chain (the `AttestationRegistry`; requests never name a chain): `credential_id` names one this account issued (not revoked), or `verifiableCredential` gives one whole, verified as `verifyCredential` does (422 with the verification when it does not verify). Its subject must be a wallet (`did:pkh:eip155:…:0x…`, or a bare 0x address in a credential named by `credential_id`; in a posted credential a bare address is no IRI, so its proof does not cover it) or `recipient` names one. The attestation holds the credential's SHA-256 digest, type and revocation status reference, its issuer and expiry (`validUntil`) — never its claims. 201 `active` once mined, 202 `pending` while the chain has not answered; events `identity.attestation.pending`, then `.active` (or `.failed`). A mode without an attestation chain is 503 `chain_unavailable`.")
                .body(|| "AttestationCreate".into())
                .ok(201, name::<t::IdentityAttestation>)
                .ok(202, name::<t::IdentityAttestation>)
                .ok(422, || "VerificationResult".into())
                .errors(W)
                .waits()
                .links(&[
                    ("GetAttestation", Op::GetAttestation, LinkArg::Id),
                    ("RevokeAttestation", Op::RevokeAttestation, LinkArg::Id),
                ]),
            Op::ListAttestations => d("List attestations", "Newest first; `subject` keeps those about one wallet.")
                .ok(200, name::<t::IdentityAttestationList>)
                .errors(R)
                .query(&[Query::Limit, Query::StartingAfter, Query::Subject]),
            Op::GetAttestation => d("Retrieve an attestation", "`expired` once its credential's `validUntil` passed.")
                .ok(200, name::<t::IdentityAttestation>)
                .errors(R)
                .path_id("att_"),
            Op::RevokeAttestation => d("Revoke an attestation", "Revokes it on the attestation chain (final; event `identity.attestation.revoked`): 200 once mined, 202 while the chain has not answered (a pending attestation is revoked once it is on chain). Revoking its credential (`POST /v1/identity/credentials/status`) does the same. A revoked or failed attestation is answered as it is.")
                .ok(200, name::<t::IdentityAttestation>)
                .ok(202, name::<t::IdentityAttestation>)
                .errors(W)
                .path_id("att_")
                .waits(),
            Op::OpenApi => d("This document", "The OpenAPI 3.1 document of the API, generated from the server's request and response types. No authentication.")
                .ok(200, || "OpenApiDocument".into())
                .public(),
        }
    }
}

/// A schema's component name.
fn name<T: ToSchema>() -> Cow<'static, str> {
    T::name()
}

/// A query parameter the server reads.
#[derive(Debug, Clone, Copy)]
enum Query {
    Limit,
    StartingAfter,
    MandateId,
    SessionKeyId,
    EventType,
    ObjectId,
    CreatedGte,
    Subject,
}

impl Query {
    fn json(self) -> Value {
        let (name, description, schema) = match self {
            Query::Limit => (
                "limit",
                "Page size, 1 to 100 (default 10)",
                json!({ "type": "integer", "minimum": 1, "maximum": 100, "default": 10 }),
            ),
            Query::StartingAfter => (
                "starting_after",
                "The last id of the previous page (its `data[-1].id`); an id that names no object of this list is 400 `parameter_invalid`, never an empty page that looks like the end",
                json!({ "type": "string", "minLength": 1 }),
            ),
            Query::MandateId => (
                "mandate_id",
                "Only this mandate's keys",
                json!({ "type": "string" }),
            ),
            Query::SessionKeyId => (
                "session_key_id",
                "Only this key's pulls",
                json!({ "type": "string" }),
            ),
            Query::EventType => (
                "type",
                "One event type, or every type of one object (`debit_pull.*`)",
                json!({ "type": "string", "enum": event_type_filters() }),
            ),
            Query::Subject => (
                "subject",
                "Only attestations about this wallet (0x… or did:pkh:eip155:…:0x…)",
                json!({ "type": "string" }),
            ),
            Query::ObjectId => (
                "object_id",
                "Only this object's events",
                json!({ "type": "string" }),
            ),
            Query::CreatedGte => (
                "created[gte]",
                "Only events created at or after: unix seconds or RFC 3339",
                json!({ "anyOf": [
                { "type": "integer", "minimum": 0, "maximum": 9_223_372_036_854_775_i64 },
                { "type": "string", "format": "date-time" },
            ] }),
            ),
        };
        json!({ "name": name, "in": "query", "required": false, "description": description, "schema": schema })
    }
}

/// What `type=` of `GET /v1/events` takes.
fn event_type_filters() -> Vec<String> {
    EventType::ALL
        .iter()
        .map(|t| t.as_str().to_string())
        .chain(crate::events::TYPE_WILDCARDS.iter().map(|w| w.to_string()))
        .collect()
}

/// What a link passes to the next operation.
#[derive(Debug, Clone, Copy)]
enum LinkArg {
    /// The answered object's id as the next operation's `{id}`.
    Id,
    /// An expression as `{id}`.
    Path(&'static str),
    /// The answered object's id as a query parameter.
    Query(&'static str),
    /// Members of the next request's body.
    Body(&'static [(&'static str, &'static str)]),
}

/// The component name of a schema ([`name`] of a type).
type SchemaName = fn() -> Cow<'static, str>;

/// What an operation documents.
struct Doc {
    summary: &'static str,
    description: &'static str,
    request: Option<SchemaName>,
    responses: Vec<(u16, SchemaName)>,
    errors: &'static [u16],
    query: &'static [Query],
    path_id: Option<&'static str>,
    waits: bool,
    public: bool,
    anonymous: bool,
    links: &'static [(&'static str, Op, LinkArg)],
}

impl Doc {
    fn new(summary: &'static str, description: &'static str) -> Self {
        Doc {
            summary,
            description,
            request: None,
            responses: Vec::new(),
            errors: &[],
            query: &[],
            path_id: None,
            waits: false,
            public: false,
            anonymous: false,
            links: &[],
        }
    }
    fn body(mut self, schema: SchemaName) -> Self {
        self.request = Some(schema);
        self
    }
    fn ok(mut self, status: u16, schema: SchemaName) -> Self {
        self.responses.push((status, schema));
        self
    }
    fn errors(mut self, errors: &'static [u16]) -> Self {
        self.errors = errors;
        self
    }
    fn query(mut self, query: &'static [Query]) -> Self {
        self.query = query;
        self
    }
    fn path_id(mut self, prefix: &'static str) -> Self {
        self.path_id = Some(prefix);
        self
    }
    fn waits(mut self) -> Self {
        self.waits = true;
        self
    }
    fn public(mut self) -> Self {
        self.public = true;
        self
    }
    fn anonymous(mut self) -> Self {
        self.anonymous = true;
        self
    }
    fn links(mut self, links: &'static [(&'static str, Op, LinkArg)]) -> Self {
        self.links = links;
        self
    }
}

/// The codes each error status answers with, for the responses' descriptions: the codes
/// of that status every operation may answer (`error::ErrorCode`'s table), then those of
/// this operation.
fn status_codes(status: u16, op: Op) -> (String, Vec<&'static str>) {
    use crate::error::{Conflict as K, ErrorCode as C, Scope};
    use DeclineReason as D;
    let mut codes: Vec<&'static str> = C::ALL
        .iter()
        .filter(|c| c.status().as_u16() == status && c.scope() == Scope::Every)
        .map(|c| c.as_str())
        .collect();
    let (own, conflicts, declines): (&[C], &[K], &[D]) = match (status, op) {
        (403, Op::CreateMandate | Op::CreateSessionKey | Op::CreateDebitPull) => {
            (&[C::IdentityRequirementUnmet], &[], &[])
        }
        (409, Op::CancelPayment) => (&[], &[K::PaymentNotCancelable], &[]),
        (409, Op::AuthorizePayment) => (&[], &[K::PaymentCanceled], &[]),
        (409, Op::IssueCredential) => (&[], &[K::CredentialExists], &[]),
        (409, Op::UpdateCredentialStatus | Op::CreateAttestation) => {
            (&[], &[K::CredentialRevoked], &[])
        }
        (409, Op::SubmitIdentityVerification) => (&[], &[K::VerificationNotSubmittable], &[]),
        (409, Op::CancelIdentityVerification) => (&[], &[K::VerificationNotCancelable], &[]),
        (409, Op::GetIdentityVerificationCredential) => {
            // A read: no Idempotency-Key, so only the session's state.
            codes.clear();
            (&[], &[K::VerificationNotVerified], &[])
        }
        (409, Op::IssueAgentCredential) => (&[], &[K::SessionKeyWithoutSigner], &[]),
        (422, Op::CreateDebitPull) => (&[], &[], D::ALL),
        (422, Op::CreateSessionKey) => (
            &[
                C::SessionKeyCeilingExceedsMandate,
                C::SessionKeyOutsideMandate,
            ],
            &[],
            &[D::MandateNotActive],
        ),
        (422, Op::AuthorizeMandate) => (
            &[],
            &[],
            &[
                D::SignatureInvalid,
                D::AuthorizationExpired,
                D::MandateNotActive,
            ],
        ),
        (422, Op::AuthorizePayment) => (&[], &[], &[D::SignatureInvalid, D::AuthorizationExpired]),
        (422, Op::CancelMandate) => (&[], &[], &[D::MandateNotActive]),
        (422, Op::IssueAgentCredential) => (
            &[],
            &[],
            &[
                D::SessionKeyRevoked,
                D::SessionKeyExpired,
                D::SessionKeyNotActive,
                D::MandateNotActive,
            ],
        ),
        (503, Op::CreatePayment | Op::CreateAttestation) => (&[C::ChainUnavailable], &[], &[]),
        _ => (&[], &[], &[]),
    };
    codes.extend(own.iter().map(|c| c.as_str()));
    codes.extend(conflicts.iter().map(|c| c.as_str()));
    codes.extend(declines.iter().map(|d| d.as_str()));
    let what = match status {
        400 => {
            "The request is malformed: a field is missing, unknown, repeated or invalid (`param` names it)"
        }
        401 => "No valid credential",
        403 => match op {
            Op::CreateMandate | Op::CreateSessionKey | Op::CreateDebitPull => {
                "The credential may not do this (a session key's secret outside its key), or the payer or the key's signer lacks an attestation the mandate requires (`identity_requirement_unmet`, `param` names which)"
            }
            _ => "The credential may not do this (a session key's secret outside its key)",
        },
        404 => "No such object for this account and mode (an id of another kind or mode too)",
        409 => match op {
            Op::CancelPayment => {
                "A request with this Idempotency-Key is still running (retry later), or the payment is past its payer's signature"
            }
            Op::AuthorizePayment => {
                "A request with this Idempotency-Key is still running (retry later), or the payment was canceled"
            }
            Op::IssueCredential => {
                "A request with this Idempotency-Key is still running (retry later), or a credential with this id was issued before"
            }
            Op::UpdateCredentialStatus | Op::CreateAttestation => {
                "A request with this Idempotency-Key is still running (retry later), or the credential is revoked (final)"
            }
            Op::SubmitIdentityVerification | Op::CancelIdentityVerification => {
                "A request with this Idempotency-Key is still running (retry later), or the session is not waiting for input (`requires_input`)"
            }
            Op::GetIdentityVerificationCredential => {
                "The session is not verified: it has issued no credential"
            }
            Op::IssueAgentCredential => {
                "A request with this Idempotency-Key is still running (retry later), or the key has no signer"
            }
            _ => "A request with this Idempotency-Key is still running; retry later",
        },
        413 => "The body is larger than 64 KiB",
        415 => "Send JSON with Content-Type: application/json",
        422 => {
            "Well-formed, but a business rule declines it (the `code` says which; nothing moved)"
        }
        429 => "Too many requests (or failed authentications); wait `Retry-After` seconds",
        503 => "Mainnet is not configured, or the database or chain is briefly unavailable",
        _ => "",
    };
    let list = codes
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ");
    (format!("{what}. Codes: {list}."), codes)
}

fn r(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

/// Every schema the document lists: the request and response types and what they use.
fn components() -> Map<String, Value> {
    use crate::types as t;
    let mut all: Vec<(String, RefOr<Schema>)> = Vec::new();
    fn add<T: ToSchema>(all: &mut Vec<(String, RefOr<Schema>)>) {
        all.push((T::name().into_owned(), T::schema()));
        T::schemas(all);
    }
    add::<t::MandateCreate>(&mut all);
    add::<t::AuthorizationCreate>(&mut all);
    add::<t::SessionKeyCreate>(&mut all);
    add::<t::DebitPullCreate>(&mut all);
    add::<t::PaymentCreate>(&mut all);
    add::<t::BankAccountCreate>(&mut all);
    add::<t::WebhookEndpointCreate>(&mut all);
    add::<t::WebhookEndpointUpdate>(&mut all);
    add::<t::RedeliverCreate>(&mut all);
    add::<t::AccountUpdate>(&mut all);
    add::<t::Account>(&mut all);
    add::<t::Mandate>(&mut all);
    add::<t::MandateList>(&mut all);
    add::<t::SessionKey>(&mut all);
    add::<t::SessionKeyList>(&mut all);
    add::<t::DebitPull>(&mut all);
    add::<t::DebitPullList>(&mut all);
    add::<t::Payment>(&mut all);
    add::<t::PaymentList>(&mut all);
    add::<t::BankAccount>(&mut all);
    add::<t::Event>(&mut all);
    add::<t::EventList>(&mut all);
    add::<t::WebhookEndpoint>(&mut all);
    add::<t::WebhookEndpointList>(&mut all);
    add::<t::DeletedWebhookEndpoint>(&mut all);
    add::<t::WebhookDeliveryList>(&mut all);
    add::<t::TypedData>(&mut all);
    add::<t::Eip712Domain>(&mut all);
    add::<t::Address>(&mut all);
    add::<t::CredentialVerifyRequest>(&mut all);
    add::<t::PresentationVerifyRequest>(&mut all);
    add::<t::ChallengeCreate>(&mut all);
    add::<t::CredentialIssueRequest>(&mut all);
    add::<t::CredentialStatusUpdate>(&mut all);
    add::<t::VerificationResult>(&mut all);
    add::<t::IdentityChallenge>(&mut all);
    add::<t::IssuedCredential>(&mut all);
    add::<t::IdentityCredential>(&mut all);
    add::<t::StatusListCredential>(&mut all);
    add::<t::IdentityVerificationCreate>(&mut all);
    add::<t::IdentityVerification>(&mut all);
    add::<t::IdentityVerificationList>(&mut all);
    add::<t::AttestationCreate>(&mut all);
    add::<t::IdentityAttestation>(&mut all);
    add::<t::IdentityAttestationList>(&mut all);
    let mut out = Map::new();
    for (name, schema) in all {
        let v = serde_json::to_value(schema).expect("schemas serialize");
        out.insert(name, v);
    }
    out.insert("Problem".into(), problem_schema());
    out.insert("ErrorCode".into(), json!({
        "type": "string",
        "enum": crate::error::all_codes().collect::<Vec<_>>(),
        "description": "Stable snake_case code of a problem; see each response's description for the codes of its status",
    }));
    out.insert(
        "OpenApiDocument".into(),
        json!({
            "type": "object",
            "required": ["openapi", "info", "paths", "components"],
            "properties": { "openapi": { "const": "3.1.0" } },
        }),
    );
    let names: Vec<String> = out.keys().cloned().collect();
    for name in names {
        let response = RESPONSE_TYPES.contains(&name.as_str());
        close(out.get_mut(&name).expect("listed"), response);
    }
    out
}

/// Schemas of responses: every member they declare is always present (nullable ones as
/// `null`), except the secrets shown once.
const RESPONSE_TYPES: &[&str] = &[
    "Mandate",
    "MandateList",
    "SessionKey",
    "SessionKeyList",
    "DebitPull",
    "DebitPullList",
    "Payment",
    "PaymentList",
    "BankAccount",
    "BankTransfer",
    "Event",
    "EventData",
    "EventList",
    "WebhookEndpoint",
    "WebhookEndpointList",
    "DeletedWebhookEndpoint",
    "WebhookDelivery",
    "WebhookDeliveryList",
    "Epoch",
    "OnChainObject",
    "OnChainTx",
    "Consent",
    "PaymentSourceView",
    "PaymentDestinationView",
    "Account",
    "AccountChain",
    "IdentityChallenge",
    "IdentityCredential",
    "IdentityVerification",
    "IdentityVerificationList",
    "VerificationError",
    "VerificationSimulation",
    "IdentityAttestation",
    "IdentityAttestationList",
];

/// Members of responses that appear only sometimes.
const SOMETIMES: &[&str] = &["secret", "secret_redacted"];

/// Objects refuse members they do not declare (requests: 400 `parameter_unknown`;
/// responses: the test of real answers fails on an undocumented member); response members
/// are all required but [`SOMETIMES`].
fn close(v: &mut Value, response: bool) {
    if let Some(leaf) = crate::types::expand_leaf(v) {
        *v = leaf;
    }
    match v {
        Value::Object(o) => {
            if let Some(Value::Object(props)) = o.get("properties") {
                let keys: Vec<String> = props.keys().cloned().collect();
                if !o.contains_key("additionalProperties") {
                    o.insert("additionalProperties".into(), Value::Bool(false));
                }
                if response {
                    let req: Vec<Value> = keys
                        .iter()
                        .filter(|k| !SOMETIMES.contains(&k.as_str()))
                        .map(|k| Value::String(k.clone()))
                        .collect();
                    o.insert("required".into(), Value::Array(req));
                }
            }
            for (_, child) in o.iter_mut() {
                close(child, response);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|c| close(c, response)),
        _ => {}
    }
}

/// The RFC 9457 problem with Openrail's members (see [`crate::error::Problem`]).
fn problem_schema() -> Value {
    json!({
        "type": "object",
        "description": "RFC 9457 problem details with a stable `code`",
        "required": ["type", "title", "status", "detail", "code"],
        "properties": {
            "type": { "type": "string", "format": "uri", "description": "A URI naming the problem type" },
            "title": { "type": "string", "description": "Short summary of the type" },
            "status": { "type": "integer", "minimum": 400, "maximum": 599 },
            "detail": { "type": "string", "description": "This occurrence, in words (5xx: never internals)" },
            "code": r("ErrorCode"),
            "param": { "type": "string", "description": "The field (or header) at fault; nested fields as `source.id`" },
            "request_id": { "type": "string", "pattern": "^req_", "description": "The `Request-Id` of this request, for support" },
            "pull_id": { "type": "string", "pattern": "^pull_", "description": "A declined pull, still readable" },
            "remaining": r("AmountString"),
            "resets_at": r("Timestamp"),
        },
        "additionalProperties": false,
        "examples": [{
            "type": "https://docs.openrail.dev/errors/allowance_exceeded",
            "title": "Declined", "status": 422,
            "detail": "a pull of 20.00 USD exceeds what may still be pulled this epoch",
            "code": "allowance_exceeded", "param": "amount", "request_id": "req_…",
            "pull_id": "pull_…", "remaining": "10.00", "resets_at": "2026-01-02T00:00:00Z",
        }],
    })
}

/// The OpenAPI 3.1 document.
pub fn document() -> Value {
    let mut paths = Map::new();
    for route in ROUTES {
        let op = route.op;
        let doc = op.doc();
        let write = route.method != "get";
        let mut responses = Map::new();
        let mut headers = json!({ "Request-Id": { "$ref": "#/components/headers/Request-Id" } });
        if write {
            headers["Idempotent-Replayed"] =
                json!({ "$ref": "#/components/headers/Idempotent-Replayed" });
        }
        for (status, schema) in &doc.responses {
            let name = schema();
            let description = match status {
                202 => format!(
                    "Accepted ({name}): the chain has not answered within the wait (`Prefer: wait=N`); the object exists, read it again later"
                ),
                201 => format!("Created ({name}); any chain work it needed is done"),
                422 => format!("Not verified ({name}): `problemDetails` say why"),
                _ => format!("OK ({name})"),
            };
            let mut response = json!({
                "description": description,
                "headers": headers.clone(),
                "content": { "application/json": { "schema": r(&name) } },
            });
            if !doc.links.is_empty() && *status < 300 {
                response["links"] = links(doc.links);
            }
            if let Some(example) = response_example(op, *status) {
                response["content"]["application/json"]["examples"] = example;
            }
            responses.insert(status.to_string(), response);
        }
        for status in doc.errors {
            let (description, codes) = status_codes(*status, op);
            let mut h = headers.clone();
            if *status == 429 {
                h["Retry-After"] = json!({ "$ref": "#/components/headers/Retry-After" });
            }
            let mut schema = r("Problem");
            if !codes.is_empty() {
                schema = json!({ "allOf": [r("Problem"), {
                    "type": "object",
                    "properties": { "code": { "enum": codes } },
                }] });
            }
            let mut response = json!({
                "description": description,
                "headers": h,
                "content": { "application/problem+json": { "schema": schema } },
            });
            if let Some(example) = problem_example(op, *status) {
                response["content"]["application/problem+json"]["examples"] = example;
            }
            // A status that also answers a result (a credential that does not verify is
            // 422 `verified: false`): both bodies, told apart by their media type.
            if let Some(result) = responses.get_mut(&status.to_string()) {
                let problem = response["content"]["application/problem+json"].take();
                result["content"]["application/problem+json"] = problem;
                let both = format!(
                    "{}; or, as application/problem+json: {description}",
                    result["description"].as_str().unwrap_or_default()
                );
                result["description"] = json!(both);
                continue;
            }
            responses.insert(status.to_string(), response);
        }
        let mut parameters: Vec<Value> = Vec::new();
        if let Some(prefix) = doc.path_id {
            parameters.push(json!({
                "name": "id", "in": "path", "required": true,
                "description": format!("The object's id (`{prefix}…`)"),
                "schema": { "type": "string", "minLength": 1 },
                "example": format!("{prefix}…"),
            }));
        }
        parameters.extend(doc.query.iter().map(|q| q.json()));
        if write {
            parameters.push(json!({ "$ref": "#/components/parameters/Idempotency-Key" }));
        }
        if doc.waits {
            parameters.push(json!({ "$ref": "#/components/parameters/Prefer" }));
        }
        let mut o = json!({
            "operationId": op.id(),
            "summary": doc.summary,
            "tags": [tag(route.path)],
            "responses": responses,
        });
        if !doc.description.is_empty() {
            o["description"] = json!(doc.description);
        }
        if !parameters.is_empty() {
            o["parameters"] = Value::Array(parameters);
        }
        if doc.public {
            o["security"] = json!([]);
        }
        if doc.anonymous {
            o["security"] = json!([{}, { "bearer": [] }]);
        }
        if let Some(req) = doc.request {
            o["requestBody"] = json!({
                "required": true,
                "content": { "application/json": { "schema": r(&req()) } },
            });
        }
        let entry = paths
            .entry(route.path.to_string())
            .or_insert_with(|| json!({}));
        entry[route.method] = o;
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Openrail API",
            "version": "v1",
            "description": "One HTTP API for payments and agentic debits across bank rails and EVM chains: mandates (a ceiling per epoch a payer grants, enforced on chain), session keys (what an agent pulls with), debit pulls, one-time payments, simulated bank accounts, events and webhooks.\n\nConventions: JSON in and out; amounts are exact decimal major units (`\"12.50\"`), JSON numbers or strings in requests, strings in responses; times are RFC 3339 UTC; errors are `application/problem+json` with a stable `code`; every POST and DELETE honours `Idempotency-Key`; lists page with `limit` and `starting_after`. The guides are in the repository's `docs/` folder.",
        },
        "servers": [{ "url": "http://127.0.0.1:8080", "description": "`openrail dev`" }],
        "security": [{ "bearer": [] }],
        "tags": [
            { "name": "Mandates", "description": "A payer's ceiling per epoch, enforced on chain" },
            { "name": "Session keys", "description": "What an agent pulls with" },
            { "name": "Debit pulls", "description": "Pulls against a session key, checked on chain" },
            { "name": "Payments", "description": "One-time payments across wallets and bank accounts" },
            { "name": "Bank accounts", "description": "Simulated bank accounts (testnet)" },
            { "name": "Events", "description": "Every state change, newest first" },
            { "name": "Webhook endpoints", "description": "Where events are delivered" },
            { "name": "Account", "description": "Your account's settings: where its one-time payments settle" },
            { "name": "Identity", "description": "W3C Verifiable Credentials: verification, presentation challenges, Openrail as an issuer, status lists" },
            { "name": "Meta", "description": "This document" },
        ],
        "components": {
            "securitySchemes": { "bearer": {
                "type": "http", "scheme": "bearer",
                "description": "An API key (`sk_testnet_…` / `sk_mainnet_…`; the key's mode decides which objects it sees), or a session key's `sks_…` secret (only pulls on its key and reads of that key and its pulls)",
            } },
            "parameters": {
                "Idempotency-Key": {
                    "name": "Idempotency-Key", "in": "header", "required": false,
                    "description": "1 to 255 visible ASCII characters. A retry with the same key and body replays the first answer (`Idempotent-Replayed: true`); the same key with another body is 422 `idempotency_key_reused`; while the first still runs, 409 `idempotency_in_progress`. Kept 24 hours.",
                    "schema": { "type": "string", "pattern": "^[!-~]{1,255}$" },
                },
                "Prefer": {
                    "name": "Prefer", "in": "header", "required": false,
                    "description": "`wait=N`: how many seconds to wait for the chain before answering 202 (default 10, at most 60). Other preferences are ignored.",
                    "schema": { "type": "string" },
                    "example": "wait=30",
                },
            },
            "headers": {
                "Request-Id": {
                    "description": "This request's id (also `request_id` in problems)",
                    "schema": { "type": "string", "pattern": "^req_" },
                },
                "Idempotent-Replayed": {
                    "description": "`true`: a replay of the first answer to this Idempotency-Key; `recovered`: the first request's process died, and this is the object it created, as it is now",
                    "schema": { "type": "string", "enum": ["true", "recovered"] },
                },
                "Retry-After": {
                    "description": "Seconds to wait before retrying",
                    "schema": { "type": "integer", "minimum": 0 },
                },
            },
            "schemas": components(),
        },
        "paths": paths,
    })
}

/// Examples of successful answers (real answers of `openrail dev`, ids shortened); the
/// end-to-end test checks each against its schema.
fn response_example(op: Op, status: u16) -> Option<Value> {
    let epoch = json!({ "starts_at": "2026-11-25T00:00:00Z", "ends_at": "2026-11-26T00:00:00Z", "spent": "0.00", "remaining": "100.00" });
    let onchain = json!({ "chain_id": 31337, "contract": "0xDc64a140Aa3E981100a9becA4E685f962f0cF6C9", "id": "0x07298962996e71a43497811f42d1f732ce2ac2178a2aa43f90669cf34570ff90", "tx_hash": null });
    let typed_data = json!({
        "types": {
            "EIP712Domain": [{ "name": "name", "type": "string" }, { "name": "version", "type": "string" }, { "name": "chainId", "type": "uint256" }, { "name": "verifyingContract", "type": "address" }],
            "Mandate": [{ "name": "mandateId", "type": "bytes32" }, { "name": "payer", "type": "address" }, { "name": "token", "type": "address" }, { "name": "maxAmount", "type": "uint256" }, { "name": "interval", "type": "uint8" }, { "name": "payees", "type": "address[]" }, { "name": "agent", "type": "address" }, { "name": "purpose", "type": "string" }, { "name": "identityAttester", "type": "address" }, { "name": "payerSchema", "type": "bytes32" }, { "name": "agentSchema", "type": "bytes32" }, { "name": "nonce", "type": "uint256" }, { "name": "deadline", "type": "uint256" }],
        },
        "primaryType": "Mandate",
        "domain": { "name": "Openrail", "version": "1", "chainId": 31337, "verifyingContract": "0xDc64a140Aa3E981100a9becA4E685f962f0cF6C9" },
        "message": { "mandateId": "0x07298962996e71a43497811f42d1f732ce2ac2178a2aa43f90669cf34570ff90", "payer": "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", "token": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "maxAmount": "100000000", "interval": 0, "payees": ["0x90F79bf6EB2c4f870365E785982E1f101E93b906"], "agent": "0x0000000000000000000000000000000000000000", "purpose": "", "identityAttester": "0x0000000000000000000000000000000000000000", "payerSchema": "0x0000000000000000000000000000000000000000000000000000000000000000", "agentSchema": "0x0000000000000000000000000000000000000000000000000000000000000000", "nonce": "3527900121251115019", "deadline": "1795588669" },
    });
    let value = match (op, status) {
        (Op::CreateMandate, 201) => json!({
            "id": "man_632RO1P2qWFib1t4KIa3wxkp", "object": "mandate", "livemode": false,
            "created_at": "2026-11-25T05:37:49.257Z",
            "payer_account_id": "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
            "max_amount": "100.00", "currency": "USD", "interval": "daily", "purpose": null,
            "payees": ["0x90F79bf6EB2c4f870365E785982E1f101E93b906"], "agent": null, "requirements": null,
            "status": "requires_authorization", "current_epoch": epoch, "onchain": onchain,
            "authorization": {
                "method": "payer_signature", "signer": "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
                "typed_data": typed_data, "expires_at": "2026-11-25T06:37:49Z",
                "signature": null, "authorized_at": null,
            },
        }),
        (Op::CreateSessionKey, 201) => json!({
            "id": "sk_v3RC6Zxjp9dXZNGZ2RiiIyVO", "object": "session_key", "livemode": false,
            "created_at": "2026-11-25T05:37:51.012Z", "mandate_id": "man_632RO1P2qWFib1t4KIa3wxkp",
            "status": "active", "expires_at": "2026-11-25T06:37:51.012Z", "max_amount": "60.00",
            "currency": "USD", "allowed_destinations": [],
            "current_epoch": { "starts_at": "2026-11-25T00:00:00Z", "ends_at": "2026-11-26T00:00:00Z", "spent": "0.00", "remaining": "60.00" },
            "onchain": { "chain_id": 31337, "contract": "0xDc64a140Aa3E981100a9becA4E685f962f0cF6C9", "id": "0x4e1b2a7f0c3d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7", "tx_hash": "0x2636ee2e8903eda2811ba8655c3f4141cf99bfa012fb093c7d75a52fbe1328ad" },
            "signer": null, "eip712_domain": null,
            "secret": "sks_testnet_4kQm9ZrT2xWv7bN1",
        }),
        (Op::CreateDebitPull, 201) => json!({
            "id": "pull_CstcqHoGAnEdXvbGzI4fK1Ta", "object": "debit_pull", "livemode": false,
            "created_at": "2026-11-25T05:37:51.647Z", "session_key_id": "sk_v3RC6Zxjp9dXZNGZ2RiiIyVO",
            "mandate_id": "man_632RO1P2qWFib1t4KIa3wxkp", "amount": "50.00", "currency": "USD",
            "destination": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "description": null,
            "status": "authorized", "decline_code": null, "failure_reason": null,
            "authorized_at": "2026-11-25T05:37:51.653Z",
            "onchain": { "chain_id": 31337, "tx_hash": "0xc57e87cac87fb37eab4dc93e49e3d38420f035795f58426c07c8aad592f9173d" },
        }),
        _ => return None,
    };
    Some(json!({ "created": { "summary": "As `openrail dev` answered", "value": value } }))
}

/// Examples of problems.
fn problem_example(op: Op, status: u16) -> Option<Value> {
    let p = |code: &str, title: &str, status: u16, detail: &str| {
        json!({
            "type": format!("https://docs.openrail.dev/errors/{code}"),
            "title": title, "status": status, "detail": detail, "code": code,
            "request_id": "req_4Vwmp5Z21R9PCE09vUbG",
        })
    };
    let examples = match (op, status) {
        (Op::CreateDebitPull, 422) => {
            let mut exceeded = p(
                "allowance_exceeded",
                "Declined",
                422,
                "a pull of 20.00 USD exceeds what may still be pulled this epoch",
            );
            exceeded["param"] = json!("amount");
            exceeded["pull_id"] = json!("pull_kYfIcFt9tiIt7z44INcnfKK4");
            exceeded["remaining"] = json!("10.00");
            exceeded["resets_at"] = json!("2026-11-26T00:00:00Z");
            let mut revoked = p(
                "session_key_revoked",
                "Declined",
                422,
                "session key sk_v3RC6Zxjp9dXZNGZ2RiiIyVO was revoked",
            );
            revoked["pull_id"] = json!("pull_adhgQjSZuopNbISF9ur9bSS8");
            json!({
                "allowance_exceeded": { "summary": "Above what may still be pulled this epoch", "value": exceeded },
                "session_key_revoked": { "summary": "The key was revoked", "value": revoked },
            })
        }
        (_, 400) if doc_has_body(op) => {
            let mut amount = p(
                "amount_invalid",
                "Invalid amount",
                400,
                "amount has more than 2 decimals, the most USD allows",
            );
            amount["param"] = json!("amount");
            let mut dup = p(
                "parameter_duplicated",
                "Duplicated parameter",
                400,
                "max_amount appears more than once; send each field once",
            );
            dup["param"] = json!("max_amount");
            json!({
                "amount_invalid": { "summary": "An amount too precise", "value": amount },
                "parameter_duplicated": { "summary": "A field sent twice", "value": dup },
            })
        }
        (_, 401) => json!({ "unauthenticated": { "summary": "No valid key", "value":
            p("unauthenticated", "Unauthenticated", 401, "provide a valid API key as `Authorization: Bearer sk_testnet_…`") } }),
        _ => return None,
    };
    Some(examples)
}

/// Whether the operation takes a body.
fn doc_has_body(op: Op) -> bool {
    op.doc().request.is_some()
}

/// The tag of a path (its resource).
fn tag(path: &str) -> &'static str {
    match path.split('/').nth(2).unwrap_or("") {
        "mandates" => "Mandates",
        "session-keys" => "Session keys",
        "debit-pulls" => "Debit pulls",
        "payments" => "Payments",
        "bank-accounts" => "Bank accounts",
        "events" => "Events",
        "webhook-endpoints" => "Webhook endpoints",
        "account" => "Account",
        "identity" => "Identity",
        _ => "Meta",
    }
}

/// The links of a response.
fn links(list: &[(&str, Op, LinkArg)]) -> Value {
    let mut out = Map::new();
    for (name, op, arg) in list {
        let mut link = json!({ "operationId": op.id() });
        match arg {
            LinkArg::Id => link["parameters"] = json!({ "id": "$response.body#/id" }),
            LinkArg::Path(expr) => link["parameters"] = json!({ "id": expr }),
            LinkArg::Query(q) => link["parameters"] = json!({ *q: "$response.body#/id" }),
            LinkArg::Body(members) => {
                let body: Map<String, Value> = members
                    .iter()
                    .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
                    .collect();
                link["requestBody"] = Value::Object(body);
            }
        }
        out.insert(name.to_string(), link);
    }
    Value::Object(out)
}

/// The document, built once per process.
pub fn served() -> &'static Value {
    static DOC: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    DOC.get_or_init(document)
}

/// The document as the committed `docs/openapi.json` holds it: pretty JSON and a newline.
pub fn document_text() -> String {
    let mut s = serde_json::to_string_pretty(&document()).expect("the document serializes");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `docs/openapi.json` (what the SDKs are generated from) is the generated document.
    #[test]
    fn committed_document_is_the_generated_one() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/openapi.json");
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == document_text(),
            "docs/openapi.json is not the generated document: run `make openapi`"
        );
    }

    /// Every route is one operation and every `$ref` names a listed component (the whole
    /// document is validated as OpenAPI 3.1 by openapi-spec-validator in `make
    /// schemathesis`: utoipa's own model cannot read every JSON Schema 2020-12 keyword).
    #[test]
    fn document_is_whole() {
        let doc = document();
        assert_eq!(doc["openapi"], "3.1.0");
        let operations: usize = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .map(|item| item.as_object().unwrap().len())
            .sum();
        assert_eq!(operations, ROUTES.len());
        for route in ROUTES {
            assert!(
                doc["paths"][route.path][route.method]["operationId"] == route.op.id(),
                "{} {} is not documented",
                route.method,
                route.path
            );
        }
        let text = doc.to_string();
        for r in text.split("\"$ref\":\"").skip(1) {
            let target = &r[..r.find('"').unwrap()];
            let (kind, name) = target
                .trim_start_matches("#/components/")
                .split_once('/')
                .unwrap();
            assert!(
                !doc["components"][kind][name].is_null(),
                "{target} is not listed"
            );
        }
    }

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
