//! W3C Verifiable Credentials for Openrail, without I/O: verification and issuance of
//! credentials and presentations secured with Data Integrity proofs. No network, no
//! database, no clock: the time is a parameter, contexts are compiled in, did:web
//! documents and status lists come from the caller's memory. Every function is sync.
//!
//! # Verifying
//!
//! [`verify_credential`] and [`verify_presentation`] take the document as JSON and
//! [`VerifyOptions`] (`now`, a presentation's expected `challenge`/`domain`, a
//! [`StatusListResolver`], a did:web allow-list) and answer a [`Verification`]: `verified`,
//! `problem_details` typed by VC Data Model 2.0 §7.1 and Data Integrity 1.0 (see
//! [`ProblemType`]), and `results` per proof, validity and status entry — the VC API verify
//! response's shape (it serializes with serde). `malformed` is set when the input is not a
//! credential/presentation at all (an API answers 400; otherwise an unverified document is
//! 422).
//!
//! What is checked:
//! - structure: an object; `@context` starting with the VC 1.1 or 2.0 URL; `type` with
//!   `VerifiableCredential` / `VerifiablePresentation`; a credential's `issuer` and
//!   `credentialSubject` (and VC 1.1's `issuanceDate`);
//! - every proof (proof sets: all must verify; proof chains: `previousProof` must name proofs
//!   of the set, and the chained proof is checked over the document with those attached):
//!   `type` `DataIntegrityProof` with `cryptosuite` `eddsa-rdfc-2022`, `eddsa-jcs-2022`,
//!   `ecdsa-rdfc-2019` or `ecdsa-jcs-2019` (P-256 and P-384); `proofPurpose`
//!   `assertionMethod` for credentials, `authentication` for presentations, and the
//!   verification method's controller must list the key under that relationship; `created`
//!   not after `now`, `expires` after `now`; `challenge`/`domain` against the options;
//! - verification methods: `did:key` (Ed25519 `z6Mk…`, P-256 `zDna…`, P-384 `z82L…`),
//!   resolved in process; `did:web` only from [`VerifyOptions::did_web`]; anything else fails;
//! - JSON-LD: expansion with the static contexts of [`contexts`]; an unknown context URL
//!   fails; a term no context defines fails (with VC 1.1 contexts the expansion would drop
//!   it silently, so expansion runs in a strict mode that refuses it; with VC 2.0's `@vocab`
//!   it changes the canonical form and the signature fails); RDFC-1.0 canonicalization;
//! - validity: `validFrom`/`validUntil` (2.0), `issuanceDate`/`expirationDate` (1.1);
//! - status: `BitstringStatusListEntry` (status size 1) against the list the resolver gives;
//!   a set bit, an unknown list or an unverifiable list credential fails.
//!
//! What is not checked: that the proof's key belongs to the `issuer` (the W3C vectors sign
//! with keys unrelated to their issuer); `credentialSchema`, `termsOfUse`, `evidence`,
//! `refreshService`; enveloped (JOSE/COSE) credentials; `ecdsa-sd-2023`, `bbs-2023` and
//! the legacy `Ed25519Signature2020` suite; status lists with `statusSize` above 1.
//!
//! # Issuing
//!
//! [`issue_credential`] adds an `eddsa-rdfc-2022` proof (`assertionMethod`) made with an
//! Ed25519 key; [`sign_presentation`] does the same for a presentation (`authentication`,
//! `challenge`, `domain`); [`did_key_from_ed25519_public`] names the key as a `did:key`.
//! [`StatusList`] builds the bitstring of a status list credential (`encode()` gives its
//! `encodedList`).

pub mod contexts;
mod issue;
mod jsonld;
mod keys;
mod problem;
mod status;
mod suites;
mod verify;

pub use issue::{IssueError, issue_credential, sign_presentation};
pub use jsonld::CanonError;
pub use keys::{KeyError, PublicKey, did_key_from_ed25519_public, did_key_verification_method};
pub use problem::{
    ProblemDetail, ProblemType, ProofResult, StatusResult, ValidityResult, Verification,
    VerificationResults,
};
pub use status::{MIN_STATUS_LIST_BITS, StatusList, StatusListError};
pub use suites::Cryptosuite;
pub use verify::{
    CREDENTIALS_V1, CREDENTIALS_V2, StatusListResolver, StatusListSource, VerifyOptions,
    verify_credential, verify_presentation,
};

/// Re-exported so callers name the same key types as the signatures here.
pub use ed25519_dalek;
