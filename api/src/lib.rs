//! The axum HTTP API: routing, authentication, validation, the one mapping from errors to problem+json, OpenAPI.
