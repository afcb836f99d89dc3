//! Webhook endpoints, their deliveries, and the verification of what they receive
//! (Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`).

use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::http::HasId;
use crate::{Client, Error, ListParams, Pages, RequestOptions};

/// A webhook endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebhookEndpoint {
    /// `we_…`.
    pub id: String,
    /// Where deliveries go.
    pub url: String,
    /// Event types it receives (`["*"]`: every type).
    pub enabled_events: Vec<String>,
    /// `enabled` or `disabled`.
    pub status: String,
    /// Free text.
    pub description: Option<String>,
    /// The signing secret (`whsec_…`), in the creation's and rotation's answers only.
    #[serde(default)]
    pub secret: Option<String>,
    /// Testnet or mainnet.
    pub livemode: bool,
    /// RFC 3339.
    pub created_at: String,
}

impl HasId for WebhookEndpoint {
    fn id(&self) -> &str {
        &self.id
    }
}

/// `POST /v1/webhook-endpoints`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CreateWebhookEndpoint {
    /// Where deliveries go (https and public on mainnet).
    pub url: String,
    /// Event types, or `["*"]`.
    pub enabled_events: Vec<String>,
    /// Free text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The webhook-endpoint routes (from [`Client::webhook_endpoints`]).
#[derive(Debug, Clone, Copy)]
pub struct WebhookEndpoints<'a>(pub(crate) &'a Client);

impl WebhookEndpoints<'_> {
    /// Creates an endpoint; its `secret` is in this answer only.
    pub async fn create(&self, e: &CreateWebhookEndpoint) -> Result<WebhookEndpoint, Error> {
        self.0
            .post("/v1/webhook-endpoints", e, &RequestOptions::default())
            .await
    }

    /// An endpoint.
    pub async fn get(&self, id: &str) -> Result<WebhookEndpoint, Error> {
        self.0.get(&format!("/v1/webhook-endpoints/{id}")).await
    }

    /// The endpoints, newest first.
    pub fn list(&self, params: ListParams) -> Pages<WebhookEndpoint> {
        self.0.pages("/v1/webhook-endpoints", params)
    }

    /// Deletes an endpoint.
    pub async fn delete(&self, id: &str) -> Result<serde_json::Value, Error> {
        self.0
            .delete(
                &format!("/v1/webhook-endpoints/{id}"),
                &RequestOptions::default(),
            )
            .await
    }
}

/// How far a webhook's timestamp may be from now, by default (seconds), as the reference
/// libraries allow.
pub const DEFAULT_TOLERANCE_S: i64 = 300;

/// Verifies a received webhook: `headers` are `webhook-id`, `webhook-timestamp` and
/// `webhook-signature` (one or more space-separated `v1,<base64>`), `body` the raw body
/// as received (verify before parsing it), `secret` the endpoint's `whsec_…`, `now_s`
/// the receiver's clock in unix seconds.
pub fn verify(
    secret: &str,
    id: &str,
    timestamp: &str,
    signature: &str,
    body: &[u8],
    now_s: i64,
) -> Result<(), Error> {
    let ts: i64 = timestamp
        .trim()
        .parse()
        .map_err(|_| Error::Webhook("webhook-timestamp is not unix seconds"))?;
    if (now_s - ts).abs() > DEFAULT_TOLERANCE_S {
        return Err(Error::Webhook("webhook-timestamp is too far from now"));
    }
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap_or(secret))
        .map_err(|_| Error::Webhook("the secret is not whsec_ and base64"))?;
    let mac = |key: &[u8]| {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(key).map_err(|_| Error::Webhook("empty secret"))?;
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(ts.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        Ok::<_, Error>(mac)
    };
    for candidate in signature.split(' ') {
        let Some(b64) = candidate.strip_prefix("v1,") else {
            continue;
        };
        let Ok(given) = base64::engine::general_purpose::STANDARD.decode(b64) else {
            continue;
        };
        // Constant-time comparison.
        if mac(&key)?.verify_slice(&given).is_ok() {
            return Ok(());
        }
    }
    Err(Error::Webhook("no signature matches"))
}

/// Signs as the API does (`v1,<base64>`): for tests of a receiver.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<String, Error> {
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap_or(secret))
        .map_err(|_| Error::Webhook("the secret is not whsec_ and base64"))?;
    let mut mac =
        Hmac::<Sha256>::new_from_slice(&key).map_err(|_| Error::Webhook("empty secret"))?;
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    Ok(format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    // The example of the Standard Webhooks specification's reference test suite.
    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const TS: i64 = 1614265330;
    const BODY: &[u8] = br#"{"test": 2432232314}"#;
    const EXPECTED: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    #[test]
    fn signs_as_the_specification_example() {
        assert_eq!(sign(SECRET, ID, TS, BODY).unwrap(), EXPECTED);
    }

    #[test]
    fn verifies_one_of_several_and_refuses_the_rest() {
        let ts = TS.to_string();
        verify(SECRET, ID, &ts, EXPECTED, BODY, TS).unwrap();
        verify(
            SECRET,
            ID,
            &ts,
            &format!("v1,bm9wZQ== {EXPECTED}"),
            BODY,
            TS + 299,
        )
        .unwrap();
        assert!(verify(SECRET, ID, &ts, EXPECTED, b"{\"test\": 1}", TS).is_err());
        assert!(verify(SECRET, "msg_other", &ts, EXPECTED, BODY, TS).is_err());
        assert!(verify(SECRET, ID, &ts, EXPECTED, BODY, TS + 301).is_err());
        assert!(verify(SECRET, ID, "soon", EXPECTED, BODY, TS).is_err());
        assert!(verify(SECRET, ID, &ts, &EXPECTED.replace("v1,", "v2,"), BODY, TS).is_err());
        assert!(verify("whsec_c2Vjb25k", ID, &ts, EXPECTED, BODY, TS).is_err());
    }
}
