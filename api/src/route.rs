//! The vocabulary each operation is declared in, beside its handler: [`Route`] (made by
//! [`route!`]: method, path, `operationId` and handler together) with what the document
//! says of it, the error statuses and codes ([`Codes`]), query parameters ([`Param`]),
//! links ([`LinkArg`]) and examples. Handlers depend on this module; [`crate::openapi`]
//! lists their routes and writes the document from them, so neither depends on the other's
//! side.

use std::borrow::Cow;

use axum::routing::MethodRouter;
use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::AppState;
use crate::error::{Conflict, DeclineReason, ErrorCode};

/// Declares a [`Route`]: `route!(post "/v1/mandates", "createMandate", create_mandate)`
/// serves `create_mandate` on `POST /v1/mandates` (axum's `post`, the document's `post`)
/// as the operation `createMandate`. Its document follows as [`Route`]'s builder methods.
macro_rules! route {
    ($method:ident $path:literal, $id:literal, $handler:path) => {
        $crate::route::Route::new(stringify!($method), $path, $id, || {
            ::axum::routing::$method($handler)
        })
    };
}
pub(crate) use route;

/// The document's component schemas, each with its name.
pub(crate) type Components = Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::Schema>)>;

/// A schema an operation reads or answers ([`Route::body`], [`Route::ok`]): its component
/// name, and how it adds itself and the schemas it uses to the document's components, so
/// a type reaches the document through the operations that use it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SchemaName {
    /// Its component name.
    pub(crate) name: fn() -> Cow<'static, str>,
    /// Adds it and the schemas it uses.
    pub(crate) add: fn(&mut Components),
}

/// The schema of a request or response type.
pub(crate) const fn schema<T: ToSchema>() -> SchemaName {
    SchemaName {
        name: T::name,
        add: add_schema::<T>,
    }
}

fn add_schema<T: ToSchema>(all: &mut Components) {
    all.push((T::name().into_owned(), T::schema()));
    T::schemas(all);
}

/// The error statuses of a write (a POST or DELETE with a body or an effect).
pub(crate) const WRITE: &[u16] = &[400, 401, 403, 404, 409, 413, 415, 422, 429, 503];
/// The error statuses of a read.
pub(crate) const READ: &[u16] = &[400, 401, 403, 404, 429, 503];
/// The error statuses of a verification (nothing is looked up by id).
pub(crate) const VERIFY: &[u16] = &[400, 401, 403, 413, 415, 422, 429, 503];
/// The query parameters of a list.
pub(crate) const LIST: &[Param] = &[Param::Limit, Param::StartingAfter];
/// The 403 of an operation checking a mandate's identity requirements.
pub(crate) const IDENTITY_FORBIDDEN: &str = "The credential may not do this (a session key's secret outside its key), or the payer or the key's signer lacks an attestation the mandate requires (`identity_requirement_unmet`, `param` names which)";
/// The 409 of an operation refusing a revoked credential.
pub(crate) const CREDENTIAL_REVOKED: &str = "A request with this Idempotency-Key is still running (retry later), or the credential is revoked (final)";
/// The 409 of an operation on an identity verification session waiting for input.
pub(crate) const NOT_WAITING_FOR_INPUT: &str = "A request with this Idempotency-Key is still running (retry later), or the session is not waiting for input (`requires_input`)";

/// One operation: where it is served, what serves it and what the document says of it.
/// Made by [`route!`], described by the builder methods (all `const`, so each operation is
/// one constant beside its handler).
#[derive(Debug, Clone, Copy)]
pub struct Route {
    /// `get`, `post` or `delete` (axum's function and the document's key).
    pub method: &'static str,
    /// Path with `{id}` parameters (axum syntax, which is also OpenAPI's).
    pub path: &'static str,
    /// The `operationId`.
    pub id: &'static str,
    /// The handler, routed for [`Route::method`].
    pub handler: fn() -> MethodRouter<AppState>,
    pub(crate) summary: &'static str,
    pub(crate) description: &'static str,
    pub(crate) request: Option<SchemaName>,
    pub(crate) responses: [Option<(u16, SchemaName)>; 4],
    pub(crate) errors: &'static [u16],
    pub(crate) codes: &'static [Codes],
    pub(crate) query: &'static [Param],
    pub(crate) path_id: Option<&'static str>,
    pub(crate) waits: bool,
    pub(crate) public: bool,
    pub(crate) anonymous: bool,
    pub(crate) links: &'static [Link],
    pub(crate) example: Option<(u16, Example)>,
    pub(crate) problem_example: Option<(u16, Example)>,
}

/// An example's value.
pub(crate) type Example = fn() -> Value;

/// A link of a response: its name, the next operation's id ([`Route::id`]), what it passes.
pub(crate) type Link = (&'static str, &'static str, LinkArg);

impl Route {
    /// A route with nothing documented yet (see [`route!`]).
    pub const fn new(
        method: &'static str,
        path: &'static str,
        id: &'static str,
        handler: fn() -> MethodRouter<AppState>,
    ) -> Self {
        Route {
            method,
            path,
            id,
            handler,
            summary: "",
            description: "",
            request: None,
            responses: [None; 4],
            errors: &[],
            codes: &[],
            query: &[],
            path_id: None,
            waits: false,
            public: false,
            anonymous: false,
            links: &[],
            example: None,
            problem_example: None,
        }
    }
    /// Its summary and description (`""`: none).
    pub(crate) const fn doc(mut self, summary: &'static str, description: &'static str) -> Self {
        self.summary = summary;
        self.description = description;
        self
    }
    /// The JSON body it reads.
    pub(crate) const fn body(mut self, schema: SchemaName) -> Self {
        self.request = Some(schema);
        self
    }
    /// A successful answer (or a 422 result, told apart from the problem by media type).
    pub(crate) const fn ok(mut self, status: u16, schema: SchemaName) -> Self {
        let mut i = 0;
        while self.responses[i].is_some() {
            i += 1;
        }
        self.responses[i] = Some((status, schema));
        self
    }
    /// The error statuses it answers (each with the codes every operation may answer).
    pub(crate) const fn errors(mut self, errors: &'static [u16]) -> Self {
        self.errors = errors;
        self
    }
    /// Its own codes, per error status.
    pub(crate) const fn codes(mut self, codes: &'static [Codes]) -> Self {
        self.codes = codes;
        self
    }
    /// The query parameters it reads.
    pub(crate) const fn query(mut self, query: &'static [Param]) -> Self {
        self.query = query;
        self
    }
    /// Its `{id}`, an id with this prefix.
    pub(crate) const fn path_id(mut self, prefix: &'static str) -> Self {
        self.path_id = Some(prefix);
        self
    }
    /// It waits for the chain (`Prefer: wait=N`).
    pub(crate) const fn waits(mut self) -> Self {
        self.waits = true;
        self
    }
    /// Served without a key, outside the authenticated `/v1` router (no rate limit per
    /// credential, no idempotency).
    pub(crate) const fn public(mut self) -> Self {
        self.public = true;
        self
    }
    /// Served with a key, or without one (rate-limited per client address).
    pub(crate) const fn anonymous(mut self) -> Self {
        self.anonymous = true;
        self
    }
    /// The links of its successful answers.
    pub(crate) const fn links(mut self, links: &'static [Link]) -> Self {
        self.links = links;
        self
    }
    /// An example of its answer of this status.
    pub(crate) const fn example(mut self, status: u16, example: Example) -> Self {
        self.example = Some((status, example));
        self
    }
    /// An example of its problems of this status.
    pub(crate) const fn problem_example(mut self, status: u16, example: Example) -> Self {
        self.problem_example = Some((status, example));
        self
    }

    /// Whether it is served without a key, outside the authenticated `/v1` router.
    pub fn is_public(&self) -> bool {
        self.public
    }

    /// Whether it is served with a key or without one (rate-limited per client address).
    pub fn is_anonymous(&self) -> bool {
        self.anonymous
    }

    /// Whether it takes a body.
    pub(crate) fn has_body(&self) -> bool {
        self.request.is_some()
    }
}

/// The codes an operation answers under one error status beyond those every operation
/// may answer: from [`ErrorCode`]'s table (its `Scope::Some` codes), [`Conflict`] and
/// [`DeclineReason`].
#[derive(Debug, Clone, Copy)]
pub struct Codes {
    pub(crate) status: u16,
    pub(crate) own: &'static [ErrorCode],
    pub(crate) conflicts: &'static [Conflict],
    pub(crate) declines: &'static [DeclineReason],
    pub(crate) what: Option<&'static str>,
    pub(crate) alone: bool,
}

impl Codes {
    /// Nothing more under `status` yet.
    pub(crate) const fn of(status: u16) -> Self {
        Codes {
            status,
            own: &[],
            conflicts: &[],
            declines: &[],
            what: None,
            alone: false,
        }
    }
    /// Codes of [`ErrorCode`]'s table.
    pub(crate) const fn own(mut self, own: &'static [ErrorCode]) -> Self {
        self.own = own;
        self
    }
    /// 409 conflicts with an object's state.
    pub(crate) const fn conflicts(mut self, conflicts: &'static [Conflict]) -> Self {
        self.conflicts = conflicts;
        self
    }
    /// 422 declines.
    pub(crate) const fn declines(mut self, declines: &'static [DeclineReason]) -> Self {
        self.declines = declines;
        self
    }
    /// What the status means for this operation (instead of what it means for any).
    pub(crate) const fn what(mut self, what: &'static str) -> Self {
        self.what = Some(what);
        self
    }
    /// Only these codes, not those every operation may answer (a read's 409: no
    /// Idempotency-Key).
    pub(crate) const fn alone(mut self) -> Self {
        self.alone = true;
        self
    }
}

/// A query parameter the server reads.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Param {
    Limit,
    StartingAfter,
    MandateId,
    SessionKeyId,
    EventType,
    ObjectId,
    CreatedGte,
    Subject,
}

/// What a link passes to the next operation.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LinkArg {
    /// The answered object's id as the next operation's `{id}`.
    Id,
    /// An expression as `{id}`.
    Path(&'static str),
    /// The answered object's id as a query parameter.
    Query(&'static str),
    /// Members of the next request's body.
    Body(&'static [(&'static str, &'static str)]),
}

/// Examples of answers (real answers of `openrail dev`, ids shortened), named by the
/// operations they illustrate; the end-to-end test checks each against its schema.
pub(crate) mod examples {
    use serde_json::{Value, json};

    use super::problem;

    /// A wallet payer's mandate, created.
    pub(crate) fn created_mandate() -> Value {
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
        json!({
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
        })
    }

    /// A session key, issued (its secret shown once).
    pub(crate) fn created_session_key() -> Value {
        json!({
            "id": "sk_v3RC6Zxjp9dXZNGZ2RiiIyVO", "object": "session_key", "livemode": false,
            "created_at": "2026-11-25T05:37:51.012Z", "mandate_id": "man_632RO1P2qWFib1t4KIa3wxkp",
            "status": "active", "expires_at": "2026-11-25T06:37:51.012Z", "max_amount": "60.00",
            "currency": "USD", "allowed_destinations": [],
            "current_epoch": { "starts_at": "2026-11-25T00:00:00Z", "ends_at": "2026-11-26T00:00:00Z", "spent": "0.00", "remaining": "60.00" },
            "onchain": { "chain_id": 31337, "contract": "0xDc64a140Aa3E981100a9becA4E685f962f0cF6C9", "id": "0x4e1b2a7f0c3d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7", "tx_hash": "0x2636ee2e8903eda2811ba8655c3f4141cf99bfa012fb093c7d75a52fbe1328ad" },
            "signer": null, "eip712_domain": null,
            "secret": "sks_testnet_4kQm9ZrT2xWv7bN1",
        })
    }

    /// A pull, authorized.
    pub(crate) fn created_debit_pull() -> Value {
        json!({
            "id": "pull_CstcqHoGAnEdXvbGzI4fK1Ta", "object": "debit_pull", "livemode": false,
            "created_at": "2026-11-25T05:37:51.647Z", "session_key_id": "sk_v3RC6Zxjp9dXZNGZ2RiiIyVO",
            "mandate_id": "man_632RO1P2qWFib1t4KIa3wxkp", "amount": "50.00", "currency": "USD",
            "destination": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "description": null,
            "status": "authorized", "decline_code": null, "failure_reason": null,
            "authorized_at": "2026-11-25T05:37:51.653Z",
            "onchain": { "chain_id": 31337, "tx_hash": "0xc57e87cac87fb37eab4dc93e49e3d38420f035795f58426c07c8aad592f9173d" },
        })
    }

    /// Two declined pulls.
    pub(crate) fn declined_pulls() -> Value {
        let mut exceeded = problem(
            "allowance_exceeded",
            "Declined",
            422,
            "a pull of 20.00 USD exceeds what may still be pulled this epoch",
        );
        exceeded["param"] = json!("amount");
        exceeded["pull_id"] = json!("pull_kYfIcFt9tiIt7z44INcnfKK4");
        exceeded["remaining"] = json!("10.00");
        exceeded["resets_at"] = json!("2026-11-26T00:00:00Z");
        let mut revoked = problem(
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
}

/// A problem as the server answers it, for examples.
pub(crate) fn problem(code: &str, title: &str, status: u16, detail: &str) -> Value {
    json!({
        "type": format!("https://docs.openrail.dev/errors/{code}"),
        "title": title, "status": status, "detail": detail, "code": code,
        "request_id": "req_4Vwmp5Z21R9PCE09vUbG",
    })
}
