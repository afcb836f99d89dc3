//! Domain types that cross crates — for now intervals and their calendar epochs —
//! kept sans-IO and unit-tested in place. From the API issue on, this crate also holds every
//! SQL query and the migrations runner; it knows nothing of HTTP or chains.

pub mod epoch;

pub use epoch::{Epoch, Interval};
