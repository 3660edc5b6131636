//! One module per group of subcommands.

pub(crate) mod bench;
mod bench_recall;
pub(crate) mod demo;
pub(crate) mod ingest;
pub(crate) mod query;

use std::path::Path;

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
    let store = SqliteStore::open(path)
        .with_context(|| format!("cannot open the database {}", path.display()))?;
    let worker = format!("pid:{}", std::process::id());
    let engine_config = config.engine();
    let search = Box::new(LocalSearch::new(&engine_config.ranking));
    let engine = Engine::new(store, search, engine_config, Box::new(SystemClock), worker);
    if !segments {
        return Ok(engine);
    }
    Ok(match config.embedder()? {
        Some(embedder) => engine.with_embedder(embedder),
        None => engine,
    })
}
