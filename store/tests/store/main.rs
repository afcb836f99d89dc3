//! The store's integration tests, one module per aggregate, on both backends (PostgreSQL
//! in CI; elsewhere skipped with a message when no server answers). One test binary:
//! each file of its own linked the whole dependency tree again.

mod accounts;
mod agent_credentials;
mod attestations;
mod bank;
mod dashboard;
mod idempotency;
mod identity;
mod leases;
mod outbox;
mod payments;
mod signup;
mod verifications;
mod webhooks;
