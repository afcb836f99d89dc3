//! `openrail mcp`: a Model Context Protocol server for an agent holding one session key.
//!
//! It speaks MCP revision 2025-06-18 (and 2025-03-26 to clients that ask for it) as
//! newline-delimited JSON-RPC 2.0 on stdin/stdout, or, with `--http ADDR`, a subset of
//! the streamable HTTP transport: `POST /mcp` with one JSON-RPC message (or a batch)
//! answered `application/json` (202 for notifications), no sessions, no SSE (`GET` and
//! `DELETE` answer 405). Logs go to stderr: stdout is the protocol.
//!
//! It holds only an agent's credential: the session key's secret (`sks_…`, from
//! `OPENRAIL_API_KEY`; an account key is refused) and, for keys with a `signer`, the
//! agent's private key (`OPENRAIL_AGENT_KEY`) to sign each pull's EIP-712 `DebitPull`.
//! Its tools do nothing the secret cannot do over HTTP, and every limit (ceilings per
//! epoch, expiry, destinations, signatures) is the API's and the chain's to enforce: an
//! API error comes back as a tool result with `isError: true` carrying the problem.
//!
//! Beside paying, it verifies W3C Verifiable Credentials (`verify_credential`: what the
//! API verifies for any caller). Verification sessions and attestations need the account's
//! API key (the API refuses a session key's secret: 403), which this server never holds,
//! so it has no tools for them.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use openrail_client::agentic::{CreatePull, DebitPull, SessionKey};
use openrail_client::signing::{PrivateKeySigner, PullTerms, sign_pull};
use openrail_client::{Client, Error as ClientError, ListParams, RequestOptions};
use serde_json::{Value, json};
use tokio::sync::Mutex;

/// The revision this server speaks, and the older one it also answers.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-06-18";
/// Every revision this server answers in, newest first.
pub const PROTOCOL_VERSIONS: [&str; 2] = ["2025-06-18", "2025-03-26"];

/// Options of `openrail mcp`. The secrets come from the environment only, never arguments
/// (which other users of the machine can read).
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// The API's base URL.
    #[arg(
        long,
        env = "OPENRAIL_BASE_URL",
        default_value = "http://127.0.0.1:8080"
    )]
    base_url: String,
    /// The session key's id (`sk_…`); without it the server asks the API (a key's secret
    /// lists its own key alone).
    #[arg(long, env = "OPENRAIL_SESSION_KEY_ID")]
    session_key_id: Option<String>,
    /// Serve streamable HTTP on this loopback address (`127.0.0.1:PORT`, port 0: any free
    /// one; the address is logged) at `/mcp`, instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Seconds a pull waits for the chain before it answers `pending` (`Prefer: wait`).
    #[arg(long, default_value_t = 30, env = "OPENRAIL_MCP_WAIT_SECS")]
    wait_secs: u64,
}

/// Runs the server until stdin closes (stdio) or Ctrl-C/SIGTERM (HTTP).
pub async fn run(args: McpArgs) -> anyhow::Result<()> {
    let secret = std::env::var("OPENRAIL_API_KEY")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .context("OPENRAIL_API_KEY is not set: give openrail mcp a session key's secret (sks_…)")?;
    if !secret.starts_with("sks_") {
        anyhow::bail!(
            "OPENRAIL_API_KEY is not a session key's secret (sks_…): openrail mcp holds only an \
             agent's credential, never an account's API key (sk_…); create a session key and \
             give its secret"
        );
    }
    let agent = match std::env::var("OPENRAIL_AGENT_KEY") {
        Ok(k) if !k.trim().is_empty() => Some(
            k.trim()
                .parse::<PrivateKeySigner>()
                .map_err(|_| anyhow::anyhow!("OPENRAIL_AGENT_KEY is not a private key (hex)"))?,
        ),
        _ => None,
    };
    if let Some(id) = &args.session_key_id {
        anyhow::ensure!(
            id.starts_with("sk_")
                && !id.starts_with("sk_testnet_")
                && !id.starts_with("sk_mainnet_"),
            "OPENRAIL_SESSION_KEY_ID {id:?} is no session key id (sk_…)"
        );
    }
    let client = Client::new(secret.clone())
        .base_url(args.base_url.clone())
        .prefer_wait(args.wait_secs.min(60));
    tracing::info!(
        api = %args.base_url,
        secret = %format!("{}…", &secret[..secret.len().min(12)]),
        session_key_id = args.session_key_id.as_deref().unwrap_or("(asked of the API)"),
        agent = %agent.as_ref().map(|a| a.address().to_string()).unwrap_or_else(|| "none".into()),
        transport = if args.http.is_some() { "http" } else { "stdio" },
        "openrail mcp starting"
    );
    let server = Arc::new(Server {
        client,
        agent,
        key_id: Mutex::new(args.session_key_id),
        signed: Mutex::new(HashMap::new()),
    });
    match args.http {
        Some(addr) => serve_http(server, addr).await,
        None => serve_stdio(server).await,
    }
}

/// What the tools share.
pub struct Server {
    client: Client,
    agent: Option<PrivateKeySigner>,
    key_id: Mutex<Option<String>>,
    /// Signed pull bodies by idempotency key, so that a retry sends the same body.
    signed: Mutex<HashMap<String, (Value, CreatePull)>>,
}

// ------------------------------------------------------------------ JSON-RPC

/// JSON-RPC error codes.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

fn error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// Handles one line or HTTP body: a message or a batch; `None` when nothing is answered.
pub async fn handle_text(server: &Server, text: &str, version: &Mutex<String>) -> Option<Value> {
    let msg: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Some(error(Value::Null, PARSE_ERROR, format!("parse error: {e}"))),
    };
    match msg {
        Value::Array(items) if items.is_empty() => {
            Some(error(Value::Null, INVALID_REQUEST, "an empty batch"))
        }
        Value::Array(items) => {
            let mut answers = Vec::new();
            for item in items {
                if let Some(a) = handle_message(server, item, version).await {
                    answers.push(a);
                }
            }
            (!answers.is_empty()).then_some(Value::Array(answers))
        }
        msg => handle_message(server, msg, version).await,
    }
}

/// Handles one JSON-RPC message; `None` for notifications and responses.
pub async fn handle_message(server: &Server, msg: Value, version: &Mutex<String>) -> Option<Value> {
    let Value::Object(obj) = msg else {
        return Some(error(
            Value::Null,
            INVALID_REQUEST,
            "a message must be an object",
        ));
    };
    let id = obj.get("id").cloned();
    // MCP ids are strings or integers (JSON-RPC's null and fractions are not).
    let id_ok = match &id {
        Some(Value::String(_)) => true,
        Some(Value::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(error(
            if id_ok {
                id.unwrap_or(Value::Null)
            } else {
                Value::Null
            },
            INVALID_REQUEST,
            "jsonrpc must be \"2.0\"",
        ));
    }
    let Some(method) = obj.get("method").and_then(Value::as_str) else {
        if obj.contains_key("result") || obj.contains_key("error") {
            return None; // a response: this server sends no requests
        }
        return Some(error(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "no method",
        ));
    };
    let params = obj.get("params").cloned().unwrap_or(Value::Null);
    let Some(id) = id else {
        // A notification: initialized, cancelled, … need no answer.
        tracing::debug!(method, "notification");
        return None;
    };
    if !id_ok {
        return Some(error(
            Value::Null,
            INVALID_REQUEST,
            "id must be a string or an integer",
        ));
    }
    if !(params.is_null() || params.is_object()) {
        return Some(error(id, INVALID_PARAMS, "params must be an object"));
    }
    match method {
        "initialize" => {
            let asked = params.get("protocolVersion").and_then(Value::as_str);
            let v = match asked {
                Some(a) if PROTOCOL_VERSIONS.contains(&a) => a,
                _ => LATEST_PROTOCOL_VERSION,
            };
            *version.lock().await = v.to_string();
            tracing::info!(asked = asked.unwrap_or("none"), answered = v, "initialize");
            let mut info = json!({"name": "openrail", "version": env!("CARGO_PKG_VERSION")});
            if v == "2025-06-18" {
                info["title"] = json!("Openrail payments (session key)");
            }
            Some(result(
                id,
                json!({
                    "protocolVersion": v,
                    "capabilities": {"tools": {"listChanged": false}},
                    "serverInfo": info,
                    "instructions": INSTRUCTIONS,
                }),
            ))
        }
        "ping" => Some(result(id, json!({}))),
        "tools/list" => {
            let v = version.lock().await.clone();
            Some(result(id, json!({"tools": tools(&v)})))
        }
        "tools/call" => {
            let Some(name) = params.get("name").and_then(Value::as_str) else {
                return Some(error(id, INVALID_PARAMS, "tools/call needs a tool name"));
            };
            let args = params.get("arguments").cloned().unwrap_or(json!({}));
            if !TOOL_NAMES.contains(&name) {
                return Some(error(
                    id,
                    INVALID_PARAMS,
                    format!(
                        "unknown tool {name:?}: the tools are {}",
                        TOOL_NAMES.join(", ")
                    ),
                ));
            }
            let outcome = match args {
                Value::Object(args) => server.call(name, &args).await,
                _ => Outcome::refused("arguments must be an object"),
            };
            let v = version.lock().await.clone();
            Some(result(id, outcome.into_result(&v)))
        }
        other => Some(error(
            id,
            METHOD_NOT_FOUND,
            format!("method not found: {other}"),
        )),
    }
}

const INSTRUCTIONS: &str = "Pays with one session key of an Openrail account: money moves from \
the payer the key's mandate names, within limits the payer and the account set (a ceiling per \
calendar epoch, an expiry, allowed destinations), enforced by the API and the chain. Read \
get_allowance before paying; create_debit_pull moves money and cannot be undone; a refused \
pull's error says why (allowance_exceeded carries what remains and when it resets). \
verify_credential checks a W3C Verifiable Credential someone showed (its proofs, validity and \
revocation status); whether to trust its issuer is the user's call.";

// ------------------------------------------------------------------ tools

const TOOL_NAMES: [&str; 5] = [
    "get_allowance",
    "create_debit_pull",
    "list_debit_pulls",
    "get_debit_pull",
    "verify_credential",
];

const AMOUNT_WORDS: &str = "The amount as a decimal string in the key's currency (get_allowance \
says which), in major units with at most 2 decimals: \"5\", \"5.00\" or \"12.50\"; not cents, \
not \"5.001\", no currency sign, no thousands separator. At most what get_allowance says \
remains this epoch.";

/// The tools as `tools/list` answers them (`title` only from 2025-06-18 on).
pub fn tools(version: &str) -> Vec<Value> {
    let mut tools = vec![
        json!({
            "name": "get_allowance",
            "title": "Read the session key's allowance",
            "description": "Reads this agent's session key: how much may still be pulled in the \
        current epoch (`remaining`, in `currency`), when the epoch resets (`resets_at`, a calendar \
        boundary in UTC: the allowance comes back then), what was pulled so far (`spent`), the key's \
        own ceiling per epoch (`max_amount`; the mandate's ceiling also counts, and `remaining` is the \
        smaller of both), when the key expires (`expires_at`, after which it cannot pull), its status \
        (`active`, `expired`, `revoked`), the destinations it may pay (`allowed_destinations`; null: \
        any the mandate allows) and whether each pull needs the agent's signature (`signer`). Reads \
        only; costs nothing.",
            "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
            "annotations": {"title": "Read the session key's allowance", "readOnlyHint": true, "openWorldHint": false},
        }),
        json!({
            "name": "create_debit_pull",
            "title": "Pay: pull money with the session key",
            "description": "Pulls money from the payer with this agent's session key \
        (POST /v1/debit-pulls) and pays it to `destination`, on chain. This moves real money on \
        mainnet keys and cannot be undone. Limits, all enforced by the API and the chain, not by this \
        tool: at most what remains of the key's allowance this epoch (get_allowance), only before the \
        key's `expires_at`, only while the key and its mandate are active, only to a destination the \
        key allows, and, for a key with a `signer`, only with the agent's signature (this server signs \
        when it has the agent's key). A refused pull comes back as an error whose text starts with the \
        API's code: `allowance_exceeded` means the amount is more than may still be pulled this epoch \
        (the error says `remaining` and `resets_at`: pull at most `remaining`, or wait until \
        `resets_at`; the same amount fails again until then); `destination_not_allowed`: pay one of \
        the key's allowed destinations; `session_key_revoked`, `session_key_expired`, `unauthenticated` \
        (the secret is no longer accepted), `mandate_not_active`: this key cannot pay any more, tell \
        the user; `insufficient_funds`: the payer lacks the money; `signature_required`, \
        `signature_invalid`: the agent's signing key is missing or wrong. Each call without \
        `idempotency_key` is a new payment: to retry a call whose answer you did not get, repeat it \
        with the same `idempotency_key`. A `pending` pull is not yet decided: read it with \
        get_debit_pull.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "amount": {"type": "string", "pattern": "^[0-9]+(\\.[0-9]{1,2})?$", "description": AMOUNT_WORDS},
                    "destination": {"type": "string", "pattern": "^0x[0-9a-fA-F]{40}$",
                        "description": "The wallet address to pay (0x and 40 hex digits). When the key \
        has allowed_destinations (get_allowance), it must be one of them. Left out: the key's only allowed \
        destination when it has exactly one, else the account's settlement wallet."},
                    "description": {"type": "string", "maxLength": 500,
                        "description": "What the payment is for (free text, at most 500 characters), shown to the account."},
                    "idempotency_key": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$",
                        "description": "Optional. The same key with the same arguments returns the first \
        call's pull instead of paying again: use it to retry safely. Printable ASCII, no spaces, at most 255 characters."},
                },
                "required": ["amount"],
                "additionalProperties": false,
            },
            "annotations": {"title": "Pay: pull money with the session key", "readOnlyHint": false,
                "destructiveHint": false, "idempotentHint": false, "openWorldHint": true},
        }),
        json!({
            "name": "list_debit_pulls",
            "title": "List the session key's pulls",
            "description": "Lists this session key's debit pulls, newest first: each with its `id`, \
        `status` (`pending`, `authorized`: paid; `settled`; `declined` with its `decline_code`; \
        `failed`), `amount`, `currency`, `destination` and `created_at`. Pages: pass the answer's \
        `next_starting_after` as `starting_after` while `has_more` is true. Reads only.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Pulls per page, 1 to 100 (default 10)."},
                    "starting_after": {"type": "string", "pattern": "^pull_", "description": "A pull id (pull_…) from a previous page: list the ones after it."},
                },
                "additionalProperties": false,
            },
            "annotations": {"title": "List the session key's pulls", "readOnlyHint": true, "openWorldHint": false},
        }),
        json!({
            "name": "get_debit_pull",
            "title": "Read a pull's status",
            "description": "Reads one of this session key's debit pulls by id (pull_…): its \
        `status` (`pending`: the chain has not answered yet, read it again shortly; `authorized`: \
        paid; `settled`; `declined` with `decline_code`; `failed` with `failure_reason`), amount, \
        destination and transaction. Pulls of other keys read as not found. Reads only.",
            "inputSchema": {
                "type": "object",
                "properties": {"pull_id": {"type": "string", "pattern": "^pull_", "description": "The pull's id (pull_…)."}},
                "required": ["pull_id"],
                "additionalProperties": false,
            },
            "annotations": {"title": "Read a pull's status", "readOnlyHint": true, "openWorldHint": false},
        }),
        json!({
            "name": "verify_credential",
            "title": "Verify a W3C Verifiable Credential",
            "description": "Verifies a W3C Verifiable Credential (VC 1.1 or 2.0 JSON with Data \
        Integrity proofs: eddsa-rdfc-2022, eddsa-jcs-2022, ecdsa-rdfc-2019, ecdsa-jcs-2019; \
        did:key issuers) with Openrail (POST /v1/identity/credentials/verify): every proof, the \
        validity period (validFrom/validUntil) and the revocation status. Answers `verified` \
        (true or false, never an error for a credential that does not verify) with `problems`: \
        the reasons by name — RANGE_ERROR (expired, not yet valid, or revoked), \
        PROOF_VERIFICATION_ERROR (a signature that does not match: the credential was changed or \
        forged), MALFORMED_VALUE_ERROR, PARSING_ERROR, CRYPTOGRAPHIC_SECURITY_ERROR — each with \
        a `detail`, and the credential's `issuer`, `type` and `subject`. A verified credential \
        says only that its issuer signed it and it stands: whether that issuer is one to trust \
        is the user's decision, not this tool's. A document that is no credential at all is an \
        error `parameter_invalid`. Reads only; moves no money.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "credential": {"type": "object", "additionalProperties": true,
                        "description": "The whole credential as JSON, exactly as received, proof \
        included (a JSON object, or a string holding one). Any change breaks its proof."},
                },
                "required": ["credential"],
                "additionalProperties": false,
            },
            "annotations": {"title": "Verify a W3C Verifiable Credential", "readOnlyHint": true, "openWorldHint": false},
        }),
    ];
    if version != "2025-06-18" {
        for t in &mut tools {
            if let Some(o) = t.as_object_mut() {
                o.remove("title");
            }
        }
    }
    tools
}

/// A tool's result.
#[derive(Debug)]
pub struct Outcome {
    text: String,
    structured: Value,
    is_error: bool,
}

impl Outcome {
    fn ok(summary: String, structured: Value) -> Self {
        let body = serde_json::to_string_pretty(&structured).unwrap_or_default();
        Self {
            text: format!("{summary}\n{body}"),
            structured,
            is_error: false,
        }
    }

    /// Refused by this server before anything was sent.
    fn refused(why: impl Into<String>) -> Self {
        let why = why.into();
        Self {
            text: why.clone(),
            structured: json!({"error": why}),
            is_error: true,
        }
    }

    fn refused_code(code: &str, detail: String) -> Self {
        Self {
            text: format!("{code}: {detail}"),
            structured: json!({"code": code, "detail": detail, "sent": false}),
            is_error: true,
        }
    }

    fn from_error(e: ClientError) -> Self {
        match e {
            ClientError::Api(p) => {
                let mut text = format!("{} (HTTP {}): {}", p.code, p.status, p.detail);
                if let Some(r) = &p.remaining {
                    text.push_str(&format!("\nremaining: {r} may still be pulled this epoch"));
                }
                if let Some(r) = &p.resets_at {
                    text.push_str(&format!("\nresets_at: {r} (the allowance comes back then)"));
                }
                if let Some(id) = &p.pull_id {
                    text.push_str(&format!(
                        "\npull_id: {id} (declined; get_debit_pull reads it)"
                    ));
                }
                if let Some(param) = &p.param {
                    text.push_str(&format!("\nparam: {param}"));
                }
                if p.code == "unauthenticated" {
                    text.push_str(
                        "\nThis session key's secret is no longer accepted: the key was revoked, \
                         has expired or does not exist. It cannot pay; tell the user.",
                    );
                }
                if let Some(r) = &p.request_id {
                    text.push_str(&format!("\nrequest_id: {r}"));
                }
                let structured = serde_json::to_value(&*p).unwrap_or(Value::Null);
                Self {
                    text,
                    structured,
                    is_error: true,
                }
            }
            ClientError::Network(e) => Self::refused_code(
                "network_error",
                format!("the API could not be reached: {e}"),
            ),
            other => Self::refused_code("client_error", other.to_string()),
        }
    }

    fn into_result(self, version: &str) -> Value {
        let mut r = json!({
            "content": [{"type": "text", "text": self.text}],
            "isError": self.is_error,
        });
        if version == "2025-06-18" && self.structured.is_object() {
            r["structuredContent"] = self.structured;
        }
        r
    }
}

fn pull_summary(p: &DebitPull) -> String {
    match p.status.as_str() {
        "pending" => format!(
            "{} pending: {} {} to {}; the chain has not answered yet (get_debit_pull reads it)",
            p.id, p.amount, p.currency, p.destination
        ),
        "declined" => format!(
            "{} declined ({}): {} {} to {}",
            p.id,
            p.decline_code.as_deref().unwrap_or("?"),
            p.amount,
            p.currency,
            p.destination
        ),
        s => format!(
            "{} {s}: {} {} to {}",
            p.id, p.amount, p.currency, p.destination
        ),
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A nonce not used before on the key (with overwhelming likelihood): 64 bits of a hash
/// of the time, the process and a counter.
fn fresh_nonce() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let seed = format!(
        "{nanos}:{}:{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let h = alloy::primitives::keccak256(seed.as_bytes());
    u64::from_be_bytes(h[..8].try_into().unwrap_or([0; 8])) >> 1
}

impl Server {
    /// Runs tool `name`.
    pub async fn call(&self, name: &str, args: &serde_json::Map<String, Value>) -> Outcome {
        let outcome = match name {
            "get_allowance" => self.get_allowance().await,
            "create_debit_pull" => self.create_pull(args).await,
            "list_debit_pulls" => self.list_pulls(args).await,
            "get_debit_pull" => self.get_pull(args).await,
            "verify_credential" => self.verify_credential(args).await,
            other => Outcome::refused(format!("unknown tool {other}")),
        };
        tracing::info!(
            tool = name,
            error = outcome.is_error,
            first_line = outcome.text.lines().next().unwrap_or(""),
            "tools/call"
        );
        outcome
    }

    /// The key's id: given, or asked of the API (a key's secret lists its own key alone).
    async fn key_id(&self) -> Result<String, Outcome> {
        let mut id = self.key_id.lock().await;
        if let Some(id) = &*id {
            return Ok(id.clone());
        }
        let mut pages = self
            .client
            .agentic()
            .session_keys(ListParams::default().limit(1));
        match pages.next().await {
            Some(Ok(k)) => {
                tracing::info!(session_key_id = %k.id, "the API named the key of this secret");
                *id = Some(k.id.clone());
                Ok(k.id)
            }
            Some(Err(e)) => Err(Outcome::from_error(e)),
            None => Err(Outcome::refused_code(
                "session_key_id_unknown",
                "the API lists no session key for this secret".into(),
            )),
        }
    }

    async fn key(&self) -> Result<SessionKey, Outcome> {
        let id = self.key_id().await?;
        self.client
            .agentic()
            .session_key(&id)
            .await
            .map_err(Outcome::from_error)
    }

    async fn get_allowance(&self) -> Outcome {
        let k = match self.key().await {
            Ok(k) => k,
            Err(o) => return o,
        };
        let epoch = k.current_epoch.as_ref();
        let remaining = epoch.map(|e| e.remaining.clone());
        let resets_at = epoch.map(|e| e.ends_at.clone());
        let summary = format!(
            "{}: {} — may still pull {} {} this epoch (resets {}); expires {}{}",
            k.id,
            k.status,
            remaining.as_deref().unwrap_or("0"),
            k.currency,
            resets_at.as_deref().unwrap_or("?"),
            k.expires_at,
            match &k.signer {
                Some(s) if self.agent.is_some() => format!("; pulls signed by agent {s}"),
                Some(s) => format!(
                    "; pulls need agent {s}'s signature and this server has no agent key: it cannot pull"
                ),
                None => String::new(),
            }
        );
        Outcome::ok(
            summary,
            json!({
                "session_key_id": k.id,
                "status": k.status,
                "currency": k.currency,
                "remaining": remaining,
                "spent": epoch.map(|e| e.spent.clone()),
                "epoch_starts_at": epoch.map(|e| e.starts_at.clone()),
                "resets_at": resets_at,
                "max_amount": k.max_amount,
                "expires_at": k.expires_at,
                "allowed_destinations": k.allowed_destinations,
                "signer": k.signer,
                "agent_key_configured": self.agent.is_some(),
                "mandate_id": k.mandate_id,
                "livemode": k.livemode,
            }),
        )
    }

    async fn create_pull(&self, args: &serde_json::Map<String, Value>) -> Outcome {
        let amount = match args.get("amount") {
            Some(Value::String(s)) => s.trim().to_string(),
            Some(Value::Number(n)) => n.to_string(),
            _ => {
                return Outcome::refused(
                    "amount is required: a decimal string such as \"5.00\" (at most 2 decimals)",
                );
            }
        };
        let text = |name: &str| -> Result<Option<String>, Outcome> {
            match args.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(Outcome::refused(format!("{name} must be a string"))),
            }
        };
        let (destination, description, idem) = match (
            text("destination"),
            text("description"),
            text("idempotency_key"),
        ) {
            (Ok(a), Ok(b), Ok(c)) => (a, b, c),
            (Err(o), _, _) | (_, Err(o), _) | (_, _, Err(o)) => return o,
        };
        if let Some(extra) = args.keys().find(|k| {
            !["amount", "destination", "description", "idempotency_key"].contains(&k.as_str())
        }) {
            return Outcome::refused(format!(
                "unknown argument {extra:?}: create_debit_pull takes amount, destination, description, idempotency_key"
            ));
        }
        let key = match self.key().await {
            Ok(k) => k,
            Err(o) => return o,
        };
        let mut body = CreatePull {
            session_key_id: key.id.clone(),
            amount: amount.clone(),
            destination: destination.clone(),
            description,
            ..Default::default()
        };
        if let Some(signer) = &key.signer {
            let Some(agent) = &self.agent else {
                return Outcome::refused_code(
                    "signature_required",
                    format!(
                        "session key {} needs its agent's signature on every pull (signer {signer}) \
                         and this server has no agent key (OPENRAIL_AGENT_KEY): nothing was sent. \
                         Whoever runs the server must set OPENRAIL_AGENT_KEY to the agent's key.",
                        key.id
                    ),
                );
            };
            if !signer.eq_ignore_ascii_case(&agent.address().to_string()) {
                return Outcome::refused_code(
                    "signature_invalid",
                    format!(
                        "session key {} needs the signature of {signer}, and OPENRAIL_AGENT_KEY is \
                         {}'s key: nothing was sent",
                        key.id,
                        agent.address()
                    ),
                );
            }
            let dest = match (&destination, key.allowed_destinations.as_deref()) {
                (Some(d), _) => d.clone(),
                (None, Some([only])) => only.clone(),
                (None, _) => {
                    return Outcome::refused(format!(
                        "name a destination: the agent signs each pull for one wallet, and key {} \
                         has no single allowed destination (allowed: {})",
                        key.id,
                        key.allowed_destinations
                            .as_ref()
                            .map(|d| d.join(", "))
                            .unwrap_or_else(|| "any of the mandate's payees".into())
                    ));
                }
            };
            // A retry with the same idempotency key sends the body signed the first time.
            let cache_key = idem.clone();
            let same_args = json!([amount, dest, body.description]);
            if let Some(k) = &cache_key
                && let Some((a, b)) = self.signed.lock().await.get(k)
                && *a == same_args
            {
                body = b.clone();
            } else {
                let (Some(domain), Some(onchain)) = (&key.eip712_domain, &key.onchain) else {
                    return Outcome::refused(format!(
                        "session key {} is not on chain yet (no EIP-712 domain): try again shortly",
                        key.id
                    ));
                };
                let nonce = fresh_nonce();
                let deadline = unix_now() + 600;
                let terms = PullTerms {
                    domain,
                    key_onchain_id: &onchain.id,
                    destination: &dest,
                    amount: &amount,
                    nonce,
                    deadline,
                };
                let signature = match sign_pull(agent, &terms) {
                    Ok(s) => s,
                    Err(e) => {
                        return Outcome::refused(format!(
                            "amount {amount:?} cannot be signed ({e}): {AMOUNT_WORDS}"
                        ));
                    }
                };
                body.destination = Some(dest);
                body.signature = Some(signature);
                body.nonce = Some(nonce);
                body.deadline = Some(deadline);
                if let Some(k) = cache_key {
                    self.signed
                        .lock()
                        .await
                        .insert(k, (same_args, body.clone()));
                }
            }
        }
        let options = RequestOptions {
            idempotency_key: idem,
        };
        match self
            .client
            .agentic()
            .create_pull_with(&body, &options)
            .await
        {
            Ok(p) => Outcome::ok(
                pull_summary(&p),
                serde_json::to_value(&p).unwrap_or(Value::Null),
            ),
            Err(e) => Outcome::from_error(e),
        }
    }

    async fn list_pulls(&self, args: &serde_json::Map<String, Value>) -> Outcome {
        let limit = match args.get("limit") {
            None | Some(Value::Null) => 10,
            Some(v) => match v.as_u64() {
                Some(n) if (1..=100).contains(&n) => n as u32,
                _ => return Outcome::refused("limit must be an integer from 1 to 100"),
            },
        };
        let after = match args.get("starting_after") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Outcome::refused("starting_after must be a pull id (pull_…)"),
        };
        let mut params = ListParams::default().limit(limit);
        params.starting_after = after;
        // The secret lists only its own key's pulls (the API adds the filter).
        let mut pages = self.client.agentic().pulls(params);
        let mut data = Vec::new();
        while data.len() < limit as usize {
            match pages.next().await {
                Some(Ok(p)) => data.push(p),
                Some(Err(e)) => return Outcome::from_error(e),
                None => break,
            }
        }
        // One more only fetches a page when the API said there is one.
        let has_more = data.len() == limit as usize && matches!(pages.next().await, Some(Ok(_)));
        let next = has_more
            .then(|| data.last().map(|p| p.id.clone()))
            .flatten();
        let summary = if data.is_empty() {
            "no pulls".to_string()
        } else {
            data.iter().map(pull_summary).collect::<Vec<_>>().join("\n")
        };
        Outcome::ok(
            summary,
            json!({"data": data, "has_more": has_more, "next_starting_after": next}),
        )
    }

    async fn get_pull(&self, args: &serde_json::Map<String, Value>) -> Outcome {
        let Some(id) = args.get("pull_id").and_then(Value::as_str) else {
            return Outcome::refused("pull_id is required: a pull's id (pull_…)");
        };
        match self.client.agentic().pull(id).await {
            Ok(p) => Outcome::ok(
                pull_summary(&p),
                serde_json::to_value(&p).unwrap_or(Value::Null),
            ),
            Err(e) => Outcome::from_error(e),
        }
    }
}

impl Server {
    async fn verify_credential(&self, args: &serde_json::Map<String, Value>) -> Outcome {
        if let Some(extra) = args.keys().find(|k| k.as_str() != "credential") {
            return Outcome::refused(format!(
                "unknown argument {extra:?}: verify_credential takes credential"
            ));
        }
        let credential = match args.get("credential") {
            Some(v @ Value::Object(_)) => v.clone(),
            Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                Ok(v @ Value::Object(_)) => v,
                _ => {
                    return Outcome::refused(
                        "credential must be the credential's JSON object (or a string holding it)",
                    );
                }
            },
            _ => {
                return Outcome::refused(
                    "credential is required: the whole W3C Verifiable Credential as a JSON object",
                );
            }
        };
        let v = match self.client.identity().verify_credential(&credential).await {
            Ok(v) => v,
            Err(e) => return Outcome::from_error(e),
        };
        let issuer = match &credential["issuer"] {
            Value::Object(o) => o.get("id").cloned().unwrap_or(Value::Null),
            other => other.clone(),
        };
        let types = match &credential["type"] {
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect::<Vec<_>>(),
            Value::String(s) => vec![s.as_str()],
            _ => Vec::new(),
        };
        let kind = types
            .iter()
            .rev()
            .find(|t| **t != "VerifiableCredential")
            .or(types.first())
            .copied()
            .unwrap_or("credential");
        let subject = match &credential["credentialSubject"] {
            Value::Array(a) => a.first().map(|s| s["id"].clone()).unwrap_or(Value::Null),
            s => s["id"].clone(),
        };
        let names = v.problem_names();
        let summary = if v.verified {
            format!(
                "verified: {kind} issued by {} about {} (proofs, validity and status hold; \
                 whether to trust the issuer is the user's call)",
                issuer.as_str().unwrap_or("?"),
                subject.as_str().unwrap_or("no subject id")
            )
        } else {
            format!(
                "NOT verified ({}): {}",
                names.join(", "),
                v.problem_details
                    .iter()
                    .map(|p| p.detail.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        };
        Outcome::ok(
            summary,
            json!({
                "verified": v.verified,
                "problems": v.problem_details.iter().map(|p| json!({
                    "name": p.name(), "code": p.code, "title": p.title, "detail": p.detail,
                })).collect::<Vec<_>>(),
                "issuer": issuer,
                "type": types,
                "subject": subject,
                "valid_from": credential.get("validFrom").or(credential.get("issuanceDate")),
                "valid_until": credential.get("validUntil").or(credential.get("expirationDate")),
            }),
        )
    }
}

// ------------------------------------------------------------------ transports

async fn serve_stdio(server: Arc<Server>) -> anyhow::Result<()> {
    let version = Arc::new(Mutex::new(LATEST_PROTOCOL_VERSION.to_string()));
    // Plain threads for stdin and stdout (tokio's are not in this workspace's features):
    // one line in, one line out, flushed per message.
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        while let Ok(v) = rx.recv() {
            if writeln!(out, "{v}").is_err() || out.flush().is_err() {
                break;
            }
        }
    });
    let (line_tx, mut lines) = tokio::sync::mpsc::unbounded_channel::<std::io::Result<String>>();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::stdin().lock().lines() {
            let stop = line.is_err();
            if line_tx.send(line).is_err() || stop {
                break;
            }
        }
    });
    let mut tasks = tokio::task::JoinSet::new();
    while let Some(line) = lines.recv().await {
        let line = line.context("reading stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        // Requests run concurrently (a pull waiting for the chain does not hold up a ping),
        // except initialize, which settles the version before what follows.
        let is_init = line.contains("\"initialize\"");
        let (server, version, tx) = (server.clone(), version.clone(), tx.clone());
        let work = async move {
            if let Some(answer) = handle_text(&server, &line, &version).await {
                let _ = tx.send(answer);
            }
        };
        if is_init {
            work.await;
        } else {
            tasks.spawn(work);
        }
    }
    tracing::info!("stdin closed: finishing the calls under way");
    while tasks.join_next().await.is_some() {}
    drop(tx);
    let _ = writer.join();
    Ok(())
}

async fn serve_http(server: Arc<Server>, addr: SocketAddr) -> anyhow::Result<()> {
    anyhow::ensure!(
        addr.ip().is_loopback(),
        "--http {addr}: only a loopback address (127.0.0.1, [::1]): the server holds the key's \
         secret and authenticates no one"
    );
    let app = axum::Router::new()
        .route(
            "/mcp",
            axum::routing::post(http_post)
                .get(http_not_allowed)
                .delete(http_not_allowed),
        )
        .with_state(server);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let local = listener.local_addr()?;
    tracing::info!("streamable HTTP on http://{local}/mcp");
    eprintln!("openrail mcp: listening on http://{local}/mcp");
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = crate::stop_signal().await;
        })
        .await?;
    Ok(())
}

async fn http_not_allowed() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, "POST")],
        "this server answers POST only (no SSE stream, no sessions)",
    )
        .into_response()
}

/// Whether an `Origin` header names this machine (DNS rebinding: a web page's requests
/// carry its own origin).
fn local_origin(origin: &str) -> bool {
    let host = origin
        .split("://")
        .nth(1)
        .unwrap_or(origin)
        .split('/')
        .next()
        .unwrap_or("");
    let host = match host.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => host,
    };
    matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

async fn http_post(State(server): State<Arc<Server>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok())
        && !local_origin(origin)
    {
        return (StatusCode::FORBIDDEN, "origin not allowed").into_response();
    }
    let text = String::from_utf8_lossy(&body);
    let is_init = serde_json::from_str::<Value>(&text)
        .ok()
        .is_some_and(|v| v.get("method").and_then(Value::as_str) == Some("initialize"));
    // Sessionless: the version of each request is its MCP-Protocol-Version header (absent:
    // 2025-03-26, as the revision says); initialize negotiates its own.
    let asked = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let version = match asked {
        Some(v) if !is_init && !PROTOCOL_VERSIONS.contains(&v.as_str()) => {
            let e = error(
                Value::Null,
                INVALID_REQUEST,
                format!(
                    "unsupported MCP-Protocol-Version {v:?}: this server speaks {}",
                    PROTOCOL_VERSIONS.join(", ")
                ),
            );
            return (StatusCode::BAD_REQUEST, axum::Json(e)).into_response();
        }
        Some(v) if !is_init => v,
        _ => "2025-03-26".to_string(),
    };
    let version = Mutex::new(version);
    match handle_text(&server, &text, &version).await {
        Some(answer) => {
            let status = if answer
                .get("error")
                .and_then(|e| e.get("code"))
                .and_then(Value::as_i64)
                == Some(PARSE_ERROR)
            {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::OK
            };
            (status, axum::Json(answer)).into_response()
        }
        None => StatusCode::ACCEPTED.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> Server {
        Server {
            client: Client::new("sks_testnet_x").base_url("http://127.0.0.1:9"),
            agent: None,
            key_id: Mutex::new(None),
            signed: Mutex::new(HashMap::new()),
        }
    }

    async fn answer(s: &Server, text: &str, v: &Mutex<String>) -> Value {
        handle_text(s, text, v).await.expect("an answer")
    }

    #[tokio::test]
    async fn initialize_negotiates_and_errors_follow_json_rpc() {
        let s = server();
        let v = Mutex::new(String::new());
        let a = answer(&s, r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#, &v).await;
        assert_eq!(a["result"]["protocolVersion"], "2025-03-26");
        assert!(a["result"]["serverInfo"].get("title").is_none());
        let a = answer(&s, r#"{"jsonrpc":"2.0","id":"x","method":"initialize","params":{"protocolVersion":"2099-01-01"}}"#, &v).await;
        assert_eq!(a["result"]["protocolVersion"], LATEST_PROTOCOL_VERSION);
        assert_eq!(a["id"], "x");
        assert!(a["result"]["capabilities"]["tools"].is_object());
        assert!(
            handle_text(
                &s,
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                &v
            )
            .await
            .is_none()
        );
        assert_eq!(
            answer(&s, r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#, &v).await["result"],
            json!({})
        );
        assert_eq!(
            answer(&s, "{not json", &v).await["error"]["code"],
            PARSE_ERROR
        );
        assert_eq!(
            answer(&s, r#"{"jsonrpc":"2.0","id":3,"method":"nope"}"#, &v).await["error"]["code"],
            METHOD_NOT_FOUND
        );
        assert_eq!(
            answer(&s, r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#, &v).await["error"]["code"],
            INVALID_REQUEST
        );
        assert_eq!(
            answer(&s, r#"[]"#, &v).await["error"]["code"],
            INVALID_REQUEST
        );
        assert_eq!(
            answer(
                &s,
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"steal"}}"#,
                &v
            )
            .await["error"]["code"],
            INVALID_PARAMS
        );
        let batch = answer(&s, r#"[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#, &v).await;
        assert_eq!(batch.as_array().map(Vec::len), Some(1));
        let list = answer(&s, r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#, &v).await;
        let names: Vec<_> = list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(names, TOOL_NAMES);
    }

    #[tokio::test]
    async fn a_bad_argument_is_a_tool_error_not_a_protocol_error() {
        let s = server();
        let v = Mutex::new(LATEST_PROTOCOL_VERSION.to_string());
        let a = answer(&s, r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_debit_pull","arguments":{}}}"#, &v).await;
        assert_eq!(a["result"]["isError"], true);
        assert!(
            a["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("amount is required")
        );
        let a = answer(&s, r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"verify_credential","arguments":{"credential":"not json"}}}"#, &v).await;
        assert_eq!(a["result"]["isError"], true);
        assert!(
            a["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("credential must be")
        );
    }

    #[test]
    fn origins() {
        assert!(local_origin("http://localhost:3000"));
        assert!(local_origin("http://127.0.0.1"));
        assert!(local_origin("http://[::1]:8080"));
        assert!(!local_origin("https://evil.example"));
        assert!(!local_origin("http://localhost.evil.example"));
    }
}
