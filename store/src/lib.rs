//! Domain types that cross crates — money, currencies, intervals and their calendar epochs —
//! kept sans-IO and unit-tested in place. From the API issue on, this crate also holds every
//! SQL query and the migrations runner; it knows nothing of HTTP or chains.

pub mod accounts;
pub mod agentic;
pub mod db;
pub mod epoch;
pub mod ids;
pub mod journal;
pub mod money;
pub mod testing;

pub use db::{Backend, Store, StoreError};
pub use epoch::{Epoch, Interval};
pub use ids::Mode;
pub use money::{Amount, AmountError, Currency};

/// Now, in unix milliseconds.
pub fn now_ms() -> i64 {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970");
    i64::try_from(d.as_millis()).expect("milliseconds fit in i64")
}
