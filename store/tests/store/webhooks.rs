//! The webhooks' SQL on both backends: endpoints scoped by account and mode, the fan-out
//! (which endpoints get which events, written once, with the cursor), due deliveries,
//! attempts (retry, success, failure for good), disabling with its event, rotation's
//! overlap, redelivery and deletion.

use openrail_domain::{AccountId, MandateId, WebhookEndpointId};
use openrail_store::agentic::Scope;
use openrail_store::events::{EventFilter, EventType};
use openrail_store::testing::{active_mandate_row, fresh_postgres, fresh_sqlite};
use openrail_store::webhooks::{
    Attempt, DeliveryStatus, EndpointChange, EndpointStatus, WebhookEndpoint, new_secret,
};
use openrail_store::{Mode, Store, StoreError, now_ms};

async fn mandate(store: &Store, account: &AccountId, mode: Mode, at: i64) -> MandateId {
    let id = MandateId::new();
    store
        .mandates()
        .insert(&active_mandate_row(
            &id, account, mode, "ba_payer", 31337, at,
        ))
        .await
        .unwrap();
    id
}

async fn endpoint(
    store: &Store,
    account: &AccountId,
    mode: Mode,
    events: &[&str],
    at: i64,
) -> (WebhookEndpointId, String) {
    let endpoint = WebhookEndpoint::new(
        account,
        mode,
        "http://127.0.0.1:9/hook".into(),
        None,
        openrail_store::webhooks::EnabledEvents::parse(events).expect("event types"),
        at,
    );
    let secret = new_secret();
    store
        .webhooks()
        .create_endpoint(&endpoint, &secret)
        .await
        .unwrap();
    (endpoint.id, secret)
}

fn scope(account: &AccountId, mode: Mode) -> Scope<'_> {
    Scope {
        account_id: account,
        mode,
    }
}

/// Fans out everything after the stored cursor (no gaps on a fresh database).
async fn fan_out(store: &Store, mode: Mode) -> usize {
    let cursor = store.webhooks().cursor(mode).await.unwrap();
    let heads = store
        .webhooks()
        .event_heads(cursor, &[], 500)
        .await
        .unwrap();
    let to = heads.last().map_or(cursor, |h| h.seq);
    let (written, moved) = store
        .webhooks()
        .fan_out(mode, &heads, to, now_ms(), true)
        .await
        .unwrap();
    assert!(moved);
    written
}

fn failed(status: u16, retry_at: Option<i64>) -> Attempt {
    Attempt {
        delivered: false,
        status_code: Some(status),
        error: None,
        latency_ms: 3,
        retry_at,
    }
}

async fn webhooks(store: Store) {
    let a1 = store.accounts().create("one", now_ms()).await.unwrap().id;
    let a2 = store.accounts().create("two", now_ms()).await.unwrap().id;
    let t0 = now_ms() - 60_000;
    let (all, _) = endpoint(&store, &a1, Mode::Testnet, &["*"], t0).await;
    let (created_only, _) = endpoint(&store, &a1, Mode::Testnet, &["mandate.created"], t0).await;
    let (payments, _) = endpoint(&store, &a1, Mode::Testnet, &["payment.succeeded"], t0).await;
    let (live, _) = endpoint(&store, &a1, Mode::Mainnet, &["*"], t0).await;
    let (other, _) = endpoint(&store, &a2, Mode::Testnet, &["*"], t0).await;

    // Scoped by account and mode.
    assert!(matches!(
        store
            .webhooks()
            .endpoint(scope(&a2, Mode::Testnet), &all)
            .await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store
            .webhooks()
            .endpoint(scope(&a1, Mode::Mainnet), &all)
            .await,
        Err(StoreError::NotFound)
    ));
    let page = store
        .webhooks()
        .list_endpoints(scope(&a1, Mode::Testnet), 10, None)
        .await
        .unwrap();
    assert_eq!(page.data.len(), 3);

    // Two events each (created, activated): a1 testnet, a2 testnet, a1 mainnet.
    let m1 = mandate(&store, &a1, Mode::Testnet, t0 + 1_000).await;
    mandate(&store, &a2, Mode::Testnet, t0 + 1_000).await;
    mandate(&store, &a1, Mode::Mainnet, t0 + 1_000).await;
    // An endpoint created after m1's event does not get it.
    let (late, _) = endpoint(&store, &a1, Mode::Testnet, &["*"], t0 + 2_000).await;

    assert_eq!(fan_out(&store, Mode::Testnet).await, 5);
    let deliveries = |e: WebhookEndpointId, account: AccountId, mode: Mode| {
        let store = store.clone();
        async move {
            store
                .webhooks()
                .list_deliveries(scope(&account, mode), &e, 100, None)
                .await
                .unwrap()
                .data
        }
    };
    assert_eq!(
        deliveries(all.clone(), a1.clone(), Mode::Testnet)
            .await
            .len(),
        2
    );
    assert_eq!(
        deliveries(created_only.clone(), a1.clone(), Mode::Testnet)
            .await
            .len(),
        1
    );
    assert_eq!(
        deliveries(payments.clone(), a1.clone(), Mode::Testnet)
            .await
            .len(),
        0
    );
    assert_eq!(
        deliveries(late.clone(), a1.clone(), Mode::Testnet)
            .await
            .len(),
        0
    );
    assert_eq!(
        deliveries(other.clone(), a2.clone(), Mode::Testnet)
            .await
            .len(),
        2
    );
    assert_eq!(
        deliveries(live.clone(), a1.clone(), Mode::Mainnet)
            .await
            .len(),
        0
    );
    // The cursor moved with the deliveries: nothing is fanned out twice …
    assert_eq!(fan_out(&store, Mode::Testnet).await, 0);
    // … and writing the same events again (a restart before the cursor's commit) is a no-op.
    let heads = store.webhooks().event_heads(0, &[], 500).await.unwrap();
    store
        .webhooks()
        .fan_out(
            Mode::Testnet,
            &heads,
            heads.last().unwrap().seq,
            now_ms(),
            false,
        )
        .await
        .unwrap();
    assert_eq!(
        deliveries(all.clone(), a1.clone(), Mode::Testnet)
            .await
            .len(),
        2
    );
    // The mainnet fan-out has its own cursor.
    assert_eq!(fan_out(&store, Mode::Mainnet).await, 2);
    assert_eq!(
        deliveries(live.clone(), a1.clone(), Mode::Mainnet)
            .await
            .len(),
        2
    );

    // Due now; a failure waits for its retry and marks the endpoint failing.
    let now = now_ms();
    let due = store
        .webhooks()
        .due_deliveries(Mode::Testnet, now, 100, 100)
        .await
        .unwrap();
    assert_eq!(due.len(), 5);
    // At most `per_endpoint` of one endpoint: `all` and `other` have two each.
    let shared = store
        .webhooks()
        .due_deliveries(Mode::Testnet, now, 100, 1)
        .await
        .unwrap();
    assert_eq!(shared.len(), 3);
    let mut by_endpoint: Vec<_> = shared.iter().map(|d| d.endpoint_id.clone()).collect();
    by_endpoint.sort();
    by_endpoint.dedup();
    assert_eq!(by_endpoint.len(), 3);
    // m1's `mandate.created` (its oldest event) to `all`.
    let created_event = store
        .events()
        .list(
            scope(&a1, Mode::Testnet),
            EventFilter {
                object_id: Some(m1.as_str()),
                ..Default::default()
            },
            10,
            None,
        )
        .await
        .unwrap()
        .data
        .pop()
        .unwrap();
    assert_eq!(created_event.kind, EventType::MandateCreated);
    let d = due
        .iter()
        .find(|d| d.endpoint_id == all && d.event_id == created_event.id)
        .unwrap()
        .clone();
    let r = store
        .webhooks()
        .record_attempt(&d.id, &failed(500, Some(now + 1_000)), now, 86_400_000)
        .await
        .unwrap();
    assert!(!r.endpoint_disabled);
    let after = store.webhooks().delivery(&d.id).await.unwrap();
    assert_eq!(
        (
            after.status,
            after.attempts,
            after.last_status_code,
            after.next_attempt_at
        ),
        (DeliveryStatus::Pending, 1, Some(500), Some(now + 1_000))
    );
    let due_ids = |at: i64| {
        let store = store.clone();
        async move {
            store
                .webhooks()
                .due_deliveries(Mode::Testnet, at, 100, 100)
                .await
                .unwrap()
                .into_iter()
                .map(|d| d.id)
                .collect::<Vec<_>>()
        }
    };
    assert!(!due_ids(now).await.contains(&d.id));
    assert!(due_ids(now + 1_000).await.contains(&d.id));
    let e = store
        .webhooks()
        .endpoint(scope(&a1, Mode::Testnet), &all)
        .await
        .unwrap();
    assert_eq!(e.failing_since, Some(now));

    // A success ends it and clears the failure record; recording again changes nothing.
    let ok = Attempt {
        delivered: true,
        status_code: Some(204),
        error: None,
        latency_ms: 2,
        retry_at: Some(now + 5_000),
    };
    store
        .webhooks()
        .record_attempt(&d.id, &ok, now + 1_000, 86_400_000)
        .await
        .unwrap();
    store
        .webhooks()
        .record_attempt(&d.id, &failed(500, None), now + 1_001, 86_400_000)
        .await
        .unwrap();
    let after = store.webhooks().delivery(&d.id).await.unwrap();
    assert_eq!(
        (after.status, after.attempts, after.next_attempt_at),
        (DeliveryStatus::Succeeded, 2, None)
    );
    let e = store
        .webhooks()
        .endpoint(scope(&a1, Mode::Testnet), &all)
        .await
        .unwrap();
    assert_eq!(e.failing_since, None);

    // The schedule spent: failed for good.
    let d2 = due.iter().find(|d| d.endpoint_id == other).unwrap().clone();
    store
        .webhooks()
        .record_attempt(&d2.id, &failed(503, None), now, 86_400_000)
        .await
        .unwrap();
    assert_eq!(
        store.webhooks().delivery(&d2.id).await.unwrap().status,
        DeliveryStatus::Failed
    );

    // Failing for longer than allowed: disabled, with its event (without the secret), and
    // nothing more is due for it.
    let d3 = due
        .iter()
        .find(|d| d.endpoint_id == created_only)
        .unwrap()
        .clone();
    store
        .webhooks()
        .record_attempt(&d3.id, &failed(500, Some(now + 10)), now, 1_000)
        .await
        .unwrap();
    let r = store
        .webhooks()
        .record_attempt(&d3.id, &failed(500, Some(now + 2_000)), now + 1_500, 1_000)
        .await
        .unwrap();
    assert!(r.endpoint_disabled);
    let e = store
        .webhooks()
        .endpoint(scope(&a1, Mode::Testnet), &created_only)
        .await
        .unwrap();
    assert_eq!(e.status, EndpointStatus::Disabled);
    assert_eq!(e.disabled_reason.as_deref(), Some("failing"));
    assert_eq!(
        store
            .events()
            .types_of(created_only.as_str())
            .await
            .unwrap(),
        vec![EventType::WebhookEndpointDisabled]
    );
    let ev = store
        .events()
        .list(
            scope(&a1, Mode::Testnet),
            EventFilter {
                object_id: Some(created_only.as_str()),
                ..Default::default()
            },
            10,
            None,
        )
        .await
        .unwrap();
    let json = format!("{:?}", ev.data[0].snapshot);
    assert!(!json.contains("whsec_"), "{json}");
    assert!(!due_ids(now + 10_000).await.contains(&d3.id));
    // Enabling it again clears the record; its delivery is due again.
    let e = store
        .webhooks()
        .update_endpoint(
            scope(&a1, Mode::Testnet),
            &created_only,
            &EndpointChange {
                enabled: Some(true),
                ..Default::default()
            },
            now + 2_000,
        )
        .await
        .unwrap();
    assert_eq!((e.status, e.failing_since), (EndpointStatus::Enabled, None));
    assert!(due_ids(now + 10_000).await.contains(&d3.id));

    // Rotation: both secrets sign until the overlap ends.
    let before = store.webhooks().secrets(&all, now).await.unwrap();
    assert_eq!(before.previous, None);
    let next = new_secret();
    store
        .webhooks()
        .rotate_secret(scope(&a1, Mode::Testnet), &all, &next, now + 1_000, now)
        .await
        .unwrap();
    let during = store.webhooks().secrets(&all, now + 999).await.unwrap();
    assert_eq!(
        (during.current.as_str(), during.previous.as_deref()),
        (next.as_str(), Some(before.current.as_str()))
    );
    assert_eq!(
        store
            .webhooks()
            .secrets(&all, now + 1_000)
            .await
            .unwrap()
            .previous,
        None
    );
    assert!(matches!(
        store
            .webhooks()
            .rotate_secret(scope(&a2, Mode::Testnet), &all, &next, now, now)
            .await,
        Err(StoreError::NotFound)
    ));

    // Redelivery: a new row next to the fan-out's, to every enabled endpoint that wants
    // the type, or to the one named.
    let again = store
        .webhooks()
        .redeliver(scope(&a1, Mode::Testnet), &d.event_id, None, now + 3_000)
        .await
        .unwrap();
    let mut to: Vec<_> = again.iter().map(|d| d.endpoint_id.clone()).collect();
    to.sort();
    let mut want = vec![all.clone(), created_only.clone(), late.clone()];
    want.sort();
    assert_eq!(to, want);
    assert!(
        again
            .iter()
            .all(|d| d.redelivery && d.status == DeliveryStatus::Pending)
    );
    let one = store
        .webhooks()
        .redeliver(
            scope(&a1, Mode::Testnet),
            &d.event_id,
            Some(&payments),
            now + 3_000,
        )
        .await
        .unwrap();
    assert_eq!(one.len(), 1);
    assert!(matches!(
        store
            .webhooks()
            .redeliver(scope(&a2, Mode::Testnet), &d.event_id, None, now)
            .await,
        Err(StoreError::NotFound)
    ));

    // Deleting an endpoint deletes its deliveries.
    store
        .webhooks()
        .delete_endpoint(scope(&a1, Mode::Testnet), &all)
        .await
        .unwrap();
    assert!(matches!(
        store.webhooks().delivery(&d.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store
            .webhooks()
            .delete_endpoint(scope(&a1, Mode::Testnet), &all)
            .await,
        Err(StoreError::NotFound)
    ));
}

#[tokio::test]
async fn webhooks_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    webhooks(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn webhooks_postgres() {
    match fresh_postgres().await.unwrap() {
        Some(store) => webhooks(store).await,
        None => eprintln!("SKIPPED: webhooks postgres (no PostgreSQL at 127.0.0.1:5432)"),
    }
}
