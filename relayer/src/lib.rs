//! The relayer: watches chain events with a persisted cursor, reconciles the bank-rail
//! legs, and (later) delivers webhooks. Today it holds the bank rail: the [`bank`] module's
//! simulated bank of testnet, whose rules are sans-IO and whose state lives in the store.

pub mod bank;
