//! Webhook delivery, run by the lease holder of each mode's settlement chain: the fan-out
//! (events → one delivery row per matching endpoint, with the cursor, in one transaction)
//! and the sender (due deliveries → signed POSTs → the outcome recorded with the next
//! retry). Deliveries live in the database, so a crash loses none and a restart resumes
//! them; a delivery may arrive more than once (at least once), always with the same
//! `webhook-id` (the event's id). Order is not promised: retries and concurrent sends
//! overtake each other.
//!
//! Following the Standard Webhooks specification: headers `webhook-id`,
//! `webhook-timestamp` (unix seconds of the attempt) and `webhook-signature`
//! (`v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` keyed with the base64-decoded
//! part of the secret after `whsec_`; during a rotation's overlap two signatures,
//! separated by a space); body = the event as `GET /v1/events/{id}` renders it.
//!
//! Sans-IO parts, tested in place: [`sign`], [`RetrySchedule`] and the address rules
//! ([`classify`], [`check_url`]). The send-time address check is [`SafeResolver`]: the
//! client resolves names through it and connects only to addresses it let through, so a
//! name that resolved to a public address at creation cannot be pointed at a private one
//! later (DNS rebinding).

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use hmac::{Hmac, Mac};
use openrail_domain::WebhookDeliveryId;
use openrail_store::agentic::Scope;
use openrail_store::webhooks::{Attempt, DueDelivery, Fanout, Secrets};
use openrail_store::{Mode, Store, StoreError, now_ms};
use rand::Rng;
use reqwest::Url;
use sha2::Sha256;

/// Largest part of an endpoint's answer that is read; the rest is dropped.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// Errors of webhook signing and sending.
#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    /// The secret is not `whsec_` followed by base64.
    #[error("the secret is not whsec_ and base64")]
    BadSecret,
    /// The URL may not receive webhooks in this mode.
    #[error("{0}")]
    UrlRefused(String),
    /// The database failed.
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

impl DeliveryError {
    /// Whether trying again later may succeed.
    pub fn is_transient(&self) -> bool {
        match self {
            DeliveryError::Store(e) => e.is_transient(),
            DeliveryError::BadSecret | DeliveryError::UrlRefused(_) => false,
        }
    }
}

// ------------------------------------------------------------------ signatures

/// `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` with `secret` (`whsec_…`).
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<String, DeliveryError> {
    let b64 = secret.strip_prefix("whsec_").unwrap_or(secret);
    let key = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|_| DeliveryError::BadSecret)?;
    if key.is_empty() {
        return Err(DeliveryError::BadSecret);
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| DeliveryError::BadSecret)?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    let sig = mac.finalize().into_bytes();
    Ok(format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(sig)
    ))
}

/// The `webhook-signature` header: the current secret's signature, and the previous
/// secret's after a space while its overlap lasts.
pub fn signature_header(
    secrets: &Secrets,
    id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, DeliveryError> {
    let mut header = sign(&secrets.current, id, timestamp, body)?;
    if let Some(previous) = &secrets.previous {
        header.push(' ');
        header.push_str(&sign(previous, id, timestamp, body)?);
    }
    Ok(header)
}

/// Why a received webhook does not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// `webhook-timestamp` is not unix seconds.
    #[error("webhook-timestamp is not unix seconds")]
    BadTimestamp,
    /// The timestamp is further from now than the tolerance (a replay, or a wrong clock).
    #[error("webhook-timestamp is more than {0} s from now")]
    Stale(i64),
    /// No `v1` signature of the header matches.
    #[error("no signature matches")]
    NoMatch,
    /// The secret is unusable.
    #[error("the secret is not whsec_ and base64")]
    BadSecret,
}

/// Verifies a received webhook as a receiver does (the reference libraries' rules):
/// the timestamp within `tolerance_s` of `now_s`, and one `v1,` signature of the
/// space-separated `signature` header made with `secret`.
pub fn verify(
    secret: &str,
    id: &str,
    timestamp: &str,
    signature: &str,
    body: &[u8],
    now_s: i64,
    tolerance_s: i64,
) -> Result<(), VerifyError> {
    let ts: i64 = timestamp.parse().map_err(|_| VerifyError::BadTimestamp)?;
    if (now_s - ts).abs() > tolerance_s {
        return Err(VerifyError::Stale(tolerance_s));
    }
    let expected = sign(secret, id, ts, body).map_err(|_| VerifyError::BadSecret)?;
    let expected = expected.as_bytes();
    let matches = signature.split(' ').any(|s| {
        s.starts_with("v1,")
            && s.len() == expected.len()
            && s.bytes()
                .zip(expected.iter())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    });
    if matches {
        Ok(())
    } else {
        Err(VerifyError::NoMatch)
    }
}

// ------------------------------------------------------------------ retries

/// The waits between attempts: after the n-th failed attempt the next comes `n`-th wait
/// later (±10 % jitter); when the list is spent the delivery fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetrySchedule(Vec<Duration>);

impl RetrySchedule {
    /// 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 20 h: ten attempts over about three
    /// days (71 h 35 min).
    pub fn standard() -> Self {
        const M: u64 = 60;
        const H: u64 = 3600;
        Self(
            [
                5,
                5 * M,
                30 * M,
                2 * H,
                5 * H,
                10 * H,
                14 * H,
                20 * H,
                20 * H,
            ]
            .into_iter()
            .map(Duration::from_secs)
            .collect(),
        )
    }

    /// A comma-separated list of waits with units (`ms`, `s`, `m`, `h`, `d`):
    /// `"5s,5m,30m,2h"`, or `"200ms,200ms"` in tests.
    pub fn parse(s: &str) -> Result<Self, String> {
        let waits = s
            .split(',')
            .map(|w| parse_duration(w.trim()))
            .collect::<Result<Vec<_>, _>>()?;
        if waits.is_empty() {
            return Err("the retry schedule needs at least one wait".into());
        }
        Ok(Self(waits))
    }

    /// The wait before the next attempt after `failed` attempts, with `jitter` in
    /// [-1, 1] scaling ±10 %; `None` once the schedule is spent.
    pub fn delay(&self, failed: i64, jitter: f64) -> Option<Duration> {
        let n = usize::try_from(failed).ok()?.checked_sub(1)?;
        let base = *self.0.get(n)?;
        let factor = 1.0 + 0.1 * jitter.clamp(-1.0, 1.0);
        Some(base.mul_f64(factor))
    }

    /// Attempts in all (the first and one per wait).
    pub fn attempts(&self) -> usize {
        self.0.len() + 1
    }

    /// The sum of the waits (without jitter).
    pub fn total(&self) -> Duration {
        self.0.iter().sum()
    }
}

/// `250ms`, `5s`, `5m`, `2h`, `3d`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let split = s
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("{s:?} has no unit (ms, s, m, h, d)"))?;
    let (n, unit) = s.split_at(split);
    let n: u64 = n.parse().map_err(|_| format!("{s:?} is not a number"))?;
    let ms = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(format!("{s:?}: unknown unit (ms, s, m, h, d)")),
    };
    Ok(Duration::from_millis(n.saturating_mul(ms)))
}

// ------------------------------------------------------------------ addresses

/// What an address is, for deciding whether webhooks may go there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpClass {
    /// Reachable on the internet.
    Public,
    /// 127.0.0.0/8, ::1.
    Loopback,
    /// 10/8, 172.16/12, 192.168/16 (and IPv6 site-local).
    Private,
    /// 169.254/16, fe80::/10.
    LinkLocal,
    /// fc00::/7.
    UniqueLocal,
    /// 100.64/10 (carrier-grade NAT).
    Cgnat,
    /// 0.0.0.0/8, ::.
    Unspecified,
    /// 224/4, ff00::/8, 255.255.255.255.
    Multicast,
    /// 169.254.169.254, the cloud metadata service (also link-local).
    Metadata,
    /// Documentation, benchmarking, protocol-assignment, reserved or tunnel ranges.
    Reserved,
}

impl IpClass {
    /// In words, for refusals.
    pub fn describe(self) -> &'static str {
        match self {
            IpClass::Public => "a public address",
            IpClass::Loopback => "a loopback address",
            IpClass::Private => "a private address",
            IpClass::LinkLocal => "a link-local address",
            IpClass::UniqueLocal => "a unique-local address",
            IpClass::Cgnat => "a carrier-grade NAT address",
            IpClass::Unspecified => "an unspecified address",
            IpClass::Multicast => "a multicast or broadcast address",
            IpClass::Metadata => "the cloud metadata address",
            IpClass::Reserved => "a reserved address",
        }
    }
}

fn classify_v4(ip: Ipv4Addr) -> IpClass {
    let [a, b, c, _] = ip.octets();
    if ip == Ipv4Addr::new(169, 254, 169, 254) {
        IpClass::Metadata
    } else if a == 127 {
        IpClass::Loopback
    } else if a == 10 || (a == 172 && (16..32).contains(&b)) || (a == 192 && b == 168) {
        IpClass::Private
    } else if a == 169 && b == 254 {
        IpClass::LinkLocal
    } else if a == 100 && (64..128).contains(&b) {
        IpClass::Cgnat
    } else if a == 0 {
        IpClass::Unspecified
    } else if a >= 224 {
        if a < 240 || ip == Ipv4Addr::BROADCAST {
            IpClass::Multicast
        } else {
            IpClass::Reserved
        }
    } else if (a == 192 && b == 0 && (c == 0 || c == 2))
        || (a == 198 && (b == 18 || b == 19))
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
    {
        IpClass::Reserved
    } else {
        IpClass::Public
    }
}

/// Which kind of address `ip` is; IPv4 inside IPv6 (mapped, NAT64, 6to4) is judged as
/// the IPv4 address.
pub fn classify(ip: IpAddr) -> IpClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return classify_v4(v4);
            }
            let s = v6.segments();
            if v6 == Ipv6Addr::LOCALHOST {
                IpClass::Loopback
            } else if v6 == Ipv6Addr::UNSPECIFIED {
                IpClass::Unspecified
            } else if s[0] & 0xff00 == 0xff00 {
                IpClass::Multicast
            } else if s[0] & 0xffc0 == 0xfe80 {
                IpClass::LinkLocal
            } else if s[0] & 0xffc0 == 0xfec0 {
                IpClass::Private
            } else if s[0] & 0xfe00 == 0xfc00 {
                IpClass::UniqueLocal
            } else if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
                let o = v6.octets();
                classify_v4(Ipv4Addr::new(o[12], o[13], o[14], o[15]))
            } else if s[0] == 0x2002 {
                classify_v4(Ipv4Addr::new(
                    (s[1] >> 8) as u8,
                    s[1] as u8,
                    (s[2] >> 8) as u8,
                    s[2] as u8,
                ))
            } else if (s[0] == 0x2001 && (s[1] == 0x0db8 || s[1] == 0)) || s[0] == 0 {
                // Documentation, Teredo, and the rest of ::/16 (IPv4-compatible, discard).
                IpClass::Reserved
            } else {
                IpClass::Public
            }
        }
    }
}

/// Which addresses besides public ones webhooks may reach: a process-wide choice of its
/// operator (`openrail serve` refuses every non-public address unless told; `openrail dev`
/// lets testnet endpoints reach loopback, a developer's machine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Targets {
    /// Public addresses only, in every mode (`serve`'s default: a hosted server must be
    /// neither a proxy into its own network nor a port scanner of its own host).
    Public,
    /// Also loopback for testnet endpoints, `http` allowed to it (`dev`, the test harness;
    /// the library's default).
    #[default]
    LoopbackOnTestnet,
    /// Also loopback, private, link-local, unique-local and carrier-grade NAT addresses,
    /// in every mode (`serve --allow-internal-webhook-targets`: receivers on the
    /// deployment's own network). The cloud metadata address stays refused.
    Internal,
}

/// Whether webhooks of `mode` may be sent to `ip` under `targets` (see [`Targets`]).
pub fn ip_allowed(targets: Targets, mode: Mode, ip: IpAddr) -> Result<(), String> {
    match (classify(ip), mode, targets) {
        (IpClass::Public, _, _)
        | (IpClass::Loopback, Mode::Testnet, Targets::LoopbackOnTestnet)
        | (
            IpClass::Loopback
            | IpClass::Private
            | IpClass::LinkLocal
            | IpClass::UniqueLocal
            | IpClass::Cgnat,
            _,
            Targets::Internal,
        ) => Ok(()),
        (class, _, _) => Err(format!(
            "{ip} is {}; {} endpoints must be public",
            class.describe(),
            mode.as_str()
        )),
    }
}

/// Checks an endpoint URL's form for `mode` (no DNS): mainnet `https` only; testnet also
/// `http` to `localhost` or a loopback address (when `targets` lets testnet reach
/// loopback); no credentials; an address written in the URL must be allowed
/// ([`ip_allowed`]). Returns the parsed URL, normalized (scheme and host lowercased, the
/// default port dropped, an empty path as `/`): the form endpoints are stored in.
pub fn check_url(targets: Targets, mode: Mode, url: &str) -> Result<Url, DeliveryError> {
    let refuse = |why: &str| DeliveryError::UrlRefused(why.to_string());
    if url.len() > 2048 {
        return Err(refuse("url is longer than 2048 characters"));
    }
    let parsed = Url::parse(url).map_err(|e| refuse(&format!("url is not a URL ({e})")))?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(refuse("url must not carry credentials"));
    }
    let host = parsed
        .host()
        .ok_or_else(|| refuse("url must name a host"))?;
    let literal: Option<IpAddr> = match &host {
        url::Host::Ipv4(v4) => Some(IpAddr::V4(*v4)),
        url::Host::Ipv6(v6) => Some(IpAddr::V6(*v6)),
        url::Host::Domain(_) => None,
    };
    let loopback_host = match (&host, literal) {
        (_, Some(ip)) => classify(ip) == IpClass::Loopback,
        (url::Host::Domain(d), None) => d.eq_ignore_ascii_case("localhost"),
        _ => false,
    };
    match (parsed.scheme(), mode) {
        ("https", _) => {}
        ("http", Mode::Testnet) if loopback_host && targets != Targets::Public => {}
        ("http", Mode::Testnet) => {
            return Err(refuse(
                "testnet endpoints must be https, or http to localhost or 127.0.0.1",
            ));
        }
        (_, Mode::Mainnet) => return Err(refuse("mainnet endpoints must be https")),
        (_, Mode::Testnet) => return Err(refuse("url must be https (or http to localhost)")),
    }
    if let Some(ip) = literal {
        ip_allowed(targets, mode, ip).map_err(DeliveryError::UrlRefused)?;
    }
    Ok(parsed)
}

/// The addresses among `addrs` that webhooks of `mode` may reach; an error naming the
/// first refused one when none may.
pub fn allowed_addrs(
    targets: Targets,
    mode: Mode,
    addrs: Vec<SocketAddr>,
) -> Result<Vec<SocketAddr>, String> {
    let mut refused = None;
    let ok: Vec<SocketAddr> = addrs
        .into_iter()
        .filter(|a| match ip_allowed(targets, mode, a.ip()) {
            Ok(()) => true,
            Err(why) => {
                refused.get_or_insert(why);
                false
            }
        })
        .collect();
    match (ok.is_empty(), refused) {
        (false, _) => Ok(ok),
        (true, Some(why)) => Err(why),
        (true, None) => Err("the host resolves to no address".into()),
    }
}

/// Checks an endpoint URL for `mode` now, DNS included: its form ([`check_url`]), and
/// every address its host resolves to must be allowed (at creation and update; sending
/// checks again through [`SafeResolver`]).
pub async fn check_endpoint(targets: Targets, mode: Mode, url: &str) -> Result<Url, DeliveryError> {
    let parsed = check_url(targets, mode, url)?;
    if let Some(url::Host::Domain(d)) = parsed.host() {
        let port = parsed.port_or_known_default().unwrap_or(443);
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((d, port))
            .await
            .map_err(|e| DeliveryError::UrlRefused(format!("url's host does not resolve ({e})")))?
            .collect();
        for a in &addrs {
            ip_allowed(targets, mode, a.ip()).map_err(|why| {
                DeliveryError::UrlRefused(format!("url's host {d} resolves to {why}"))
            })?;
        }
        if addrs.is_empty() {
            return Err(DeliveryError::UrlRefused(
                "url's host resolves to no address".into(),
            ));
        }
    }
    Ok(parsed)
}

/// The resolver of the webhook client: resolves a name and lets through only addresses
/// `mode` may reach, so the connection goes to an address that was checked (DNS
/// rebinding gets nothing past it).
#[derive(Debug, Clone, Copy)]
pub struct SafeResolver {
    /// Whose rules apply.
    pub mode: Mode,
    /// Which non-public addresses may be reached.
    pub targets: Targets,
}

impl SafeResolver {
    /// The allowed addresses of `host` (port 0: the client sets the URL's).
    pub async fn resolve_checked(self, host: &str) -> Result<Vec<SocketAddr>, String> {
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 0))
            .await
            .map_err(|e| format!("{host} does not resolve ({e})"))?
            .collect();
        allowed_addrs(self.targets, self.mode, addrs)
            .map_err(|why| format!("{host} resolves to {why}"))
    }
}

impl reqwest::dns::Resolve for SafeResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let this = *self;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs = this
                .resolve_checked(&host)
                .await
                .map_err(|why| -> Box<dyn std::error::Error + Send + Sync> { why.into() })?;
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

// ------------------------------------------------------------------ the deliverer

/// Most events one fan-out pass reads.
const FANOUT_PAGE: usize = 500;

/// Tunables of delivery.
#[derive(Debug, Clone)]
pub struct DeliveryOptions {
    /// Waits between attempts.
    pub schedule: RetrySchedule,
    /// An endpoint whose attempts have failed since this long ago (without a success
    /// between) is disabled at its next failure.
    pub disable_after: Duration,
    /// Timeout of one attempt (connection, request and answer).
    pub timeout: Duration,
    /// How often the fan-out and the sender look for work when there was none.
    pub poll: Duration,
    /// How long they wait after a pass that found some work but not a full load (fewer
    /// events than a page, every due delivery started): while events arrive one by one
    /// (a pull's are written as it happens), each pass takes those of a few milliseconds
    /// together instead of three reads per event.
    pub pace: Duration,
    /// Attempts in flight at once.
    pub concurrency: usize,
    /// Attempts in flight at once to one endpoint (a slow or backlogged endpoint does not
    /// hold up the others).
    pub per_endpoint: u32,
    /// How long the fan-out waits for a missing event number to commit (see
    /// [`Fanout`]).
    pub gap_grace: Duration,
    /// Which non-public addresses deliveries may reach (checked again at each send).
    pub targets: Targets,
}

impl Default for DeliveryOptions {
    fn default() -> Self {
        Self {
            schedule: RetrySchedule::standard(),
            disable_after: Duration::from_secs(5 * 86_400),
            timeout: Duration::from_secs(10),
            poll: Duration::from_millis(200),
            pace: Duration::from_millis(5),
            concurrency: 32,
            per_endpoint: 8,
            gap_grace: Duration::from_secs(300),
            targets: Targets::default(),
        }
    }
}

/// The deliveries this process is attempting, and those it finished lately. A read of
/// due deliveries that began before an attempt's outcome was committed may still show the
/// delivery due; it must not start it again (a second POST of a delivered event). Reads
/// are numbered; a delivery finished after read `r` began is not claimed by read `r`.
/// Sans-IO.
#[derive(Debug, Default)]
pub struct Claims {
    in_flight: HashSet<WebhookDeliveryId>,
    /// Delivery → the number of the last read begun when its attempt was recorded.
    finished: HashMap<WebhookDeliveryId, u64>,
    reads: u64,
}

impl Claims {
    /// A read of due deliveries begins; returns its number.
    pub fn begin_read(&mut self) -> u64 {
        self.reads += 1;
        self.reads
    }

    /// Whether read `read` may start an attempt of `id` (and marks it in flight).
    pub fn claim(&mut self, id: &WebhookDeliveryId, read: u64) -> bool {
        if self.finished.get(id).is_some_and(|f| *f >= read) {
            return false;
        }
        self.in_flight.insert(id.clone())
    }

    /// The attempt of `id` did not start after all.
    pub fn release(&mut self, id: &WebhookDeliveryId) {
        self.in_flight.remove(id);
    }

    /// The attempt of `id` is recorded (committed).
    pub fn finish(&mut self, id: &WebhookDeliveryId) {
        self.in_flight.remove(id);
        self.finished.insert(id.clone(), self.reads);
    }

    /// Read `read` is done: what finished before it began, it saw.
    pub fn forget_before(&mut self, read: u64) {
        self.finished.retain(|_, f| *f >= read);
    }
}

/// Renders an event as its webhook body: the JSON `GET /v1/events/{id}` answers (the API
/// renders it; this crate knows no HTTP representation). An error is logged and the
/// delivery skipped.
pub type Render =
    Arc<dyn Fn(&openrail_store::events::Event) -> Result<Vec<u8>, String> + Send + Sync>;

/// Delivers the webhooks of one mode. Runs in the lease holder of that mode's chain.
#[derive(Clone)]
pub struct Deliverer {
    store: Store,
    render: Render,
    mode: Mode,
    options: DeliveryOptions,
    client: reqwest::Client,
    claims: Arc<Mutex<Claims>>,
    slots: Arc<tokio::sync::Semaphore>,
}

impl std::fmt::Debug for Deliverer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deliverer")
            .field("mode", &self.mode)
            .finish()
    }
}

/// The HTTP client of webhooks of `mode`: no proxy, no redirects, addresses checked by
/// [`SafeResolver`], `timeout` per attempt.
pub fn client(targets: Targets, mode: Mode, timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(Arc::new(SafeResolver { mode, targets }))
        .timeout(timeout)
        .connect_timeout(timeout)
        .user_agent("Openrail-Webhooks/1")
        .build()
        .expect("a reqwest client with these settings builds")
}

/// The answer of one POST: its status, or why none came.
pub async fn post(
    client: &reqwest::Client,
    targets: Targets,
    mode: Mode,
    url: &str,
    headers: &[(&str, String)],
    body: Vec<u8>,
) -> Result<u16, String> {
    // Addresses written in the URL do not go through the resolver: checked here.
    check_url(targets, mode, url).map_err(|e| e.to_string())?;
    let mut req = client
        .post(url)
        .header("content-type", "application/json")
        .body(body);
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    let mut res = req.send().await.map_err(|e| {
        let mut msg = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            msg = format!("{msg}: {s}");
            source = s.source();
        }
        msg
    })?;
    let status = res.status().as_u16();
    let mut read = 0usize;
    while let Ok(Some(chunk)) = res.chunk().await {
        read += chunk.len();
        if read >= MAX_RESPONSE_BYTES {
            break;
        }
    }
    Ok(status)
}

impl Deliverer {
    /// A deliverer of `mode`'s webhooks on `store`, its bodies made by `render`.
    pub fn new(store: Store, render: Render, mode: Mode, options: DeliveryOptions) -> Self {
        let client = client(options.targets, mode, options.timeout);
        let slots = Arc::new(tokio::sync::Semaphore::new(options.concurrency.max(1)));
        Self {
            store,
            render,
            mode,
            options,
            client,
            claims: Default::default(),
            slots,
        }
    }

    /// Fans out and sends, forever (errors are logged and retried).
    pub async fn run(self) {
        let grace = i64::try_from(self.options.gap_grace.as_millis()).unwrap_or(i64::MAX);
        let mut fanout: Option<Fanout> = None;
        let mut cursor_written = Instant::now();
        loop {
            let mut read = 0;
            let mut started = 0;
            let free = self.slots.available_permits();
            match self.fan_out(&mut fanout, grace, &mut cursor_written).await {
                Ok(n) => read = n,
                Err(e) => {
                    tracing::warn!(error = %e, mode = self.mode.as_str(), "webhook fan-out failed; retrying");
                    fanout = None;
                }
            }
            match self.send_due().await {
                Ok(n) => started = n,
                Err(e) => {
                    tracing::warn!(error = %e, mode = self.mode.as_str(), "reading due webhook deliveries failed")
                }
            }
            if self.slots.available_permits() == 0 {
                // Every slot is taken: go on as soon as one attempt ends.
                drop(self.slots.acquire().await);
            } else if read >= FANOUT_PAGE || (started > 0 && started >= free) {
                // More is waiting than one pass took.
                tokio::task::yield_now().await;
            } else if read > 0 || started > 0 {
                tokio::time::sleep(self.options.pace).await;
            } else {
                tokio::time::sleep(self.options.poll).await;
            }
        }
    }

    /// One fan-out step; returns how many events it read. The cursor is written with
    /// deliveries, else at most once a second.
    async fn fan_out(
        &self,
        state: &mut Option<Fanout>,
        grace: i64,
        cursor_written: &mut Instant,
    ) -> Result<usize, StoreError> {
        let store = &self.store;
        if state.is_none() {
            *state = Some(Fanout::new(
                store.webhooks().cursor(self.mode).await?,
                grace,
            ));
        }
        let f = state.as_mut().expect("set above");
        let before = f.cursor();
        let heads = store
            .webhooks()
            .event_heads(f.after(), &f.gaps(), FANOUT_PAGE as u32)
            .await?;
        let seqs: Vec<i64> = heads.iter().map(|h| h.seq).collect();
        f.saw(&seqs, now_ms());
        if heads.is_empty() && f.cursor() == before {
            return Ok(0);
        }
        let (_, moved) = store
            .webhooks()
            .fan_out(
                self.mode,
                &heads,
                f.cursor(),
                now_ms(),
                cursor_written.elapsed() >= Duration::from_secs(1),
            )
            .await?;
        if moved {
            *cursor_written = Instant::now();
        }
        Ok(heads.len())
    }

    /// Starts an attempt of every due delivery not in flight; returns how many.
    async fn send_due(&self) -> Result<usize, StoreError> {
        let free = self.slots.available_permits();
        if free == 0 {
            return Ok(0);
        }
        let (read, busy) = {
            let mut c = self.claims.lock().expect("lock");
            (c.begin_read(), c.in_flight.len())
        };
        let limit = u32::try_from(free + busy).unwrap_or(256);
        let due = self
            .store
            .webhooks()
            .due_deliveries(self.mode, now_ms(), limit, self.options.per_endpoint)
            .await?;
        let mut started = 0;
        for d in due {
            if !self.claims.lock().expect("lock").claim(&d.id, read) {
                continue;
            }
            let Ok(permit) = self.slots.clone().try_acquire_owned() else {
                self.claims.lock().expect("lock").release(&d.id);
                break;
            };
            started += 1;
            let this = self.clone();
            tokio::spawn(async move {
                let id = d.id.clone();
                if let Err(e) = this.attempt(d).await {
                    tracing::warn!(error = %e, delivery = %id, "webhook attempt not recorded; it will be tried again");
                }
                this.claims.lock().expect("lock").finish(&id);
                drop(permit);
            });
        }
        self.claims.lock().expect("lock").forget_before(read);
        Ok(started)
    }

    /// One attempt of `d`, recorded.
    async fn attempt(&self, d: DueDelivery) -> Result<(), DeliveryError> {
        let store = &self.store;
        let scope = Scope {
            account_id: &d.account_id,
            mode: self.mode,
        };
        let event = store.events().get(scope, &d.event_id).await?;
        let body = match (self.render)(&event) {
            Ok(body) => body,
            Err(e) => {
                tracing::error!(error = %e, event = %d.event_id, "webhook event could not be rendered");
                return Ok(());
            }
        };
        let now = now_ms();
        let timestamp = now / 1000;
        let secrets = store.webhooks().secrets(&d.endpoint_id, now).await?;
        let signature = signature_header(&secrets, d.event_id.as_str(), timestamp, &body)?;
        let headers = [
            ("webhook-id", d.event_id.to_string()),
            ("webhook-timestamp", timestamp.to_string()),
            ("webhook-signature", signature),
        ];
        let started = Instant::now();
        let answer = post(
            &self.client,
            self.options.targets,
            self.mode,
            &d.url,
            &headers,
            body,
        )
        .await;
        let latency_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        let delivered = matches!(answer, Ok(code) if (200..300).contains(&code));
        let failed = d.attempts + 1;
        let jitter = rand::thread_rng().gen_range(-1.0..=1.0);
        let done = now_ms();
        let retry_at = self
            .options
            .schedule
            .delay(failed, jitter)
            .map(|w| done + i64::try_from(w.as_millis()).unwrap_or(i64::MAX / 2));
        let attempt = Attempt {
            delivered,
            status_code: answer.as_ref().ok().copied(),
            error: answer.as_ref().err().map(|e| truncate(e, 300)),
            latency_ms,
            retry_at,
        };
        tracing::debug!(delivery = %d.id, event = %d.event_id, delivered, status = ?attempt.status_code, error = ?attempt.error, "webhook attempt");
        let disable_after =
            i64::try_from(self.options.disable_after.as_millis()).unwrap_or(i64::MAX / 2);
        let recorded = store
            .webhooks()
            .record_attempt(&d.id, &attempt, done, disable_after)
            .await?;
        if recorded.endpoint_disabled {
            tracing::warn!(endpoint = %d.endpoint_id, "webhook endpoint disabled after failing for too long");
        }
        Ok(())
    }
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openrail_store::webhooks::new_secret;
    use proptest::prelude::*;

    /// The example of the Standard Webhooks specification's reference libraries
    /// (`MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw` as the secret, base64 of those bytes).
    #[test]
    fn signature_matches_the_reference_example() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let sig = sign(
            secret,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            br#"{"test": 2432232314}"#,
        )
        .unwrap();
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn a_rotation_signs_twice_separated_by_a_space() {
        let s = Secrets {
            current: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".into(),
            previous: Some("whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".into()),
        };
        let h = signature_header(&s, "evt_1", 5, b"{}").unwrap();
        let parts: Vec<&str> = h.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], sign(&s.current, "evt_1", 5, b"{}").unwrap());
        assert_eq!(
            parts[1],
            sign(s.previous.as_ref().unwrap(), "evt_1", 5, b"{}").unwrap()
        );
        assert!(sign("whsec_!!", "evt_1", 5, b"{}").is_err());
    }

    #[test]
    fn verify_accepts_either_signature_and_refuses_the_rest() {
        let (a, b) = (new_secret(), new_secret());
        let s = Secrets {
            current: a.clone(),
            previous: Some(b.clone()),
        };
        let header = signature_header(&s, "evt_1", 1_000, b"{}").unwrap();
        assert_eq!(
            verify(&a, "evt_1", "1000", &header, b"{}", 1_010, 300),
            Ok(())
        );
        assert_eq!(
            verify(&b, "evt_1", "1000", &header, b"{}", 1_010, 300),
            Ok(())
        );
        let other = new_secret();
        assert_eq!(
            verify(&other, "evt_1", "1000", &header, b"{}", 1_010, 300),
            Err(VerifyError::NoMatch)
        );
        assert_eq!(
            verify(&a, "evt_1", "1000", &header, b"{ }", 1_010, 300),
            Err(VerifyError::NoMatch)
        );
        assert_eq!(
            verify(&a, "evt_2", "1000", &header, b"{}", 1_010, 300),
            Err(VerifyError::NoMatch)
        );
        assert_eq!(
            verify(&a, "evt_1", "1000", &header, b"{}", 2_000, 300),
            Err(VerifyError::Stale(300))
        );
    }

    #[test]
    fn a_read_that_began_before_an_outcome_does_not_start_it_again() {
        let id = WebhookDeliveryId::new();
        let mut c = Claims::default();
        let r1 = c.begin_read();
        assert!(c.claim(&id, r1));
        assert!(!c.claim(&id, r1), "in flight");
        let r2 = c.begin_read(); // began while the attempt ran: may show it due
        c.finish(&id);
        assert!(!c.claim(&id, r2), "a stale read must not send it twice");
        c.forget_before(r2);
        let r3 = c.begin_read(); // began after the outcome: sees it
        assert!(
            c.claim(&id, r3),
            "a failed delivery is due again on a fresh read"
        );
        c.finish(&id);
        c.forget_before(r3);
        let r4 = c.begin_read();
        c.forget_before(r4);
        assert!(c.finished.is_empty());
    }

    #[test]
    fn the_standard_schedule_spans_about_three_days() {
        let s = RetrySchedule::standard();
        let h = s.total().as_secs_f64() / 3600.0;
        assert!((66.0..78.0).contains(&h), "{h} h");
        assert_eq!(s.delay(1, 0.0), Some(Duration::from_secs(5)));
        assert_eq!(s.delay(0, 0.0), None);
        assert_eq!(s.delay(s.attempts() as i64, 0.0), None);
        assert_eq!(
            RetrySchedule::parse("200ms, 1s,2m").unwrap(),
            RetrySchedule(vec![
                Duration::from_millis(200),
                Duration::from_secs(1),
                Duration::from_secs(120)
            ])
        );
        assert!(RetrySchedule::parse("5").is_err());
        assert!(RetrySchedule::parse("5y").is_err());
    }

    proptest! {
        /// Waits grow or stay along the standard schedule and jitter stays within ±10 %.
        #[test]
        fn jitter_stays_within_ten_percent(failed in 1i64..10, j in -1.0f64..=1.0) {
            let s = RetrySchedule::standard();
            let base = s.delay(failed, 0.0).unwrap();
            let d = s.delay(failed, j).unwrap();
            prop_assert!(d >= base.mul_f64(0.9) && d <= base.mul_f64(1.1));
            if failed > 1 {
                prop_assert!(s.delay(failed - 1, 0.0).unwrap() <= base);
            }
        }

        /// Any IPv4 address is judged the same written as IPv4 or IPv4-mapped IPv6.
        #[test]
        fn mapped_addresses_are_judged_as_ipv4(a: u8, b: u8, c: u8, d: u8) {
            let v4 = Ipv4Addr::new(a, b, c, d);
            prop_assert_eq!(classify(IpAddr::V4(v4)), classify(IpAddr::V6(v4.to_ipv6_mapped())));
        }
    }

    #[test]
    fn addresses_are_classified() {
        let c = |s: &str| classify(s.parse().unwrap());
        assert_eq!(c("127.0.0.1"), IpClass::Loopback);
        assert_eq!(c("::1"), IpClass::Loopback);
        assert_eq!(c("10.1.2.3"), IpClass::Private);
        assert_eq!(c("172.16.0.1"), IpClass::Private);
        assert_eq!(c("172.32.0.1"), IpClass::Public);
        assert_eq!(c("192.168.1.1"), IpClass::Private);
        assert_eq!(c("169.254.169.254"), IpClass::Metadata);
        assert_eq!(c("169.254.1.1"), IpClass::LinkLocal);
        assert_eq!(c("100.64.0.1"), IpClass::Cgnat);
        assert_eq!(c("100.128.0.1"), IpClass::Public);
        assert_eq!(c("0.0.0.0"), IpClass::Unspecified);
        assert_eq!(c("::"), IpClass::Unspecified);
        assert_eq!(c("224.0.0.1"), IpClass::Multicast);
        assert_eq!(c("255.255.255.255"), IpClass::Multicast);
        assert_eq!(c("fe80::1"), IpClass::LinkLocal);
        assert_eq!(c("fd00:ec2::254"), IpClass::UniqueLocal);
        assert_eq!(c("ff02::1"), IpClass::Multicast);
        assert_eq!(c("::ffff:169.254.169.254"), IpClass::Metadata);
        assert_eq!(c("64:ff9b::a00:1"), IpClass::Private);
        assert_eq!(c("2002:7f00:1::"), IpClass::Loopback);
        assert_eq!(c("8.8.8.8"), IpClass::Public);
        assert_eq!(c("2606:4700:4700::1111"), IpClass::Public);
    }

    #[test]
    fn urls_follow_the_mode() {
        let ok = |m, u| check_url(Targets::LoopbackOnTestnet, m, u).is_ok();
        assert!(ok(Mode::Testnet, "http://127.0.0.1:3000/hook"));
        assert!(ok(Mode::Testnet, "http://localhost:3000/hook"));
        assert!(ok(Mode::Testnet, "http://[::1]:3000/hook"));
        assert!(ok(Mode::Testnet, "https://example.com/hook"));
        assert!(!ok(Mode::Testnet, "http://example.com/hook"));
        assert!(!ok(Mode::Testnet, "http://10.0.0.1/hook"));
        assert!(!ok(Mode::Testnet, "https://169.254.169.254/latest"));
        assert!(!ok(Mode::Testnet, "ftp://127.0.0.1/"));
        assert!(ok(Mode::Mainnet, "https://example.com/hook"));
        assert!(!ok(Mode::Mainnet, "http://example.com/hook"));
        assert!(!ok(Mode::Mainnet, "https://127.0.0.1/hook"));
        assert!(!ok(Mode::Mainnet, "https://169.254.169.254/latest"));
        assert!(!ok(Mode::Mainnet, "https://[::ffff:10.0.0.1]/"));
        assert!(!ok(Mode::Mainnet, "https://user:pw@example.com/"));
        assert!(!ok(Mode::Mainnet, "not a url"));
    }

    /// `serve`'s default ([`Targets::Public`]) refuses loopback, private and link-local
    /// targets in every mode, testnet included; the operator's flag
    /// ([`Targets::Internal`]) allows them (never the metadata address).
    #[test]
    fn non_public_targets_follow_the_process_choice() {
        let ok = |t, m, u| check_url(t, m, u).is_ok();
        for url in [
            "http://127.0.0.1:3000/hook",
            "http://localhost:3000/hook",
            "https://127.0.0.1/hook",
            "https://10.0.0.1/hook",
            "https://192.168.1.1/hook",
            "https://169.254.1.1/hook",
            "https://[fe80::1]/hook",
            "https://[::ffff:127.0.0.1]/hook",
        ] {
            for mode in [Mode::Testnet, Mode::Mainnet] {
                assert!(!ok(Targets::Public, mode, url), "{url} {mode:?}");
            }
        }
        assert!(ok(Targets::Public, Mode::Testnet, "https://example.com/h"));
        for url in [
            "https://127.0.0.1/hook",
            "https://10.0.0.1/hook",
            "https://169.254.1.1/hook",
        ] {
            assert!(ok(Targets::Internal, Mode::Mainnet, url), "{url}");
        }
        assert!(!ok(
            Targets::Internal,
            Mode::Mainnet,
            "https://169.254.169.254/latest"
        ));
        let ip = "127.0.0.1".parse().unwrap();
        assert!(ip_allowed(Targets::Public, Mode::Testnet, ip).is_err());
        assert!(ip_allowed(Targets::LoopbackOnTestnet, Mode::Testnet, ip).is_ok());
        assert!(ip_allowed(Targets::LoopbackOnTestnet, Mode::Mainnet, ip).is_err());
    }

    /// The resolver of `serve`'s default refuses a name that resolves to loopback, testnet
    /// or not.
    #[tokio::test]
    async fn the_public_only_resolver_refuses_localhost() {
        let r = SafeResolver {
            mode: Mode::Testnet,
            targets: Targets::Public,
        };
        let err = r.resolve_checked("localhost").await.unwrap_err();
        assert!(err.contains("loopback"), "{err}");
    }

    /// Endpoints are stored as the parsed URL prints: one spelling per target.
    #[test]
    fn urls_are_normalized() {
        let n = |u| {
            check_url(Targets::LoopbackOnTestnet, Mode::Testnet, u)
                .unwrap()
                .to_string()
        };
        assert_eq!(n("HTTPS://Example.COM:443"), "https://example.com/");
        assert_eq!(
            n("https://example.com/a/../b?x=1"),
            "https://example.com/b?x=1"
        );
        assert_eq!(
            n("http://LOCALHOST:3000/hook"),
            "http://localhost:3000/hook"
        );
        assert_eq!(
            n("https://bücher.example/"),
            "https://xn--bcher-kva.example/"
        );
    }

    /// The send-time check: a name resolving to loopback is refused for mainnet by the
    /// resolver the client connects through, and a request to such a name fails before
    /// any connection (a listener on that port would see nothing).
    #[tokio::test]
    async fn sending_rechecks_what_a_name_resolves_to() {
        let mainnet = SafeResolver {
            mode: Mode::Mainnet,
            targets: Targets::LoopbackOnTestnet,
        };
        let err = mainnet.resolve_checked("localhost").await.unwrap_err();
        assert!(err.contains("loopback"), "{err}");
        let testnet = SafeResolver {
            mode: Mode::Testnet,
            targets: Targets::LoopbackOnTestnet,
        };
        assert!(testnet.resolve_checked("localhost").await.is_ok());

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = tokio::spawn(async move {
            tokio::time::timeout(Duration::from_millis(1500), listener.accept())
                .await
                .is_ok()
        });
        let c = client(
            Targets::LoopbackOnTestnet,
            Mode::Mainnet,
            Duration::from_secs(2),
        );
        // The form check alone would pass an https name; the resolver refuses it.
        let answer = post(
            &c,
            Targets::LoopbackOnTestnet,
            Mode::Mainnet,
            &format!("https://localhost:{port}/hook"),
            &[],
            b"{}".to_vec(),
        )
        .await;
        assert!(answer.is_err(), "{answer:?}");
        assert!(
            answer.as_ref().unwrap_err().contains("loopback"),
            "{answer:?}"
        );
        let answer = post(
            &c,
            Targets::LoopbackOnTestnet,
            Mode::Mainnet,
            &format!("https://127.0.0.1:{port}/hook"),
            &[],
            b"{}".to_vec(),
        )
        .await;
        assert!(answer.is_err(), "{answer:?}");
        assert!(!accepted.await.unwrap(), "no connection was made");
    }

    #[tokio::test]
    async fn redirects_are_not_followed_and_bodies_are_bounded() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf).await;
            let _ = s
                .write_all(b"HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:1/elsewhere\r\ncontent-length: 0\r\n\r\n")
                .await;
        });
        let c = client(
            Targets::LoopbackOnTestnet,
            Mode::Testnet,
            Duration::from_secs(2),
        );
        let answer = post(
            &c,
            Targets::LoopbackOnTestnet,
            Mode::Testnet,
            &format!("http://127.0.0.1:{port}/hook"),
            &[],
            b"{}".to_vec(),
        )
        .await;
        assert_eq!(answer, Ok(302));
    }
}
