//! `epimem mcp`: the memory tools over stdio, for an MCP client that starts epimem itself.

use std::{process::ExitCode, sync::Arc, time::Duration};

use anyhow::{Context, Result};

use super::open_searching;
use crate::config::AppConfig;

pub(crate) fn mcp(config: &AppConfig) -> Result<ExitCode> {
    let engine = Arc::new(open_searching(config, &config.db_path()?)?.engine);
    let tick = Duration::try_from_secs_f64(config.server.tick_seconds)
        .ok()
        .filter(|t| !t.is_zero())
        .context("server.tick_seconds must be a positive number of seconds")?;
    // The worker closes conversations that fall silent, as under `serve`; it reports on
    // stderr, since stdout carries the protocol.
    let worker = epimem_server::Worker::spawn(
        engine.clone(),
        tick,
        Box::new(|outcome| {
            if let Err(e) = outcome {
                eprintln!("epimem: worker: {e}");
            }
        }),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let served = runtime.block_on(epimem_server::serve_stdio(engine, &config.tenant));
    worker.stop();
    served.context("the MCP session failed")?;
    Ok(ExitCode::SUCCESS)
}
