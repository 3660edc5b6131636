//! `epimem serve`: the HTTP API over the configured database, with the worker beside it.

use std::{net::SocketAddr, process::ExitCode};

use anyhow::{Context, Result, bail};
use clap::Args;
use epimem_server::Access;

use epimem_app::index_progress::server_report;

use super::{STOP_WAIT, open_serving, worker_report};
use crate::config::AppConfig;

#[derive(Debug, Args)]
#[command(after_help = "The API is under /v1 (its OpenAPI document at /v1/openapi.json), with \
/healthz and /readyz, and MCP at /mcp. Once any API key exists (`epimem keys create`), every \
request needs one (Authorization: Bearer epm_…) and works in its tenant; without keys every \
request works in the configured tenant (--tenant). Stop with Ctrl-C or SIGTERM: requests under \
way finish, the worker ends its current run.")]
pub(crate) struct ServeArgs {
    /// The address to listen on, IP:PORT [default: server.listen, 127.0.0.1:7878]; port 0
    /// picks a free one. Beyond loopback only once an API key exists (`epimem keys`).
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
}

pub(crate) fn serve(config: &AppConfig, args: &ServeArgs) -> Result<ExitCode> {
    let listen = args.listen.as_deref().unwrap_or(&config.server.listen);
    let addr: SocketAddr =
        listen.parse().with_context(|| format!("--listen {listen:?} is not an IP:PORT address"))?;
    let db = config.database()?;
    let memory = open_serving(config, &db)?;
    let access = if memory.api_keys_exist()? { Access::ApiKeys } else { Access::SingleUser };
    if access == Access::SingleUser && !addr.ip().is_loopback() {
        bail!(
            "refusing to listen on {addr}: without API keys anyone who reaches the port reads and \
             deletes the tenant's memory; make one with `epimem keys create --tenant NAME`, or \
             listen on a loopback address (127.0.0.1 or ::1)"
        );
    }
    let serving = config.server.checked()?;
    let server = epimem_server::ServerConfig { tenant: config.tenant.clone(), access, serving };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let shutdown = shutdown_signal()?;
        let local = listener.local_addr()?;
        // The first line on stdout says where: scripts and tests read the port from it.
        outln!("epimem: listening on http://{local}");
        let who = match access {
            Access::ApiKeys => "each request in its API key's tenant".to_owned(),
            Access::SingleUser => {
                format!("no API keys: every request in tenant {:?}", config.tenant)
            }
        };
        eprintln!(
            "epimem: database {}, {who}; API under /v1, OpenAPI at /v1/openapi.json, MCP at /mcp",
            db
        );
        let index = server_report(&config.tenant);
        epimem_server::serve(memory, listener, server, worker_report(true), index, shutdown)
            .await?;
        eprintln!("epimem: stopped");
        Ok(ExitCode::SUCCESS)
    });
    runtime.shutdown_timeout(STOP_WAIT);
    served
}

/// A future that resolves on Ctrl-C or SIGTERM. The handlers are installed now, before the
/// server says it listens: a signal sent right after that line must stop it cleanly.
#[cfg(unix)]
pub(super) fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot handle SIGINT")?;
    let mut terminate = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

#[cfg(not(unix))]
pub(super) fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
