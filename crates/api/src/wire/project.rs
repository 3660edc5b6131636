//! A project's memory for coding agents.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

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
