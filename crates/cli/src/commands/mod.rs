//! One module per group of subcommands.

pub(crate) mod bench;
pub(crate) mod demo;
pub(crate) mod ingest;
pub(crate) mod query;

use std::path::Path;

use anyhow::{Context, Result};
use epimem_engine::{Engine, SystemClock};
use epimem_store_sqlite::SqliteStore;

use crate::config::AppConfig;

/// Opens the configured database and wires the engine to it.
pub(crate) fn open_engine(config: &AppConfig) -> Result<Engine<SqliteStore>> {
    open_engine_at(config, &config.db_path()?)
}

pub(crate) fn open_engine_at(config: &AppConfig, path: &Path) -> Result<Engine<SqliteStore>> {
    let store = SqliteStore::open(path)
        .with_context(|| format!("cannot open the database {}", path.display()))?;
    let worker = format!("pid:{}", std::process::id());
    Ok(Engine::new(store, config.engine(), Box::new(SystemClock), worker))
}
