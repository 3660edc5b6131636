//! epimem over HTTP and MCP: the `/v1` API and its OpenAPI document, and the MCP tools, served
//! with the background worker beside it. This is the only crate that knows HTTP and MCP; each
//! handler and tool parses its request, calls `epimem_api::Memory`, and renders its answer.

mod auth;
mod error;
mod guard;
mod mcp;
mod metrics;
mod project;
mod readiness;
mod routes;
mod stdio;
mod traces;
mod ui;

use std::{
    future::Future,
    sync::{Arc, atomic::Ordering},
};

use axum::{
    Router,
    extract::DefaultBodyLimit,
    routing::{delete, get, post},
};
use epimem_api::{Memory, Report, Worker};
use epimem_app::{config::Serving, index_progress::IndexReport};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower_http::{limit::RequestBodyLimit, timeout::TimeoutLayer};
use utoipa::OpenApi;

pub use error::{ApiError, ErrorBody, ErrorDetail};
pub use mcp::{MemoryTools, memory_tools, serve_stdio};
pub use project::{ClientError, ProjectMemoryClient};

/// Who may call the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// No keys: every request works in the configured tenant (for loopback use).
    SingleUser,
    /// Every request needs an API key (`Authorization: Bearer epm_…`) and works in its tenant.
    ApiKeys,
}

/// How the server behaves; loaded by the binary, passed in.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The tenant requests work in without API keys (and `epimem mcp` always).
    pub tenant: String,
    pub access: Access,
    /// The checked `[server]` settings: body limit, request timeout, the worker's beat and
    /// index refresh, the origins allowed besides the server's own.
    pub serving: Serving,
}

/// What every handler shares.
pub(crate) struct App {
    memory: Memory,
    /// The tenant without API keys.
    tenant: Arc<str>,
    access: Access,
    allowed_origins: Arc<[String]>,
    readiness: Arc<readiness::Readiness>,
    metrics: Arc<metrics::Metrics>,
}

impl Clone for App {
    fn clone(&self) -> Self {
        Self {
            memory: self.memory.clone(),
            tenant: self.tenant.clone(),
            access: self.access,
            allowed_origins: self.allowed_origins.clone(),
            readiness: self.readiness.clone(),
            metrics: self.metrics.clone(),
        }
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "epimem",
        description = "Episodic memory for LLM agents: remember messages, recall episodes."
    ),
    paths(
        routes::add_messages,
        routes::list_conversations,
        routes::get_conversation,
        routes::list_messages,
        routes::take_back_message,
        routes::flush_conversation,
        routes::flush_tenant,
        routes::delete_conversation,
        routes::delete_tenant,
        routes::delete_user,
        routes::list_episodes,
        routes::get_episode,
        routes::delete_episode,
        routes::edit_episode,
        routes::episode_versions,
        routes::list_jobs,
        routes::recall,
        routes::next_turn,
        routes::project_memory,
        routes::list_facts,
        routes::timeline_top,
        routes::timeline_node,
        routes::get_stats,
        routes::healthz,
        routes::readyz,
    )
)]
struct ApiDoc;

/// The OpenAPI 3.1 document of the API, as served at `/v1/openapi.json`.
pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// The API's routes over `memory`, and MCP at `/mcp`. `readiness` tells `/readyz` whether the
/// search index is open; cancelling `mcp_sessions` ends the MCP sessions (their streams would
/// otherwise hold a graceful shutdown open).
fn router(
    memory: Memory,
    config: &ServerConfig,
    readiness: Arc<readiness::Readiness>,
    mcp_sessions: CancellationToken,
) -> Router {
    let mcp = {
        let (memory, tenant) = (memory.clone(), config.tenant.clone());
        let config = StreamableHttpServerConfig {
            cancellation_token: mcp_sessions,
            ..StreamableHttpServerConfig::default()
        };
        let sessions = Arc::new(LocalSessionManager::default());
        StreamableHttpService::new(
            move || Ok(memory_tools(memory.clone(), &tenant)),
            sessions,
            config,
        )
    };
    let app = App {
        memory,
        tenant: Arc::from(config.tenant.as_str()),
        access: config.access,
        allowed_origins: config.serving.allowed_origins.clone().into(),
        readiness,
        metrics: Arc::default(),
    };
    // Serialized once and shared: a handler owning the document as a value was copied and
    // dropped on every request to any route (a fifth of the server's time under load).
    let document = axum::body::Bytes::from(
        serde_json::to_vec(&openapi()).expect("the OpenAPI document serializes"),
    );
    let api = Router::new()
        .route("/v1/messages", post(routes::add_messages))
        .route("/v1/conversations", get(routes::list_conversations))
        .route(
            "/v1/conversations/{conversation}",
            get(routes::get_conversation).delete(routes::delete_conversation),
        )
        .route("/v1/conversations/{conversation}/messages", get(routes::list_messages))
        .route(
            "/v1/conversations/{conversation}/messages/newest",
            delete(routes::take_back_message),
        )
        .route("/v1/conversations/{conversation}/flush", post(routes::flush_conversation))
        .route("/v1/conversations/{conversation}/next-turn", post(routes::next_turn))
        .route("/v1/flush", post(routes::flush_tenant))
        .route("/v1/tenant", delete(routes::delete_tenant))
        .route("/v1/users/{user}", delete(routes::delete_user))
        .route("/v1/episodes", get(routes::list_episodes))
        .route(
            "/v1/episodes/{id}",
            get(routes::get_episode).delete(routes::delete_episode).patch(routes::edit_episode),
        )
        .route("/v1/episodes/{id}/versions", get(routes::episode_versions))
        .route("/v1/jobs", get(routes::list_jobs))
        .route("/v1/recall", post(routes::recall))
        .route("/v1/project-memory", post(routes::project_memory))
        .route("/v1/facts", get(routes::list_facts))
        .route("/v1/timeline", get(routes::timeline_top))
        .route("/v1/timeline/{node}", get(routes::timeline_node))
        .route("/v1/stats", get(routes::get_stats))
        .layer(DefaultBodyLimit::max(config.serving.body_limit))
        .layer(TimeoutLayer::with_status_code(
            axum::http::StatusCode::REQUEST_TIMEOUT,
            config.serving.request_timeout,
        ))
        // After the timeout: an MCP session's event stream outlives any request. The body
        // limit holds here too: the transport reads a body whole.
        .nest_service("/mcp", RequestBodyLimit::new(mcp, config.serving.body_limit))
        // Everything above works in the caller's tenant; what follows is public.
        .layer(axum::middleware::from_fn_with_state(app.clone(), auth::authenticate));
    api.merge(ui::routes())
        .route(
            "/v1/openapi.json",
            get(move || async move {
                ([(axum::http::header::CONTENT_TYPE, "application/json")], document)
            }),
        )
        .route("/healthz", get(routes::healthz))
        .route("/readyz", get(routes::readyz))
        .route("/metrics", get(metrics::scrape))
        .fallback(|| async { ApiError::not_found("no such route") })
        .method_not_allowed_fallback(|method: axum::http::Method| async move {
            ApiError::of_status(
                axum::http::StatusCode::METHOD_NOT_ALLOWED,
                format!("this route does not take {method}"),
            )
        })
        // Every route, public ones too: no cross-site page, no rebinding name without keys.
        .layer(axum::middleware::from_fn_with_state(app.clone(), guard::guard))
        .layer(axum::middleware::from_fn_with_state(app.clone(), metrics::track))
        .layer(axum::middleware::from_fn(traces::trace))
        .layer(axum::middleware::from_fn(error::json_errors))
        .with_state(app)
}

/// Serves the API on `listener` with the worker beside it until `shutdown` resolves; then
/// stops taking connections, lets requests under way finish, and stops the worker after its
/// current run.
pub async fn serve(
    memory: Memory,
    listener: TcpListener,
    config: ServerConfig,
    report: Report,
    index_report: IndexReport,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let readiness = Arc::new(readiness::Readiness::default());
    // Open (or build) the tenant's search index before saying ready; requests are served
    // meanwhile, a recall waits a little for a build and is then refused as unavailable.
    let stop_opening = readiness::spawn_open_index(
        memory.clone(),
        config.tenant.clone(),
        Some(readiness.clone()),
        index_report,
    );
    let worker = Worker::spawn(
        memory.clone(),
        config.serving.tick_every,
        config.serving.index_refresh,
        report,
    );
    let mcp_sessions = StreamableHttpServerConfig::default().cancellation_token;
    let app = router(memory, &config, readiness, mcp_sessions.clone());
    let shutdown = async move {
        shutdown.await;
        mcp_sessions.cancel();
    };
    let served = axum::serve(listener, app).with_graceful_shutdown(shutdown).await;
    // An opening under way is left to finish or to be cut short by the process's exit (the
    // index survives that as it survives a crash); one waiting to try again stops here.
    stop_opening.store(true, Ordering::Release);
    tokio::task::spawn_blocking(move || worker.stop()).await.ok();
    served
}
