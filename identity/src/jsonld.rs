//! JSON-LD to RDF with the static contexts (the `json-ld` crate, strict about undefined
//! terms), RDFC-1.0 canonical N-Quads (the `rdf-canon` crate), and JCS (RFC 8785).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, LazyLock, PoisonError, RwLock};
use std::task::{Context, Poll, Waker};

use json_ld::expansion::{Action, Policy};
use json_ld::rdf_types::{Id, LiteralType, Object, Quad};
use json_ld::syntax::{Parse as _, TryFromJson as _};
use json_ld::{Expand as _, IriBuf, Options, Process as _, RdfQuads as _, RemoteDocument};
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

/// The processed (active) JSON-LD context of a document's top-level `@context`.
type ActiveContext = json_ld::Context<IriBuf, json_ld::BlankIdBuf>;

/// Most top-level context lists whose processed contexts are kept ([`ACTIVE_CONTEXTS`]).
/// Entries are never evicted: past the bound, other lists are processed on every use, as
/// without the cache (the same result, only slower), so documents crafted with many
/// different lists cannot grow memory.
const ACTIVE_CONTEXT_CACHE_LIMIT: usize = 64;

/// Longest top-level context list kept in the cache.
const ACTIVE_CONTEXT_MAX_LIST: usize = 8;

/// Processed contexts of top-level `@context` lists made only of compiled-in URLs, by
/// list. Processing the VC 2.0 context is most of a verification's time, and it is the
/// same for every document that names it: the contexts are static and nothing is fetched,
/// so the processed context of a list of them is a pure function of the list.
static ACTIVE_CONTEXTS: LazyLock<ContextCache> =
    LazyLock::new(|| ContextCache::new(ACTIVE_CONTEXT_CACHE_LIMIT));

/// Processed contexts by list, at most `limit` of them (see [`ACTIVE_CONTEXT_CACHE_LIMIT`]).
struct ContextCache {
    map: RwLock<HashMap<Vec<String>, Arc<ActiveContext>>>,
    limit: usize,
}

impl ContextCache {
    fn new(limit: usize) -> Self {
        Self {
            map: RwLock::default(),
            limit,
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The active context the expansion algorithm would build from the top-level
    /// `@context` `context` (the list `key`) with an empty initial context and no base URL,
    /// from the cache or processed now (and kept while there is room). `None` when
    /// processing fails (nothing is kept): the caller then expands the document as it is,
    /// which meets the same failure and reports it as the expansion does.
    fn get_or_process(&self, key: &[String], context: &Value) -> Option<Arc<ActiveContext>> {
        if let Some(found) = self
            .map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
        {
            return Some(found.clone());
        }
        let (value, _) = json_ld::syntax::Value::parse_str(&context.to_string()).ok()?;
        let local = json_ld::syntax::context::Context::try_from_json(value).ok()?;
        // As the expansion processes a top-level `@context` (the options it derives from
        // the expansion's).
        let processing: json_ld::context_processing::Options = options().expansion_options().into();
        let processed = run(local.process_full(
            &mut (),
            &ActiveContext::new(None),
            &*LOADER,
            None,
            processing,
            (),
        ))?
        .ok()?
        .into_processed();
        let processed = Arc::new(processed);
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        if map.len() < self.limit {
            map.insert(key.to_vec(), processed.clone());
        }
        Some(processed)
    }
}

/// The cache key of a top-level `@context`: a URL or a list of URLs, every one compiled in
/// (anything else, such as an inline context, is processed as part of the expansion).
fn static_context_list(context: &Value) -> Option<Vec<String>> {
    let known = |v: &Value| {
        v.as_str()
            .filter(|url| CONTEXTS.iter().any(|(known, _)| known == url))
            .map(str::to_owned)
    };
    match context {
        Value::String(_) => Some(vec![known(context)?]),
        Value::Array(list) if !list.is_empty() && list.len() <= ACTIVE_CONTEXT_MAX_LIST => {
            list.iter().map(known).collect()
        }
        _ => None,
    }
}

/// The JSON-LD expansion of `document` (unordered, with the strict [`options`]). A
/// top-level `@context` of compiled-in URLs is not processed again: the document is
/// expanded without it, starting from its cached active context ([`ContextCache::get_or_process`]) —
/// what the expansion algorithm does with it at the top level (an object's `@context` is
/// processed against the initial context before any of its other entries, and the entry
/// itself expands to nothing).
/// `use_cache: false` expands as if there were no cache (the tests compare both).
fn expand(
    document: &Value,
    use_cache: bool,
) -> Result<json_ld::ExpandedDocument<IriBuf, json_ld::BlankIdBuf>, CanonError> {
    let options = options().unordered();
    let cached = document
        .as_object()
        .filter(|_| use_cache)
        .and_then(|object| {
            let context = object.get("@context")?;
            let active = ACTIVE_CONTEXTS.get_or_process(&static_context_list(context)?, context)?;
            let mut rest = object.clone();
            rest.remove("@context");
            Some((active, Value::Object(rest)))
        });
    let parse = |v: &Value| {
        json_ld::syntax::Value::parse_str(&v.to_string())
            .map(|(value, _)| value)
            .map_err(|e| CanonError::Syntax(e.to_string()))
    };
    let expanded = match cached {
        Some((active, rest)) => {
            let value = parse(&rest)?;
            run(value.expand_full(
                &mut (),
                ActiveContext::clone(&active),
                None,
                &*LOADER,
                options.expansion_options(),
                (),
            ))
            .map(|r| r.map_err(json_ld::ExpandError::Expansion))
        }
        None => {
            let input = RemoteDocument::new(None, None, parse(document)?);
            run(json_ld::JsonLdProcessor::expand_full(
                &input,
                &mut (),
                &*LOADER,
                options,
                (),
            ))
        }
    };
    expanded
        .ok_or_else(|| CanonError::Transformation("the JSON-LD processor waited".into()))?
        .map_err(|e| classify(&json_ld::ToRdfError::Expand(e)))
}

/// RDFC-1.0 canonical N-Quads of the document's JSON-LD expansion.
pub(crate) fn canonicalize(document: &Value, hash: RdfcHash) -> Result<String, CanonError> {
    canonicalize_with(document, hash, true)
}

fn canonicalize_with(
    document: &Value,
    hash: RdfcHash,
    use_cache: bool,
) -> Result<String, CanonError> {
    let mut expanded = expand(document, use_cache)?;
    let mut generator = json_ld::rdf_types::generator::Blank::new();
    // As `JsonLdProcessor::to_rdf` does: blank nodes relabelled, then the quads (no
    // `rdfDirection`, no generalized RDF).
    expanded.relabel_and_canonicalize_with(&mut (), &mut generator);
    let mut vocabulary = ();
    let quads = expanded
        .rdf_quads_full(&mut vocabulary, &mut generator, None, false)
        .cloned();
    let mut dataset = oxrdf::Dataset::new();
    for Quad(s, p, o, g) in quads {
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

    /// Every JSON document under `tests/vectors`, by path.
    fn vector_documents() -> Vec<(String, Value)> {
        fn walk(dir: &std::path::Path, out: &mut Vec<(String, Value)>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, out);
                } else if path.extension().is_some_and(|e| e == "json") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    out.push((
                        path.display().to_string(),
                        serde_json::from_str(&text).unwrap(),
                    ));
                }
            }
        }
        let mut out = Vec::new();
        walk(
            std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors")),
            &mut out,
        );
        out
    }

    /// The cached active context gives the canonical form (or the error) the plain
    /// expansion gives, on every W3C vector (with and without its proof, and as the proof
    /// configuration a verifier canonicalizes) and on documents built to fail.
    #[test]
    fn the_context_cache_changes_no_canonical_form() {
        let mut docs = vector_documents();
        assert!(docs.len() >= 10, "vectors not found: {}", docs.len());
        for (name, doc) in docs.clone() {
            let Some(object) = doc.as_object() else {
                continue;
            };
            if let Some(proof) = object.get("proof") {
                let mut unsecured = object.clone();
                unsecured.remove("proof");
                docs.push((
                    format!("{name} without its proof"),
                    Value::Object(unsecured),
                ));
                let proofs = match proof {
                    Value::Array(list) => list.clone(),
                    one => vec![one.clone()],
                };
                for mut config in proofs.into_iter().filter_map(|p| p.as_object().cloned()) {
                    config.remove("proofValue");
                    if let Some(ctx) = object.get("@context") {
                        config.insert("@context".into(), ctx.clone());
                    }
                    docs.push((
                        format!("{name}: a proof configuration"),
                        Value::Object(config),
                    ));
                }
            }
        }
        let v1 = "https://www.w3.org/2018/credentials/v1";
        let v2 = "https://www.w3.org/ns/credentials/v2";
        for (name, doc) in [
            // VC 1.1 then 2.0: protected terms redefined, context processing fails.
            (
                "v1 then v2",
                json!({"@context": [v1, v2], "id": "urn:x", "type": ["VerifiableCredential"]}),
            ),
            (
                "a term no context defines",
                json!({"@context": [v1], "type": ["VerifiableCredential"], "notDefined": 1}),
            ),
            (
                "a term under @vocab",
                json!({"@context": v2, "type": ["VerifiableCredential"], "notDefined": 1}),
            ),
            (
                "an unknown context after known ones",
                json!({"@context": [v2, "https://example.com/ctx"], "id": "urn:x"}),
            ),
            (
                "an inline context",
                json!({"@context": [v2, {"ex": "https://example.com/"}], "ex:a": 1}),
            ),
            (
                "a nested context",
                json!({"@context": v2, "type": ["VerifiableCredential"], "credentialSubject": {"@context": {"b": "https://example.com/b"}, "b": 2}}),
            ),
            (
                "a redefined protected term",
                json!({"@context": [v2, {"id": "https://example.com/id"}], "id": "urn:x"}),
            ),
            (
                "a keyword alias clash",
                json!({"@context": v2, "@type": "VerifiableCredential", "type": "VerifiablePresentation"}),
            ),
            (
                "an empty list",
                json!({"@context": [], "@id": "urn:x", "https://example.com/p": 1}),
            ),
        ] {
            docs.push((name.to_string(), doc));
        }
        for (name, doc) in &docs {
            for hash in [RdfcHash::Sha256, RdfcHash::Sha384] {
                let plain = canonicalize_with(doc, hash, false);
                let cached = canonicalize_with(doc, hash, true);
                assert_eq!(cached, plain, "{name}");
                // A second time from the cache.
                assert_eq!(canonicalize_with(doc, hash, true), plain, "{name}");
            }
        }
    }

    #[test]
    fn only_lists_of_compiled_in_contexts_are_cached() {
        let v2 = "https://www.w3.org/ns/credentials/v2";
        let ex = "https://www.w3.org/ns/credentials/examples/v2";
        assert_eq!(static_context_list(&json!(v2)), Some(vec![v2.to_string()]));
        assert_eq!(
            static_context_list(&json!([v2, ex])),
            Some(vec![v2.to_string(), ex.to_string()])
        );
        assert_eq!(
            static_context_list(&json!([v2, "https://example.com/ctx"])),
            None
        );
        assert_eq!(
            static_context_list(&json!([v2, {"a": "https://example.com/a"}])),
            None
        );
        assert_eq!(static_context_list(&json!([])), None);
        assert_eq!(
            static_context_list(&json!({"a": "https://example.com/a"})),
            None
        );
        assert_eq!(
            static_context_list(&json!(vec![v2; ACTIVE_CONTEXT_MAX_LIST + 1])),
            None
        );
        // A list that fails to process is not kept.
        let failing = [
            "https://www.w3.org/2018/credentials/v1".to_string(),
            v2.to_string(),
        ];
        let cache = ContextCache::new(4);
        assert!(cache.get_or_process(&failing, &json!(failing)).is_none());
        assert_eq!(cache.len(), 0);
        let ok = [v2.to_string(), ex.to_string()];
        let first = cache.get_or_process(&ok, &json!(ok)).expect("processed");
        let again = cache.get_or_process(&ok, &json!(ok)).expect("cached");
        assert!(Arc::ptr_eq(&first, &again), "processed once, then shared");
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn the_cache_is_bounded() {
        // Lists of compiled-in URLs are unbounded in number (repeats, orders): past the
        // limit they are still processed, and not kept.
        let limit = 3;
        let cache = ContextCache::new(limit);
        let v2 = "https://www.w3.org/ns/credentials/v2";
        let mut processed = 0;
        for extra in CONTEXTS.iter().map(|(url, _)| *url).filter(|u| *u != v2) {
            let list = vec![v2.to_string(), extra.to_string()];
            if cache.get_or_process(&list, &json!(list)).is_some() {
                processed += 1;
            }
        }
        assert!(processed > limit, "only {processed} lists processed");
        assert_eq!(cache.len(), limit);
    }

    #[test]
    fn jcs_sorts_keys() {
        assert_eq!(
            jcs(&json!({"b": 1, "a": [true, "x"]})).unwrap(),
            r#"{"a":[true,"x"],"b":1}"#
        );
    }
}
