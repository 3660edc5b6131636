//! `epimem mcp`: the memory tools over stdio, for an MCP client that starts epimem itself.

use std::process::ExitCode;

use anyhow::{Context, Result};

use epimem_app::index_progress::server_report;

use super::{STOP_WAIT, open_serving, worker_report};
use crate::config::AppConfig;

pub(crate) fn mcp(config: &AppConfig) -> Result<ExitCode> {
    let memory = open_serving(config, &config.database()?)?;
    // The worker closes conversations that fall silent, as under `serve`; it reports on
    // stderr, since stdout carries the protocol.
    let worker = epimem_api::Worker::spawn(
        memory.clone(),
        config.server.tick_every()?,
        config.server.index_refresh()?,
        worker_report(false),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let index = server_report(&config.tenant);
    let limit = config.server.body_limit_bytes;
    let served = runtime.block_on(epimem_server::serve_stdio(memory, &config.tenant, limit, index));
    worker.stop();
    runtime.shutdown_timeout(STOP_WAIT);
    served.context("the MCP session failed")?;
    Ok(ExitCode::SUCCESS)
}
