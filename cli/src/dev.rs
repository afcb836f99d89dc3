//! `openrail dev`: two local chains with the contracts deployed, a funded demo payer and a
//! demo mandate with a session key, until Ctrl-C.

use openrail_store::now_ms;
use std::path::PathBuf;

use alloy::primitives::{Address, B256, U256, keccak256};
use alloy::signers::local::PrivateKeySigner;
use alloy::transports::http::reqwest::Url;
use anyhow::Context;
use openrail_chain::bindings::{AllowanceStateMachine, IAllowanceStateMachine};
use openrail_chain::consent;
use openrail_chain::deploy::{TOKEN_DECIMALS, fund_wallet, mined, signer_provider};
use openrail_chain::devnet::{Devnet, DevnetConfig, dev_demo_payer, dev_operator, dev_treasury};

/// Options of `openrail dev`.
#[derive(Debug, clap::Args)]
pub struct DevArgs {
    /// Port of the settlement chain (A, chain id 31337); 0 picks a free port.
    #[arg(long, default_value_t = 8545, env = "OPENRAIL_SETTLEMENT_PORT")]
    settlement_port: u16,
    /// Port of the attestation chain (B, chain id 31338); 0 picks a free port.
    #[arg(long, default_value_t = 8546, env = "OPENRAIL_ATTESTATION_PORT")]
    attestation_port: u16,
    /// Directory for the deployment manifest and the dev database (both made anew each run,
    /// like the chains).
    #[arg(long, default_value_os_t = crate::default_data_dir(), env = "OPENRAIL_DATA_DIR")]
    data_dir: PathBuf,
    /// Port of the HTTP API; 0 picks a free port.
    #[arg(long, default_value_t = 8080, env = "OPENRAIL_PORT")]
    port: u16,
    /// Failed authentications one client address may make in a burst before 429 (then one
    /// a second).
    #[arg(long, default_value_t = 20, env = "OPENRAIL_AUTH_FAILURE_BURST")]
    auth_failure_burst: u32,
}

/// Demo payer funding: 10,000 units of each test currency.
const DEMO_FUNDING: u64 = 10_000;

pub async fn run(args: DevArgs) -> anyhow::Result<()> {
    let devnet = Devnet::start(DevnetConfig {
        settlement_port: args.settlement_port,
        attestation_port: args.attestation_port,
        prune_history: false,
    })
    .await
    .context("starting the local chains (is another `openrail dev` or anvil using the ports? try --settlement-port 0)")?;

    let result = async {
        let dev_dir = args.data_dir.join("dev");
        let manifest_path = dev_dir.join("deployment.json");
        devnet.manifest.write(&manifest_path)?;
        let unit = U256::from(10u64).pow(U256::from(TOKEN_DECIMALS));
        let payer = dev_demo_payer();
        let payer_addr = payer.address();
        fund_wallet(&devnet.manifest.settlement, dev_treasury(), payer.clone(), U256::from(DEMO_FUNDING) * unit)
            .await?;
        fund_wallet(&devnet.manifest.attestation, dev_treasury(), payer, U256::from(DEMO_FUNDING) * unit).await?;
        let demo = demo_mandate(&devnet, unit).await?;
        // The submitter counts the operator's nonces from here on: no other operator
        // transaction may be sent after it starts.
        let db_path = dev_dir.join("openrail.db");
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db_path.display()));
        }
        let store = openrail_store::Store::connect(&format!("sqlite://{}", db_path.display())).await?;
        let account = store.accounts().create("Dev account", now_ms()).await?;
        let (_, api_key) = store.api_keys().create(&account.id, openrail_store::Mode::Testnet, now_ms()).await?;
        let server = crate::node::start(
            store,
            &devnet.manifest.settlement,
            Some(&devnet.manifest.attestation),
            dev_operator(),
            args.port,
            openrail_api::ApiConfig {
                auth_failure_burst: f64::from(args.auth_failure_burst),
                ..openrail_api::ApiConfig::default()
            },
            crate::node::NodeOptions::default(),
        )
        .await
        .with_context(|| format!("starting the API on port {} (try --port 0)", args.port))?;
        let base_url = server.base_url.clone();


        let a = &devnet.manifest.settlement;
        let b = &devnet.manifest.attestation;
        let asm = a.allowance_state_machine.expect("settlement chain has a state machine");
        println!("Openrail dev: the API, two local chains with the contracts deployed\n");
        println!("API base URL        {base_url}");
        println!("Dashboard           {base_url}/signup   (create a testnet account and an API key in the browser)");
        println!("Testnet API key     {api_key}   (account {})", account.id);
        println!("Database            {} (SQLite, made anew each run)", db_path.display());
        println!("Relayer             watching the settlement chain in this process\n");
        println!("Settlement chain (A)   chain id {}   {}", a.chain_id, a.rpc_url);
        println!("  AllowanceStateMachine  {asm}   (also this chain's settlement router)");
        println!("  AttestationMirror      {}", a.attestation_mirror.expect("settlement chain has a mirror"));
        for (code, token) in &a.tokens {
            println!("  {code} test token         {token}");
        }
        println!("Attestation chain (B)  chain id {}   {}", b.chain_id, b.rpc_url);
        println!("  AttestationRegistry    {}", b.attestation_registry.expect("attestation chain has a registry"));
        println!("  SettlementRouter       {}", b.router);
        for (code, token) in &b.tokens {
            println!("  {code} test token         {token}");
        }
        println!("\nOwner of the contracts               {} (anvil account 4; pauses, proposes operators)", a.owner);
        println!("Operator (the service's signer)     {}", a.operator);
        println!("Treasury                            {}", a.treasury);
        println!("Demo payer wallet                   {payer_addr} ({DEMO_FUNDING} USD and EUR on both chains, router approved)");
        println!("Demo payer private key              {demo_key}", demo_key = demo_payer_key());
        println!("  WARNING: a well-known anvil development key, public to everyone. It signs the demo");
        println!("  payer's consent here; never send real funds to it or use it on a real chain.");
        println!("Demo mandate (100 USD per day)      {} (created with the demo payer's EIP-712 signature)", demo.mandate);
        println!("Demo session key (60 USD per day)   {}", demo.key);
        println!("Deployment manifest                 {}", manifest_path.display());
        println!("\nRead the demo key's remaining allowance (amount in micro-USD, epoch reset time):");
        println!(
            "  cast call {asm} 'remainingAllowance(bytes32)(uint256,uint64)' {} --rpc-url {}",
            demo.key, a.rpc_url
        );
        println!("\nTry it (a wallet mandate waits for the payer's signature; the README walks the whole flow):");
        println!("  export KEY={api_key} PAYER_KEY={}", demo_payer_key());
        println!("  curl -s {base_url}/v1/mandates -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' \\");
        println!("    -d '{{\"payer_account_id\": \"{payer_addr}\", \"max_amount\": \"100.00\", \"currency\": \"USD\", \"interval\": \"daily\"}}' > mandate.json");
        println!("  python3 -c 'import json;print(json.dumps(json.load(open(\"mandate.json\"))[\"authorization\"][\"typed_data\"]))' > typed.json");
        println!("  SIG=$(./node_modules/.bin/cast wallet sign --data --from-file typed.json --private-key $PAYER_KEY)");
        println!("  curl -s {base_url}/v1/mandates/$(python3 -c 'import json;print(json.load(open(\"mandate.json\"))[\"id\"])')/authorize -H \"Authorization: Bearer $KEY\" \\");
        println!("    -H 'Content-Type: application/json' -d \"{{\\\"signature\\\": \\\"$SIG\\\"}}\"");
        println!("\nWebhooks: receive this account's events on a local server, signed (Standard Webhooks):");
        println!("  openrail listen --api-key {api_key} --api-url {base_url} --forward-to http://localhost:3000/webhooks");
        println!("\nPress Ctrl-C to stop everything.");
        anyhow::Ok(server)
    }
    .await;

    if let Ok(server) = &result {
        crate::stop_signal().await.context("waiting for Ctrl-C")?;
        eprintln!("\nstopping…");
        // Gracefully, as `serve` does: the requests in flight answered, the journal settled.
        server.shutdown(std::time::Duration::from_secs(10)).await;
    }
    devnet.stop().await;
    result.map(|_| ())
}

/// The demo payer's private key, 0x hex (anvil's account 2: public knowledge).
fn demo_payer_key() -> String {
    format!(
        "0x{}",
        alloy::primitives::hex::encode(dev_demo_payer().to_bytes())
    )
}

struct DemoMandate {
    mandate: B256,
    key: B256,
}

/// Creates a demo mandate (100 USD a day, paid by the demo payer) with a session key (60 USD
/// a day, valid 30 days), so the chain can be explored at once.
async fn demo_mandate(devnet: &Devnet, unit: U256) -> anyhow::Result<DemoMandate> {
    let a = &devnet.manifest.settlement;
    let url: Url = a.rpc_url.parse()?;
    let op = signer_provider(&url, dev_operator())?;
    let asm =
        AllowanceStateMachine::new(a.allowance_state_machine.context("no state machine")?, &op);
    let payer: PrivateKeySigner = dev_demo_payer();
    let salt = keccak256("openrail-dev-demo-mandate");
    let mandate = consent::mandate_id(payer.address(), salt);
    let usd = a.tokens["USD"];
    // The payer's consent is its EIP-712 signature of the mandate's terms, naming who may
    // be paid (the treasury, the demo's settlement wallet); the operator submits it.
    let terms = consent::Mandate {
        mandateId: mandate,
        payer: payer.address(),
        token: usd,
        maxAmount: U256::from(100u64) * unit,
        interval: 0,
        payees: vec![a.treasury],
        agent: Address::ZERO,
        purpose: "openrail dev demo".into(),
        identityAttester: Address::ZERO,
        payerSchema: B256::ZERO,
        agentSchema: B256::ZERO,
        nonce: U256::ZERO,
        deadline: U256::from(u64::MAX),
    };
    let signature = consent::sign_with(&terms, a.chain_id, *asm.address(), &payer);
    mined(
        asm.createMandateWithSignature(terms.terms(salt), terms.nonce, terms.deadline, signature)
            .send()
            .await?,
    )
    .await?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    let key_salt = keccak256("openrail-dev-demo-session-key");
    let key = consent::key_id(mandate, key_salt);
    mined(
        asm.issueSessionKey(
            IAllowanceStateMachine::KeyTerms {
                salt: key_salt,
                mandateId: mandate,
                expiresAt: now + 30 * 86_400,
                maxAmount: U256::from(60u64) * unit,
                allowedDestinations: vec![],
                signer: Address::ZERO,
            },
            terms.payees.clone(),
        )
        .send()
        .await?,
    )
    .await?;
    Ok(DemoMandate { mandate, key })
}
