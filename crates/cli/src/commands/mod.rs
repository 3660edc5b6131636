//! One module per group of subcommands.

pub(crate) mod bench;
mod bench_recall;
mod bench_serve;
pub(crate) mod demo;
pub(crate) mod facts;
pub(crate) mod ingest;
pub(crate) mod keys;
pub(crate) mod mcp;
pub(crate) mod query;
pub(crate) mod reindex;
pub(crate) mod serve;
pub(crate) mod timeline;
pub(crate) mod worker;

use std::{path::Path, sync::Arc};

use anyhow::{Context, Result};
use epimem_engine::{Engine, SystemClock};
use epimem_search_local::LocalSearch;
use epimem_store_sqlite::SqliteStore;

use crate::config::AppConfig;

/// Opens the configured database for reading (no embedder is loaded).
pub(crate) fn open_engine(config: &AppConfig) -> Result<Engine<SqliteStore>> {
    open_engine_at(config, &config.db_path()?, false)
}

/// Opens the configured database with the configured embedder (for ingest, segmentation and
/// recall).
pub(crate) fn open_with_embedder(config: &AppConfig) -> Result<Engine<SqliteStore>> {
    open_engine_at(config, &config.db_path()?, true)
}

pub(crate) fn open_engine_at(
    config: &AppConfig,
    path: &Path,
    segments: bool,
) -> Result<Engine<SqliteStore>> {
    if segments {
        return Ok(open_searching(config, path)?.engine);
    }
    let store = SqliteStore::open(path)
        .with_context(|| format!("cannot open the database {}", path.display()))?;
    let worker = format!("pid:{}", std::process::id());
    let engine_config = config.engine();
    // Reads that never search: the saved index is left alone.
    let search = Box::new(LocalSearch::in_memory(&engine_config.ranking));
    Ok(Engine::new(store, search, engine_config, Box::new(SystemClock), worker))
}

/// Opens the database at `path` with the configured embedder and the search index saved
/// beside it.
pub(crate) fn open_searching(config: &AppConfig, path: &Path) -> Result<Searching> {
    let store = SqliteStore::open(path)
        .with_context(|| format!("cannot open the database {}", path.display()))?;
    let worker = format!("pid:{}", std::process::id());
    let engine_config = config.engine();
    let embedder = config.embedder()?;
    let fingerprint = embedder.as_ref().map(|e| e.fingerprint());
    let search = Arc::new(
        LocalSearch::open(&search_folder(path), &engine_config.ranking, fingerprint)
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
    pub(crate) engine: Engine<SqliteStore>,
    pub(crate) search: Arc<LocalSearch>,
}

/// Where the search index of the database at `db` is saved: beside it, `<db>.search`.
pub(crate) fn search_folder(db: &Path) -> std::path::PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push(".search");
    db.with_file_name(name)
}
