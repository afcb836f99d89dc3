//! The end-to-end suite: one test binary (each former binary a module), so the workspace is
//! linked once for all of them. Every test goes through the harness (`openrail_tests`):
//! fresh database, two anvil chains on free ports, deployed contracts, a server on port 0.
//! `OPENRAIL_TEST_DB=postgres` runs the same binary on PostgreSQL.

mod agent_credential;
mod agentic_api;
mod allowance_onchain;
mod attestations;
mod bank_accounts;
mod confirmations;
mod consent;
mod conservation;
mod conservation_property;
mod crash;
mod dashboard_identity;
mod events;
mod hostile_input;
mod identity;
mod identity_attestations;
mod identity_requirements;
mod intake;
mod openapi;
mod operations;
mod payments;
mod recovery;
mod relayer;
mod sdk;
mod takeover;
mod verifications;
mod webhooks;
