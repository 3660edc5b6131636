//! `epimem mcp`: the memory tools over stdio, for an MCP client that starts epimem itself.

use std::{process::ExitCode, sync::Arc};

use anyhow::{Context, Result};
use epimem_engine::Freshness;

use super::{STOP_WAIT, index_progress::server_report, open_searching, worker_report};
use crate::config::AppConfig;

pub(crate) fn mcp(config: &AppConfig) -> Result<ExitCode> {
    let engine = Arc::new(
        open_searching(config, &config.database()?)?
            .engine
            .with_freshness(Freshness::Background)
            .with_build_wait(config.server.build_wait()?),
    );
    // The worker closes conversations that fall silent, as under `serve`; it reports on
    // stderr, since stdout carries the protocol.
    let worker = epimem_server::Worker::spawn(
        engine.clone(),
        config.server.tick_every()?,
        config.server.index_refresh()?,
        worker_report(false),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let index = server_report(&config.tenant);
    let served = runtime.block_on(epimem_server::serve_stdio(engine, &config.tenant, index));
    worker.stop();
    runtime.shutdown_timeout(STOP_WAIT);
    served.context("the MCP session failed")?;
    Ok(ExitCode::SUCCESS)
}
