//! The JSON-LD contexts compiled into the crate (origins in `src/contexts/README.md`). A
//! document naming any other context URL does not verify: nothing is fetched.

/// Every context this crate knows, by URL.
pub const CONTEXTS: &[(&str, &str)] = &[
    (
        "https://www.w3.org/2018/credentials/v1",
        include_str!("contexts/credentials-v1.jsonld"),
    ),
    (
        "https://www.w3.org/ns/credentials/v2",
        include_str!("contexts/credentials-v2.jsonld"),
    ),
    (
        "https://w3id.org/security/data-integrity/v1",
        include_str!("contexts/data-integrity-v1.jsonld"),
    ),
    (
        "https://w3id.org/security/data-integrity/v2",
        include_str!("contexts/data-integrity-v2.jsonld"),
    ),
    (
        "https://w3id.org/security/multikey/v1",
        include_str!("contexts/multikey-v1.jsonld"),
    ),
    (
        "https://www.w3.org/2018/credentials/examples/v1",
        include_str!("contexts/credentials-examples-v1.jsonld"),
    ),
    (
        "https://www.w3.org/ns/odrl.jsonld",
        include_str!("contexts/odrl.jsonld"),
    ),
    (
        "https://www.w3.org/ns/credentials/examples/v2",
        include_str!("contexts/credentials-examples-v2.jsonld"),
    ),
    (
        "https://w3id.org/citizenship/v4rc1",
        include_str!("contexts/citizenship-v4rc1.jsonld"),
    ),
];

/// The URLs of [`CONTEXTS`].
pub fn known_context_urls() -> impl Iterator<Item = &'static str> {
    CONTEXTS.iter().map(|(url, _)| *url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_context_is_a_json_ld_context_document() {
        for (url, text) in CONTEXTS {
            let v: serde_json::Value =
                serde_json::from_str(text).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert!(v.get("@context").is_some(), "{url} has no @context");
        }
    }
}
