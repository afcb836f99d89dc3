//! The migrations of each backend, embedded in the binary. `sqlx::migrate!` would embed
//! them too, but it is a proc macro that builds sqlx's drivers a second time for the host
//! (about 100 s of CPU in a cold build); `build.rs` writes the list of `include_str!`s from
//! the folders instead, so a new migration is only its two files. Versions, descriptions, checksums
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

// `SQLITE` and `POSTGRES`: every file of each folder, by name (written by `build.rs`).
include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

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
