//! Sign-ups racing on one email, on SQLite and, in CI, PostgreSQL: exactly one creates the
//! account and its dashboard user, every other one is told `EmailTaken`, and none leaves
//! an account behind (`sign_up` writes both rows in one `write_or_undo` transaction).

use openrail_domain::AccountId;
use openrail_store::Store;
use openrail_store::dashboard::SignUp;
use openrail_store::testing::{fresh_postgres_url, fresh_sqlite};

const NOW: i64 = 1_700_000_000_000;
/// Emails raced, one after the other.
const ROUNDS: usize = 8;
/// Sign-ups of each email at once.
const RACERS: usize = 8;

/// `SELECT COUNT(*)` of `sql` (one `$1`, bound to `arg`), straight from the database at
/// `url` (the store has no query for it).
async fn count(url: &str, sql: &str, arg: &str) -> i64 {
    use sqlx::Connection;
    sqlx::any::install_default_drivers();
    let mut db = sqlx::AnyConnection::connect(url).await.unwrap();
    let n = sqlx::query_scalar::<_, i64>(sql)
        .bind(arg)
        .fetch_one(&mut db)
        .await
        .unwrap();
    db.close().await.unwrap();
    n
}

/// How many rows `table` holds.
async fn rows(url: &str, table: &str) -> i64 {
    use sqlx::Connection;
    let mut db = sqlx::AnyConnection::connect(url).await.unwrap();
    let n = sqlx::query_scalar::<_, i64>(&format!("SELECT COUNT(*) FROM {table}"))
        .fetch_one(&mut db)
        .await
        .unwrap();
    db.close().await.unwrap();
    n
}

async fn accounts_named(url: &str, email: &str) -> i64 {
    count(url, "SELECT COUNT(*) FROM accounts WHERE name = $1", email).await
}

async fn users_of(url: &str, email: &str) -> i64 {
    count(
        url,
        "SELECT COUNT(*) FROM dashboard_users WHERE email = $1",
        email,
    )
    .await
}

/// `RACERS` sign-ups of `email` at once: `(racer, outcome)` of each.
async fn race(store: &Store, email: &str) -> Vec<(usize, SignUp)> {
    let mut set = tokio::task::JoinSet::new();
    for i in 0..RACERS {
        let (store, email) = (store.clone(), email.to_string());
        set.spawn(async move {
            let hash = format!("$argon2id${i}");
            let outcome = store
                .dashboard()
                .sign_up(&email, &hash, Some("Racer Ltd"), NOW)
                .await;
            (i, outcome.unwrap())
        });
    }
    set.join_all().await
}

async fn scenario(store: Store, url: &str) {
    for round in 0..ROUNDS {
        let email = format!("race{round}@example.com");
        let outcomes = race(&store, &email).await;
        let created: Vec<(usize, AccountId)> = outcomes
            .iter()
            .filter_map(|(i, o)| match o {
                SignUp::Created(a) => Some((*i, a.id.clone())),
                SignUp::EmailTaken => None,
            })
            .collect();
        let [(winner, account_id)] = &created[..] else {
            panic!(
                "{email}: {} sign-ups created an account: {outcomes:?}",
                created.len()
            )
        };
        assert_eq!(
            outcomes
                .iter()
                .filter(|(_, o)| *o == SignUp::EmailTaken)
                .count(),
            RACERS - 1,
            "{outcomes:?}"
        );
        // The winner's account and person, as it said.
        let user = store.dashboard().user(&email).await.unwrap().unwrap();
        assert_eq!(&user.account_id, account_id);
        assert_eq!(user.password_hash, format!("$argon2id${winner}"));
        let account = store.accounts().get(account_id).await.unwrap();
        assert_eq!(
            (account.name.as_str(), account.business_name.as_deref()),
            (email.as_str(), Some("Racer Ltd"))
        );
        // Nothing half-written by the losers: one account, one user.
        assert_eq!(accounts_named(url, &email).await, 1, "{email}");
        assert_eq!(users_of(url, &email).await, 1, "{email}");

        // Once taken, it stays taken.
        assert_eq!(
            store
                .dashboard()
                .sign_up(&email, "$argon2id$late", None, NOW)
                .await
                .unwrap(),
            SignUp::EmailTaken
        );
        assert_eq!(accounts_named(url, &email).await, 1, "{email}");
    }

    // Different emails at once all get their own account.
    let mut set = tokio::task::JoinSet::new();
    for i in 0..RACERS {
        let store = store.clone();
        set.spawn(async move {
            let email = format!("own{i}@example.com");
            let outcome = store
                .dashboard()
                .sign_up(&email, "$argon2id$own", None, NOW)
                .await
                .unwrap();
            (email, outcome)
        });
    }
    for (email, outcome) in set.join_all().await {
        let SignUp::Created(account) = outcome else {
            panic!("{email}: {outcome:?}")
        };
        let user = store.dashboard().user(&email).await.unwrap().unwrap();
        assert_eq!(user.account_id, account.id);
        assert_eq!(accounts_named(url, &email).await, 1, "{email}");
    }

    // In all: one account and one user per email, nothing else.
    let emails = i64::try_from(ROUNDS + RACERS).unwrap();
    assert_eq!(rows(url, "accounts").await, emails);
    assert_eq!(rows(url, "dashboard_users").await, emails);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = fresh_sqlite(dir.path()).await.unwrap();
    let url = format!("sqlite://{}", dir.path().join("openrail.db").display());
    scenario(store, &url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres() {
    if let Some(url) = fresh_postgres_url().await.unwrap() {
        scenario(Store::connect(&url).await.unwrap(), &url).await;
    }
}
