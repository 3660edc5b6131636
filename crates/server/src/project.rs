//! The client a hook asks a server for a project's memory with (`POST /v1/project-memory`):
//! the server holds the search index and the embedder that choose a prompt's earlier work by
//! recall.

use std::time::Duration;

use epimem_api::wire::{ProjectMemoryIn, ProjectMemoryOut};

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
