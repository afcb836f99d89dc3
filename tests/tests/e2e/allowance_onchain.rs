//! The allowance state machine through the typed bindings on a real anvil chain: key and
//! mandate ceilings, revocation, and a fresh allowance after the epoch boundary; and every
//! mandate, key, epoch spend and nonce rebuilt from the contract's logs alone.

use alloy::primitives::{Address, B256, keccak256};
use openrail_chain::bindings::AllowanceStateMachine;
use openrail_chain::bindings::AllowanceStateMachine::AllowanceStateMachineErrors as AsmError;
use openrail_chain::bindings::IAllowanceStateMachine;
use openrail_chain::consent;
use openrail_chain::deploy::{mined, signer_provider};
use openrail_chain::devnet::{dev_demo_payer, dev_spare};
use openrail_tests::{Harness, units};

const DAILY: u8 = 0;

#[tokio::test]
async fn ceilings_revocation_and_epoch_reset() -> anyhow::Result<()> {
    let h = Harness::chains_only().await?;
    let asm = h.allowance_state_machine();
    let payer = dev_demo_payer();
    let dest = dev_spare().address();
    h.fund(payer.clone(), 1_000).await?;

    // Noon UTC tomorrow, so the whole scenario sits in one daily epoch.
    let noon = (h.chain_time().await? / 86_400 + 1) * 86_400 + 43_200;
    h.warp_to(noon).await?;
    let midnight = noon + 43_200;

    let mandate: B256 = consent::mandate_id(payer.address(), keccak256("e2e-mandate"));
    let key1: B256 = consent::key_id(mandate, keccak256("e2e-key-1"));
    let key2: B256 = consent::key_id(mandate, keccak256("e2e-key-2"));
    let usd = *h.token("USD").address();
    // The payer creates its own mandate (the operator alone cannot, for a wallet), naming
    // its one payee.
    let as_payer = signer_provider(h.devnet.settlement.rpc_url(), payer.clone())?;
    mined(
        AllowanceStateMachine::new(*asm.address(), &as_payer)
            .createMandate(consent::own_mandate_terms(
                keccak256("e2e-mandate"),
                payer.address(),
                usd,
                units(100),
                DAILY,
                vec![dest],
            ))
            .send()
            .await?,
    )
    .await?;
    for (salt, ceiling) in [("e2e-key-1", units(60)), ("e2e-key-2", units(0))] {
        mined(
            asm.issueSessionKey(
                IAllowanceStateMachine::KeyTerms {
                    salt: keccak256(salt),
                    mandateId: mandate,
                    expiresAt: noon + 7 * 86_400,
                    maxAmount: ceiling,
                    allowedDestinations: vec![],
                    signer: Address::ZERO,
                },
                vec![dest],
            )
            .send()
            .await?,
        )
        .await?;
    }

    // Key 1: 25 + 25 within its ceiling of 60.
    for _ in 0..2 {
        mined(asm.pull(key1, dest, units(25)).send().await?).await?;
    }
    assert_eq!(h.balance("USD", dest).await?, units(50));

    // A third 25 would take key 1 to 75 > 60: declined, 10 left until midnight.
    let err = asm
        .pull(key1, dest, units(25))
        .send()
        .await
        .expect_err("over the key ceiling");
    match err.as_decoded_interface_error::<AsmError>() {
        Some(AsmError::KeyCeilingExceeded(e)) => {
            assert_eq!(
                (e.keyId, e.remaining, e.resetsAt),
                (key1, units(10), midnight)
            );
        }
        other => panic!("expected KeyCeilingExceeded, got {other:?} ({err})"),
    }

    // Key 2 (no key ceiling): 45 brings the mandate to 95 of 100.
    mined(asm.pull(key2, dest, units(45)).send().await?).await?;
    let err = asm
        .pull(key2, dest, units(10))
        .send()
        .await
        .expect_err("over the mandate ceiling");
    match err.as_decoded_interface_error::<AsmError>() {
        Some(AsmError::MandateCeilingExceeded(e)) => {
            assert_eq!(
                (e.mandateId, e.remaining, e.resetsAt),
                (mandate, units(5), midnight)
            );
        }
        other => panic!("expected MandateCeilingExceeded, got {other:?} ({err})"),
    }

    // Revoke key 1: its next pull is declined as revoked; key 2 still pulls.
    mined(asm.revokeSessionKey(key1).send().await?).await?;
    let err = asm
        .pull(key1, dest, units(1))
        .send()
        .await
        .expect_err("revoked key");
    assert!(
        matches!(err.as_decoded_interface_error::<AsmError>(), Some(AsmError::KeyRevoked(e)) if e.keyId == key1),
        "expected KeyRevoked, got {err}"
    );
    mined(asm.pull(key2, dest, units(5)).send().await?).await?;
    assert_eq!(h.balance("USD", dest).await?, units(100));
    let remaining = asm.remainingAllowance(key2).call().await?;
    assert_eq!(
        (remaining.remaining, remaining.resetsAt),
        (units(0), midnight)
    );

    // Across the epoch boundary the allowance is fresh, for the mandate and for key 2;
    // the revoked key stays dead.
    h.warp_to(midnight).await?;
    let remaining = asm.remainingAllowance(key2).call().await?;
    assert_eq!(
        (remaining.remaining, remaining.resetsAt),
        (units(100), midnight + 86_400)
    );
    assert_eq!(
        asm.remainingAllowance(key1).call().await?.remaining,
        units(0)
    );
    mined(asm.pull(key2, dest, units(100)).send().await?).await?;
    assert_eq!(h.balance("USD", dest).await?, units(200));
    let view: IAllowanceStateMachine::MandateView = asm.getMandate(mandate).call().await?;
    assert_eq!(view.spentThisEpoch, 100_000_000);

    h.stop().await;
    Ok(())
}

/// A mandate as its events tell it.
#[derive(Debug, Default)]
struct RebuiltMandate {
    payer: Address,
    token: Address,
    max_amount: u64,
    interval: u8,
    canceled: bool,
    payees: Vec<Address>,
    agent: Address,
}

/// A session key as its events tell it.
#[derive(Debug, Default)]
struct RebuiltKey {
    mandate: B256,
    expires_at: u64,
    max_amount: u64,
    allowed: Vec<Address>,
    signer: Address,
    revoked: bool,
}

/// The bounds `[start, end)` of the epoch of `interval` (daily or weekly: ISO weeks from
/// Monday 00:00Z) containing `t`, as the contract counts them.
fn epoch_of(interval: u8, t: u64) -> (u64, u64) {
    let day = t / 86_400;
    match interval {
        0 => (day * 86_400, (day + 1) * 86_400),
        1 => {
            // 1970-01-01 was a Thursday (day 3 of an ISO week counted from Monday = 0).
            let monday = day - (day + 3) % 7;
            (monday * 86_400, (monday + 7) * 86_400)
        }
        other => panic!("the scenario uses daily and weekly mandates only, not {other}"),
    }
}

/// An explorer's view: after a scenario through the API (mandates with payees and an agent,
/// keys with and without a ceiling and allow-list, pulls authorized and declined, agent-
/// signed pulls, a revocation, a cancellation and a wallet payment), every mandate, key,
/// epoch spend and nonce rebuilt from the state machine's `eth_getLogs` alone equals what
/// the contract's views say.
#[tokio::test]
async fn state_rebuilt_from_logs_alone_matches_the_contract() -> anyhow::Result<()> {
    use alloy::primitives::U256;
    use alloy::providers::Provider;
    use alloy::rpc::types::Filter;
    use alloy::signers::local::PrivateKeySigner;
    use alloy::sol_types::SolEventInterface;
    use openrail_chain::bindings::AllowanceStateMachine::AllowanceStateMachineEvents as Ev;
    use openrail_chain::consent::{DebitPull, sign_with};
    use reqwest::StatusCode;
    use serde_json::{Value, json};

    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let asm = h.allowance_state_machine();
    let asm_addr = *asm.address();
    let chain_id = h.settlement_deployment().chain_id;
    let p1 = Address::from_slice(&keccak256("rebuild-payee-1")[12..]);
    let p2 = Address::from_slice(&keccak256("rebuild-payee-2")[12..]);
    let stranger = Address::from_slice(&keccak256("rebuild-stranger")[12..]);
    let agent = PrivateKeySigner::random();
    let mut payer_nonces: Vec<U256> = Vec::new();

    let mandate = |body: Value| {
        let h = &h;
        async move {
            let mut body = body;
            body["payer_account_id"] = json!(dev_demo_payer().address().to_string());
            body["currency"] = json!("USD");
            let m = h.post_authorized("/v1/mandates", body).await?;
            anyhow::ensure!(m.body["status"] == "active", "mandate: {}", m.body);
            anyhow::Ok(m.body)
        }
    };
    let nonce_of = |m: &Value| -> anyhow::Result<U256> {
        Ok(m["authorization"]["typed_data"]["message"]["nonce"]
            .as_str()
            .unwrap()
            .parse()?)
    };
    let key = |mandate: &Value, extra: Value| {
        let h = &h;
        let mut body = json!({"mandate_id": mandate["id"], "expires_in": 3600});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        async move {
            let k = h.post("/v1/session-keys", body).await?;
            anyhow::ensure!(k.status == StatusCode::CREATED, "key: {}", k.body);
            anyhow::Ok(k.body)
        }
    };
    let onchain = |o: &Value| -> B256 { o["onchain"]["id"].as_str().unwrap().parse().unwrap() };
    let pull = |k: &Value, amount: u64, to: Address| {
        h.post(
            "/v1/debit-pulls",
            json!({"session_key_id": k["id"], "amount": amount.to_string(), "destination": to.to_string()}),
        )
    };
    let deadline = h.chain_time().await? + 3_600;
    let signed = |k: &Value, amount: u64, to: Address, nonce: u64| {
        let msg = DebitPull {
            keyId: onchain(k),
            destination: to,
            amount: units(amount),
            nonce: U256::from(nonce),
            deadline: U256::from(deadline),
        };
        h.post(
            "/v1/debit-pulls",
            json!({"session_key_id": k["id"], "amount": amount.to_string(), "destination": to.to_string(),
                   "nonce": nonce, "deadline": deadline,
                   "signature": sign_with(&msg, chain_id, asm_addr, &agent).to_string()}),
        )
    };
    let code = |r: &openrail_tests::Reply| (r.status, r.body["code"].as_str().map(String::from));
    let created = (StatusCode::CREATED, None);
    let declined = |why: &str| (StatusCode::UNPROCESSABLE_ENTITY, Some(why.to_string()));

    // A: 100 a day to two payees. Key a1: ceiling 30, pays p1 only; key a2: no ceiling.
    let a = mandate(
        json!({"max_amount": "100", "interval": "daily", "purpose": "rebuild A",
                           "payees": [p1.to_string(), p2.to_string()]}),
    )
    .await?;
    payer_nonces.push(nonce_of(&a)?);
    let a1 = key(
        &a,
        json!({"max_amount": "30", "allowed_destinations": [p1.to_string()]}),
    )
    .await?;
    let a2 = key(&a, json!({})).await?;
    assert_eq!(code(&pull(&a1, 20, p1).await?), created);
    assert_eq!(
        code(&pull(&a1, 20, p1).await?),
        declined("allowance_exceeded")
    );
    assert_eq!(
        code(&pull(&a1, 1, p2).await?),
        declined("destination_not_allowed")
    );
    assert_eq!(code(&pull(&a2, 50, p2).await?), created);
    assert_eq!(
        code(&pull(&a2, 40, p1).await?),
        declined("allowance_exceeded")
    );
    assert_eq!(code(&pull(&a2, 30, p1).await?), created);
    // B: 50 a week to p1, keys only for the agent; b1 without ceiling, b2 with 20.
    let b = mandate(
        json!({"max_amount": "50", "interval": "weekly", "payees": [p1.to_string()],
                           "agent": agent.address().to_string()}),
    )
    .await?;
    payer_nonces.push(nonce_of(&b)?);
    let b1 = key(&b, json!({})).await?;
    let b2 = key(&b, json!({"max_amount": "20"})).await?;
    assert_eq!(code(&signed(&b1, 15, p1, 5).await?), created);
    assert_eq!(code(&signed(&b2, 10, p1, 9).await?), created);
    assert_eq!(
        code(&signed(&b2, 15, p1, 10).await?),
        declined("allowance_exceeded")
    );
    assert_eq!(code(&signed(&b1, 5, p1, 11).await?), created);
    // C: to the account's settlement wallet (no payees named), with a key; then canceled.
    let c = mandate(json!({"max_amount": "10", "interval": "daily"})).await?;
    payer_nonces.push(nonce_of(&c)?);
    let c1 = key(&c, json!({"max_amount": "10"})).await?;
    assert_eq!(
        code(&pull(&c1, 4, h.settlement_deployment().treasury).await?),
        created
    );
    // The revocation and the cancellation.
    let r = h
        .delete(&format!("/v1/session-keys/{}", a1["id"].as_str().unwrap()))
        .await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = h
        .post(
            &format!("/v1/mandates/{}/cancel", c["id"].as_str().unwrap()),
            json!({}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // A wallet payment uses a payer nonce too.
    let p = h
        .post_authorized(
            "/v1/payments",
            json!({"amount": "3", "currency": "USD",
                   "source": {"type": "wallet", "id": payer.address().to_string()},
                   "destination": {"type": "wallet", "address": p2.to_string()}}),
        )
        .await?;
    assert_eq!(p.body["status"], "succeeded", "{}", p.body);
    payer_nonces.push(nonce_of(&p.body)?);
    // Every change is mined before the logs are read.
    for (path, id) in [("session-keys", &a1["id"]), ("mandates", &c["id"])] {
        let want = if path == "mandates" {
            "canceled"
        } else {
            "revoked"
        };
        let mut status = String::new();
        for _ in 0..100 {
            status = h
                .get(&format!("/v1/{path}/{}", id.as_str().unwrap()))
                .await?
                .body["status"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if status == want {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(status, want, "{path} {id}");
    }

    // Rebuild from the logs alone.
    let logs = h
        .settlement
        .get_logs(
            &Filter::new()
                .address(asm_addr)
                .from_block(alloy::eips::BlockNumberOrTag::Earliest)
                .to_block(alloy::eips::BlockNumberOrTag::Latest),
        )
        .await?;
    let now = h.chain_time().await?;
    let mut block_times = std::collections::HashMap::<u64, u64>::new();
    let mut mandates = std::collections::BTreeMap::<B256, RebuiltMandate>::new();
    let mut keys = std::collections::BTreeMap::<B256, RebuiltKey>::new();
    let mut pulls: Vec<(B256, u64, u64)> = Vec::new(); // (key, amount, block time)
    let mut nonces = std::collections::BTreeSet::<(Address, U256)>::new();
    let mut pull_nonces = std::collections::BTreeSet::<(B256, U256)>::new();
    for log in &logs {
        let event = Ev::decode_log(&log.inner)?.data;
        match event {
            Ev::MandateCreated(e) => {
                mandates.insert(
                    e.mandateId,
                    RebuiltMandate {
                        payer: e.payer,
                        token: e.token,
                        max_amount: e.maxAmount,
                        interval: e.interval,
                        canceled: false,
                        payees: e.payees,
                        agent: e.agent,
                    },
                );
            }
            Ev::MandateCanceled(e) => mandates.get_mut(&e.mandateId).unwrap().canceled = true,
            Ev::SessionKeyIssued(e) => {
                keys.insert(
                    e.keyId,
                    RebuiltKey {
                        mandate: e.mandateId,
                        expires_at: e.expiresAt,
                        max_amount: e.maxAmount,
                        allowed: e.allowedDestinations,
                        signer: e.signer,
                        revoked: false,
                    },
                );
            }
            Ev::SessionKeyRevoked(e) => keys.get_mut(&e.keyId).unwrap().revoked = true,
            Ev::DebitPulled(e) => {
                let number = log.block_number.expect("a mined log");
                let time = match block_times.get(&number) {
                    Some(t) => *t,
                    None => {
                        let block = h
                            .settlement
                            .get_block_by_number(number.into())
                            .await?
                            .expect("the log's block");
                        block_times.insert(number, block.header.timestamp);
                        block.header.timestamp
                    }
                };
                pulls.push((e.keyId, u64::try_from(e.amount)?, time));
            }
            Ev::NonceUsed(e) => {
                assert!(nonces.insert((e.owner, e.nonce)), "a nonce used twice");
            }
            Ev::PullNonceUsed(e) => {
                assert!(
                    pull_nonces.insert((e.keyId, e.nonce)),
                    "a pull nonce used twice"
                );
            }
            _ => {}
        }
    }
    // Spend this epoch: DebitPulled amounts in the epoch containing the chain's time.
    let mut mandate_spent = std::collections::BTreeMap::<B256, u64>::new();
    let mut key_spent = std::collections::BTreeMap::<B256, u64>::new();
    for (key_id, amount, time) in &pulls {
        let k = &keys[key_id];
        let (start, end) = epoch_of(mandates[&k.mandate].interval, now);
        if (start..end).contains(time) {
            *mandate_spent.entry(k.mandate).or_default() += amount;
            if k.max_amount != 0 {
                *key_spent.entry(*key_id).or_default() += amount;
            }
        }
    }

    // What was rebuilt is what the API made …
    assert_eq!(mandates.len(), 3);
    assert_eq!(keys.len(), 5);
    assert_eq!(mandates[&onchain(&a)].payees, vec![p1, p2]);
    assert_eq!(mandates[&onchain(&b)].agent, agent.address());
    assert_eq!(
        mandates[&onchain(&c)].payees,
        vec![h.settlement_deployment().treasury]
    );
    assert!(mandates[&onchain(&c)].canceled && keys[&onchain(&a1)].revoked);
    assert_eq!(keys[&onchain(&b1)].signer, agent.address());
    assert_eq!(
        (mandate_spent[&onchain(&a)], mandate_spent[&onchain(&b)]),
        (100_000_000, 30_000_000),
        "pulls of the scenario all sit in one epoch"
    );
    let mut expected_nonces: Vec<(Address, U256)> =
        payer_nonces.iter().map(|n| (payer.address(), *n)).collect();
    expected_nonces.sort();
    assert_eq!(nonces.iter().copied().collect::<Vec<_>>(), expected_nonces);
    let used = |k: &Value, n: u64| (onchain(k), U256::from(n));
    let mut expected_pull_nonces = vec![used(&b1, 5), used(&b2, 9), used(&b1, 11)];
    expected_pull_nonces.sort();
    assert_eq!(
        pull_nonces.iter().copied().collect::<Vec<_>>(),
        expected_pull_nonces,
        "the declined signed pull used no nonce"
    );

    // … and what the contract says.
    for (id, m) in &mandates {
        let v = asm.getMandate(*id).call().await?;
        assert_eq!(
            (
                v.payer,
                v.token,
                v.maxAmount,
                v.interval,
                v.agent,
                v.deferred
            ),
            (m.payer, m.token, m.max_amount, m.interval, m.agent, false),
            "mandate {id}"
        );
        // `MandateStatus`: 1 active, 2 canceled.
        let status = if m.canceled { 2 } else { 1 };
        assert_eq!(v.status, status, "mandate {id}");
        let mut words = Vec::new();
        for p in &m.payees {
            words.extend_from_slice(B256::left_padding_from(p.as_slice()).as_slice());
        }
        assert_eq!(v.payeesHash, keccak256(words), "mandate {id}'s payees");
        assert_eq!(
            v.spentThisEpoch,
            mandate_spent.get(id).copied().unwrap_or(0),
            "mandate {id}'s spend"
        );
    }
    for (id, k) in &keys {
        let v = asm.getSessionKey(*id).call().await?;
        assert_eq!(
            (v.mandateId, v.expiresAt, v.maxAmount, v.revoked, v.signer),
            (k.mandate, k.expires_at, k.max_amount, k.revoked, k.signer),
            "key {id}"
        );
        assert_eq!(v.hasAllowList, !k.allowed.is_empty(), "key {id}");
        assert_eq!(
            v.spentThisEpoch,
            key_spent.get(id).copied().unwrap_or(0),
            "key {id}'s spend (kept for keys with their own ceiling only)"
        );
        for who in mandates[&k.mandate].payees.iter().chain([&stranger]) {
            assert_eq!(
                asm.isDestinationAllowed(*id, *who).call().await?,
                k.allowed.is_empty() || k.allowed.contains(who),
                "key {id}, destination {who}"
            );
        }
    }
    for (owner, nonce) in &nonces {
        assert!(asm.nonceUsed(*owner, *nonce).call().await?);
    }
    for (key_id, nonce) in &pull_nonces {
        assert!(asm.pullNonceUsed(*key_id, *nonce).call().await?);
    }
    // Nonces no event names are unused.
    assert!(
        !asm.pullNonceUsed(onchain(&b2), U256::from(10u64))
            .call()
            .await?
    );
    assert!(
        !asm.nonceUsed(payer.address(), U256::from(12_345u64))
            .call()
            .await?
    );
    h.stop().await;
    Ok(())
}
