//! One module per group of subcommands.

pub(crate) mod bench;
mod bench_hook;
mod bench_recall;
mod bench_serve;
pub(crate) mod demo;
pub(crate) mod facts;
pub(crate) mod hook;
pub(crate) mod ingest;
pub(crate) mod keys;
pub(crate) mod mcp;
pub(crate) mod query;
pub(crate) mod reindex;
pub(crate) mod serve;
pub(crate) mod timeline;
pub(crate) mod transfer;
pub(crate) mod worker;

use std::{path::Path, sync::Arc};

use anyhow::{Context, Result};
use epimem_engine::{Engine, SystemClock};
use epimem_search_local::LocalSearch;
use epimem_store_postgres::PostgresStore;
use epimem_store_sqlite::SqliteStore;

use crate::config::{AppConfig, Database};

/// The store a command runs on: SQLite or PostgreSQL, as `--db` says.
pub(crate) type AnyStore = Box<dyn epimem_store::Store>;

/// Opens the configured database for reading (no embedder is loaded).
pub(crate) fn open_engine(config: &AppConfig) -> Result<Engine<AnyStore>> {
    open_engine_on(config, &config.database()?, false)
}

/// Opens the configured database with the configured embedder (for ingest, segmentation and
/// recall).
pub(crate) fn open_with_embedder(config: &AppConfig) -> Result<Engine<AnyStore>> {
    open_engine_on(config, &config.database()?, true)
}

/// [`open_engine_on`] a SQLite file.
pub(crate) fn open_engine_at(
    config: &AppConfig,
    path: &Path,
    segments: bool,
) -> Result<Engine<AnyStore>> {
    open_engine_on(config, &Database::Sqlite(path.to_owned()), segments)
}

pub(crate) fn open_engine_on(
    config: &AppConfig,
    database: &Database,
    segments: bool,
) -> Result<Engine<AnyStore>> {
    if segments {
        return Ok(open_searching(config, database)?.engine);
    }
    Ok(engine_without_index(config, open_store(database)?))
}

/// An engine on `store` for reads that never search (the saved index is left alone) and
/// writes that only queue.
pub(crate) fn engine_without_index(config: &AppConfig, store: AnyStore) -> Engine<AnyStore> {
    let worker = format!("pid:{}", std::process::id());
    let engine_config = config.engine();
    let search = Box::new(LocalSearch::in_memory(&engine_config.ranking));
    Engine::new(store, search, engine_config, Box::new(SystemClock), worker)
}

/// Opens (creating or migrating as needed) the store `database` names.
pub(crate) fn open_store(database: &Database) -> Result<AnyStore> {
    Ok(match database {
        Database::Sqlite(path) => Box::new(
            SqliteStore::open(path)
                .with_context(|| format!("cannot open the database {}", path.display()))?,
        ),
        Database::Postgres(url) => Box::new(
            PostgresStore::connect(url)
                .with_context(|| format!("cannot open the database ({database})"))?,
        ),
    })
}

/// Opens `database` with the configured embedder and its search index: saved beside a SQLite
/// file; in memory, filled from the store's change log on first use, for PostgreSQL.
pub(crate) fn open_searching(config: &AppConfig, database: &Database) -> Result<Searching> {
    let store = open_store(database)?;
    let worker = format!("pid:{}", std::process::id());
    let engine_config = config.engine();
    let embedder = config.embedder()?;
    let fingerprint = embedder.as_ref().map(|e| e.fingerprint());
    let search = Arc::new(
        match database {
            Database::Sqlite(path) => {
                LocalSearch::open(&search_folder(path), &engine_config.ranking, fingerprint)
            }
            Database::Postgres(_) => LocalSearch::in_memory(&engine_config.ranking),
        }
        .approximate_from(config.search.approximate_from),
    );
    let mut engine =
        Engine::new(store, Box::new(search.clone()), engine_config, Box::new(SystemClock), worker);
    if let Some(embedder) = embedder {
        engine = engine.with_embedder(embedder);
    }
    if let Some(chat) = config.chat_model()? {
        engine = engine.with_chat_model(chat);
    }
    Ok(Searching { engine, search })
}

/// What the worker says on stderr: its failures, and the episodes it closed when `closes`.
pub(crate) fn worker_report(closes: bool) -> epimem_server::Report {
    Box::new(move |outcome| match outcome {
        Ok(run) if closes => eprintln!(
            "epimem: worker closed {} episode(s) of {} message(s)",
            run.episodes_closed, run.messages_closed
        ),
        Ok(_) => {}
        Err(e) => eprintln!("epimem: worker: {e}"),
    })
}

/// An engine and the saved search index it asks.
pub(crate) struct Searching {
    pub(crate) engine: Engine<AnyStore>,
    pub(crate) search: Arc<LocalSearch>,
}

/// Where the search index of the database at `db` is saved: beside it, `<db>.search`.
pub(crate) fn search_folder(db: &Path) -> std::path::PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push(".search");
    db.with_file_name(name)
}
