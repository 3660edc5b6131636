//! A coding agent's hook event as it arrives on standard input (Claude Code's fields; Codex
//! and Gemini CLI send the same ones, and a few of their own).

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

use crate::agent::Agent;

/// The events epimem listens to; any other is read and ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    SessionStart,
    UserPromptSubmit,
    PostToolUse,
    PostToolUseFailure,
    Stop,
    SessionEnd,
}

impl EventKind {
    /// Claude Code's name for it (the log's; each agent's own names are in [`Agent`]).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SessionStart => "SessionStart",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::PostToolUse => "PostToolUse",
            Self::PostToolUseFailure => "PostToolUseFailure",
            Self::Stop => "Stop",
            Self::SessionEnd => "SessionEnd",
        }
    }

    /// Whether the event concerns one tool call (its hook entry matches every tool).
    pub fn is_tool_event(self) -> bool {
        matches!(self, Self::PostToolUse | Self::PostToolUseFailure)
    }
}

/// The fields of a hook event that epimem reads; the others are ignored.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct HookEvent {
    pub session_id: String,
    #[serde(default)]
    pub transcript_path: Option<PathBuf>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    pub hook_event_name: String,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Option<Value>,
    #[serde(default)]
    pub tool_response: Option<Value>,
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// What went wrong, for PostToolUseFailure.
    #[serde(default)]
    pub error: Option<String>,
    /// How the session started (startup, resume, clear, compact).
    #[serde(default)]
    pub source: Option<String>,
    /// The turn an event belongs to (Codex).
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The agent's reply that ended the turn (Codex's and Claude Code's Stop).
    #[serde(default)]
    pub last_assistant_message: Option<String>,
    /// The agent's reply that ended the turn (Gemini CLI's AfterAgent).
    #[serde(default)]
    pub prompt_response: Option<String>,
}

impl HookEvent {
    /// Reads an event; the error names what is missing or malformed.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let event: HookEvent =
            serde_json::from_str(raw).map_err(|e| format!("not a hook event: {e}"))?;
        if event.session_id.trim().is_empty() {
            return Err("the event's session_id is empty".into());
        }
        Ok(event)
    }

    /// What the event is, by `agent`'s names for its events.
    pub fn kind(&self, agent: Agent) -> Option<EventKind> {
        agent.kind_of(&self.hook_event_name)
    }

    /// The reply that ended the turn, when the event carries one.
    pub fn reply(&self) -> Option<&str> {
        self.last_assistant_message
            .as_deref()
            .or(self.prompt_response.as_deref())
            .map(str::trim)
            .filter(|r| !r.is_empty())
    }
}
