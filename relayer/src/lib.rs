//! The relayer: watches chain events with a persisted cursor and runs the bank rail (the
//! bank legs themselves are driven by the engine, `openrail-engine`). Today: the [`bank`] rail (testnet's simulated bank,
//! sans-IO rules, state in the store) and the [`watcher`] (a per-chain event cursor that
//! settles what the chain decided, e.g. pulls whose requests died before their outcome was
//! recorded).

pub mod bank;
pub mod watcher;
