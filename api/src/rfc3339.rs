//! Times as the API writes them: RFC 3339 in UTC. A leaf module (errors and renderings
//! both use it).

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// RFC 3339 UTC of unix milliseconds.
pub fn rfc3339_ms(ms: i64) -> String {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_default()
}

/// RFC 3339 UTC of unix seconds.
pub fn rfc3339_s(s: i64) -> String {
    rfc3339_ms(s.saturating_mul(1000))
}
