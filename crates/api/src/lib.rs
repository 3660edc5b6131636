//! epimem's front door. [`Memory`] is the whole surface an interface needs: remember, recall
//! (hits, a block of lines, a block of episodes), the next turn's block, episodes and one
//! episode, corrections, forgetting (an episode, a conversation, a person, a tenant), flushing,
//! the timeline, facts, jobs, a project's memory for coding agents, stats and API keys; and the
//! use cases of the programs around the requests (bulk ingest, the worker's beat, index upkeep,
//! export and import). Each call takes a request of [`wire`] types and answers with another, so
//! the CLI's `--json`, the HTTP API and the MCP tools give the same fields for the same
//! question. A door only parses its protocol, calls `Memory`, and renders.

mod admin;
mod conversations;
mod engine;
mod episodes;
mod error;
mod messages;
mod recall;
mod traces;
mod transfer;
mod upkeep;
pub mod wire;
mod worker;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use epimem_core::Timestamp;

pub use error::MemoryError;
pub use messages::{Batch, message_list, parse_messages};
pub use worker::{Report, Worker};

/// The engine a program builds and the values it takes and gives back.
pub use engine::{
    CRASH_POINTS, Clock, ConsolidationConfig, CrashAt, Engine, EngineConfig, EngineError,
    EpisodeContext, FactHit, FixedClock, Freshness, IndexTask, IngestReport, JobsConfig, Measure,
    MessageHit, MessageInput, NextTurn, NextTurnQuery, Patterns, RecallHit, RecallQuery,
    RecalledContext, RepairLog, RetellReport, RollupReport, RunReport, SystemClock, TAIL_REFRESH,
    TimelineConfig, WorkContextConfig, process_name, project_scope,
};

/// The use cases over one engine. Cheap to clone: every clone answers from the same engine,
/// so a door keeps one and hands clones to its threads.
#[derive(Debug, Clone)]
pub struct Memory {
    engine: Arc<Engine>,
}

impl Memory {
    pub fn new(engine: Engine) -> Self {
        Self { engine: Arc::new(engine) }
    }
}

/// The most items a list or a recall returns.
pub const MAX_LIMIT: usize = 1000;

/// `asked`, or `default` when not given; refused when 0 or above [`MAX_LIMIT`].
pub fn limit(asked: Option<usize>, default: usize) -> Result<usize, MemoryError> {
    match asked.unwrap_or(default) {
        0 => Err(MemoryError::bad_input("limit: must be at least 1")),
        n if n > MAX_LIMIT => Err(MemoryError::bad_input(format!("limit: at most {MAX_LIMIT}"))),
        n => Ok(n),
    }
}

/// A request read as JSON into `T`; what was wrong is said with where (`title: invalid type:
/// …`).
pub fn from_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, MemoryError> {
    serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(body)).map_err(|e| {
        let path = e.path().to_string();
        let place = if path == "." { String::new() } else { format!("{path}: ") };
        MemoryError::bad_input(format!("{place}{}", e.into_inner()))
    })
}

/// The person a request names, if any; an empty name is refused rather than read as everyone.
fn user(value: Option<String>) -> Result<Option<String>, MemoryError> {
    match value {
        Some(u) if u.trim().is_empty() => Err(MemoryError::bad_input("user: must not be empty")),
        other => Ok(other),
    }
}

/// An RFC 3339 time of the request's `field`, if given.
fn time(value: Option<&str>, field: &str) -> Result<Option<Timestamp>, MemoryError> {
    value
        .map(Timestamp::parse_rfc3339)
        .transpose()
        .map_err(|e| MemoryError::bad_input(format!("{field}: {e}")))
}
