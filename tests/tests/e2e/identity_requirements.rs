//! Mandates that require identity, end to end: a payer verified as a person and an agent
//! verified as an agent (testnet's simulated provider issues their credentials), their
//! credentials attested on the attestation chain (B), the receipts relayed to the
//! settlement chain's (A) attestation mirror; a mandate requiring them is signed with its
//! requirements and enforced on A. Keys and pulls are refused 403
//! `identity_requirement_unmet` when a requirement does not hold, before anything is sent;
//! once a revocation reaches the mirror, the chain itself refuses the pull.

use std::time::Duration;

use alloy::primitives::{Address, B256, U256};
use alloy::signers::local::PrivateKeySigner;
use alloy::sol_types::SolInterface;
use openrail_chain::attestations::typed_schema_uid;
use openrail_chain::bindings::AllowanceStateMachine::AllowanceStateMachineErrors as AsmError;
use openrail_chain::bindings::AttestationMirror;
use openrail_chain::devnet::{dev_demo_payer, dev_operator, dev_spare};
use openrail_tests::{Harness, units};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Polls `path` until `done` holds for its body (20 s at most); answers the last body.
async fn until(h: &Harness, path: &str, done: impl Fn(&Value) -> bool) -> anyhow::Result<Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let r = h.get(path).await?;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        if done(&r.body) {
            return Ok(r.body);
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "{path} never got there: {}",
            r.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Verifies `subject` as `kind` (simulated provider), attests the issued credential and
/// waits until the settlement chain's mirror recorded it; answers the attestation.
async fn verified_and_attested(h: &Harness, kind: &str, subject: Address) -> anyhow::Result<Value> {
    let r = h
        .post(
            "/v1/identity/verifications",
            json!({"type": kind, "subject": subject.to_string()}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let session = r.str("id").to_string();
    let r = h
        .post(
            &format!("/v1/identity/verifications/{session}/submit"),
            json!({}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    until(h, &format!("/v1/identity/verifications/{session}"), |b| {
        b["status"] == "verified"
    })
    .await?;
    let c = h
        .get(&format!("/v1/identity/verifications/{session}/credential"))
        .await?;
    assert_eq!(c.status, StatusCode::OK, "{}", c.body);
    let credential_id = c.body["verifiableCredential"]["id"].clone();
    let r = h
        .post(
            "/v1/identity/attestations",
            json!({ "credential_id": credential_id }),
        )
        .await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["status"], "active", "{}", r.body);
    let id = r.str("id").to_string();
    until(h, &format!("/v1/identity/attestations/{id}"), |b| {
        b["settlement_recorded"] == true
    })
    .await
}

/// Whether the settlement chain's mirror holds a valid attestation of `schema` by the
/// operator about `who`.
async fn mirror_valid(h: &Harness, who: Address, schema: B256) -> anyhow::Result<bool> {
    let mirror = h
        .settlement_deployment()
        .attestation_mirror
        .expect("the settlement chain has a mirror");
    Ok(AttestationMirror::new(mirror, &h.settlement)
        .isValid(dev_operator().address(), who, schema)
        .call()
        .await?)
}

/// Waits until the mirror's answer for (`who`, `schema`) is `want`.
async fn mirror_says(h: &Harness, who: Address, schema: B256, want: bool) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while mirror_valid(h, who, schema).await? != want {
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "the mirror never said {want} for {who}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

#[tokio::test]
async fn mandates_requiring_identity_are_enforced_by_the_api_and_the_chain() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let agent = PrivateKeySigner::random();
    let dest = dev_spare().address();
    let personhood = typed_schema_uid("PersonhoodCredential").unwrap();
    let agent_schema = typed_schema_uid("AgentCredential").unwrap();
    let body = |requirements: Value| {
        json!({"payer_account_id": payer.address().to_string(), "max_amount": "100", "currency": "USD",
               "interval": "daily", "payees": [dest.to_string()], "requirements": requirements})
    };

    // Before the payer is verified: refused, nothing written.
    let r = h
        .post("/v1/mandates", body(json!({"payer": "personhood"})))
        .await?;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(r.code(), "identity_requirement_unmet");
    assert_eq!(r.body["param"], "payer");
    // An unknown kind: 400.
    let r = h
        .post("/v1/mandates", body(json!({"payer": "wizard"})))
        .await?;
    assert_eq!(
        (r.status, r.body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("requirements.payer"))
    );

    // The payer is verified as a person, the agent as an agent; both attested on B under
    // their type's schema and recorded by A's mirror.
    let payer_att = verified_and_attested(&h, "personhood", payer.address()).await?;
    assert_eq!(payer_att["schema"], personhood.to_string());
    assert_eq!(
        payer_att["chain_id"],
        h.devnet.manifest.attestation.chain_id
    );
    assert!(mirror_valid(&h, payer.address(), personhood).await?);
    let agent_att = verified_and_attested(&h, "agent", agent.address()).await?;
    assert!(mirror_valid(&h, agent.address(), agent_schema).await?);
    assert!(!mirror_valid(&h, agent.address(), personhood).await?);

    // M1 requires personhood of the payer; its payer signs the requirement with it.
    let m1 = h
        .post_authorized("/v1/mandates", body(json!({"payer": "personhood"})))
        .await?;
    assert_eq!(m1.str("status"), "active", "{}", m1.body);
    assert_eq!(m1.body["requirements"]["payer"], "personhood");
    assert_eq!(m1.body["requirements"]["agent"], Value::Null);
    let typed = &m1.body["authorization"]["typed_data"]["message"];
    assert_eq!(typed["payerSchema"], personhood.to_string());
    assert_eq!(typed["agentSchema"], B256::ZERO.to_string());
    assert_eq!(
        typed["identityAttester"],
        dev_operator().address().to_checksum(None)
    );
    let asm = h.allowance_state_machine();
    let m1_onchain: B256 = m1.body["onchain"]["id"].as_str().unwrap().parse()?;
    let onchain = asm.getMandate(m1_onchain).call().await?;
    assert_eq!(onchain.requirements.payerSchema, personhood);
    assert_eq!(onchain.requirements.attester, dev_operator().address());
    let k1 = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": m1.str("id"), "expires_in": 3600}),
        )
        .await?;
    assert_eq!(k1.status, StatusCode::CREATED, "{}", k1.body);
    let k1_onchain: B256 = k1.body["onchain"]["id"].as_str().unwrap().parse()?;

    // The hosted consent page tells the payer what it signs about identity.
    let unsigned = h
        .post(
            "/v1/mandates",
            body(json!({"payer": "personhood", "agent": "agent"})),
        )
        .await?;
    assert_eq!(unsigned.status, StatusCode::CREATED, "{}", unsigned.body);
    let page = h
        .page(&format!("/authorize/{}", unsigned.str("id")))
        .await?;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.text
            .contains("you (the payer) must hold a personhood credential")
            && page
                .text
                .contains("every key's agent must hold an agent credential"),
        "{}",
        page.text
    );

    // M2 also requires an agent credential of every key's signer.
    let m2 = h
        .post_authorized(
            "/v1/mandates",
            body(json!({"payer": "personhood", "agent": "agent"})),
        )
        .await?;
    assert_eq!(m2.str("status"), "active", "{}", m2.body);
    let key = |signer: Option<Address>| {
        let mut b = json!({"mandate_id": m2.str("id"), "expires_in": 3600});
        if let Some(s) = signer {
            b["signer"] = json!(s.to_string());
        }
        h.post("/v1/session-keys", b)
    };
    let r = key(None).await?;
    assert_eq!(
        (r.status, r.body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("signer")),
        "{}",
        r.body
    );
    let r = key(Some(PrivateKeySigner::random().address())).await?;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(
        (r.code(), r.body["param"].as_str()),
        ("identity_requirement_unmet", Some("signer"))
    );
    let k2 = key(Some(agent.address())).await?;
    assert_eq!(k2.status, StatusCode::CREATED, "{}", k2.body);
    assert_eq!(k2.str("status"), "active", "{}", k2.body);
    let k2_onchain: B256 = k2.body["onchain"]["id"].as_str().unwrap().parse()?;

    let asm_addr = h.settlement_deployment().allowance_state_machine.unwrap();
    let chain_id = h.settlement_deployment().chain_id;
    let deadline = h.chain_time().await? + 600;
    let signed_pull = |nonce: u64| {
        let msg = openrail_chain::consent::DebitPull {
            keyId: k2_onchain,
            destination: dest,
            amount: units(1),
            nonce: U256::from(nonce),
            deadline: U256::from(deadline),
        };
        let sig = openrail_chain::consent::sign_with(&msg, chain_id, asm_addr, &agent).to_string();
        json!({"session_key_id": k2.str("id"), "amount": "1", "destination": dest.to_string(),
               "signature": sig, "nonce": nonce, "deadline": deadline})
    };
    let plain_pull =
        || json!({"session_key_id": k1.str("id"), "amount": "1", "destination": dest.to_string()});

    // Both hold: pulls pass, on chain.
    let before = h.balance("USD", dest).await?;
    let r = h.post("/v1/debit-pulls", plain_pull()).await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.str("status"), "authorized", "{}", r.body);
    let r = h.post("/v1/debit-pulls", signed_pull(1)).await?;
    assert_eq!(r.str("status"), "authorized", "{}", r.body);
    assert_eq!(h.balance("USD", dest).await? - before, units(2));

    // What the operator would send for k1, asked of the chain: it passes while the payer's
    // attestation holds.
    let operator = dev_operator().address();
    let direct = || async {
        asm.pull(k1_onchain, dest, units(1))
            .from(operator)
            .call()
            .await
    };
    direct().await?;

    // The agent's attestation revoked: k2's pulls are refused 403 naming the signer, before
    // anything is written; k1 (no agent requirement) still pulls.
    let r = h
        .post(
            &format!(
                "/v1/identity/attestations/{}/revoke",
                agent_att["id"].as_str().unwrap()
            ),
            json!({}),
        )
        .await?;
    assert_eq!(r.body["status"], "revoked", "{}", r.body);
    let pulls_before = h.get("/v1/debit-pulls?limit=100").await?.body["data"]
        .as_array()
        .unwrap()
        .len();
    let r = h.post("/v1/debit-pulls", signed_pull(2)).await?;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(
        (r.code(), r.body["param"].as_str()),
        ("identity_requirement_unmet", Some("signer"))
    );
    assert_eq!(
        h.get("/v1/debit-pulls?limit=100").await?.body["data"]
            .as_array()
            .unwrap()
            .len(),
        pulls_before,
        "a refused pull is not written"
    );
    let r = h.post("/v1/debit-pulls", plain_pull()).await?;
    assert_eq!(r.str("status"), "authorized", "{}", r.body);
    // The revocation reaches the mirror.
    mirror_says(&h, agent.address(), agent_schema, false).await?;

    // The payer's attestation revoked: refused by the API at once, and once the receipt of
    // the revocation is recorded, by the chain too.
    let r = h
        .post(
            &format!(
                "/v1/identity/attestations/{}/revoke",
                payer_att["id"].as_str().unwrap()
            ),
            json!({}),
        )
        .await?;
    assert_eq!(r.body["status"], "revoked", "{}", r.body);
    let before = h.balance("USD", dest).await?;
    let r = h.post("/v1/debit-pulls", plain_pull()).await?;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(
        (r.code(), r.body["param"].as_str()),
        ("identity_requirement_unmet", Some("payer"))
    );
    mirror_says(&h, payer.address(), personhood, false).await?;
    let refused = direct().await.expect_err("the chain refuses the pull");
    let data = refused.as_revert_data().expect("a revert with its reason");
    match AsmError::abi_decode(&data)? {
        AsmError::IdentityRequirementUnmet(e) => {
            assert_eq!((e.subject, e.schema), (payer.address(), personhood));
        }
        other => panic!("another revert: {other:?}"),
    }
    assert_eq!(h.balance("USD", dest).await?, before, "nothing moved");
    // Nor can a new mandate or key be made on the lapsed requirement.
    let r = h
        .post("/v1/mandates", body(json!({"payer": "personhood"})))
        .await?;
    assert_eq!(r.code(), "identity_requirement_unmet", "{}", r.body);
    let r = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": m1.str("id"), "expires_in": 3600}),
        )
        .await?;
    assert_eq!(r.code(), "identity_requirement_unmet", "{}", r.body);

    // A bank account's pulls are paid by the treasury on chain: no identity of its payer.
    let ba = h
        .post(
            "/v1/bank-accounts",
            json!({"owner_name": "Ada Lovelace", "currency": "usd", "balance": "100"}),
        )
        .await?;
    assert_eq!(ba.status, StatusCode::CREATED, "{}", ba.body);
    let r = h
        .post(
            "/v1/mandates",
            json!({"payer_account_id": ba.str("id"), "max_amount": "10", "currency": "USD",
                   "interval": "daily", "requirements": {"payer": "personhood"}}),
        )
        .await?;
    assert_eq!(
        (r.status, r.body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("requirements.payer")),
        "{}",
        r.body
    );

    // The mirror's owner stops trusting the attester: requirements can no longer be
    // enforced, so a mandate asking for them is refused up front.
    let mirror = h.settlement_deployment().attestation_mirror.unwrap();
    let owner = openrail_chain::deploy::signer_provider(
        &h.settlement_deployment().rpc_url.parse()?,
        openrail_chain::devnet::dev_owner(),
    )?;
    openrail_chain::deploy::mined(
        AttestationMirror::new(mirror, &owner)
            .removeAttester(operator)
            .send()
            .await?,
    )
    .await?;
    let r = h
        .post("/v1/mandates", body(json!({"agent": "agent"})))
        .await?;
    assert_eq!(
        (r.status, r.body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("requirements")),
        "{}",
        r.body
    );
    h.stop().await;
    Ok(())
}
