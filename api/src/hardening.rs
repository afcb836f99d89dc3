//! The hosted web surface's defences that are not a route's: the headers of every answer,
//! the client address behind trusted proxies, the common-password list, and the one-time
//! carrier of a new API key's secret from the dashboard's POST to its GET.
//!
//! - Headers ([`security_headers`], outermost layer): every answer `nosniff`; JSON and
//!   problem+json answers `Cache-Control: no-store` and `Referrer-Policy: no-referrer`
//!   (an answer may carry a secret; none is meant for a cache); every 401
//!   `WWW-Authenticate: Bearer` (RFC 6750, `error="invalid_token"` when a credential was
//!   sent). Pages get their policy from the dashboard's layer and `/docs`'s handler.
//! - The client address ([`client_ip`]): the peer's address, or — only when the peer is a
//!   configured trusted proxy — the nearest address in `Forwarded` / `X-Forwarded-For`
//!   that is not a trusted proxy. A client cannot choose its address by sending a header.

use std::net::{IpAddr, SocketAddr};
use std::sync::OnceLock;

use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

// ------------------------------------------------------------------ headers

/// Adds the headers every answer carries (see the module docs).
pub async fn security_headers(req: Request, next: Next) -> Response {
    let sent_credential = req.headers().contains_key(header::AUTHORIZATION);
    let mut res = next.run(req).await;
    let json = res.headers().get(header::CONTENT_TYPE).is_some_and(|v| {
        let v = v.as_bytes();
        v.starts_with(b"application/json") || v.starts_with(b"application/problem+json")
    });
    let unauthorized = res.status() == StatusCode::UNAUTHORIZED;
    let h = res.headers_mut();
    h.entry(header::X_CONTENT_TYPE_OPTIONS)
        .or_insert(HeaderValue::from_static("nosniff"));
    if json {
        h.entry(header::CACHE_CONTROL)
            .or_insert(HeaderValue::from_static("no-store"));
        h.entry(header::REFERRER_POLICY)
            .or_insert(HeaderValue::from_static("no-referrer"));
        if unauthorized {
            h.entry(header::WWW_AUTHENTICATE)
                .or_insert(HeaderValue::from_static(if sent_credential {
                    "Bearer realm=\"openrail\", error=\"invalid_token\""
                } else {
                    "Bearer realm=\"openrail\""
                }));
        }
    }
    res
}

// ------------------------------------------------------------------ client address

/// The addresses (CIDR blocks) of the reverse proxies in front of this server, whose
/// `Forwarded` / `X-Forwarded-For` headers are believed. Empty: none are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<(IpAddr, u8)>);

impl TrustedProxies {
    /// Parses `10.0.0.0/8, 127.0.0.1, ::1/128` (a bare address is one host).
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (addr, len) = match part.split_once('/') {
                Some((a, l)) => (a, Some(l)),
                None => (part, None),
            };
            let ip: IpAddr = addr
                .parse()
                .map_err(|_| format!("{part:?} is not an address or CIDR block"))?;
            let max = if ip.is_ipv4() { 32 } else { 128 };
            let len = match len {
                None => max,
                Some(l) => l
                    .parse::<u8>()
                    .ok()
                    .filter(|l| *l <= max)
                    .ok_or_else(|| format!("{part:?} has no valid prefix length"))?,
            };
            out.push((ip, len));
        }
        Ok(Self(out))
    }

    /// Whether `ip` is one of the proxies (IPv4-mapped IPv6 compared as IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|(net, len)| match (canonical(*net), ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => prefix_eq(&n.octets(), &a.octets(), *len),
            (IpAddr::V6(n), IpAddr::V6(a)) => prefix_eq(&n.octets(), &a.octets(), *len),
            _ => false,
        })
    }

    /// Whether no proxy is trusted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

fn prefix_eq(a: &[u8], b: &[u8], len: u8) -> bool {
    let (whole, rest) = (usize::from(len / 8), len % 8);
    if a[..whole] != b[..whole] {
        return false;
    }
    if rest == 0 {
        return true;
    }
    let mask = 0xffu8 << (8 - rest);
    a[whole] & mask == b[whole] & mask
}

/// The addresses a request passed through, as its proxies wrote them, nearest last:
/// `Forwarded`'s `for=` when present, else `X-Forwarded-For`. Entries that are not an
/// address (`unknown`, obfuscated names) end the list: nothing before them is believed.
fn forwarded_chain(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let forwarded: Vec<&str> = headers
        .get_all(header::FORWARDED)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    if !forwarded.is_empty() {
        return forwarded
            .iter()
            .flat_map(|v| v.split(','))
            .map(|element| {
                element
                    .split(';')
                    .filter_map(|pair| pair.trim().split_once('='))
                    .find(|(k, _)| k.eq_ignore_ascii_case("for"))
                    .and_then(|(_, v)| parse_node(v.trim().trim_matches('"')))
            })
            .collect();
    }
    headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|a| parse_node(a.trim()))
        .collect()
}

/// `192.0.2.1`, `192.0.2.1:443`, `[2001:db8::1]`, `[2001:db8::1]:443`, `2001:db8::1`.
fn parse_node(s: &str) -> Option<IpAddr> {
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Ok(sa) = s.parse::<SocketAddr>() {
        return Some(sa.ip());
    }
    s.strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .and_then(|(ip, _)| ip.parse().ok())
}

/// The client's address: `peer` unless it is a trusted proxy; then, walking the
/// forwarded addresses from the nearest, the first that is not a trusted proxy (or the
/// farthest one, when every one is). An entry that is not an address stops the walk at
/// the last address believed.
pub fn client_ip(peer: IpAddr, headers: &HeaderMap, trusted: &TrustedProxies) -> IpAddr {
    if !trusted.contains(peer) {
        return peer;
    }
    let mut client = peer;
    for hop in forwarded_chain(headers).into_iter().rev() {
        let Some(ip) = hop else { break };
        client = ip;
        if !trusted.contains(ip) {
            break;
        }
    }
    client
}

/// The client address of a request as a string (`unknown` without connection info, as
/// in-process calls have).
pub fn client_address(
    conn: Option<&ConnectInfo<SocketAddr>>,
    headers: &HeaderMap,
    trusted: &TrustedProxies,
) -> String {
    conn.map(|c| client_ip(c.0.ip(), headers, trusted).to_string())
        .unwrap_or_else(|| "unknown".to_string())
}

// ------------------------------------------------------------------ passwords

/// The 10,000 most common passwords of at least 10 characters (origin and licence:
/// `api/assets/common-passwords/README.md`).
const COMMON_PASSWORDS: &str = include_str!("../assets/common-passwords/top-10k-min-10-chars.txt");

/// Whether `password` (compared without case) is on the common-password list.
pub fn is_common_password(password: &str) -> bool {
    static SET: OnceLock<std::collections::HashSet<String>> = OnceLock::new();
    SET.get_or_init(|| {
        COMMON_PASSWORDS
            .lines()
            .map(|l| l.trim().to_lowercase())
            .filter(|l| !l.is_empty())
            .collect()
    })
    .contains(&password.to_lowercase())
}

// ------------------------------------------------------------------ a new key's secret

/// The cookie that carries a new API key's secret from `POST /dashboard/keys` to the
/// `GET /dashboard` it redirects to (post/redirect/get: reloading the page shows the key
/// list, never mints a second key). Sealed under the session cookie's secret, which the
/// server does not store: only the browser holding that session can have it opened, by
/// any process of the deployment; read once (the GET clears it) and valid a minute.
pub const NEW_KEY_COOKIE: &str = "openrail_new_key";

type HmacSha256 = Hmac<Sha256>;

fn mac(session_secret: &str, label: &[u8], parts: &[&[u8]]) -> HmacSha256 {
    let mut m = <HmacSha256 as Mac>::new_from_slice(session_secret.as_bytes())
        .expect("HMAC takes any key length");
    m.update(label);
    for p in parts {
        m.update(&(p.len() as u64).to_be_bytes());
        m.update(p);
    }
    m
}

fn keystream_xor(session_secret: &str, nonce: &[u8], data: &mut [u8]) {
    for (i, chunk) in data.chunks_mut(32).enumerate() {
        let block = mac(
            session_secret,
            b"openrail new-key stream",
            &[nonce, &(i as u64).to_be_bytes()],
        )
        .finalize()
        .into_bytes();
        for (b, k) in chunk.iter_mut().zip(block.iter()) {
            *b ^= k;
        }
    }
}

/// Seals `key_id` and `secret` for the browser of `session_secret`, until `expires_ms`.
pub fn seal_new_key(session_secret: &str, key_id: &str, secret: &str, expires_ms: i64) -> String {
    let mut nonce = [0u8; 16];
    rand::RngCore::fill_bytes(&mut rand::thread_rng(), &mut nonce);
    let mut body = format!("{expires_ms}\n{key_id}\n{secret}").into_bytes();
    keystream_xor(session_secret, &nonce, &mut body);
    let tag = mac(session_secret, b"openrail new-key tag", &[&nonce, &body])
        .finalize()
        .into_bytes();
    let mut out = nonce.to_vec();
    out.extend_from_slice(&tag);
    out.extend_from_slice(&body);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(out)
}

/// The key id and secret sealed by [`seal_new_key`] for this session, unless tampered
/// with, sealed for another session, or expired at `now_ms`.
pub fn open_new_key(session_secret: &str, sealed: &str, now_ms: i64) -> Option<(String, String)> {
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(sealed)
        .ok()?;
    if raw.len() < 48 {
        return None;
    }
    let (nonce, rest) = raw.split_at(16);
    let (tag, body) = rest.split_at(32);
    mac(session_secret, b"openrail new-key tag", &[nonce, body])
        .verify_slice(tag)
        .ok()?;
    let mut body = body.to_vec();
    keystream_xor(session_secret, nonce, &mut body);
    let text = String::from_utf8(body).ok()?;
    let mut parts = text.splitn(3, '\n');
    let expires: i64 = parts.next()?.parse().ok()?;
    let (id, secret) = (parts.next()?, parts.next()?);
    (now_ms < expires).then(|| (id.to_string(), secret.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for (k, v) in pairs {
            m.append(*k, HeaderValue::from_str(v).unwrap());
        }
        m
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn forwarded_headers_count_only_from_trusted_proxies() {
        let none = TrustedProxies::default();
        let lb = TrustedProxies::parse("10.0.0.0/8, ::1").unwrap();
        let spoof = h(&[("x-forwarded-for", "203.0.113.9")]);
        // Anyone else's header is ignored: the peer is the client.
        assert_eq!(
            client_ip(ip("198.51.100.7"), &spoof, &none),
            ip("198.51.100.7")
        );
        assert_eq!(
            client_ip(ip("198.51.100.7"), &spoof, &lb),
            ip("198.51.100.7")
        );
        assert_eq!(client_ip(ip("10.0.0.2"), &spoof, &none), ip("10.0.0.2"));
        // From the proxy: the nearest untrusted hop, so a client prepending its own
        // entry changes nothing.
        let chain = h(&[("x-forwarded-for", "1.2.3.4, 203.0.113.9, 10.0.0.3")]);
        assert_eq!(client_ip(ip("10.0.0.2"), &chain, &lb), ip("203.0.113.9"));
        let fwd = h(&[(
            "forwarded",
            "for=1.2.3.4, for=\"[2001:db8::7]:4711\";proto=https",
        )]);
        assert_eq!(client_ip(ip("::1"), &fwd, &lb), ip("2001:db8::7"));
        assert_eq!(
            client_ip(
                ip("::ffff:10.1.1.1"),
                &h(&[("x-forwarded-for", "198.51.100.1")]),
                &lb
            ),
            ip("198.51.100.1")
        );
        // An entry that is no address stops the walk.
        let junk = h(&[("x-forwarded-for", "1.2.3.4, unknown")]);
        assert_eq!(client_ip(ip("10.0.0.2"), &junk, &lb), ip("10.0.0.2"));
        // No header: the proxy itself.
        assert_eq!(client_ip(ip("10.0.0.2"), &h(&[]), &lb), ip("10.0.0.2"));
    }

    #[test]
    fn trusted_proxies_parse_cidr_blocks() {
        let t = TrustedProxies::parse("192.168.0.0/16,2001:db8::/32,127.0.0.1").unwrap();
        assert!(t.contains(ip("192.168.200.1")));
        assert!(!t.contains(ip("192.169.0.1")));
        assert!(t.contains(ip("2001:db8:1::5")));
        assert!(t.contains(ip("127.0.0.1")));
        assert!(!t.contains(ip("127.0.0.2")));
        assert!(TrustedProxies::parse("").unwrap().is_empty());
        for bad in ["10.0.0.0/33", "nonsense", "::/129", "1.2.3.4/x"] {
            assert!(TrustedProxies::parse(bad).is_err(), "{bad}");
        }
        assert!(
            TrustedProxies::parse("10.0.0.0/12")
                .unwrap()
                .contains(ip("10.15.255.255"))
        );
        assert!(
            !TrustedProxies::parse("10.0.0.0/12")
                .unwrap()
                .contains(ip("10.16.0.0"))
        );
    }

    #[test]
    fn common_passwords_are_known_without_case() {
        assert!(is_common_password("qwertyuiop"));
        assert!(is_common_password("1234567890"));
        assert!(is_common_password("PASSWORD123"));
        assert!(!is_common_password("violet tractor ninety pebbles"));
        assert_eq!(COMMON_PASSWORDS.lines().count(), 10_000);
    }

    #[test]
    fn a_sealed_key_opens_once_for_its_session_only() {
        let sealed = seal_new_key("session-a", "key_123", "sk_testnet_abc", 2_000);
        assert_eq!(
            open_new_key("session-a", &sealed, 1_000),
            Some(("key_123".into(), "sk_testnet_abc".into()))
        );
        assert_eq!(open_new_key("session-b", &sealed, 1_000), None);
        assert_eq!(open_new_key("session-a", &sealed, 2_000), None, "expired");
        let mut tampered = sealed.into_bytes();
        let last = tampered.len() - 1;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(
            open_new_key("session-a", &String::from_utf8(tampered).unwrap(), 1_000),
            None
        );
        assert_eq!(open_new_key("session-a", "", 1_000), None);
        assert!(!seal_new_key("s", "k", "sk_testnet_abc", 1).contains("sk_testnet"));
    }
}
