//! A project's memory for coding agents over HTTP, `POST /v1/project-memory`: what the MCP
//! tool `project_memory` answers, and what a hook asks a server for, since the server holds
//! the search index and the embedder that choose a prompt's earlier work by recall; and the
//! client a hook asks with.

use std::time::Duration;

use axum::{
    Json,
    body::Bytes,
    extract::{Extension, State, rejection::BytesRejection},
};
use epimem_engine::Engine;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{
    App,
    auth::Tenant,
    error::{ApiError, ErrorBody},
    routes::{blocking, json_body},
};

/// `POST /v1/project-memory`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectMemoryIn {
    /// The project: the root folder of its repository, as the sessions recorded it (their
    /// messages' `agent`).
    pub project: String,
    /// The request about to be worked on: only earlier work that bears on it is told (chosen
    /// by recall, words and meaning agreeing). Without it, what a new session is told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The session the prompt is sent in (its conversation): its own work is not told back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The tenant the caller stores its sessions in, if it has one (a hook does). A request
    /// that works in another (its key's, or the server's own) is refused with `conflict`
    /// rather than told another tenant's work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ProjectMemoryOut {
    /// The block to hand the agent; empty when nothing bears on it.
    pub context: String,
}

/// What a coding agent should know of a project: given a prompt, the earlier work that bears
/// on it; else its recent work, recurring failures and older sessions.
#[utoipa::path(post, path = "/v1/project-memory", tag = "agents", request_body = ProjectMemoryIn,
    responses((status = 200, body = ProjectMemoryOut), (status = 400, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "the caller's tenant is not the request's")))]
pub(crate) async fn project_memory(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<ProjectMemoryOut>, ApiError> {
    let request: ProjectMemoryIn = json_body(&body?)?;
    let context =
        blocking(&app, move |engine| project_memory_with(engine, &tenant, &request)).await?;
    Ok(Json(ProjectMemoryOut { context }))
}

/// What `POST /v1/project-memory` and the MCP tool `project_memory` answer.
pub(crate) fn project_memory_with(
    engine: &Engine,
    tenant: &str,
    request: &ProjectMemoryIn,
) -> Result<String, ApiError> {
    if request.project.trim().is_empty() {
        return Err(ApiError::bad_input("project: must not be empty"));
    }
    if let Some(expected) = &request.tenant
        && expected != tenant
    {
        return Err(ApiError::conflict(format!(
            "tenant: the caller stores its sessions in {expected:?}, but this request works \
             in {tenant:?} (its API key's, or the server's configured tenant)"
        )));
    }
    let session = request.session.as_deref().unwrap_or("");
    Ok(match &request.prompt {
        Some(prompt) => engine.prompt_context(tenant, &request.project, session, prompt)?,
        None => engine.start_context(tenant, &request.project)?,
    })
}

/// Why a server did not answer a [`ProjectMemoryClient`].
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("{url} did not answer within {ms} ms")]
    Timeout { url: String, ms: u128 },
    #[error("cannot reach {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("{url} answered {status}: {body}")]
    Status { url: String, status: u16, body: String },
    #[error("{url} answered what is not a project's memory: {reason}")]
    Answer { url: String, reason: String },
}

/// Asks a server for a project's memory (`POST /v1/project-memory`), within a time limit.
#[derive(Debug)]
pub struct ProjectMemoryClient {
    url: String,
    key: Option<String>,
    timeout: Duration,
    agent: ureq::Agent,
}

impl ProjectMemoryClient {
    /// A client of the server at `base` (`http://127.0.0.1:8080`), with its API key if it
    /// requires one; a request that takes longer than `timeout` is given up.
    pub fn new(base: &str, key: Option<String>, timeout: Duration) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .build()
            .new_agent();
        let url = format!("{}/v1/project-memory", base.trim_end_matches('/'));
        Self { url, key: key.filter(|k| !k.is_empty()), timeout, agent }
    }

    pub fn ask(&self, request: &ProjectMemoryIn) -> Result<String, ClientError> {
        let body = serde_json::to_string(request).expect("a request serializes");
        let mut call = self.agent.post(&self.url).content_type("application/json");
        if let Some(key) = &self.key {
            call = call.header("Authorization", &format!("Bearer {key}"));
        }
        let failed = |e: ureq::Error| match e {
            ureq::Error::Timeout(_) => {
                ClientError::Timeout { url: self.url.clone(), ms: self.timeout.as_millis() }
            }
            e => ClientError::Unreachable { url: self.url.clone(), reason: e.to_string() },
        };
        let mut response = call.send(body).map_err(failed)?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().map_err(failed)?;
        if !(200..300).contains(&status) {
            let body: String = text.chars().take(300).collect();
            return Err(ClientError::Status { url: self.url.clone(), status, body });
        }
        let out: ProjectMemoryOut = serde_json::from_str(&text)
            .map_err(|e| ClientError::Answer { url: self.url.clone(), reason: e.to_string() })?;
        Ok(out.context)
    }
}
