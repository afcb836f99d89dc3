//! Integration tests of `openrail-identity`: the W3C vectors (and their intermediate values),
//! a table of mutations over every vector, and issuance round trips. One test binary.

mod common;
mod issuance;
mod mutations;
mod vectors;
