//! Explorer verification of a deployment: the solc standard-JSON input of each contract
//! (committed in `chain/artifacts/standard-json/`, written by `cargo xtask artifacts`,
//! embedded in the binary so a deployed `openrail` needs no checkout), and submission to an
//! Etherscan-compatible API (`verifysourcecode`, then `checkverifystatus`) or to Sourcify
//! (`POST /v2/verify/{chainId}/{address}`, then `GET /v2/verify/{id}`).

use std::time::Duration;

use alloy::primitives::Address;
use alloy::transports::http::reqwest::Url;
use serde_json::{Value, json};

use crate::create2::Placed;

/// The compiler release the artifacts are built with, as explorers name it (the pinned
/// npm `solc`; the end-to-end test checks it against `scripts/solc --version`).
pub const SOLC_LONG_VERSION: &str = "0.8.30+commit.73712a01";

/// The standard-JSON input of artifact `name`, when it is one the service deploys.
pub fn standard_json_input(name: &str) -> Option<&'static str> {
    Some(match name {
        "AllowanceStateMachine" => {
            include_str!("../artifacts/standard-json/AllowanceStateMachine.json")
        }
        "SettlementRouter" => include_str!("../artifacts/standard-json/SettlementRouter.json"),
        "AttestationRegistry" => {
            include_str!("../artifacts/standard-json/AttestationRegistry.json")
        }
        "AttestationMirror" => include_str!("../artifacts/standard-json/AttestationMirror.json"),
        "TestStablecoin" => include_str!("../artifacts/standard-json/TestStablecoin.json"),
        "PasskeyWallet" => include_str!("../artifacts/standard-json/PasskeyWallet.json"),
        _ => return None,
    })
}

/// `path:Name` of an artifact, as both explorers identify a contract in its input.
pub fn contract_identifier(name: &str) -> String {
    format!("contracts/src/{name}.sol:{name}")
}

/// Where a verification goes.
#[derive(Debug, Clone)]
pub enum Verifier {
    /// An Etherscan-compatible API (Etherscan v2, Blockscout's, …): its URL and key.
    Etherscan {
        /// e.g. `https://api.etherscan.io/v2/api`.
        url: String,
        /// The API key.
        key: String,
    },
    /// A Sourcify server, e.g. `https://sourcify.dev/server`.
    Sourcify {
        /// Its base URL.
        url: String,
    },
}

/// Why a verification failed.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The explorer could not be reached or answered something unreadable.
    #[error("{0}")]
    Http(#[from] reqwest_error::Error),
    /// The explorer refused or failed the verification.
    #[error("{contract} at {address}: {message}")]
    Refused {
        /// The contract.
        contract: String,
        /// Where.
        address: Address,
        /// What the explorer said.
        message: String,
    },
    /// The HTTP client could not be made.
    #[error("{0}")]
    Client(#[from] crate::ChainError),
    /// No standard-JSON input for this artifact.
    #[error("no standard-JSON input for {0}")]
    UnknownArtifact(String),
}

mod reqwest_error {
    pub use alloy::transports::http::reqwest::Error;
}

/// Submits `placed` (on `chain_id`) to `verifier` and waits for the verdict (polling every
/// `poll`, at most `attempts` times). Returns the explorer's words: "verified", or
/// "already verified".
pub async fn verify(
    verifier: &Verifier,
    chain_id: u64,
    placed: &Placed,
    poll: Duration,
    attempts: u32,
) -> Result<String, VerifyError> {
    let name = placed.artifact();
    let input =
        standard_json_input(name).ok_or_else(|| VerifyError::UnknownArtifact(name.into()))?;
    let http = crate::tls::client()?;
    let refused = |message: String| VerifyError::Refused {
        contract: placed.name.clone(),
        address: placed.address,
        message,
    };
    match verifier {
        Verifier::Etherscan { url, key } => {
            let with_query = |pairs: &[(&str, &str)]| -> Result<Url, VerifyError> {
                let mut u: Url = url.parse().map_err(|e| refused(format!("{url}: {e}")))?;
                u.query_pairs_mut().extend_pairs(pairs);
                Ok(u)
            };
            let address = placed.address.to_string();
            let identifier = contract_identifier(name);
            let version = format!("v{SOLC_LONG_VERSION}");
            let args = alloy::hex::encode(&placed.constructor_args);
            // application/x-www-form-urlencoded, as a URL's query is encoded.
            let form = {
                let mut u: Url = "http://form/".parse().expect("a URL");
                u.query_pairs_mut().extend_pairs([
                    ("module", "contract"),
                    ("action", "verifysourcecode"),
                    ("apikey", key.as_str()),
                    ("codeformat", "solidity-standard-json-input"),
                    ("sourceCode", input),
                    ("contractaddress", &address),
                    ("contractname", &identifier),
                    ("compilerversion", &version),
                    // Etherscan's spelling.
                    ("constructorArguements", &args),
                ]);
                u.query().unwrap_or_default().to_string()
            };
            let submitted: Value = http
                .post(with_query(&[("chainid", &chain_id.to_string())])?)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(form)
                .send()
                .await?
                .json()
                .await?;
            let result = submitted["result"].as_str().unwrap_or_default().to_string();
            if submitted["status"] != "1" {
                if result.to_ascii_lowercase().contains("already verified") {
                    return Ok("already verified".into());
                }
                return Err(refused(result));
            }
            for _ in 0..attempts {
                tokio::time::sleep(poll).await;
                let status: Value = http
                    .get(with_query(&[
                        ("chainid", &chain_id.to_string()),
                        ("module", "contract"),
                        ("action", "checkverifystatus"),
                        ("guid", &result),
                        ("apikey", key),
                    ])?)
                    .send()
                    .await?
                    .json()
                    .await?;
                let verdict = status["result"].as_str().unwrap_or_default();
                if verdict.starts_with("Pass") {
                    return Ok("verified".into());
                }
                if verdict.to_ascii_lowercase().contains("already verified") {
                    return Ok("already verified".into());
                }
                if !verdict.to_ascii_lowercase().contains("pending") {
                    return Err(refused(verdict.to_string()));
                }
            }
            Err(refused("still pending; check the explorer later".into()))
        }
        Verifier::Sourcify { url } => {
            let url = url.trim_end_matches('/');
            let input: Value = serde_json::from_str(input).expect("committed JSON");
            let mut body = json!({
                "stdJsonInput": input,
                "compilerVersion": SOLC_LONG_VERSION,
                "contractIdentifier": contract_identifier(name),
            });
            if let Some(tx) = placed.tx_hash {
                body["creationTransactionHash"] = json!(tx);
            }
            let response = http
                .post(format!("{url}/v2/verify/{chain_id}/{}", placed.address))
                .json(&body)
                .send()
                .await?;
            if response.status().as_u16() == 409 {
                return Ok("already verified".into());
            }
            let status = response.status();
            let submitted: Value = response.json().await?;
            let Some(id) = submitted["verificationId"]
                .as_str()
                .filter(|_| status.is_success())
            else {
                return Err(refused(format!("{status} {submitted}")));
            };
            for _ in 0..attempts {
                tokio::time::sleep(poll).await;
                let job: Value = http
                    .get(format!("{url}/v2/verify/{id}"))
                    .send()
                    .await?
                    .json()
                    .await?;
                if job["isJobCompleted"] != true {
                    continue;
                }
                return match job["contract"]["match"].as_str() {
                    Some("exact_match" | "match") => Ok("verified".into()),
                    _ => Err(refused(job["error"].to_string())),
                };
            }
            Err(refused("still pending; check Sourcify later".into()))
        }
    }
}
