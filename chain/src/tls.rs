//! The HTTP clients of everything that talks to a chain or an explorer: rustls with the
//! *ring* provider and Mozilla's root certificates compiled in (`webpki-roots`), so an
//! `https://` RPC URL (every public testnet's and mainnet's) works the same on a laptop and
//! in a container without the OS's certificate store.
//!
//! alloy's reqwest (0.13) came without any TLS backend: a provider made by
//! `ProviderBuilder::connect_http` could reach `http://` anvil but refused every `https://`
//! URL. It is now built with `rustls-no-provider`, which makes any client built without a
//! configuration (`reqwest::Client::new()`, `connect_http`) panic for want of a crypto
//! provider, so every client is made here, from one configuration that names its provider;
//! `clippy.toml` disallows the two other ways.

use std::sync::{Arc, OnceLock};

use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::transports::http::reqwest::{Client, ClientBuilder, Url};

use crate::ChainError;

/// TLS 1.2 and 1.3 through *ring*, trusting Mozilla's roots.
fn config() -> Result<rustls::ClientConfig, ChainError> {
    static CONFIG: OnceLock<rustls::ClientConfig> = OnceLock::new();
    if let Some(c) = CONFIG.get() {
        return Ok(c.clone());
    }
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| ChainError::Deployment(format!("TLS configuration: {e}")))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(CONFIG.get_or_init(|| config).clone())
}

/// A client builder that speaks TLS (and plain HTTP) with the configuration above.
pub fn client_builder() -> Result<ClientBuilder, ChainError> {
    Ok(Client::builder().tls_backend_preconfigured(config()?))
}

/// A client with the configuration above and reqwest's defaults otherwise.
pub fn client() -> Result<Client, ChainError> {
    client_builder()?
        .build()
        .map_err(|e| ChainError::Deployment(format!("HTTP client: {e}")))
}

/// A provider that reads `url` (no signer, no retries: tools and tests; the service's
/// providers come from [`crate::rpc::connect`]).
pub fn reader(url: &Url) -> Result<DynProvider, ChainError> {
    Ok(ProviderBuilder::new()
        .connect_reqwest(client()?, url.clone())
        .erased())
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    /// The first `N` bytes of the first connection to `listener` within 5 s (`None` when no
    /// client came: a client that fails before connecting).
    fn first_bytes<const N: usize>(listener: std::net::TcpListener) -> Option<[u8; N]> {
        listener.set_nonblocking(true).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut conn = loop {
            match listener.accept() {
                Ok((conn, _)) => break conn,
                Err(_) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                Err(_) => return None,
            }
        };
        conn.set_nonblocking(false).unwrap();
        conn.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut head = [0u8; N];
        conn.read_exact(&mut head).ok()?;
        Some(head)
    }

    /// The first 4 bytes the client made by [`super::client`] sends to a local listener
    /// when asked for `scheme://127.0.0.1:<port>/` (`None`: it never connected).
    async fn first_bytes_sent(scheme: &str) -> Option<[u8; 4]> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = std::thread::spawn(move || first_bytes::<4>(listener));
        let client = super::client().unwrap();
        // No answer comes (the listener reads, then hangs up): only the request matters.
        let _ = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            client.get(format!("{scheme}://127.0.0.1:{port}/")).send(),
        )
        .await;
        received.join().unwrap()
    }

    /// An `https://` URL is spoken to in TLS: the first bytes a local listener receives
    /// are a TLS handshake record (content type 22, version 3.x), not an error before any
    /// connection (what alloy's client without a TLS backend did).
    #[tokio::test]
    async fn https_urls_are_spoken_to_in_tls() {
        let head = first_bytes_sent("https")
            .await
            .expect("the client connected");
        assert_eq!(head[0], 22, "a TLS handshake record");
        assert_eq!(head[1], 3, "TLS major version 3");
    }

    /// And a plain `http://` URL (anvil) still works without TLS.
    #[tokio::test]
    async fn http_urls_are_plain() {
        let head = first_bytes_sent("http")
            .await
            .expect("the client connected");
        assert_eq!(&head, b"GET ");
    }
}
