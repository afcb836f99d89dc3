//! The migrations of each backend, embedded in the binary. `sqlx::migrate!` would embed
//! them too, but it is a proc macro that builds sqlx's drivers a second time for the host
//! (about 100 s of CPU in a cold build); a list with `include_str!` does the same at no
//! cost, and a test keeps it equal to the folders. Versions, descriptions, checksums
//! (SHA-384 of the text) and the `-- no-transaction` opt-out are derived as sqlx derives
//! them from file names, so databases migrated by either way agree.

use std::borrow::Cow;

use sqlx::migrate::{MigrateError, Migration, MigrationSource, MigrationType, Migrator};

/// Which folder (one per database).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Folder {
    /// `migrations/sqlite`
    Sqlite,
    /// `migrations/postgres`
    Postgres,
}

/// `migrations/sqlite`, by file name.
const SQLITE: &[(&str, &str)] = &[
    (
        "0001_init.sql",
        include_str!("../../migrations/sqlite/0001_init.sql"),
    ),
    (
        "0002_agentic.sql",
        include_str!("../../migrations/sqlite/0002_agentic.sql"),
    ),
    (
        "0003_bank.sql",
        include_str!("../../migrations/sqlite/0003_bank.sql"),
    ),
    (
        "0004_relayer.sql",
        include_str!("../../migrations/sqlite/0004_relayer.sql"),
    ),
    (
        "0005_payments.sql",
        include_str!("../../migrations/sqlite/0005_payments.sql"),
    ),
    (
        "0006_pull_bank_leg.sql",
        include_str!("../../migrations/sqlite/0006_pull_bank_leg.sql"),
    ),
    (
        "0007_payment_refunds.sql",
        include_str!("../../migrations/sqlite/0007_payment_refunds.sql"),
    ),
    (
        "0008_tx_blocks.sql",
        include_str!("../../migrations/sqlite/0008_tx_blocks.sql"),
    ),
    (
        "0009_leases.sql",
        include_str!("../../migrations/sqlite/0009_leases.sql"),
    ),
    (
        "0010_idempotency_recovery.sql",
        include_str!("../../migrations/sqlite/0010_idempotency_recovery.sql"),
    ),
    (
        "0011_tx_intents.sql",
        include_str!("../../migrations/sqlite/0011_tx_intents.sql"),
    ),
    (
        "0012_payer_consent.sql",
        include_str!("../../migrations/sqlite/0012_payer_consent.sql"),
    ),
    (
        "0013_bank_holds.sql",
        include_str!("../../migrations/sqlite/0013_bank_holds.sql"),
    ),
    (
        "0014_events.sql",
        include_str!("../../migrations/sqlite/0014_events.sql"),
    ),
    (
        "0015_outbox.sql",
        include_str!("../../migrations/sqlite/0015_outbox.sql"),
    ),
    (
        "0016_driving_work.sql",
        include_str!("../../migrations/sqlite/0016_driving_work.sql"),
    ),
    (
        "0017_webhooks.sql",
        include_str!("../../migrations/sqlite/0017_webhooks.sql"),
    ),
    (
        "0018_dashboard.sql",
        include_str!("../../migrations/sqlite/0018_dashboard.sql"),
    ),
    (
        "0019_business_name.sql",
        include_str!("../../migrations/sqlite/0019_business_name.sql"),
    ),
    (
        "0020_mandate_payees.sql",
        include_str!("../../migrations/sqlite/0020_mandate_payees.sql"),
    ),
    (
        "0021_account_settings.sql",
        include_str!("../../migrations/sqlite/0021_account_settings.sql"),
    ),
    (
        "0022_identity.sql",
        include_str!("../../migrations/sqlite/0022_identity.sql"),
    ),
    (
        "0023_identity_verifications.sql",
        include_str!("../../migrations/sqlite/0023_identity_verifications.sql"),
    ),
    (
        "0024_identity_attestations.sql",
        include_str!("../../migrations/sqlite/0024_identity_attestations.sql"),
    ),
    (
        "0025_tx_mined_at.sql",
        include_str!("../../migrations/sqlite/0025_tx_mined_at.sql"),
    ),
    (
        "0026_identity_requirements.sql",
        include_str!("../../migrations/sqlite/0026_identity_requirements.sql"),
    ),
    (
        "0027_agent_credentials.sql",
        include_str!("../../migrations/sqlite/0027_agent_credentials.sql"),
    ),
];

/// `migrations/postgres`, by file name.
const POSTGRES: &[(&str, &str)] = &[
    (
        "0001_init.sql",
        include_str!("../../migrations/postgres/0001_init.sql"),
    ),
    (
        "0002_agentic.sql",
        include_str!("../../migrations/postgres/0002_agentic.sql"),
    ),
    (
        "0003_bank.sql",
        include_str!("../../migrations/postgres/0003_bank.sql"),
    ),
    (
        "0004_relayer.sql",
        include_str!("../../migrations/postgres/0004_relayer.sql"),
    ),
    (
        "0005_payments.sql",
        include_str!("../../migrations/postgres/0005_payments.sql"),
    ),
    (
        "0006_pull_bank_leg.sql",
        include_str!("../../migrations/postgres/0006_pull_bank_leg.sql"),
    ),
    (
        "0007_payment_refunds.sql",
        include_str!("../../migrations/postgres/0007_payment_refunds.sql"),
    ),
    (
        "0008_tx_blocks.sql",
        include_str!("../../migrations/postgres/0008_tx_blocks.sql"),
    ),
    (
        "0009_leases.sql",
        include_str!("../../migrations/postgres/0009_leases.sql"),
    ),
    (
        "0010_idempotency_recovery.sql",
        include_str!("../../migrations/postgres/0010_idempotency_recovery.sql"),
    ),
    (
        "0011_tx_intents.sql",
        include_str!("../../migrations/postgres/0011_tx_intents.sql"),
    ),
    (
        "0012_payer_consent.sql",
        include_str!("../../migrations/postgres/0012_payer_consent.sql"),
    ),
    (
        "0013_bank_holds.sql",
        include_str!("../../migrations/postgres/0013_bank_holds.sql"),
    ),
    (
        "0014_events.sql",
        include_str!("../../migrations/postgres/0014_events.sql"),
    ),
    (
        "0015_outbox.sql",
        include_str!("../../migrations/postgres/0015_outbox.sql"),
    ),
    (
        "0016_driving_work.sql",
        include_str!("../../migrations/postgres/0016_driving_work.sql"),
    ),
    (
        "0017_webhooks.sql",
        include_str!("../../migrations/postgres/0017_webhooks.sql"),
    ),
    (
        "0018_dashboard.sql",
        include_str!("../../migrations/postgres/0018_dashboard.sql"),
    ),
    (
        "0019_business_name.sql",
        include_str!("../../migrations/postgres/0019_business_name.sql"),
    ),
    (
        "0020_mandate_payees.sql",
        include_str!("../../migrations/postgres/0020_mandate_payees.sql"),
    ),
    (
        "0021_account_settings.sql",
        include_str!("../../migrations/postgres/0021_account_settings.sql"),
    ),
    (
        "0022_identity.sql",
        include_str!("../../migrations/postgres/0022_identity.sql"),
    ),
    (
        "0023_identity_verifications.sql",
        include_str!("../../migrations/postgres/0023_identity_verifications.sql"),
    ),
    (
        "0024_identity_attestations.sql",
        include_str!("../../migrations/postgres/0024_identity_attestations.sql"),
    ),
    (
        "0025_tx_mined_at.sql",
        include_str!("../../migrations/postgres/0025_tx_mined_at.sql"),
    ),
    (
        "0026_identity_requirements.sql",
        include_str!("../../migrations/postgres/0026_identity_requirements.sql"),
    ),
    (
        "0027_agent_credentials.sql",
        include_str!("../../migrations/postgres/0027_agent_credentials.sql"),
    ),
];

/// The embedded migrations of one backend.
#[derive(Debug)]
struct Embedded(&'static [(&'static str, &'static str)]);

impl MigrationSource<'static> for Embedded {
    fn resolve(
        self,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<Output = Result<Vec<Migration>, sqlx::error::BoxDynError>>
                + Send
                + 'static,
        >,
    > {
        Box::pin(async move {
            self.0
                .iter()
                .map(|(name, sql)| migration(name, sql))
                .collect()
        })
    }
}

/// The migration of file `name` holding `sql`, as sqlx reads a migrations folder:
/// `<version>_<description>.sql`, underscores of the description as spaces.
fn migration(name: &str, sql: &'static str) -> Result<Migration, sqlx::error::BoxDynError> {
    let (version, rest) = name
        .split_once('_')
        .ok_or_else(|| format!("migration {name}: no `<version>_` prefix"))?;
    let version: i64 = version
        .parse()
        .map_err(|_| format!("migration {name}: {version} is not a version"))?;
    let migration_type = MigrationType::from_filename(rest);
    let description = rest
        .trim_end_matches(migration_type.suffix())
        .replace('_', " ");
    Ok(Migration::new(
        version,
        Cow::Owned(description),
        migration_type,
        Cow::Borrowed(sql),
        sql.starts_with("-- no-transaction"),
    ))
}

/// The migrator of `folder`.
pub(crate) async fn migrator(folder: Folder) -> Result<Migrator, MigrateError> {
    let source = match folder {
        Folder::Sqlite => Embedded(SQLITE),
        Folder::Postgres => Embedded(POSTGRES),
    };
    Migrator::new(source).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file of each folder is embedded, under its own name, with its text.
    #[test]
    fn the_lists_are_the_folders() {
        for (dir, list) in [("sqlite", SQLITE), ("postgres", POSTGRES)] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../migrations")
                .join(dir);
            let mut files: Vec<(String, String)> = std::fs::read_dir(&path)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "sql"))
                .map(|p| {
                    (
                        p.file_name().unwrap().to_string_lossy().to_string(),
                        std::fs::read_to_string(&p).unwrap(),
                    )
                })
                .collect();
            files.sort();
            let embedded: Vec<(String, String)> = list
                .iter()
                .map(|(n, s)| (n.to_string(), s.to_string()))
                .collect();
            assert_eq!(
                embedded, files,
                "migrations/{dir}: add the new file to store/src/migrations.rs"
            );
        }
    }

    /// What sqlx's folder reader makes of the same files: versions, descriptions and
    /// checksums agree, so a database migrated by `sqlx::migrate!` validates here.
    #[tokio::test]
    async fn the_migrations_are_what_sqlx_reads_from_the_folders() {
        for (dir, folder) in [("sqlite", Folder::Sqlite), ("postgres", Folder::Postgres)] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../migrations")
                .join(dir);
            let from_folder = Migrator::new(path.as_path()).await.unwrap();
            let embedded = migrator(folder).await.unwrap();
            let view = |m: &Migrator| {
                m.iter()
                    .map(|x| {
                        (
                            x.version,
                            x.description.to_string(),
                            x.checksum.to_vec(),
                            x.no_tx,
                        )
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(view(&embedded), view(&from_folder), "{dir}");
            assert!(embedded.iter().count() >= 20);
        }
    }
}
