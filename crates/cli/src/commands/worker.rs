//! `epimem worker`: the background worker alone, beside other processes on the same database
//! (a CLI import, a server): closes silent conversations and runs queued jobs until stopped.

use std::process::ExitCode;

use anyhow::{Context, Result};

use super::{open_searching, serve::shutdown_signal, worker_report};
use crate::config::AppConfig;

pub(crate) fn worker(config: &AppConfig) -> Result<ExitCode> {
    let db = config.database()?;
    let memory = open_searching(config, &db)?.memory;
    let tick = config.server.tick_every()?;
    // It recalls nothing: no index is kept, and refreshing finds none to catch up.
    let refresh = config.server.index_refresh()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let stop = shutdown_signal()?;
        let worker = epimem_api::Worker::spawn(memory, tick, refresh, worker_report(true));
        eprintln!("epimem: worker on {}, every {:.1} s; stop with Ctrl-C", db, tick.as_secs_f64());
        stop.await;
        tokio::task::spawn_blocking(move || worker.stop()).await.ok();
        eprintln!("epimem: worker stopped");
        Ok(ExitCode::SUCCESS)
    })
}
