//! Payer and agent consent through HTTP: a wallet mandate exists on chain only with the
//! payer's signature, the payer cancels alone, a wallet payment needs the payer's signature,
//! and a session key with a signer pulls only with its agent's signature.

use alloy::primitives::{Address, U256, keccak256};
use alloy::providers::Provider;
use alloy::signers::local::PrivateKeySigner;
use openrail_chain::bindings::AllowanceStateMachine;
use openrail_chain::consent::{DebitPull, sign_with};
use openrail_chain::deploy::{mined, signer_provider};
use openrail_chain::devnet::{dev_demo_payer, dev_spare};
use openrail_tests::{Harness, units};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A daily mandate of 100 USD from `payer` to the one payee the tests pull to
/// (`dev_spare`).
fn mandate_body(payer: Address) -> Value {
    json!({"payer_account_id": payer.to_string(), "max_amount": "100", "currency": "USD", "interval": "daily",
           "payees": [dev_spare().address().to_string()]})
}

/// Polls `path` until `member` reads `want` (the watcher records on-chain events).
async fn eventually(h: &Harness, path: &str, member: &str, want: &str) -> anyhow::Result<Value> {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let r = h.get(path).await?;
        if r.body[member] == want || tokio::time::Instant::now() > deadline {
            return Ok(r.body);
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_wallet_mandate_exists_only_with_the_payers_signature() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let asm_addr = h.settlement_deployment().allowance_state_machine.unwrap();

    let created = h
        .post("/v1/mandates", mandate_body(payer.address()))
        .await?;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.str("status"), "requires_authorization");
    let auth = &created.body["authorization"];
    assert_eq!(auth["method"], "payer_signature");
    assert_eq!(auth["signer"], payer.address().to_checksum(None));
    let typed = &auth["typed_data"];
    assert_eq!(typed["primaryType"], "Mandate");
    assert_eq!(typed["domain"]["name"], "Openrail");
    assert_eq!(typed["domain"]["version"], "1");
    assert_eq!(
        typed["domain"]["chainId"],
        h.settlement_deployment().chain_id
    );
    assert_eq!(
        typed["domain"]["verifyingContract"],
        asm_addr.to_checksum(None)
    );
    assert_eq!(typed["message"]["maxAmount"], "100000000");
    assert_eq!(typed["message"]["mandateId"], created.body["onchain"]["id"]);
    assert!(typed["types"]["EIP712Domain"].is_array());
    let id = created.str("id").to_string();
    let onchain_id = created.body["onchain"]["id"].as_str().unwrap().parse()?;

    // Nothing is on chain, so nothing can be pulled: no key is issued on it.
    let nonce_before = h.operator_nonce().await?;
    let k = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": id, "expires_in": 3600}),
        )
        .await?;
    assert_eq!(k.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", k.body);
    assert_eq!(k.code(), "mandate_not_active");
    let asm = h.allowance_state_machine();
    assert!(asm.getMandate(onchain_id).call().await.is_err());

    // A stranger's signature, a malformed one, and the payer's over other terms: 422, and
    // nothing changes.
    let stranger = PrivateKeySigner::random();
    for (sig, why) in [
        (
            Harness::sign_authorization(&created.body, &stranger)?,
            "wrong signer",
        ),
        ("0x1234".to_string(), "malformed"),
        (format!("0x{}", "00".repeat(65)), "zero"),
    ] {
        let r = h
            .post(
                &format!("/v1/mandates/{id}/authorize"),
                json!({ "signature": sig }),
            )
            .await?;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{why}: {}",
            r.body
        );
        assert_eq!(r.code(), "signature_invalid", "{why}");
    }
    let mut other_terms = created.body.clone();
    other_terms["authorization"]["typed_data"]["message"]["maxAmount"] = json!("900000000");
    let r = h
        .post(
            &format!("/v1/mandates/{id}/authorize"),
            json!({ "signature": Harness::sign_authorization(&other_terms, &payer)? }),
        )
        .await?;
    assert_eq!(r.code(), "signature_invalid", "{}", r.body);
    assert_eq!(
        h.get(&format!("/v1/mandates/{id}")).await?.str("status"),
        "requires_authorization"
    );
    assert_eq!(h.operator_nonce().await?, nonce_before, "nothing was sent");

    // The payer's signature: the mandate goes on chain, paid by the payer.
    let r = h.authorize("/v1/mandates", &created.body, &payer).await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.str("status"), "active");
    assert!(r.body["authorization"]["signature"].is_string());
    assert!(r.body["authorization"]["authorized_at"].is_string());
    let m = asm.getMandate(onchain_id).call().await?;
    assert_eq!(m.payer, payer.address());
    assert_eq!(m.maxAmount, 100_000_000);
    // Authorizing again answers the mandate as it is.
    let again = h.authorize("/v1/mandates", &created.body, &payer).await?;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(again.str("status"), "active");

    // Key, then a pull the chain enforces.
    let k = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": id, "expires_in": 3600}),
        )
        .await?;
    assert_eq!(k.status, StatusCode::CREATED, "{}", k.body);
    assert_eq!(k.body["signer"], Value::Null);
    let dest = dev_spare().address();
    let before = h.balance("USD", dest).await?;
    let p = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": k.str("id"), "amount": "40", "destination": dest.to_string()}),
        )
        .await?;
    assert_eq!(p.status, StatusCode::CREATED, "{}", p.body);
    assert_eq!(p.str("status"), "authorized");
    assert_eq!(h.balance("USD", dest).await? - before, units(40));
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn the_payer_cancels_on_chain_alone_and_the_api_follows() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let m = h
        .post_authorized("/v1/mandates", mandate_body(payer.address()))
        .await?;
    assert_eq!(m.str("status"), "active", "{}", m.body);
    let id = m.str("id").to_string();
    let k = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": id, "expires_in": 3600}),
        )
        .await?;
    assert_eq!(k.status, StatusCode::CREATED, "{}", k.body);

    // The payer's own transaction, no operator.
    let asm_addr = h.settlement_deployment().allowance_state_machine.unwrap();
    let as_payer = signer_provider(h.devnet.settlement.rpc_url(), payer.clone())?;
    let onchain_id = m.body["onchain"]["id"].as_str().unwrap().parse()?;
    mined(
        AllowanceStateMachine::new(asm_addr, &as_payer)
            .cancelMandate(onchain_id)
            .send()
            .await?,
    )
    .await?;
    let seen = eventually(&h, &format!("/v1/mandates/{id}"), "status", "canceled").await?;
    assert_eq!(seen["status"], "canceled", "{seen}");

    let before = h.balance("USD", payer.address()).await?;
    let p = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": k.str("id"), "amount": "1", "destination": dev_spare().address().to_string()}),
        )
        .await?;
    assert_eq!(p.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", p.body);
    assert_eq!(p.code(), "mandate_not_active");
    assert_eq!(h.balance("USD", payer.address()).await?, before);
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn a_key_with_a_signer_pulls_only_with_its_agents_signature() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let m = h
        .post_authorized("/v1/mandates", mandate_body(payer.address()))
        .await?;
    let agent = PrivateKeySigner::random();
    let k = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": m.str("id"), "expires_in": 3600, "signer": agent.address().to_string()}),
        )
        .await?;
    assert_eq!(k.status, StatusCode::CREATED, "{}", k.body);
    assert_eq!(k.body["signer"], agent.address().to_checksum(None));
    let asm_addr = h.settlement_deployment().allowance_state_machine.unwrap();
    let chain_id = h.settlement_deployment().chain_id;
    assert_eq!(
        k.body["eip712_domain"]["verifyingContract"],
        asm_addr.to_checksum(None)
    );
    assert_eq!(k.body["eip712_domain"]["chainId"], chain_id);
    let key_id = k.str("id").to_string();
    let onchain_key = k.body["onchain"]["id"].as_str().unwrap().parse()?;
    assert_eq!(
        h.allowance_state_machine()
            .getSessionKey(onchain_key)
            .call()
            .await?
            .signer,
        agent.address()
    );
    let dest = dev_spare().address();
    let deadline = h.chain_time().await? + 600;
    let sign = |by: &PrivateKeySigner, amount: u64, nonce: u64, deadline: u64| {
        let msg = DebitPull {
            keyId: onchain_key,
            destination: dest,
            amount: U256::from(amount) * U256::from(1_000_000u64),
            nonce: U256::from(nonce),
            deadline: U256::from(deadline),
        };
        sign_with(&msg, chain_id, asm_addr, by).to_string()
    };
    let pull = |extra: Value| {
        let mut body =
            json!({"session_key_id": key_id, "amount": "5", "destination": dest.to_string()});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        h.post("/v1/debit-pulls", body)
    };

    // Without the agent: refused before anything is sent.
    let nonce_before = h.operator_nonce().await?;
    let r = pull(json!({})).await?;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(r.code(), "signature_required");
    let r = pull(json!({"signature": sign(&PrivateKeySigner::random(), 5, 1, deadline), "nonce": 1, "deadline": deadline})).await?;
    assert_eq!(r.code(), "signature_invalid", "{}", r.body);
    // Signed for another amount.
    let r =
        pull(json!({"signature": sign(&agent, 6, 1, deadline), "nonce": 1, "deadline": deadline}))
            .await?;
    assert_eq!(r.code(), "signature_invalid", "{}", r.body);
    let past = h.chain_time().await? - 10_000;
    let r =
        pull(json!({"signature": sign(&agent, 5, 1, past), "nonce": 1, "deadline": past})).await?;
    assert_eq!(r.code(), "authorization_expired", "{}", r.body);
    assert_eq!(h.operator_nonce().await?, nonce_before, "nothing was sent");

    // The agent's signature: authorized on chain.
    let before = h.balance("USD", dest).await?;
    let r = pull(
        json!({"signature": sign(&agent, 5, 1, deadline), "nonce": "1", "deadline": deadline}),
    )
    .await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.str("status"), "authorized");
    assert_eq!(h.balance("USD", dest).await? - before, units(5));
    assert!(
        h.allowance_state_machine()
            .pullNonceUsed(onchain_key, U256::from(1u64))
            .call()
            .await?
    );
    // The same nonce again: refused.
    let r =
        pull(json!({"signature": sign(&agent, 5, 1, deadline), "nonce": 1, "deadline": deadline}))
            .await?;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(r.code(), "nonce_used");
    // Another nonce works, in any order.
    let r = pull(
        json!({"signature": sign(&agent, 5, 99, deadline), "nonce": 99, "deadline": deadline}),
    )
    .await?;
    assert_eq!(r.str("status"), "authorized", "{}", r.body);

    // Signature fields on a key without a signer are refused.
    let plain = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": m.str("id"), "expires_in": 3600}),
        )
        .await?;
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": plain.str("id"), "amount": "1", "nonce": 1}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(r.body["param"], "nonce");
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn a_wallet_payment_moves_only_as_the_payer_signed() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let dest = Address::from_slice(&keccak256("consent-payee")[12..]);
    let created = h
        .post(
            "/v1/payments",
            json!({"amount": "12.50", "currency": "USD",
                   "source": {"type": "wallet", "id": payer.address().to_string()},
                   "destination": {"type": "wallet", "address": dest.to_string()}}),
        )
        .await?;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.str("status"), "requires_authorization");
    let typed = &created.body["authorization"]["typed_data"];
    assert_eq!(typed["primaryType"], "Payment");
    assert_eq!(typed["message"]["amount"], "12500000");
    assert_eq!(typed["message"]["to"], dest.to_checksum(None));
    let id = created.str("id").to_string();

    let r = h
        .authorize("/v1/payments", &created.body, &PrivateKeySigner::random())
        .await?;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(r.code(), "signature_invalid");
    assert_eq!(
        h.get(&format!("/v1/payments/{id}")).await?.str("status"),
        "requires_authorization"
    );
    assert_eq!(h.balance("USD", dest).await?, U256::ZERO);

    let r = h.authorize("/v1/payments", &created.body, &payer).await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.str("status"), "succeeded");
    assert_eq!(h.balance("USD", dest).await?, U256::from(12_500_000u64));
    h.stop().await;
    Ok(())
}

/// The README's flow: the typed data as served, signed by Foundry's
/// `cast wallet sign --data --from-file`, authorizes the mandate.
#[tokio::test]
async fn cast_signs_the_typed_data_as_served() -> anyhow::Result<()> {
    let cast = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../node_modules/.bin/cast");
    anyhow::ensure!(
        cast.exists(),
        "run `make setup` first: {} is missing",
        cast.display()
    );
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 100).await?;
    let created = h
        .post("/v1/mandates", mandate_body(payer.address()))
        .await?;
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("typed.json");
    std::fs::write(
        &file,
        created.body["authorization"]["typed_data"].to_string(),
    )?;
    let key = format!("0x{}", alloy::primitives::hex::encode(payer.to_bytes()));
    let out = tokio::process::Command::new(&cast)
        .args(["wallet", "sign", "--data", "--from-file"])
        .arg(&file)
        .args(["--private-key", &key])
        .output()
        .await?;
    anyhow::ensure!(
        out.status.success(),
        "cast failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let signature = String::from_utf8(out.stdout)?.trim().to_string();
    let id = created.str("id");
    let r = h
        .post(
            &format!("/v1/mandates/{id}/authorize"),
            json!({ "signature": signature }),
        )
        .await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.str("status"), "active");
    h.stop().await;
    Ok(())
}

/// A signature given after `authorization.expires_at` is refused (the chain would refuse
/// it too: it is the signature's deadline), and the mandate stays unsigned.
#[tokio::test]
async fn an_authorization_expires() -> anyhow::Result<()> {
    let h = Harness::builder()
        .config(openrail_api::ApiConfig {
            authorization_ttl: std::time::Duration::from_secs(1),
            ..Default::default()
        })
        .start()
        .await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 100).await?;
    let created = h
        .post("/v1/mandates", mandate_body(payer.address()))
        .await?;
    assert_eq!(created.str("status"), "requires_authorization");
    let payment = h
        .post(
            "/v1/payments",
            json!({"amount": "1", "currency": "USD",
                   "source": {"type": "wallet", "id": payer.address().to_string()},
                   "destination": {"type": "wallet", "address": dev_spare().address().to_string()}}),
        )
        .await?;
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    for (collection, body) in [
        ("/v1/mandates", &created.body),
        ("/v1/payments", &payment.body),
    ] {
        let r = h.authorize(collection, body, &payer).await?;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
        assert_eq!(r.code(), "authorization_expired");
        let id = body["id"].as_str().unwrap();
        assert_eq!(
            h.get(&format!("{collection}/{id}")).await?.str("status"),
            "requires_authorization"
        );
    }
    h.stop().await;
    Ok(())
}

/// A contract wallet (ERC-1271) as payer: the API asks the wallet (an `eth_call`), and the
/// chain accepts the same signature.
#[tokio::test]
async fn a_contract_wallet_payer_authorizes_through_erc1271() -> anyhow::Result<()> {
    use alloy::network::TransactionBuilder;
    use alloy::rpc::types::TransactionRequest;
    use alloy::sol_types::SolValue;
    // The mock wallet forge built (`make test` builds the contracts before the cargo tests).
    let artifact = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../contracts/out/ERC1271WalletMock.sol/ERC1271WalletMock.json");
    let text = std::fs::read_to_string(&artifact)
        .map_err(|e| anyhow::anyhow!("{}: {e} (run `make contracts` first)", artifact.display()))?;
    let json: Value = serde_json::from_str(&text)?;
    let code: alloy::primitives::Bytes = json["bytecode"]["object"].as_str().unwrap().parse()?;
    let h = Harness::start().await?;
    let owner = PrivateKeySigner::random();
    // Deployed by a funded development account (never the operator: its nonces are the
    // submitter's).
    let deployer = signer_provider(h.devnet.settlement.rpc_url(), dev_spare())?;
    let mut input = code.to_vec();
    input.extend(owner.address().abi_encode());
    let receipt = deployer
        .send_transaction(TransactionRequest::default().with_deploy_code(input))
        .await?
        .get_receipt()
        .await?;
    let wallet = receipt.contract_address.expect("deployed");

    let created = h.post("/v1/mandates", mandate_body(wallet)).await?;
    assert_eq!(
        created.str("status"),
        "requires_authorization",
        "{}",
        created.body
    );
    // Another key's signature: the wallet says no.
    let r = h
        .authorize("/v1/mandates", &created.body, &PrivateKeySigner::random())
        .await?;
    assert_eq!(r.code(), "signature_invalid", "{}", r.body);
    // Its owner's: the wallet says yes, and so does the chain.
    let r = h.authorize("/v1/mandates", &created.body, &owner).await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::OK, "active"),
        "{}",
        r.body
    );
    let onchain = created.body["onchain"]["id"].as_str().unwrap().parse()?;
    assert_eq!(
        h.allowance_state_machine()
            .getMandate(onchain)
            .call()
            .await?
            .payer,
        wallet
    );
    h.stop().await;
    Ok(())
}

/// The EIP-712 hash of a list of payees as the contract stores it (`payeesHash`):
/// `keccak256` of each address as a 32-byte word, back to back.
fn payees_hash(payees: &[Address]) -> alloy::primitives::B256 {
    let mut words = Vec::with_capacity(32 * payees.len());
    for p in payees {
        words.extend_from_slice(&[0u8; 12]);
        words.extend_from_slice(p.as_slice());
    }
    keccak256(words)
}

/// The payer names its payees and its agent: the typed data served shows them and the
/// purpose, the chain accepts the signature and stores them, keys are bounded to them (a
/// key for another destination or another signer is refused; a key without signer gets
/// the agent), an agent-signed pull to a payee moves the money. And the audit's attack: a
/// key the operator issues directly on chain for that mandate, paying a thief, is refused.
#[tokio::test]
async fn the_payer_names_its_payees_and_agent_and_keys_stay_within_them() -> anyhow::Result<()> {
    use openrail_chain::bindings::AllowanceStateMachine::AllowanceStateMachineErrors as AsmError;
    use openrail_chain::bindings::IAllowanceStateMachine::KeyTerms;
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let asm_addr = h.settlement_deployment().allowance_state_machine.unwrap();
    let chain_id = h.settlement_deployment().chain_id;
    let shop = Address::from_slice(&keccak256("payee-shop")[12..]);
    let cafe = Address::from_slice(&keccak256("payee-cafe")[12..]);
    let thief = Address::from_slice(&keccak256("thief")[12..]);
    let agent = PrivateKeySigner::random();
    let purpose = "weekly groceries";

    let created = h
        .post(
            "/v1/mandates",
            json!({"payer_account_id": payer.address().to_string(), "max_amount": "100",
                   "currency": "USD", "interval": "daily", "purpose": purpose,
                   "payees": [shop.to_string(), cafe.to_string()],
                   "agent": agent.address().to_string()}),
        )
        .await?;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.str("status"), "requires_authorization");
    let checksummed = json!([shop.to_checksum(None), cafe.to_checksum(None)]);
    assert_eq!(created.body["payees"], checksummed);
    assert_eq!(created.body["agent"], agent.address().to_checksum(None));
    // What the wallet shows and signs: the payees, the agent and the purpose.
    let typed = &created.body["authorization"]["typed_data"];
    assert_eq!(typed["primaryType"], "Mandate");
    let fields: Vec<(String, String)> = typed["types"]["Mandate"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_string(),
                f["type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for want in [
        ("payees", "address[]"),
        ("agent", "address"),
        ("purpose", "string"),
    ] {
        assert!(
            fields.contains(&(want.0.to_string(), want.1.to_string())),
            "{want:?} not in {fields:?}"
        );
    }
    assert_eq!(typed["message"]["payees"], checksummed);
    assert_eq!(typed["message"]["agent"], agent.address().to_checksum(None));
    assert_eq!(typed["message"]["purpose"], purpose);
    assert_eq!(typed["message"]["payer"], payer.address().to_checksum(None));

    // The payer signs what was served; the chain accepts it and keeps what was signed.
    let r = h.authorize("/v1/mandates", &created.body, &payer).await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::OK, "active"),
        "{}",
        r.body
    );
    let mandate = created.str("id").to_string();
    let onchain: alloy::primitives::B256 =
        created.body["onchain"]["id"].as_str().unwrap().parse()?;
    assert_eq!(
        onchain,
        openrail_chain::consent::mandate_id(
            payer.address(),
            openrail_chain::consent::salt(&mandate)
        )
    );
    let asm = h.allowance_state_machine();
    let view = asm.getMandate(onchain).call().await?;
    assert_eq!(view.payer, payer.address());
    assert_eq!(view.agent, agent.address());
    assert_eq!(view.payeesHash, payees_hash(&[shop, cafe]));

    // Keys stay within what the payer signed: another destination, another signer: 422
    // session_key_outside_mandate, and nothing is sent.
    let nonce_before = h.operator_nonce().await?;
    let r = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": mandate, "expires_in": 3600, "allowed_destinations": [shop.to_string(), thief.to_string()]}),
        )
        .await?;
    assert_eq!(
        (r.status, r.code(), r.body["param"].as_str()),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "session_key_outside_mandate",
            Some("allowed_destinations")
        ),
        "{}",
        r.body
    );
    let r = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": mandate, "expires_in": 3600, "signer": PrivateKeySigner::random().address().to_string()}),
        )
        .await?;
    assert_eq!(
        (r.status, r.code(), r.body["param"].as_str()),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "session_key_outside_mandate",
            Some("signer")
        ),
        "{}",
        r.body
    );
    assert_eq!(h.operator_nonce().await?, nonce_before, "nothing was sent");
    // Without a signer the key gets the agent, and all the payees.
    let k = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": mandate, "expires_in": 3600}),
        )
        .await?;
    assert_eq!(k.status, StatusCode::CREATED, "{}", k.body);
    assert_eq!(k.body["signer"], agent.address().to_checksum(None));
    assert_eq!(k.body["allowed_destinations"], checksummed);
    let onchain_key: alloy::primitives::B256 = k.body["onchain"]["id"].as_str().unwrap().parse()?;
    let key_view = asm.getSessionKey(onchain_key).call().await?;
    assert_eq!(
        (key_view.mandateId, key_view.signer),
        (onchain, agent.address())
    );
    for (who, allowed) in [(shop, true), (cafe, true), (thief, false)] {
        assert_eq!(
            asm.isDestinationAllowed(onchain_key, who).call().await?,
            allowed,
            "{who}"
        );
    }
    // A key naming one payee (and the agent, as it must) narrows the list.
    let narrow = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": mandate, "expires_in": 3600, "allowed_destinations": [cafe.to_string()],
                   "signer": agent.address().to_string()}),
        )
        .await?;
    assert_eq!(narrow.status, StatusCode::CREATED, "{}", narrow.body);
    assert_eq!(
        narrow.body["allowed_destinations"],
        json!([cafe.to_checksum(None)])
    );

    // A pull to a payee, signed by the agent: the money moves.
    let deadline = h.chain_time().await? + 600;
    let signed_pull = |to: Address, amount: u64, nonce: u64| {
        let msg = DebitPull {
            keyId: onchain_key,
            destination: to,
            amount: units(amount),
            nonce: U256::from(nonce),
            deadline: U256::from(deadline),
        };
        json!({"session_key_id": k.str("id"), "amount": amount.to_string(), "destination": to.to_string(),
               "nonce": nonce, "deadline": deadline,
               "signature": sign_with(&msg, chain_id, asm_addr, &agent).to_string()})
    };
    let r = h.post("/v1/debit-pulls", signed_pull(shop, 7, 1)).await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::CREATED, "authorized"),
        "{}",
        r.body
    );
    assert_eq!(h.balance("USD", shop).await?, units(7));
    // Signed by the agent all the same, a pull to anyone else is refused.
    let r = h.post("/v1/debit-pulls", signed_pull(thief, 7, 2)).await?;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::UNPROCESSABLE_ENTITY, "destination_not_allowed"),
        "{}",
        r.body
    );
    assert_eq!(h.balance("USD", thief).await?, U256::ZERO);

    // The audit's attack: the operator issues a key straight on chain for this mandate,
    // paying the thief (with the agent as signer, so the destination is the only fault).
    // The chain refuses it.
    let rogue = |allowed: Vec<Address>, signer: Address, payees: Vec<Address>| {
        asm.issueSessionKey(
            KeyTerms {
                salt: keccak256("rogue"),
                mandateId: onchain,
                expiresAt: deadline,
                maxAmount: U256::ZERO,
                allowedDestinations: allowed,
                signer,
            },
            payees,
        )
        .from(openrail_chain::devnet::dev_operator().address())
    };
    let err = rogue(vec![thief], agent.address(), vec![shop, cafe])
        .call()
        .await
        .expect_err("a key paying a thief");
    match err.as_decoded_interface_error::<AsmError>() {
        Some(AsmError::PayeeNotSigned(e)) => assert_eq!(e.destination, thief),
        other => panic!("expected PayeeNotSigned, got {other:?} ({err})"),
    }
    // Nor can it claim the payer signed the thief (the payees' hash is checked), or leave
    // the agent out.
    let err = rogue(vec![thief], agent.address(), vec![shop, cafe, thief])
        .call()
        .await
        .expect_err("payees the payer did not sign");
    assert!(
        matches!(
            err.as_decoded_interface_error::<AsmError>(),
            Some(AsmError::PayeesMismatch(_))
        ),
        "expected PayeesMismatch, got {err}"
    );
    let err = rogue(vec![shop], Address::ZERO, vec![shop, cafe])
        .call()
        .await
        .expect_err("a key without the agent");
    assert!(
        matches!(
            err.as_decoded_interface_error::<AsmError>(),
            Some(AsmError::SignerNotAgent(_))
        ),
        "expected SignerNotAgent, got {err}"
    );
    // The operator really is the operator: the same call with the payer's own terms passes
    // the simulation, so the refusals above are the payees' and the agent's.
    rogue(vec![shop], agent.address(), vec![shop, cafe])
        .call()
        .await?;
    h.stop().await;
    Ok(())
}

/// A P-256 (passkey) private key: its public key, and its signatures of a digest as the
/// wallet takes them (`r ‖ s`, `s` in the lower half of the order, as OpenZeppelin's
/// `P256.verify` requires).
struct Passkey(p256::ecdsa::SigningKey);

impl Passkey {
    fn new(seed: &str) -> Self {
        let secret: [u8; 32] = keccak256(seed).0;
        Self(p256::ecdsa::SigningKey::from_bytes(&secret.into()).expect("a P-256 scalar"))
    }

    /// The public key's coordinates.
    fn public(&self) -> (alloy::primitives::B256, alloy::primitives::B256) {
        let point = self.0.verifying_key().to_encoded_point(false);
        (
            alloy::primitives::B256::from_slice(point.x().unwrap()),
            alloy::primitives::B256::from_slice(point.y().unwrap()),
        )
    }

    /// `(low-s r ‖ s, high-s r ‖ s)` over `digest`, as 0x hex.
    fn sign(&self, digest: alloy::primitives::B256) -> (String, String) {
        use p256::ecdsa::signature::hazmat::PrehashSigner;
        let sig: p256::ecdsa::Signature = self.0.sign_prehash(digest.as_slice()).expect("signs");
        let low = sig.normalize_s().unwrap_or(sig);
        let (r, s) = low.split_scalars();
        let high = p256::ecdsa::Signature::from_scalars(r.to_bytes(), (-*s).to_bytes())
            .expect("a signature");
        let hex = |s: p256::ecdsa::Signature| {
            format!("0x{}", alloy::primitives::hex::encode(s.to_bytes()))
        };
        (hex(low), hex(high))
    }
}

/// The digest of typed data as the API serves it (what any wallet computes).
fn typed_digest(created: &Value) -> anyhow::Result<alloy::primitives::B256> {
    let td: alloy::dyn_abi::TypedData =
        serde_json::from_value(created["authorization"]["typed_data"].clone())?;
    Ok(td.eip712_signing_hash()?)
}

/// A passkey smart wallet (P-256, ERC-1271) as payer: it signs the served typed data's
/// digest with its P-256 key; the mandate goes on chain, a key pulls the wallet's tokens;
/// a wallet payment signed the same way moves them too.
#[tokio::test]
async fn a_passkey_wallet_signs_a_mandate_and_a_payment() -> anyhow::Result<()> {
    use openrail_chain::bindings::{PasskeyWallet, TestStablecoin};
    let h = Harness::start().await?;
    let asm_addr = h.settlement_deployment().allowance_state_machine.unwrap();
    let usd = h.settlement_deployment().tokens["USD"];
    let passkey = Passkey::new("a passkey");
    let (qx, qy) = passkey.public();
    // Deployed by a funded development account (never the operator: its nonces are the
    // submitter's); it approves the state machine (the settlement router) for its USD.
    let deployer = signer_provider(h.devnet.settlement.rpc_url(), dev_spare())?;
    let wallet = *PasskeyWallet::deploy(&deployer, qx, qy, usd, asm_addr)
        .await?
        .address();
    let as_treasury = signer_provider(
        h.devnet.settlement.rpc_url(),
        openrail_chain::devnet::dev_treasury(),
    )?;
    mined(
        TestStablecoin::new(usd, &as_treasury)
            .transfer(wallet, units(500))
            .send()
            .await?,
    )
    .await?;
    let payee = Address::from_slice(&keccak256("passkey-payee")[12..]);

    let created = h
        .post(
            "/v1/mandates",
            json!({"payer_account_id": wallet.to_string(), "max_amount": "100", "currency": "USD",
                   "interval": "daily", "payees": [payee.to_string()]}),
        )
        .await?;
    assert_eq!(
        (created.status, created.str("status")),
        (StatusCode::CREATED, "requires_authorization"),
        "{}",
        created.body
    );
    assert_eq!(
        created.body["authorization"]["signer"],
        wallet.to_checksum(None)
    );
    let id = created.str("id").to_string();
    let (low, high) = passkey.sign(typed_digest(&created.body)?);
    assert_eq!(low.len(), 2 + 128, "r ‖ s: 64 bytes");
    // The malleated twin (high s): the wallet refuses it.
    let r = h
        .post(
            &format!("/v1/mandates/{id}/authorize"),
            json!({ "signature": high }),
        )
        .await?;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::UNPROCESSABLE_ENTITY, "signature_invalid"),
        "{}",
        r.body
    );
    // Another passkey's: refused.
    let (stranger, _) = Passkey::new("another passkey").sign(typed_digest(&created.body)?);
    let r = h
        .post(
            &format!("/v1/mandates/{id}/authorize"),
            json!({ "signature": stranger }),
        )
        .await?;
    assert_eq!(r.code(), "signature_invalid", "{}", r.body);
    // The passkey's: active, on chain, paid by the wallet.
    let r = h
        .post(
            &format!("/v1/mandates/{id}/authorize"),
            json!({ "signature": low }),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::OK, "active"),
        "{}",
        r.body
    );
    let onchain = created.body["onchain"]["id"].as_str().unwrap().parse()?;
    let view = h
        .allowance_state_machine()
        .getMandate(onchain)
        .call()
        .await?;
    assert_eq!((view.payer, view.maxAmount), (wallet, 100_000_000));

    // A key and a pull move the wallet's tokens to its payee.
    let k = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": id, "expires_in": 3600}),
        )
        .await?;
    assert_eq!(k.status, StatusCode::CREATED, "{}", k.body);
    let p = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": k.str("id"), "amount": "30", "destination": payee.to_string()}),
        )
        .await?;
    assert_eq!(
        (p.status, p.str("status")),
        (StatusCode::CREATED, "authorized"),
        "{}",
        p.body
    );
    assert_eq!(h.balance("USD", payee).await?, units(30));
    assert_eq!(h.balance("USD", wallet).await?, units(470));

    // A payment from the wallet, signed by the passkey the same way.
    let created = h
        .post(
            "/v1/payments",
            json!({"amount": "12.50", "currency": "USD",
                   "source": {"type": "wallet", "id": wallet.to_string()},
                   "destination": {"type": "wallet", "address": payee.to_string()}}),
        )
        .await?;
    assert_eq!(
        (created.status, created.str("status")),
        (StatusCode::CREATED, "requires_authorization"),
        "{}",
        created.body
    );
    let id = created.str("id").to_string();
    let (low, high) = passkey.sign(typed_digest(&created.body)?);
    let r = h
        .post(
            &format!("/v1/payments/{id}/authorize"),
            json!({ "signature": high }),
        )
        .await?;
    assert_eq!(r.code(), "signature_invalid", "{}", r.body);
    let r = h
        .post(
            &format!("/v1/payments/{id}/authorize"),
            json!({ "signature": low }),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::OK, "succeeded"),
        "{}",
        r.body
    );
    assert_eq!(
        h.balance("USD", payee).await?,
        units(30) + U256::from(12_500_000u64)
    );
    assert_eq!(
        h.balance("USD", wallet).await?,
        units(470) - U256::from(12_500_000u64)
    );
    h.stop().await;
    Ok(())
}

/// A wallet payment of `amount` from `payer`'s wallet, waiting for its signature.
async fn wallet_payment(h: &Harness, payer: Address, amount: &str) -> anyhow::Result<Value> {
    let r = h
        .post(
            "/v1/payments",
            json!({"amount": amount, "currency": "USD",
                   "source": {"type": "wallet", "id": payer.to_string()},
                   "destination": {"type": "wallet", "address": dev_spare().address().to_string()}}),
        )
        .await?;
    anyhow::ensure!(r.status == StatusCode::CREATED, "{}", r.body);
    Ok(r.body)
}

/// What a consent page offers to sign: the wallet buttons and the typed data.
fn offers_to_sign(html: &str) -> bool {
    html.contains("id=\"sign\"")
        || html.contains("Sign and authorize")
        || html.contains("consent-data")
        || html.contains("primaryType")
        || html.contains("/assets/consent.js")
}

/// The attack of issue 24: an account signed up as `refunds@yourbank.example` (never
/// verified). Its consent pages name its business name marked unverified (or a neutral
/// phrase when it gave none), never the sign-in email.
#[tokio::test]
async fn the_consent_page_names_the_business_unverified_never_the_email() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    let email = "refunds@yourbank.example";
    let dash = h.dashboard_sign_up(email, None).await?;
    let store = &h.server().store;
    let (_, secret) = store
        .api_keys()
        .create(&dash.account_id, openrail_store::Mode::Testnet, 0)
        .await?;
    let created = h
        .call(
            reqwest::Method::POST,
            "/v1/mandates",
            Some(
                &json!({"payer_account_id": payer.address().to_string(), "max_amount": "100",
                         "currency": "USD", "interval": "weekly",
                         "purpose": "Refund of your overcharge: sign to RECEIVE 100 USD"}),
            ),
            Some(&secret),
            &[],
        )
        .await?;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let link = format!("/authorize/{}", created.str("id"));

    // No business name: a neutral phrase, never the email.
    let page = h.page(&link).await?;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        !page.text.contains(email),
        "the email is shown:\n{}",
        page.text
    );
    assert!(!page.text.contains("yourbank"), "{}", page.text);
    assert!(
        page.text
            .contains("An unverified business (no name given)</strong> asks to take up to"),
        "{}",
        page.text
    );

    // The name set in the dashboard's settings: shown, marked unverified.
    let saved = dash
        .post_form(
            "/dashboard/settings",
            &[("business_name", "Acme Refunds Ltd")],
        )
        .await?;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.text);
    let settings = dash.get("/dashboard/settings").await?;
    assert!(
        settings.text.contains("value=\"Acme Refunds Ltd\""),
        "{}",
        settings.text
    );
    let page = h.page(&link).await?;
    assert!(!page.text.contains(email), "{}", page.text);
    assert!(
        page.text.contains(
            "<strong class=\"who\">Acme Refunds Ltd</strong> <span class=\"unverified\">(unverified business name)</span> asks to take up to"
        ),
        "{}",
        page.text
    );
    // An email as a business name, or a text-direction trick, is refused by the form.
    for bad in [email, "Acme\u{202E}dtL"] {
        let r = dash
            .post_form("/dashboard/settings", &[("business_name", bad)])
            .await?;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad:?}");
    }
    assert_eq!(
        store
            .accounts()
            .get(&dash.account_id)
            .await?
            .business_name
            .as_deref(),
        Some("Acme Refunds Ltd")
    );
    // Only the store marks a name verified (no verification exists yet).
    store
        .accounts()
        .set_business_verified(&dash.account_id, true)
        .await?;
    let page = h.page(&link).await?;
    assert!(
        page.text.contains("(business name verified by Openrail)"),
        "{}",
        page.text
    );
    assert!(
        !page.text.contains("(unverified business name)"),
        "{}",
        page.text
    );

    // A business name given at sign-up is the one payers read, unverified.
    let other = h
        .dashboard_sign_up("billing@shop.example", Some("Corner Shop"))
        .await?;
    let account = store.accounts().get(&other.account_id).await?;
    assert_eq!(
        (account.business_name.as_deref(), account.business_verified),
        (Some("Corner Shop"), false)
    );
    h.stop().await;
    Ok(())
}

/// A purpose (or any free text) with control or bidirectional formatting characters is
/// refused at the body, naming the field; nothing is created.
#[tokio::test]
async fn purpose_refuses_control_and_bidi_characters() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    for purpose in [
        "nul \u{0} here",
        "bell \u{7}",
        "Refund of your overcharge \u{202E}DSU 001 EVIECER",
        "isolate \u{2066}x\u{2069}",
        "mark \u{200F}",
        "arabic mark \u{061C}",
        "c1 \u{85}",
    ] {
        let mut body = mandate_body(payer.address());
        body["purpose"] = json!(purpose);
        let r = h.post("/v1/mandates", body).await?;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{purpose:?}: {}", r.body);
        assert_eq!(
            (r.code(), r.body["param"].as_str()),
            ("parameter_invalid", Some("purpose")),
            "{purpose:?}"
        );
    }
    assert_eq!(
        h.get("/v1/mandates").await?.body["data"],
        json!([]),
        "nothing created"
    );
    let mut body = mandate_body(payer.address());
    body["purpose"] = json!("Café budget — “agent” 日本語");
    let r = h.post("/v1/mandates", body).await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    h.stop().await;
    Ok(())
}

/// The consent page and the dashboard's pages cannot be framed by another origin and load
/// scripts only from this origin; the consent page sends no `Referer` (its link is a bearer
/// link), the dashboard's pages none to another site (`same-origin`: their form posts keep
/// their `Origin`, which the CSRF check needs).
#[tokio::test]
async fn pages_cannot_be_framed_and_send_no_referrer() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    let created = h
        .post("/v1/mandates", mandate_body(payer.address()))
        .await?;
    let payment = wallet_payment(&h, payer.address(), "3").await?;
    let dash = h.dashboard_sign_up("dev@example.com", Some("Acme")).await?;
    let consent = vec![
        h.page(&format!("/authorize/{}", created.str("id"))).await?,
        h.page(&format!("/authorize/{}", payment["id"].as_str().unwrap()))
            .await?,
        h.page("/authorize/man_unknown").await?,
    ];
    let mut dashboard = vec![h.page("/login").await?, h.page("/signup").await?];
    for path in [
        "/dashboard",
        "/dashboard/mandates",
        "/dashboard/settings",
        "/dashboard/identity/verifications",
        "/dashboard/identity/attestations",
        "/dashboard/identity/credentials",
    ] {
        dashboard.push(dash.get(path).await?);
    }
    for p in &consent {
        assert_eq!(p.header("referrer-policy"), "no-referrer");
    }
    for p in &dashboard {
        assert_eq!(p.header("referrer-policy"), "same-origin");
    }
    let pages: Vec<_> = consent.iter().chain(&dashboard).collect();
    for p in &pages {
        let csp = p.header("content-security-policy");
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        assert!(csp.contains("script-src 'self'"), "{csp}");
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        assert_eq!(p.header("x-frame-options"), "DENY");
        // What the policy forbids is not used: no inline script or style.
        assert!(!p.text.contains("style=\""), "{}", p.text);
        for script in p.text.match_indices("<script") {
            let tag = &p.text[script.0..p.text[script.0..].find('>').unwrap() + script.0];
            assert!(
                tag.contains("src=\"/assets/") || tag.contains("type=\"application/json\""),
                "inline script: {tag}"
            );
        }
    }
    assert!(offers_to_sign(&pages[0].text), "{}", pages[0].text);
    h.stop().await;
    Ok(())
}

/// A link past its authorization's deadline says so and offers nothing to sign: no
/// button, no typed data, no script.
#[tokio::test]
async fn an_expired_link_says_so_and_offers_nothing_to_sign() -> anyhow::Result<()> {
    let h = Harness::builder()
        .config(openrail_api::ApiConfig {
            authorization_ttl: std::time::Duration::from_secs(1),
            ..Default::default()
        })
        .start()
        .await?;
    let payer = dev_demo_payer();
    let mandate = h
        .post("/v1/mandates", mandate_body(payer.address()))
        .await?;
    let payment = wallet_payment(&h, payer.address(), "2").await?;
    let links = [
        format!("/authorize/{}", mandate.str("id")),
        format!("/authorize/{}", payment["id"].as_str().unwrap()),
    ];
    for link in &links {
        let page = h.page(link).await?;
        assert!(offers_to_sign(&page.text), "{}", page.text);
    }
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    for link in &links {
        let page = h.page(link).await?;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.text.contains("This link has expired"), "{}", page.text);
        assert!(!offers_to_sign(&page.text), "{}", page.text);
        assert!(!page.text.contains("asks to take"), "{}", page.text);
        assert!(!page.text.contains("asks you to pay"), "{}", page.text);
    }
    h.stop().await;
    Ok(())
}

/// A mandate or a payment the developer withdrew before its payer signed: its link says
/// so and offers nothing to sign, and a signature posted to it is refused.
#[tokio::test]
async fn a_withdrawn_link_says_so_and_refuses_a_signature() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 100).await?;
    let mandate = h
        .post("/v1/mandates", mandate_body(payer.address()))
        .await?;
    let payment = wallet_payment(&h, payer.address(), "4").await?;
    let mid = mandate.str("id").to_string();
    let pid = payment["id"].as_str().unwrap().to_string();

    let r = h
        .post(&format!("/v1/mandates/{mid}/cancel"), json!({}))
        .await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::OK, "canceled"),
        "{}",
        r.body
    );
    let r = h
        .post(&format!("/v1/payments/{pid}/cancel"), json!({}))
        .await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::OK, "canceled"),
        "{}",
        r.body
    );

    let nonce_before = h.operator_nonce().await?;
    let base = h.server().base_url.clone();
    for (id, created, code, status) in [
        (
            &mid,
            &mandate.body,
            "mandate_not_active",
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (&pid, &payment, "payment_canceled", StatusCode::CONFLICT),
    ] {
        let page = h.page(&format!("/authorize/{id}")).await?;
        assert!(page.text.contains("was withdrawn"), "{}", page.text);
        assert!(!offers_to_sign(&page.text), "{}", page.text);
        // The payer's own signature, posted as the page would: refused.
        let signature = Harness::sign_authorization(created, &payer)?;
        let r = reqwest::Client::new()
            .post(format!("{base}/authorize/{id}"))
            .header("content-type", "application/json")
            .body(json!({ "signature": signature }).to_string())
            .send()
            .await?;
        assert_eq!(r.status(), status, "{id}");
        let body: Value = r.json().await?;
        assert_eq!(body["code"], code, "{body}");
    }
    assert_eq!(h.operator_nonce().await?, nonce_before, "nothing was sent");
    h.stop().await;
    Ok(())
}

/// The page states that the ceiling resets at the calendar boundary, so up to twice it
/// can be taken around one.
#[tokio::test]
async fn the_consent_page_tells_the_truth_about_calendar_epochs() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    for (interval, boundary) in [
        ("daily", "every day at 00:00 UTC"),
        ("weekly", "every Monday at 00:00 UTC"),
        ("monthly", "on the 1st of every month at 00:00 UTC"),
        ("yearly", "every 1 January at 00:00 UTC"),
    ] {
        let mut body = mandate_body(payer.address());
        body["interval"] = json!(interval);
        let m = h.post("/v1/mandates", body).await?;
        let page = h.page(&format!("/authorize/{}", m.str("id"))).await?;
        assert!(page.text.contains(boundary), "{interval}: {}", page.text);
        assert!(
            page.text.contains("up to twice the ceiling"),
            "{interval}: {}",
            page.text
        );
    }
    h.stop().await;
    Ok(())
}

/// The consent page shows, before anything is signed, who may be paid and which agent may
/// pull — the terms the payer's signature binds on chain — and what the operator and owner
/// keys can do; a mandate naming no payees shows the settlement wallet as its one payee.
#[tokio::test]
async fn the_consent_page_shows_payees_and_agent_before_signing() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    let merchant = dev_spare().address().to_checksum(None);
    let agent = Address::from_slice(&alloy::primitives::keccak256("consent-page-agent")[12..])
        .to_checksum(None);
    let mut body = mandate_body(payer.address());
    body["payees"] = json!([merchant]);
    body["agent"] = json!(agent);
    let m = h.post("/v1/mandates", body).await?;
    assert_eq!(m.status, StatusCode::CREATED, "{}", m.body);
    // The signed message carries them too.
    let message = &m.body["authorization"]["typed_data"]["message"];
    assert_eq!(message["payees"], json!([merchant]));
    assert_eq!(message["agent"], json!(agent));
    let page = h.page(&format!("/authorize/{}", m.str("id"))).await?;
    assert!(page.text.contains("Paid to"), "{}", page.text);
    assert!(
        page.text
            .contains(&format!("paid only to <code>{merchant}</code>")),
        "{}",
        page.text
    );
    assert!(page.text.contains(&agent), "{}", page.text);
    assert!(
        page.text.contains("two days after it is announced"),
        "{}",
        page.text
    );

    // No payees named: the settlement wallet, said to be one.
    let mut body = mandate_body(payer.address());
    body.as_object_mut().expect("an object").remove("payees");
    let m = h.post("/v1/mandates", body).await?;
    let page = h.page(&format!("/authorize/{}", m.str("id"))).await?;
    let settlement = h.settlement_deployment().treasury.to_checksum(None);
    assert_eq!(m.body["payees"], json!([settlement]));
    assert!(
        page.text.contains(&format!(
            "<code>{settlement}</code> (Openrail's settlement wallet, which pays the business)"
        )),
        "{}",
        page.text
    );
    assert!(page.text.contains("Not named"), "{}", page.text);
    h.stop().await;
    Ok(())
}
