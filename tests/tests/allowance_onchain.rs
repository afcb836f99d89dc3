//! The allowance state machine through the typed bindings on a real anvil chain: key and
//! mandate ceilings, revocation, and a fresh allowance after the epoch boundary.

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
    let as_payer = signer_provider(h.devnet.settlement.rpc_url(), payer.clone());
    mined(
        AllowanceStateMachine::new(*asm.address(), &as_payer)
            .createMandate(IAllowanceStateMachine::MandateTerms {
                salt: keccak256("e2e-mandate"),
                payer: payer.address(),
                token: usd,
                maxAmount: units(100),
                interval: DAILY,
                payees: vec![dest],
                agent: Address::ZERO,
                purposeHash: keccak256(""),
            })
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
