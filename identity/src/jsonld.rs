//! JSON-LD to RDF with the static contexts (the `json-ld` crate, strict about undefined
//! terms), RDFC-1.0 canonical N-Quads (the `rdf-canon` crate), and JCS (RFC 8785).

use std::collections::HashMap;
use std::future::Future;
use std::sync::LazyLock;
use std::task::{Context, Poll, Waker};

use json_ld::expansion::{Action, Policy};
use json_ld::rdf_types::{Id, LiteralType, Object, Quad};
use json_ld::syntax::Parse as _;
use json_ld::{IriBuf, JsonLdProcessor as _, Options, RemoteDocument};
use serde_json::Value;

use crate::contexts::CONTEXTS;

/// Why a document has no canonical form here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CanonError {
    /// A context URL that is not compiled in (nothing is fetched).
    #[error("unknown JSON-LD context (contexts are never fetched): {0}")]
    UnknownContext(String),
    /// The document is not JSON-LD this processor accepts.
    #[error("invalid JSON-LD: {0}")]
    Syntax(String),
    /// A property no context defines (JSON-LD expansion would drop it silently).
    #[error("a term is not defined by any context: {0}")]
    UndefinedTerm(String),
    /// Expansion, RDF conversion or canonicalization failed otherwise.
    #[error("JSON-LD transformation failed: {0}")]
    Transformation(String),
}

/// The static loader, parsed once.
static LOADER: LazyLock<HashMap<IriBuf, RemoteDocument>> = LazyLock::new(|| {
    CONTEXTS
        .iter()
        .map(|(url, text)| {
            let iri = IriBuf::new(url.to_string()).expect("context URLs are IRIs");
            let (value, _) =
                json_ld::syntax::Value::parse_str(text).expect("compiled-in contexts are JSON");
            (
                iri.clone(),
                RemoteDocument::new(
                    Some(iri),
                    Some("application/ld+json".parse().expect("mime")),
                    value,
                ),
            )
        })
        .collect()
});

/// Drives a future that never waits (the loader answers from memory) to completion.
fn run<F: Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    // A future over an in-memory loader is ready at the first poll; a few more polls are
    // allowed in case a combinator yields once.
    for _ in 0..16 {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return Some(v);
        }
    }
    None
}

/// Undefined terms are an error instead of being dropped; terms under `@vocab` are kept
/// (they change the canonical form, so a term added after signing fails the signature).
fn options() -> Options {
    Options {
        expansion_policy: Policy {
            invalid: Action::Reject,
            vocab: Action::Keep,
            allow_undefined: false,
        },
        ..Options::default()
    }
}

fn classify(e: &json_ld::ToRdfError) -> CanonError {
    let json_ld::ToRdfError::Expand(inner) = e;
    let text = e.to_string();
    match inner {
        json_ld::ExpandError::Loading(_) | json_ld::ExpandError::ContextLoading(_) => {
            CanonError::UnknownContext(text)
        }
        json_ld::ExpandError::ContextProcessing(c)
            if c.to_string().to_lowercase().contains("load") =>
        {
            CanonError::UnknownContext(text)
        }
        json_ld::ExpandError::Expansion(json_ld::expansion::Error::KeyExpansionFailed(key)) => {
            CanonError::UndefinedTerm(key.clone())
        }
        json_ld::ExpandError::Expansion(json_ld::expansion::Error::ContextProcessing(c))
            if c.to_string().to_lowercase().contains("load") =>
        {
            CanonError::UnknownContext(text)
        }
        _ => CanonError::Transformation(text),
    }
}

fn id_term(id: &Id<IriBuf, json_ld::BlankIdBuf>) -> oxrdf::Subject {
    match id {
        Id::Iri(i) => oxrdf::NamedNode::new_unchecked(i.as_str()).into(),
        Id::Blank(b) => oxrdf::BlankNode::new_unchecked(&b.as_str()[2..]).into(),
    }
}

/// The hash RDFC-1.0 labels blank nodes with: SHA-256, or SHA-384 for `ecdsa-rdfc-2019`
/// with P-384 keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RdfcHash {
    Sha256,
    Sha384,
}

/// Bound on the "hash N-degree quads" calls, against poison graphs (many blank nodes built
/// to make canonicalization exponential). A credential needs a handful.
const HNDQ_CALL_LIMIT: usize = 4096;

/// RDFC-1.0 canonical N-Quads of the document's JSON-LD expansion.
pub(crate) fn canonicalize(document: &Value, hash: RdfcHash) -> Result<String, CanonError> {
    let text = document.to_string();
    let (value, _) =
        json_ld::syntax::Value::parse_str(&text).map_err(|e| CanonError::Syntax(e.to_string()))?;
    let input = RemoteDocument::new(None, None, value);
    let generator = json_ld::rdf_types::generator::Blank::new();
    let mut rdf = run(input.to_rdf_using(generator, &*LOADER, options()))
        .ok_or_else(|| CanonError::Transformation("the JSON-LD processor waited".into()))?
        .map_err(|e| classify(&e))?;
    let mut dataset = oxrdf::Dataset::new();
    for Quad(s, p, o, g) in rdf.cloned_quads() {
        let subject = id_term(&s);
        let predicate = match &p {
            Id::Iri(i) => oxrdf::NamedNode::new_unchecked(i.as_str()),
            Id::Blank(_) => continue, // generalized RDF is not produced
        };
        let object: oxrdf::Term = match &o {
            Object::Id(id) => match id_term(id) {
                oxrdf::Subject::NamedNode(n) => n.into(),
                oxrdf::Subject::BlankNode(b) => b.into(),
                #[allow(unreachable_patterns)]
                _ => unreachable!("ids are IRIs or blank nodes"),
            },
            Object::Literal(l) => match &l.type_ {
                LiteralType::Any(t) => oxrdf::Literal::new_typed_literal(
                    l.value.as_str(),
                    oxrdf::NamedNode::new_unchecked(t.as_str()),
                )
                .into(),
                LiteralType::LangString(tag) => {
                    oxrdf::Literal::new_language_tagged_literal_unchecked(
                        l.value.as_str(),
                        tag.as_str().to_lowercase(),
                    )
                    .into()
                }
            },
        };
        let graph = match &g {
            None => oxrdf::GraphName::DefaultGraph,
            Some(id) => match id_term(id) {
                oxrdf::Subject::NamedNode(n) => n.into(),
                oxrdf::Subject::BlankNode(b) => b.into(),
                #[allow(unreachable_patterns)]
                _ => unreachable!("ids are IRIs or blank nodes"),
            },
        };
        dataset.insert(&oxrdf::Quad::new(subject, predicate, object, graph));
    }
    let options = rdf_canon::CanonicalizationOptions {
        hndq_call_limit: Some(HNDQ_CALL_LIMIT),
    };
    match hash {
        RdfcHash::Sha256 => rdf_canon::canonicalize_with::<sha2::Sha256>(&dataset, &options),
        RdfcHash::Sha384 => rdf_canon::canonicalize_with::<sha2::Sha384>(&dataset, &options),
    }
    .map_err(|e| CanonError::Transformation(e.to_string()))
}

/// The JSON Canonicalization Scheme (RFC 8785) form of the document.
pub(crate) fn jcs(document: &Value) -> Result<String, CanonError> {
    serde_jcs::to_string(document).map_err(|e| CanonError::Transformation(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn expansion_uses_the_static_contexts() {
        let doc = json!({
            "@context": ["https://www.w3.org/ns/credentials/v2", "https://www.w3.org/ns/credentials/examples/v2"],
            "id": "urn:x",
            "type": ["VerifiableCredential"],
            "credentialSubject": {"id": "did:example:a", "alumniOf": "School"}
        });
        let nq = canonicalize(&doc, RdfcHash::Sha256).unwrap();
        assert!(nq.contains(
            "<did:example:a> <https://www.w3.org/ns/credentials/examples#alumniOf> \"School\" ."
        ));
    }

    #[test]
    fn an_unknown_context_is_never_fetched() {
        let doc = json!({"@context": "https://example.com/ctx", "@id": "urn:x"});
        assert!(
            matches!(
                canonicalize(&doc, RdfcHash::Sha256),
                Err(CanonError::UnknownContext(_))
            ),
            "{:?}",
            canonicalize(&doc, RdfcHash::Sha256)
        );
    }

    #[test]
    fn an_undefined_term_is_an_error_not_a_drop() {
        let doc = json!({
            "@context": ["https://www.w3.org/2018/credentials/v1"],
            "id": "urn:x",
            "type": ["VerifiableCredential"],
            "notDefined": "x"
        });
        assert!(
            matches!(
                canonicalize(&doc, RdfcHash::Sha256),
                Err(CanonError::UndefinedTerm(_))
            ),
            "{:?}",
            canonicalize(&doc, RdfcHash::Sha256)
        );
    }

    #[test]
    fn jcs_sorts_keys() {
        assert_eq!(
            jcs(&json!({"b": 1, "a": [true, "x"]})).unwrap(),
            r#"{"a":[true,"x"],"b":1}"#
        );
    }
}
