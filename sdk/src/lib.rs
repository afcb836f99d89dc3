//! Rust client of the /v1 HTTP API, with the modules `payments` and `agentic`. Talks HTTP only.
