//! The Rust SDK (`openrail-client`) against a real server: the agentic flow from a payer's
//! signature to a decline and a revocation, an agent-signed key, a payment, paging,
//! idempotent retries and a webhook verified as received.

use alloy::primitives::{Address, U256, keccak256};
use alloy::signers::local::PrivateKeySigner;
use openrail_chain::devnet::{dev_demo_payer, dev_spare};
use openrail_client::agentic::{CreateMandate, CreatePull, CreateSessionKey};
use openrail_client::payments::{CreatePayment, Destination, Source};
use openrail_client::signing::{PullTerms, sign_pull, sign_typed_data};
use openrail_client::{Client, ListParams, RequestOptions};
use openrail_tests::Harness;

fn client(h: &Harness) -> Client {
    Client::new(h.server().api_key.clone()).base_url(h.server().base_url.clone())
}

/// Waits until the mandate is active (its transaction mined).
async fn active(c: &Client, id: &str) -> anyhow::Result<openrail_client::agentic::Mandate> {
    for _ in 0..100 {
        let m = c.agentic().mandate(id).await?;
        if m.status == "active" {
            return Ok(m);
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    anyhow::bail!("mandate {id} never became active")
}

/// A wallet mandate of `max_amount` per `interval` to `payees` (none: the account's
/// settlement wallet), signed by `payer` and active.
async fn signed_mandate(
    c: &Client,
    payer: &PrivateKeySigner,
    max_amount: &str,
    interval: &str,
    payees: Option<Vec<String>>,
) -> anyhow::Result<openrail_client::agentic::Mandate> {
    let created = c
        .agentic()
        .create_mandate(&CreateMandate {
            payer_account_id: payer.address().to_string(),
            max_amount: max_amount.into(),
            currency: "USD".into(),
            interval: interval.into(),
            purpose: None,
            payees,
            agent: None,
            requirements: None,
        })
        .await?;
    let typed = created
        .authorization
        .and_then(|a| a.typed_data)
        .expect("typed data");
    c.agentic()
        .authorize_mandate(&created.id, &sign_typed_data(payer, &typed)?)
        .await?;
    active(c, &created.id).await
}

#[tokio::test]
async fn the_agentic_flow_through_the_sdk() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let c = client(&h);

    // A wallet mandate needs the payer's signature of its typed data.
    let created = c
        .agentic()
        .create_mandate(&CreateMandate {
            payer_account_id: payer.address().to_string(),
            max_amount: "100.00".into(),
            currency: "usd".into(),
            interval: "daily".into(),
            purpose: Some("sdk test".into()),
            payees: Some(vec![dev_spare().address().to_string()]),
            agent: None,
            requirements: None,
        })
        .await?;
    assert_eq!(created.status, "requires_authorization");
    assert_eq!(created.currency, "USD");
    let typed = created
        .authorization
        .as_ref()
        .and_then(|a| a.typed_data.clone())
        .expect("typed data to sign");
    // Another key's signature is refused, with its code.
    let wrong = sign_typed_data(&PrivateKeySigner::random(), &typed)?;
    let err = c
        .agentic()
        .authorize_mandate(&created.id, &wrong)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("signature_invalid"), "{err}");
    let signature = sign_typed_data(&payer, &typed)?;
    c.agentic()
        .authorize_mandate(&created.id, &signature)
        .await?;
    let mandate = active(&c, &created.id).await?;
    assert_eq!(
        mandate.current_epoch.as_ref().map(|e| e.remaining.as_str()),
        Some("100.00")
    );

    // A key with its own ceiling; its secret is the agent's credential.
    let key = c
        .agentic()
        .create_session_key(&CreateSessionKey {
            mandate_id: mandate.id.clone(),
            expires_in: 3600,
            max_amount: Some("30".into()),
            ..Default::default()
        })
        .await?;
    assert_eq!(key.status, "active");
    let agent = Client::new(key.secret.clone().expect("secret at creation"))
        .base_url(h.server().base_url.clone());

    // Pulls by the agent, each with a fresh idempotency key; then one above the ceiling.
    for _ in 0..2 {
        let pull = agent
            .agentic()
            .create_pull(&CreatePull {
                session_key_id: key.id.clone(),
                amount: "12.50".into(),
                ..Default::default()
            })
            .await?;
        assert_eq!(pull.status, "authorized", "{pull:?}");
        assert_eq!(pull.amount, "12.50");
    }
    let err = agent
        .agentic()
        .create_pull(&CreatePull {
            session_key_id: key.id.clone(),
            amount: "10".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    let problem = err.problem().expect("a problem");
    assert_eq!(problem.code, "allowance_exceeded");
    assert_eq!(problem.status, 422);
    assert_eq!(problem.remaining.as_deref(), Some("5.00"));
    let declined = c
        .agentic()
        .pull(problem.pull_id.as_deref().expect("pull_id"))
        .await?;
    assert_eq!(declined.status, "declined");
    assert_eq!(declined.decline_code.as_deref(), Some("allowance_exceeded"));

    // The same idempotency key twice: one pull, replayed.
    let once = RequestOptions {
        idempotency_key: Some("sdk-test-replay-1".into()),
    };
    let small = CreatePull {
        session_key_id: key.id.clone(),
        amount: "1".into(),
        ..Default::default()
    };
    let first = agent.agentic().create_pull_with(&small, &once).await?;
    let again = agent.agentic().create_pull_with(&small, &once).await?;
    assert_eq!(first.id, again.id);

    // Paging: a page size of 1 still yields every pull of the key, newest first.
    let pulls = c
        .agentic()
        .pulls(
            ListParams::default()
                .filter("session_key_id", &key.id)
                .limit(1),
        )
        .collect()
        .await?;
    assert_eq!(pulls.len(), 4, "{pulls:?}");
    assert_eq!(pulls[0].id, first.id);
    assert_eq!(pulls.iter().filter(|p| p.status == "declined").count(), 1);

    // Revoked: the next pull is refused with its code.
    let revoked = c.agentic().revoke_session_key(&key.id).await?;
    assert!(
        revoked.status == "revoked" || revoked.status == "active",
        "{revoked:?}"
    );
    // Revoking waits for the chain (or answers 202 while pending): the key is revoked
    // once its transaction is mined.
    for _ in 0..100 {
        if c.agentic().session_key(&key.id).await?.status == "revoked" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // The account's pull on the revoked key is declined with its code; the agent's secret
    // is no credential any more.
    let err = c.agentic().create_pull(&small).await.unwrap_err();
    assert_eq!(err.code(), Some("session_key_revoked"), "{err}");
    let err = agent.agentic().create_pull(&small).await.unwrap_err();
    assert_eq!(err.code(), Some("unauthenticated"), "{err}");
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn an_agent_signs_its_pulls_and_a_payment_moves_as_signed() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let c = client(&h);
    let dest = Address::from_slice(&keccak256("sdk-agent-payee")[12..]).to_string();
    let mandate = signed_mandate(&c, &payer, "50", "weekly", Some(vec![dest.clone()])).await?;
    assert_eq!(
        mandate.payees,
        [Address::from_slice(&keccak256("sdk-agent-payee")[12..]).to_checksum(None)]
    );

    let agent = PrivateKeySigner::random();
    let key = c
        .agentic()
        .create_session_key(&CreateSessionKey {
            mandate_id: mandate.id.clone(),
            expires_in: 600,
            signer: Some(agent.address().to_string()),
            ..Default::default()
        })
        .await?;
    // The key's agent credential: issued once, read back, verified.
    let vc = c.agentic().issue_agent_credential(&key.id).await?;
    assert_eq!(vc["type"][1], "AgentCredential", "{vc}");
    assert_eq!(
        vc["credentialSubject"]["id"],
        format!(
            "did:pkh:eip155:{}:{}",
            h.settlement_deployment().chain_id,
            agent.address().to_checksum(None)
        )
    );
    assert_eq!(vc["credentialSubject"]["sessionKey"], key.id);
    assert_eq!(c.agentic().issue_agent_credential(&key.id).await?, vc);
    assert_eq!(c.agentic().agent_credential(&key.id).await?, vc);
    assert!(c.identity().verify_credential(&vc).await?.verified);
    let domain = key
        .eip712_domain
        .clone()
        .expect("a signer's key has a domain");
    let onchain = key.onchain.clone().expect("on chain");
    let deadline = h.chain_time().await? + 600;
    let terms = PullTerms {
        domain: &domain,
        key_onchain_id: &onchain.id,
        destination: &dest,
        amount: "5.00",
        nonce: 7,
        deadline,
    };
    let pull = CreatePull {
        session_key_id: key.id.clone(),
        amount: "5.00".into(),
        destination: Some(dest.clone()),
        signature: Some(sign_pull(&agent, &terms)?),
        nonce: Some(7),
        deadline: Some(deadline),
        ..Default::default()
    };
    assert_eq!(c.agentic().create_pull(&pull).await?.status, "authorized");
    // Someone else's signature of the same terms is refused on chain's rules.
    let forged = CreatePull {
        signature: Some(sign_pull(
            &PrivateKeySigner::random(),
            &PullTerms {
                nonce: 8,
                ..terms.clone()
            },
        )?),
        nonce: Some(8),
        ..pull.clone()
    };
    let err = c.agentic().create_pull(&forged).await.unwrap_err();
    assert_eq!(err.code(), Some("signature_invalid"), "{err}");

    // A wallet payment, signed by the payer.
    let payee = Address::from_slice(&keccak256("sdk-payee")[12..]);
    let payment = c
        .payments()
        .create(&CreatePayment {
            amount: "12.50".into(),
            currency: "USD".into(),
            source: Source::Wallet {
                id: payer.address().to_string(),
            },
            destination: Destination::Wallet {
                address: payee.to_string(),
            },
        })
        .await?;
    assert_eq!(payment.status, "requires_authorization");
    let typed = payment
        .authorization
        .clone()
        .and_then(|a| a.typed_data)
        .expect("typed data");
    let done = c
        .payments()
        .authorize(&payment.id, &sign_typed_data(&payer, &typed)?)
        .await?;
    assert_eq!(done.status, "succeeded", "{done:?}");
    assert_eq!(h.balance("USD", payee).await?, U256::from(12_500_000u64));
    // Past its payer's signature, it cannot be withdrawn.
    let err = c.payments().cancel(&payment.id).await.unwrap_err();
    assert_eq!(err.code(), Some("payment_not_cancelable"), "{err:?}");
    // One still waiting for its payer is withdrawn.
    let waiting = c
        .payments()
        .create(&CreatePayment {
            amount: "1".into(),
            currency: "USD".into(),
            source: Source::Wallet {
                id: payer.address().to_string(),
            },
            destination: Destination::Wallet {
                address: payee.to_string(),
            },
        })
        .await?;
    let canceled = c.payments().cancel(&waiting.id).await?;
    assert_eq!(canceled.status, "canceled", "{canceled:?}");

    // Events of that payment, through the pager.
    let events = c
        .events()
        .list(ListParams::default().filter("object_id", &payment.id))
        .collect()
        .await?;
    assert!(
        events.iter().any(|e| e.kind == "payment.succeeded"),
        "{events:?}"
    );

    // The account's settings: where its payments settle.
    let account = c.account().get().await?;
    assert_eq!(account.payments_chain, "settlement");
    assert_eq!(account.chains.len(), 2, "{account:?}");
    let account = c
        .account()
        .update(&openrail_client::account::UpdateAccount {
            payments_chain: Some("attestation".into()),
        })
        .await?;
    assert_eq!(account.payments_chain, "attestation");
    let refused = c
        .account()
        .update(&openrail_client::account::UpdateAccount {
            payments_chain: Some("chain-c".into()),
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("parameter_invalid"), "{refused:?}");
    h.stop().await;
    Ok(())
}

/// The README's Rust quickstart, compiled from the example it shows and run as written.
#[allow(dead_code)]
#[path = "../../../sdk/examples/quickstart.rs"]
mod quickstart;

/// The code between the example's `// readme-start` and `// readme-end`, unindented once.
fn example_block(source: &str) -> String {
    let start = source.find("// readme-start\n").expect("readme-start") + 16;
    let end = source.find("    // readme-end").expect("readme-end");
    source[start..end]
        .lines()
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_readme_shows_the_quickstart_example_as_it_is() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let example = std::fs::read_to_string(format!("{root}/sdk/examples/quickstart.rs")).unwrap();
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let marker = "<!-- readme-test: sdk/examples/quickstart.rs -->\n```rust\n";
    let at = readme
        .find(marker)
        .expect("the README's Rust snippet and its marker")
        + marker.len();
    let shown = &readme[at..at + readme[at..].find("```").expect("the block's end")];
    assert_eq!(
        shown.trim_end(),
        example_block(&example).trim_end(),
        "README.md's Rust snippet differs from sdk/examples/quickstart.rs (copy it over)"
    );
}

#[tokio::test]
async fn the_readme_quickstart_runs_against_a_server() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    quickstart::run(&h.server().base_url, &h.server().api_key, &payer).await?;

    // What it did, read back: an active mandate, two pulls and a decline, a revoked key,
    // a payment that moved 5 USD.
    let c = client(&h);
    let mandates = c
        .agentic()
        .mandates(ListParams::default())
        .collect()
        .await?;
    assert_eq!(mandates.len(), 1);
    assert_eq!(mandates[0].status, "active");
    let pulls = c.agentic().pulls(ListParams::default()).collect().await?;
    let statuses: Vec<&str> = pulls.iter().map(|p| p.status.as_str()).collect();
    assert_eq!(
        statuses,
        ["declined", "authorized", "authorized"],
        "{pulls:?}"
    );
    let keys = c
        .agentic()
        .session_keys(ListParams::default())
        .collect()
        .await?;
    for _ in 0..100 {
        if c.agentic().session_key(&keys[0].id).await?.status == "revoked" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(
        c.agentic().session_key(&keys[0].id).await?.status,
        "revoked"
    );
    let payments = c.payments().list(ListParams::default()).collect().await?;
    assert_eq!(payments.len(), 1);
    assert_eq!(payments[0].status, "succeeded", "{payments:?}");
    let dead: Address = "0x000000000000000000000000000000000000dEaD".parse()?;
    assert_eq!(h.balance("USD", dead).await?, U256::from(5_000_000u64));
    // The pulls paid the one payee the mandate names.
    assert_eq!(
        mandates[0].payees,
        ["0x000000000000000000000000000000000000bEEF"]
    );
    let merchant: Address = mandates[0].payees[0].parse()?;
    assert_eq!(h.balance("USD", merchant).await?, U256::from(25_000_000u64));
    h.stop().await;
    Ok(())
}

/// The runnable agent example (`sdk/examples/agent.rs`) against a server: it pulls within
/// its key's ceiling with nothing but the key's secret, until the chain declines.
#[allow(dead_code)]
#[path = "../../../sdk/examples/agent.rs"]
mod agent_example;

#[tokio::test]
async fn the_example_agent_pulls_until_its_ceiling() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let c = client(&h);
    // The agent pulls without naming a destination: the key's only one, the account's
    // settlement wallet (the mandate names no payee, so that is its one payee).
    let m = signed_mandate(&c, &payer, "100", "daily", None).await?;
    let key = c
        .agentic()
        .create_session_key(&CreateSessionKey {
            mandate_id: m.id.clone(),
            expires_in: 600,
            max_amount: Some("60".into()),
            ..Default::default()
        })
        .await?;
    // The agent holds only the key's secret.
    let agent =
        Client::new(key.secret.clone().expect("secret")).base_url(h.server().base_url.clone());
    let authorized = agent_example::run(&agent, &key.id, "25").await?;
    assert_eq!(authorized, 2, "60 USD of ceiling takes two pulls of 25");
    let pulls = c
        .agentic()
        .pulls(ListParams::default().filter("session_key_id", &key.id))
        .collect()
        .await?;
    assert_eq!(pulls.len(), 3);
    assert_eq!(pulls[0].decline_code.as_deref(), Some("allowance_exceeded"));
    h.stop().await;
    Ok(())
}

/// Identity through the SDK: Openrail issues a credential, which verifies (also without a
/// key) until revoked; a verdict of "not verified" is an answer (`Ok`), a document that is
/// no credential an error; the public status list shows the revocation; a presentation
/// verifies once for a challenge of this server.
#[tokio::test]
async fn identity_through_the_sdk() -> anyhow::Result<()> {
    use openrail_identity::ed25519_dalek::SigningKey;
    use openrail_identity::{did_key_from_ed25519_public, did_key_verification_method};
    use serde_json::json;

    let h = Harness::start().await?;
    let c = client(&h);
    let id = c.identity();
    let vc = id
        .issue_credential(&json!({
            "@context": ["https://www.w3.org/ns/credentials/v2", "https://www.w3.org/ns/credentials/examples/v2"],
            "type": ["VerifiableCredential", "ExampleAlumniCredential"],
            "credentialSubject": { "id": "did:example:alice", "alumniOf": "Example University" },
        }))
        .await?;
    assert!(vc["issuer"].as_str().unwrap().starts_with("did:key:z6Mk"));
    assert_eq!(vc["proof"]["cryptosuite"], "eddsa-rdfc-2022");
    let vc_id = vc["id"].as_str().unwrap().to_string();

    let ok = id.verify_credential(&vc).await?;
    assert!(ok.verified, "{ok:?}");
    assert!(ok.problem_details.is_empty());
    assert_eq!(ok.results["status"][0]["status"], false, "{:?}", ok.results);
    // Verified without a key as well.
    let anon = Client::anonymous().base_url(h.server().base_url.clone());
    assert!(anon.identity().verify_credential(&vc).await?.verified);
    // A key is still needed for anything else.
    let e = anon.identity().create_challenge(None).await.unwrap_err();
    assert_eq!(e.code(), Some("unauthenticated"));

    // A changed claim: a verdict (Ok, not verified), not an error.
    let mut changed = vc.clone();
    changed["credentialSubject"]["alumniOf"] = json!("Another University");
    let bad = id.verify_credential(&changed).await?;
    assert!(!bad.verified);
    assert!(!bad.problem_names().is_empty(), "{bad:?}");
    // No credential at all: 400, an error naming the parameter.
    let e = id
        .verify_credential(&json!({ "hello": 1 }))
        .await
        .unwrap_err();
    let p = e.problem().expect("a problem");
    assert_eq!(
        (p.status, p.code.as_str(), p.param.as_deref()),
        (400, "parameter_invalid", Some("verifiableCredential"))
    );

    // The public status list: signed by the same issuer; it verifies too.
    let list_url = vc["credentialStatus"]["statusListCredential"]
        .as_str()
        .unwrap()
        .to_string();
    let list_id = list_url.rsplit('/').next().unwrap();
    assert!(list_id.starts_with("sl_"), "{list_url}");
    let list = id.status_list(list_id).await?;
    assert_eq!(list["issuer"], vc["issuer"]);
    assert_eq!(list["credentialSubject"]["statusPurpose"], "revocation");
    assert!(id.verify_credential(&list).await?.verified);
    let e = id.status_list("sl_nope").await.unwrap_err();
    assert_eq!(e.code(), Some("resource_missing"));

    // Revoked: the record says so, the list's bit is set, and the credential fails.
    let record = id.revoke_credential(&vc_id).await?;
    assert_eq!(
        (record.id.as_str(), record.status.as_str()),
        (vc_id.as_str(), "revoked")
    );
    assert_eq!(record.type_, "ExampleAlumniCredential");
    assert_eq!(record.subject.as_deref(), Some("did:example:alice"));
    assert_eq!(record.status_list_id, list_id);
    assert!(record.revoked_at.is_some());
    let bits = openrail_identity::StatusList::decode(
        id.status_list(list_id).await?["credentialSubject"]["encodedList"]
            .as_str()
            .unwrap(),
    )?;
    assert!(bits.get(record.status_list_index)?);
    let revoked = id.verify_credential(&vc).await?;
    assert!(!revoked.verified);
    assert_eq!(revoked.problem_names(), ["RANGE_ERROR"]);
    let e = id.revoke_credential("urn:uuid:nobody").await.unwrap_err();
    assert_eq!(e.code(), Some("resource_missing"));

    // A presentation for a challenge of this server: verified once, then used up.
    let holder = SigningKey::from_bytes(&[9u8; 32]);
    let did = did_key_from_ed25519_public(&holder.verifying_key());
    let ch = id.create_challenge(Some("shop.example")).await?;
    assert!(ch.challenge.starts_with("chl_"));
    assert_eq!(ch.domain.as_deref(), Some("shop.example"));
    assert!(!ch.livemode);
    let vp = openrail_identity::sign_presentation(
        json!({
            "@context": ["https://www.w3.org/ns/credentials/v2"],
            "type": ["VerifiablePresentation"],
            "holder": did,
        }),
        &holder,
        &did_key_verification_method(&did),
        time::OffsetDateTime::now_utc() - time::Duration::seconds(5),
        &ch.challenge,
        "shop.example",
    )?;
    let ok = id.verify_presentation(&vp, &ch.challenge, None).await?;
    assert!(ok.verified, "{ok:?}");
    let replay = id
        .verify_presentation(&vp, &ch.challenge, Some("shop.example"))
        .await?;
    assert!(!replay.verified);
    assert_eq!(replay.problem_names(), ["INVALID_CHALLENGE_ERROR"]);
    h.stop().await;
    Ok(())
}

/// Polls `get` every 100 ms until `done` holds of its answer (at most 30 s).
async fn until<T: std::fmt::Debug, F, Fut>(
    what: &str,
    get: F,
    done: impl Fn(&T) -> bool,
) -> anyhow::Result<T>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T, openrail_client::Error>>,
{
    let start = std::time::Instant::now();
    loop {
        let v = get().await?;
        if done(&v) {
            return Ok(v);
        }
        anyhow::ensure!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "{what}: still {v:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn verification_sessions_and_attestations_through_the_sdk() -> anyhow::Result<()> {
    use openrail_client::Error;
    use openrail_client::identity::{
        Attestation, CreateAttestation, CreateVerification, Simulate, VerificationSession,
    };
    use serde_json::json;

    let h = Harness::start().await?;
    let c = client(&h);
    let id = c.identity();
    // A wallet of this test alone, so that the list by subject holds only its attestations.
    let wallet = PrivateKeySigner::random().address().to_checksum(None);

    // A session that passes: requires_input → processing → verified, its credential issued.
    let s = id
        .create_verification(&CreateVerification {
            type_: "personhood".into(),
            subject: wallet.to_lowercase(),
            simulate: None,
        })
        .await?;
    assert!(s.id.starts_with("idv_"), "{s:?}");
    assert_eq!(
        (
            s.status.as_str(),
            s.type_.as_str(),
            s.credential_type.as_str()
        ),
        ("requires_input", "personhood", "PersonhoodCredential")
    );
    assert_eq!(s.subject, wallet, "answered EIP-55");
    assert_eq!(s.simulate.outcome.as_deref(), Some("verified"));
    assert!(!s.livemode);
    // Not verified yet: no credential (409).
    let e = id.verification_credential(&s.id).await.unwrap_err();
    assert_eq!(e.code(), Some("verification_not_verified"), "{e}");
    let submitted = id.submit_verification(&s.id).await?;
    assert_eq!(submitted.status, "processing");
    let e = id.submit_verification(&s.id).await.unwrap_err();
    assert_eq!(e.code(), Some("verification_not_submittable"), "{e}");
    let verified = until(
        "the session",
        || id.verification(&s.id),
        |v: &VerificationSession| v.status != "processing",
    )
    .await?;
    assert_eq!(verified.status, "verified", "{verified:?}");
    assert_eq!(verified.last_error, None);
    let credential_id = verified.credential_id.clone().expect("a credential id");
    assert!(credential_id.starts_with("urn:uuid:"), "{credential_id}");
    let e = id.cancel_verification(&s.id).await.unwrap_err();
    assert_eq!(e.code(), Some("verification_not_cancelable"), "{e}");

    // Its credential, signed for the holder: it verifies, about the wallet's did:pkh.
    let vc = id.verification_credential(&s.id).await?;
    assert_eq!(vc["id"], credential_id.as_str());
    assert_eq!(
        vc["type"],
        json!(["VerifiableCredential", "PersonhoodCredential"])
    );
    let did = vc["credentialSubject"]["id"].as_str().unwrap().to_string();
    assert!(
        did.starts_with("did:pkh:eip155:") && did.ends_with(&wallet),
        "{did}"
    );
    assert!(id.verify_credential(&vc).await?.verified);

    // Attested from its id: pending or at once active, then active with a uid on chain.
    let a = id
        .create_attestation(&CreateAttestation::credential_id(&credential_id))
        .await?;
    assert!(a.id.starts_with("att_"), "{a:?}");
    assert!(matches!(a.status.as_str(), "pending" | "active"), "{a:?}");
    assert_eq!(a.recipient, wallet);
    assert_eq!(a.credential_id.as_deref(), Some(credential_id.as_str()));
    assert_eq!(a.credential_type, "PersonhoodCredential");
    assert_eq!(a.issuer, vc["issuer"].as_str().unwrap());
    // The credential's validUntil (whole seconds in the credential, ms in the record).
    assert_eq!(
        a.expires_at.as_deref().map(|t| &t[..19]),
        vc["validUntil"].as_str().map(|t| &t[..19])
    );
    assert!(!a.livemode);
    let a = until(
        "the attestation",
        || id.attestation(&a.id),
        |a: &Attestation| a.status != "pending",
    )
    .await?;
    assert_eq!(a.status, "active", "{a:?}");
    assert!(a.uid.as_deref().is_some_and(|u| u.len() == 66), "{a:?}");
    assert!(a.tx_hash.is_some());

    // The same credential posted whole: verified, attested again (linked to its id).
    let b = id
        .create_attestation(&CreateAttestation::credential(vc.clone()).recipient(&wallet))
        .await?;
    assert_eq!(b.credential_id.as_deref(), Some(credential_id.as_str()));
    assert_eq!(b.credential_digest, a.credential_digest);
    // A changed credential does not verify: an error carrying the verification.
    let mut changed = vc.clone();
    changed["validUntil"] = json!("2099-01-01T00:00:00Z");
    match id
        .create_attestation(&CreateAttestation::credential(changed))
        .await
    {
        Err(Error::NotVerified(v)) => {
            assert!(!v.verified);
            assert!(!v.problem_names().is_empty(), "{v:?}");
        }
        other => panic!("a changed credential attested: {other:?}"),
    }
    // A recipient that differs from the subject: 400 naming it.
    let e = id
        .create_attestation(
            &CreateAttestation::credential_id(&credential_id)
                .recipient("0x90F79bf6EB2c4f870365E785982E1f101E93b906"),
        )
        .await
        .unwrap_err();
    let p = e.problem().expect("a problem");
    assert_eq!(
        (p.status, p.code.as_str(), p.param.as_deref()),
        (400, "parameter_invalid", Some("recipient"))
    );

    // Listed by subject, newest first, a page of one at a time.
    let listed = id
        .attestations(ListParams::default().filter("subject", &wallet).limit(1))
        .collect()
        .await?;
    let ids: Vec<&str> = listed.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, [b.id.as_str(), a.id.as_str()]);
    let e = id
        .attestations(ListParams::default().filter("subject", "did:example:x"))
        .collect()
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some("parameter_invalid"));

    // Revoked on chain: revoked (at once or after the chain answers), final.
    id.revoke_attestation(&a.id).await?;
    let revoked = until(
        "the revocation",
        || id.attestation(&a.id),
        |a: &Attestation| a.status != "active",
    )
    .await?;
    assert_eq!(revoked.status, "revoked", "{revoked:?}");
    assert!(revoked.revoked_at.is_some());
    assert_eq!(id.revoke_attestation(&a.id).await?.status, "revoked");
    let e = id.attestation("att_nope").await.unwrap_err();
    assert_eq!(e.code(), Some("resource_missing"));

    // A failed check: back to requires_input with the simulated reason; then canceled.
    let f = id
        .create_verification(&CreateVerification {
            type_: "financial_health".into(),
            subject: wallet.clone(),
            simulate: Some(Simulate {
                outcome: Some("failed".into()),
                failure_reason: Some("the bank statement was unreadable".into()),
            }),
        })
        .await?;
    id.submit_verification(&f.id).await?;
    let failed = until(
        "the failing session",
        || id.verification(&f.id),
        |v: &VerificationSession| v.status != "processing",
    )
    .await?;
    assert_eq!(failed.status, "requires_input", "{failed:?}");
    let err = failed.last_error.expect("last_error");
    assert_eq!(
        (err.code.as_str(), err.reason.as_str()),
        ("verification_failed", "the bank statement was unreadable")
    );
    assert_eq!(failed.credential_id, None);
    let e = id.verification_credential(&f.id).await.unwrap_err();
    assert_eq!(e.code(), Some("verification_not_verified"));
    assert_eq!(id.cancel_verification(&f.id).await?.status, "canceled");
    let e = id.submit_verification(&f.id).await.unwrap_err();
    assert_eq!(e.code(), Some("verification_not_submittable"));
    // Bad input: 400 naming the field.
    let e = id
        .create_verification(&CreateVerification {
            type_: "wizardry".into(),
            subject: wallet.clone(),
            simulate: None,
        })
        .await
        .unwrap_err();
    assert_eq!(
        e.problem().map(|p| (p.code.as_str(), p.param.as_deref())),
        Some(("parameter_invalid", Some("type")))
    );

    // Both sessions listed, newest first, through pages of one.
    let sessions = id
        .verifications(ListParams::default().limit(1))
        .collect()
        .await?;
    let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, [f.id.as_str(), s.id.as_str()]);
    h.stop().await;
    Ok(())
}
