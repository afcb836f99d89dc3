//! The OpenAPI 3.1 document, generated. Each operation is declared once, beside its
//! handler: a [`Route`] constant made by [`route!`] (its method, path, `operationId` and
//! handler together) with what the document says of it (summary, body, responses, the
//! error statuses it answers and its own codes from [`crate::error`]'s tables, parameters,
//! links), in the vocabulary of [`crate::route`], which the handlers import (this module
//! imports no handler module: it reads their operations through [`ROUTES`]). Each handler module lists its constants in its
//! `OPERATIONS`, and [`ROUTES`] is theirs, module by module (`crate::handlers!`); the router
//! ([`crate::router`]) is built from it and the document describes it, so a served route cannot go undocumented nor a
//! documented one unserved (a test also fails on a declared route [`ROUTES`] does not
//! list). The schemas come from the request and response types the handlers read and
//! answer (each handler module's `types`, in the shared vocabulary of [`crate::types`],
//! through [`utoipa::ToSchema`]). `docs/openapi.json` is a
//! committed copy (`make openapi`), checked equal to this by a test, and an end-to-end
//! test validates real responses against it.

use openrail_store::events::{EventType, ObjectKind};
use serde_json::{Map, Value, json};

use crate::error::ErrorCode;
use crate::route::{Components, Link, LinkArg, Param, Route, SchemaName, problem, route};

/// Every operation of the API, in the document's order (each handler module's `OPERATIONS`,
/// module by module as `crate::handlers!` declares them): the router serves these and the
/// document describes these.
pub static ROUTES: std::sync::LazyLock<Vec<&'static Route>> = std::sync::LazyLock::new(|| {
    crate::HANDLER_ROUTES
        .iter()
        .flat_map(|m| m.iter().copied())
        .collect()
});

/// `GET /v1/openapi.json`
pub const GET_OPENAPI: Route = route!(get "/v1/openapi.json", "getOpenApi", get_openapi)
    .doc("This document", "The OpenAPI 3.1 document of the API, generated from the server's request and response types. No authentication.")
    .ok(
        200,
        SchemaName {
            name: || "OpenApiDocument".into(),
            // A leaf of its own below.
            add: |_| {},
        },
    )
    .public();

/// This module's operations, in the order the document lists them (the router and the
/// document take every handler module's: [`crate::openapi::ROUTES`]).
pub const OPERATIONS: &[&Route] = &[&GET_OPENAPI];

/// `GET /v1/openapi.json`: the document, built once per process.
pub async fn get_openapi() -> axum::Json<&'static Value> {
    axum::Json(served())
}

/// The route serving `method` on `path` (a concrete path: `{id}` matches one segment).
pub fn route_of(method: &str, path: &str) -> Option<&'static Route> {
    ROUTES.iter().copied().find(|r| {
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

impl Param {
    fn json(self) -> Value {
        let (name, description, schema) = match self {
            Param::Limit => (
                "limit",
                "Page size, 1 to 100 (default 10)",
                json!({ "type": "integer", "minimum": 1, "maximum": 100, "default": 10 }),
            ),
            Param::StartingAfter => (
                "starting_after",
                "The last id of the previous page (its `data[-1].id`); an id that names no object of this list is 400 `parameter_invalid`, never an empty page that looks like the end",
                json!({ "type": "string", "minLength": 1 }),
            ),
            Param::MandateId => (
                "mandate_id",
                "Only this mandate's keys",
                json!({ "type": "string" }),
            ),
            Param::SessionKeyId => (
                "session_key_id",
                "Only this key's pulls",
                json!({ "type": "string" }),
            ),
            Param::EventType => (
                "type",
                "One event type, or every type of one object (`debit_pull.*`)",
                json!({ "type": "string", "enum": event_type_filters() }),
            ),
            Param::Subject => (
                "subject",
                "Only attestations about this wallet (0x… or did:pkh:eip155:…:0x…)",
                json!({ "type": "string" }),
            ),
            Param::ObjectId => (
                "object_id",
                "Only this object's events",
                json!({ "type": "string" }),
            ),
            Param::CreatedGte => (
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
    EventType::all()
        .into_iter()
        .map(|t| t.as_str().to_string())
        .chain(ObjectKind::ALL.iter().map(|k| k.wildcard().to_string()))
        .collect()
}

/// The codes each error status answers with, for the responses' descriptions: the codes
/// of that status every operation may answer (`error::ErrorCode`'s table), then those of
/// this operation ([`Route::codes`]).
fn status_codes(status: u16, route: &Route) -> (String, Vec<&'static str>) {
    use crate::error::Scope;
    let own = route.codes.iter().find(|c| c.status == status);
    let mut codes: Vec<&'static str> = ErrorCode::ALL
        .iter()
        .filter(|c| c.status().as_u16() == status && c.scope() == Scope::Every)
        .map(|c| c.as_str())
        .collect();
    if own.is_some_and(|c| c.alone) {
        codes.clear();
    }
    if let Some(c) = own {
        codes.extend(c.own.iter().map(|c| c.as_str()));
        codes.extend(c.conflicts.iter().map(|c| c.as_str()));
        codes.extend(c.declines.iter().map(|d| d.as_str()));
    }
    let what = match (status, own.and_then(|c| c.what)) {
        (_, Some(what)) => what,
        (400, None) => {
            "The request is malformed: a field is missing, unknown, repeated or invalid (`param` names it)"
        }
        (401, None) => "No valid credential",
        (403, None) => "The credential may not do this (a session key's secret outside its key)",
        (404, None) => {
            "No such object for this account and mode (an id of another kind or mode too)"
        }
        (409, None) => "A request with this Idempotency-Key is still running; retry later",
        (413, None) => "The body is larger than 64 KiB",
        (415, None) => "Send JSON with Content-Type: application/json",
        (422, None) => {
            "Well-formed, but a business rule declines it (the `code` says which; nothing moved)"
        }
        (429, None) => "Too many requests (or failed authentications); wait `Retry-After` seconds",
        (503, None) => "Mainnet is not configured, or the database or chain is briefly unavailable",
        (_, None) => "",
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

/// Every schema the document lists: what the operations read and answer, and the schemas
/// those use (each operation's types reach the document through it).
fn components() -> Map<String, Value> {
    let mut all: Components = Vec::new();
    for route in ROUTES.iter() {
        for schema in route
            .request
            .iter()
            .chain(route.responses.iter().flatten().map(|(_, s)| s))
        {
            (schema.add)(&mut all);
        }
    }
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
    let responses = answered(&ROUTES, &out);
    let names: Vec<String> = out.keys().cloned().collect();
    for name in names {
        let response = responses.contains(&name) && !NOT_ALL_PRESENT.contains(&name.as_str());
        close(out.get_mut(&name).expect("listed"), response);
    }
    out
}

/// Schemas a successful answer holds whose members are not all always present: this
/// OpenAPI document (served as it is). Every other schema an operation answers (and those
/// it uses) is a response type: every member it declares is always present (nullable ones
/// as `null`), except the secrets shown once ([`SOMETIMES`]).
const NOT_ALL_PRESENT: &[&str] = &["OpenApiDocument"];

/// The schemas of successful answers (2xx) and every schema they use.
fn answered(routes: &[&Route], all: &Map<String, Value>) -> std::collections::BTreeSet<String> {
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    match (k.as_str(), x) {
                        ("$ref", Value::String(r)) => {
                            if let Some(name) = r.strip_prefix("#/components/schemas/") {
                                out.push(name.to_string());
                            }
                        }
                        _ => refs(x, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }
    let mut todo: Vec<String> = routes
        .iter()
        .flat_map(|r| r.responses.iter().flatten())
        .filter(|(status, _)| (200..300).contains(status))
        .map(|(_, s)| (s.name)().into_owned())
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    while let Some(name) = todo.pop() {
        if let Some(v) = all.get(&name)
            && seen.insert(name)
        {
            refs(v, &mut todo);
        }
    }
    seen
}

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
    for route in ROUTES.iter() {
        let doc = *route;
        let write = route.method != "get";
        let mut responses = Map::new();
        let mut headers = json!({ "Request-Id": { "$ref": "#/components/headers/Request-Id" } });
        if write {
            headers["Idempotent-Replayed"] =
                json!({ "$ref": "#/components/headers/Idempotent-Replayed" });
        }
        for (status, schema) in doc.responses.iter().flatten() {
            let name = (schema.name)();
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
            if let Some((_, example)) = doc.example.filter(|(s, _)| s == status) {
                response["content"]["application/json"]["examples"] = json!({
                    "created": { "summary": "As `openrail dev` answered", "value": example() },
                });
            }
            responses.insert(status.to_string(), response);
        }
        for status in doc.errors {
            let (description, codes) = status_codes(*status, route);
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
            if let Some(example) = problem_example(route, *status) {
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
            "operationId": route.id,
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
                "content": { "application/json": { "schema": r(&(req.name)()) } },
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

/// Examples of problems: the operation's own ([`Route::problem_example`]), else those of
/// any operation with a body (400) or of any operation (401).
fn problem_example(route: &Route, status: u16) -> Option<Value> {
    if let Some((_, example)) = route.problem_example.filter(|(s, _)| *s == status) {
        return Some(example());
    }
    let examples = match status {
        400 if route.has_body() => {
            let mut amount = problem(
                "amount_invalid",
                "Invalid amount",
                400,
                "amount has more than 2 decimals, the most USD allows",
            );
            amount["param"] = json!("amount");
            let mut dup = problem(
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
        401 => json!({ "unauthenticated": { "summary": "No valid key", "value":
            problem("unauthenticated", "Unauthenticated", 401, "provide a valid API key as `Authorization: Bearer sk_testnet_…`") } }),
        _ => return None,
    };
    Some(examples)
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
fn links(list: &[Link]) -> Value {
    let mut out = Map::new();
    for (name, id, arg) in list {
        let mut link = json!({ "operationId": id });
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
    use crate::error::{Conflict, DeclineReason};

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
        for route in ROUTES.iter() {
            assert!(
                doc["paths"][route.path][route.method]["operationId"] == route.id,
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

    /// Every route declared in the crate (a `Route` constant made by `route!`) is in
    /// [`ROUTES`] once: a declared operation cannot be left out of the router and the document.
    #[test]
    fn every_declared_route_is_listed() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
        // A line that starts a declaration (`: Route = route!(…`) or its continuation.
        let marker = concat!("route", "!(");
        let mut declared: Vec<String> = Vec::new();
        let mut dirs = vec![std::path::PathBuf::from(dir)];
        let mut files = Vec::new();
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        }
        assert!(files.len() > 10, "the sources are read");
        for file in files {
            let text = std::fs::read_to_string(file).unwrap();
            for line in text.lines() {
                let line = line.trim_start();
                if line.starts_with("//") {
                    continue;
                }
                let line = line.split_once(": Route = ").map_or(line, |(_, r)| r);
                if let Some(rest) = line.strip_prefix(marker) {
                    // `route!(post "/v1/…", "operationId", handler)`
                    declared.push(rest.split('"').nth(3).unwrap().to_string());
                }
            }
        }
        declared.sort();
        let mut listed: Vec<String> = ROUTES.iter().map(|r| r.id.to_string()).collect();
        listed.sort();
        let unlisted: Vec<&String> = declared.iter().filter(|d| !listed.contains(d)).collect();
        assert!(
            unlisted.is_empty(),
            "declared, not in its module's OPERATIONS: {unlisted:?}"
        );
        assert_eq!(declared, listed, "each route declared once and listed once");
    }

    /// Operation ids and (method, path) pairs are unique, a link names a listed
    /// operation, an `{id}` is documented, and each code an operation declares is under
    /// an error status it answers.
    #[test]
    fn routes_are_consistent() {
        let mut seen = std::collections::HashSet::new();
        for r in ROUTES.iter() {
            assert!(seen.insert(r.id), "{} twice", r.id);
            let same = ROUTES
                .iter()
                .filter(|o| o.method == r.method && o.path == r.path);
            assert_eq!(same.count(), 1, "{} {} twice", r.method, r.path);
            assert!(["get", "post", "delete"].contains(&r.method), "{}", r.id);
            assert_eq!(
                r.path.contains("{id}"),
                r.path_id.is_some(),
                "{}'s {{id}}",
                r.id
            );
            for (_, next, _) in r.links {
                assert!(
                    ROUTES.iter().any(|o| o.id == *next),
                    "{}: link to {next}",
                    r.id
                );
            }
            for c in r.codes {
                assert!(
                    r.errors.contains(&c.status),
                    "{}: codes of {}",
                    r.id,
                    c.status
                );
                assert!(
                    c.own.iter().all(|e| e.status().as_u16() == c.status),
                    "{}",
                    r.id
                );
                assert!(c.conflicts.is_empty() || c.status == 409, "{}", r.id);
                assert!(c.declines.is_empty() || c.status == 422, "{}", r.id);
            }
            let statuses: Vec<u16> = r.codes.iter().map(|c| c.status).collect();
            let mut unique = statuses.clone();
            unique.dedup();
            assert_eq!(statuses, unique, "{}: one `Codes` per status", r.id);
        }
    }

    /// Every code some operations answer (the table's `Scope::Some`, every conflict and
    /// decline) is documented on at least one operation.
    #[test]
    fn every_code_of_some_operations_is_documented() {
        use crate::error::Scope;
        let doc = document();
        let text = doc["paths"].to_string();
        let some = ErrorCode::ALL
            .iter()
            .filter(|c| c.scope() == Scope::Some)
            .map(|c| c.as_str());
        let conflicts = Conflict::ALL.iter().map(|c| c.as_str());
        let declines = DeclineReason::ALL.iter().map(|d| d.as_str());
        for code in some.chain(conflicts).chain(declines) {
            assert!(
                text.contains(&format!("`{code}`")),
                "{code} is not documented"
            );
        }
    }

    #[test]
    fn route_of_matches_concrete_paths() {
        let op = |m, p| route_of(m, p).map(|r| r.id);
        assert_eq!(op("POST", "/v1/debit-pulls"), Some("createDebitPull"));
        assert_eq!(op("get", "/v1/debit-pulls/pull_1"), Some("getDebitPull"));
        assert_eq!(
            op("POST", "/v1/mandates/man_1/cancel"),
            Some("cancelMandate")
        );
        assert_eq!(
            op("DELETE", "/v1/session-keys/sk_1"),
            Some("revokeSessionKey")
        );
        // An empty segment, an extra segment, another method: no route.
        assert_eq!(op("GET", "/v1/mandates/"), None);
        assert_eq!(op("GET", "/v1/mandates/man_1/extra"), None);
        assert_eq!(op("PUT", "/v1/mandates"), None);
    }
}
