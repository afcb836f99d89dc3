//! The chains behind one mode (testnet or mainnet): each chain's addresses the API needs
//! and, in the process that holds the chain's lease, its submitter. A mode has its
//! settlement chain (the allowance state machine and a settlement router: agentic debits,
//! and one-time payments by default) and may have an attestation chain (a settlement router
//! and the attestation registry: one-time payments of the accounts that choose it).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use alloy::primitives::{Address, B256};
use alloy::providers::DynProvider;
use openrail_chain::ChainError;
use openrail_chain::deploy::ChainDeployment;
use openrail_chain::submitter::Submitter;
use openrail_domain::SessionKeyId;
use openrail_store::accounts::PaymentsChain;
use openrail_store::{Currency, Store, StoreError};

/// Most on-chain key ids [`Network::key_onchain_id`] keeps (about 6 MB).
const KEY_IDS_KEPT: usize = 100_000;

/// One chain of one mode: the settlement chain, which holds the mode's other chain in
/// [`Network::attestation`], or that attestation chain.
#[derive(Debug)]
pub struct Network {
    /// Reads the chain (`eth_call`s such as a contract wallet's ERC-1271 check); never sends.
    pub reader: DynProvider,
    /// Sends the operator's transactions; set once this process holds the chain's lease
    /// (see [`crate::lead`]), when its engine starts. Until then the process is a
    /// follower: it serves every request and queues work; it never sends.
    submitter: OnceLock<Submitter>,
    /// Chain id.
    pub chain_id: u64,
    /// The allowance state machine (the settlement chain's; see [`Network::state_machine`]).
    pub allowance_state_machine: Option<Address>,
    /// The settlement router (one-time payments).
    pub router: Address,
    /// The attestation registry (the attestation chain's; identity attestations).
    pub attestation_registry: Option<Address>,
    /// The attestation mirror (the settlement chain's; identity requirements).
    pub attestation_mirror: Option<Address>,
    /// The operator's address (the chain's submitter signs as it; on the attestation chain,
    /// the attester of Openrail's attestations).
    pub operator: Address,
    /// The treasury wallet: pays bank-funded pulls on chain, holds bank legs in transit.
    pub treasury: Address,
    /// Stablecoin per currency.
    pub tokens: BTreeMap<Currency, Address>,
    /// Where pulls go when the request names no destination (the account's settlement
    /// wallet; today the treasury of the chain, one for all accounts).
    pub default_destination: Address,
    /// Wakes this process's engine and the requests waiting for their work.
    pub outcomes: crate::outcomes::Outcomes,
    /// The on-chain ids of session keys pulled on, read once each (an id never changes:
    /// it is derived from the key's mandate and its own id when the key is created).
    key_ids: std::sync::Mutex<std::collections::HashMap<SessionKeyId, B256>>,
    /// The mode's attestation chain, when it has one (on the settlement chain only).
    pub attestation: Option<std::sync::Arc<Network>>,
    /// On an attestation chain: its mode's settlement chain (chain id) and attestation
    /// mirror there, where the receipts of its attestations go.
    pub settlement_mirror: Option<(u64, Address)>,
}

impl Network {
    /// The allowance state machine, on the settlement chain; on the attestation chain an
    /// error (agentic work never goes there: this is a bug caught, not a state).
    pub fn state_machine(&self) -> Result<Address, ChainError> {
        self.allowance_state_machine.ok_or_else(|| {
            ChainError::Deployment(format!(
                "chain {} has no allowance state machine",
                self.chain_id
            ))
        })
    }

    /// The attestation registry, on the attestation chain; elsewhere an error (attestation
    /// work never goes there).
    pub fn registry(&self) -> Result<Address, ChainError> {
        self.attestation_registry.ok_or_else(|| {
            ChainError::Deployment(format!(
                "chain {} has no attestation registry",
                self.chain_id
            ))
        })
    }

    /// The attestation mirror, on the settlement chain; an error elsewhere.
    pub fn mirror(&self) -> Result<Address, ChainError> {
        self.attestation_mirror.ok_or_else(|| {
            ChainError::Deployment(format!("chain {} has no attestation mirror", self.chain_id))
        })
    }

    /// The chain that settles one-time payments routed to `chain`: this one, or the mode's
    /// attestation chain (`None` when the mode has none).
    pub fn for_payments(&self, chain: PaymentsChain) -> Option<&Network> {
        match chain {
            PaymentsChain::Settlement => Some(self),
            PaymentsChain::Attestation => self.attestation.as_deref(),
        }
    }

    /// The chain of this mode with id `chain_id` (a payment's: it keeps the chain it was
    /// created on, whatever the account chooses later).
    pub fn on_chain(&self, chain_id: u64) -> Option<&Network> {
        if chain_id == self.chain_id {
            return Some(self);
        }
        self.attestation
            .as_deref()
            .filter(|a| a.chain_id == chain_id)
    }

    /// The chains of this mode, the settlement chain first.
    pub fn chains(&self) -> impl Iterator<Item = &Network> {
        std::iter::once(self).chain(self.attestation.as_deref())
    }

    /// Key `id`'s on-chain id (`AllowanceStateMachine.keyIdOf`), from its row the first time.
    pub async fn key_onchain_id(
        &self,
        store: &Store,
        id: &SessionKeyId,
    ) -> Result<B256, StoreError> {
        if let Some(k) = self.key_ids.lock().expect("not poisoned").get(id) {
            return Ok(*k);
        }
        let k = store.keys().get_unscoped(id).await?;
        let onchain: B256 = k
            .onchain_id
            .parse()
            .map_err(|_| StoreError::Corrupt(format!("key {id} on-chain id {:?}", k.onchain_id)))?;
        let mut ids = self.key_ids.lock().expect("not poisoned");
        // A memo, not a registry: bounded, and refilled from the rows as keys are used.
        if ids.len() >= KEY_IDS_KEPT {
            ids.clear();
        }
        ids.insert(id.clone(), onchain);
        Ok(onchain)
    }

    /// `a`, when money may come from or go to it on this network; else why not: not the
    /// zero address (tokens burned, or a transfer that can only fail) and not one of the
    /// contracts themselves (tokens sent to the router or the state machine are locked for
    /// good).
    pub fn usable_wallet(&self, a: Address) -> Result<Address, &'static str> {
        if a == Address::ZERO {
            return Err("is the zero address");
        }
        if Some(a) == self.allowance_state_machine
            || a == self.router
            || self.tokens.values().any(|t| *t == a)
        {
            return Err(
                "is one of Openrail's contracts; tokens sent there would be locked for good",
            );
        }
        Ok(a)
    }

    /// The settlement network of a deployment, without a submitter yet, read through its
    /// one RPC URL.
    pub fn from_deployment(deployment: &ChainDeployment) -> Result<Self, ChainError> {
        Self::on(deployment, &openrail_chain::rpc::Endpoint::of(deployment)?)
    }

    /// The settlement network of a deployment, read through `endpoint`.
    pub fn on(
        deployment: &ChainDeployment,
        endpoint: &openrail_chain::rpc::Endpoint,
    ) -> Result<Self, ChainError> {
        let net = Self::any(deployment, endpoint)?;
        net.state_machine()?;
        Ok(net)
    }

    /// The attestation network of a deployment (its router settles payments), read through
    /// `endpoint`.
    pub fn attestation_on(
        deployment: &ChainDeployment,
        endpoint: &openrail_chain::rpc::Endpoint,
    ) -> Result<Self, ChainError> {
        if deployment.role != openrail_chain::deploy::ChainRole::Attestation {
            return Err(ChainError::Deployment(format!(
                "chain {} is not an attestation chain",
                deployment.chain_id
            )));
        }
        Self::any(deployment, endpoint)
    }

    /// This attestation network relaying its attestations' receipts to the mirror `mirror`
    /// of settlement chain `chain_id` (none: nothing relayed).
    pub fn relaying_to(mut self, chain_id: u64, mirror: Option<Address>) -> Self {
        self.settlement_mirror = mirror.map(|m| (chain_id, m));
        self
    }

    /// This network with `attestation` as its mode's attestation chain.
    pub fn with_attestation(mut self, attestation: Option<std::sync::Arc<Network>>) -> Self {
        self.attestation = attestation;
        self
    }

    fn any(
        deployment: &ChainDeployment,
        endpoint: &openrail_chain::rpc::Endpoint,
    ) -> Result<Self, ChainError> {
        let tokens = deployment.currency_tokens();
        Ok(Network {
            reader: endpoint.provider()?,
            submitter: OnceLock::new(),
            chain_id: deployment.chain_id,
            allowance_state_machine: deployment.allowance_state_machine,
            router: deployment.router,
            attestation_registry: deployment.attestation_registry,
            attestation_mirror: deployment.attestation_mirror,
            operator: deployment.operator,
            treasury: deployment.treasury,
            tokens,
            default_destination: deployment.treasury,
            outcomes: crate::outcomes::Outcomes::default(),
            key_ids: Default::default(),
            attestation: None,
            settlement_mirror: None,
        })
    }

    /// The submitter, when this process holds the chain's lease.
    pub fn submitter(&self) -> Option<&Submitter> {
        self.submitter.get()
    }

    /// Whether this process sends the chain's transactions.
    pub fn is_leader(&self) -> bool {
        self.submitter.get().is_some()
    }

    /// Installs the submitter (once: a process that loses the lease exits).
    pub(crate) fn set_submitter(&self, submitter: Submitter) {
        if self.submitter.set(submitter).is_err() {
            tracing::warn!(chain_id = self.chain_id, "a second submitter was ignored");
        }
    }
}
