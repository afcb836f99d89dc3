//! The dashboard's identity pages end to end, as a browser's forms drive them (the
//! browser test, `tests/browser/identity.test.mjs`, runs on SQLite only; this runs on
//! either database): a verification session created, submitted and verified by the
//! simulated provider, its credential attested on the attestation chain and revoked — each
//! form answered with a redirect (post/redirect/get) — the issued credentials listed (an
//! unknown page cursor refused), what the lifecycle refuses shown as the API's problem,
//! another account seeing none of it, and a post without a session changing nothing.

use std::time::{Duration, Instant};

use openrail_domain::AttestationId;
use openrail_store::Mode;
use openrail_store::agentic::Scope;
use openrail_store::attestations::AttestationStatus;
use openrail_tests::{DashboardSession, Harness};
use reqwest::StatusCode;

/// The path a form's 303 redirects to.
fn location(p: &openrail_tests::Page) -> String {
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.text);
    p.header("location").to_string()
}

/// Reloads `path` until it contains `needle` (20 s at most); answers the page.
async fn until(d: &DashboardSession, path: &str, needle: &str) -> anyhow::Result<String> {
    let start = Instant::now();
    loop {
        let page = d.get(path).await?;
        assert_eq!(page.status, StatusCode::OK, "{path}: {}", page.text);
        if page.text.contains(needle) {
            return Ok(page.text);
        }
        anyhow::ensure!(
            start.elapsed() < Duration::from_secs(20),
            "{path} never showed {needle:?}: {}",
            page.text
        );
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
}

#[tokio::test]
async fn a_wallet_verified_attested_and_revoked_through_the_dashboards_forms() -> anyhow::Result<()>
{
    let h = Harness::start().await?;
    let d = h.dashboard_sign_up("identity@example.com", None).await?;
    let subject = "0x00000000000000000000000000000000000A11cE";

    // The section's entry leads to its first page, where testnet offers the form.
    let index = d.get("/dashboard/identity").await?;
    assert_eq!(location(&index), "/dashboard/identity/verifications");
    let list = d.get("/dashboard/identity/verifications").await?;
    assert_eq!(list.status, StatusCode::OK);
    assert!(list.text.contains("Start a verification"), "{}", list.text);
    assert!(
        list.text
            .contains("<a href=\"/dashboard/identity\" aria-current=\"page\">Identity</a>")
    );

    // Created through the API's create: the session's page (PRG).
    let created = d
        .post_form(
            "/dashboard/identity/verifications",
            &[
                ("type", "financial_health"),
                ("subject", subject),
                ("outcome", "verified"),
            ],
        )
        .await?;
    let session_path = location(&created);
    let session = session_path
        .strip_prefix("/dashboard/identity/verifications/")
        .expect("the session's page")
        .to_string();
    assert!(session.starts_with("idv_"), "{session}");
    let page = d.get(&session_path).await?;
    assert!(page.text.contains("status-requires_input"), "{}", page.text);
    assert!(page.text.contains("FinancialHealthCredential"));

    // Submitted: back to its page, which reloads itself until the provider answers.
    let submitted = d.post_form(&format!("{session_path}/submit"), &[]).await?;
    assert_eq!(location(&submitted), session_path);
    let page = until(&d, &session_path, "status-verified").await?;
    let credential = regex::Regex::new(r"urn:uuid:[0-9a-f-]{36}")?
        .find(&page)
        .expect("the issued credential's id")
        .as_str()
        .to_string();
    for step in [
        "identity.verification.created",
        "identity.verification.processing",
        "identity.verification.verified",
    ] {
        assert!(page.contains(step), "the timeline shows {step}");
    }
    assert!(!page.contains("data-refresh"), "no reload once answered");
    // A verified session cannot be submitted again: the API's 409, as a page.
    let again = d.post_form(&format!("{session_path}/submit"), &[]).await?;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.text);
    assert!(again.text.contains("role=\"alert\""));

    // The issued credentials list it, attestable.
    let creds = d.get("/dashboard/identity/credentials").await?;
    assert_eq!(creds.status, StatusCode::OK);
    assert!(creds.text.contains(&credential), "{}", creds.text);
    assert!(creds.text.contains(&format!(
        "aria-label=\"Attest credential {credential} on chain\""
    )));
    let stale = d
        .get("/dashboard/identity/credentials?starting_after=urn:uuid:nothing")
        .await?;
    assert_eq!(stale.status, StatusCode::BAD_REQUEST, "{}", stale.text);

    // Attested in one click: the attestation's page, active once mined.
    let attested = d
        .post_form(
            "/dashboard/identity/attestations",
            &[("credential_id", &credential)],
        )
        .await?;
    let att_path = location(&attested);
    let att = att_path
        .strip_prefix("/dashboard/identity/attestations/")
        .expect("the attestation's page")
        .to_string();
    let page = until(&d, &att_path, "status-active").await?;
    assert!(
        page.to_lowercase().contains(&subject.to_lowercase()),
        "{page}"
    );
    let id = AttestationId::parse(&att).expect("an attestation id");
    let store = &h.server().store;
    let scope = Scope {
        account_id: &d.account_id,
        mode: Mode::Testnet,
    };
    let row = store.attestations().get(scope, &id).await?;
    assert_eq!(row.status, AttestationStatus::Active);
    assert_eq!(row.credential_id.as_deref(), Some(credential.as_str()));
    let uid = row.uid.expect("a uid once active");
    assert!(page.contains(&uid), "the page shows the uid");
    let listed = d.get("/dashboard/identity/attestations").await?;
    assert!(listed.text.contains(&format!("<tr id=\"{att}\">")));
    // The session's page names its credential's attestation.
    let page = d.get(&session_path).await?;
    assert!(page.text.contains(&att_path), "{}", page.text);

    // Another account sees none of it.
    let other = h.dashboard_sign_up("other@example.com", None).await?;
    assert_eq!(other.get(&att_path).await?.status, StatusCode::NOT_FOUND);
    assert_eq!(
        other.get(&session_path).await?.status,
        StatusCode::NOT_FOUND
    );
    let theirs = other.get("/dashboard/identity/credentials").await?;
    assert!(!theirs.text.contains(&credential));
    let refused = other.post_form(&format!("{att_path}/revoke"), &[]).await?;
    assert_eq!(refused.status, StatusCode::NOT_FOUND, "{}", refused.text);

    // Revoked: back to its page; revoked on chain and in the store.
    let revoked = d.post_form(&format!("{att_path}/revoke"), &[]).await?;
    assert_eq!(location(&revoked), att_path);
    let page = until(&d, &att_path, "status-revoked").await?;
    assert!(
        !page.contains("Revoke attestation"),
        "nothing left to revoke"
    );
    assert_eq!(
        store.attestations().get(scope, &id).await?.status,
        AttestationStatus::Revoked
    );

    // A form posted without a session changes nothing: sign in first.
    let before = store
        .verifications()
        .list(scope, 100, None)
        .await?
        .data
        .len();
    let res = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?
        .post(format!(
            "{}/dashboard/identity/verifications",
            h.server().base_url
        ))
        .form(&[("type", "agent"), ("subject", subject)])
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(res.headers()["location"], "/login");
    assert_eq!(
        store
            .verifications()
            .list(scope, 100, None)
            .await?
            .data
            .len(),
        before
    );
    Ok(())
}
