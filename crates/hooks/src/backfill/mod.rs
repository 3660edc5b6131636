//! Sessions a coding agent ran before the hooks were there, read from where the agent keeps
//! them and recorded as the hooks would have: the same prompts, tool actions and replies, made
//! by the same functions, in the session's order and at its times.
//!
//! Each agent's reader turns its files into [`Step`]s; [`messages`] turns those into what the
//! hooks store. A session the database already holds (the hooks recorded it, or an earlier
//! backfill did) is left as it is by the caller.

mod claude;
mod codex;
mod gemini;
mod opencode;

use std::path::{Path, PathBuf};

use epimem_api::MessageInput;
use epimem_core::{ConversationKey, Timestamp};

use crate::{HookEvent, Reply, Session, agent::Agent, project::project_of, tool_failed};

/// A session found on disk.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundSession {
    pub agent: Agent,
    /// The agent's session id: the conversation's name, as the hooks name it.
    pub id: String,
    /// Where it worked (its project is the repository around it).
    pub cwd: PathBuf,
    /// The file (or store) it was read from, to name in reports.
    pub source: PathBuf,
    pub steps: Vec<Step>,
}

/// One thing that happened in a session, as a hook event would have told it.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The person's prompt.
    Prompt { text: String, at: Timestamp },
    /// A tool call and what it returned, as the agent's hook event tells it; whether it failed
    /// is read from the event as the hooks read it.
    Tool { event: HookEvent, at: Timestamp },
    /// A reply read from a transcript (Claude Code).
    Reply(Reply),
    /// The reply that ended a turn, as its Stop event carries it (the other agents).
    TurnEnd { event: HookEvent, text: String, at: Timestamp },
}

/// A session file that could not be read, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Unreadable {
    pub source: PathBuf,
    pub why: String,
}

/// Every session `agent` kept under `home` (the user's home folder), oldest first, and the
/// files that could not be read.
pub fn find_sessions(agent: Agent, home: &Path) -> (Vec<FoundSession>, Vec<Unreadable>) {
    match agent {
        Agent::Claude => claude::sessions(home),
        Agent::Codex => codex::sessions(home),
        Agent::Gemini => gemini::sessions(home),
        Agent::Opencode => opencode::sessions(home),
    }
}

/// A hook event of `session`, named `name`, saying nothing more.
pub(crate) fn event(session: &str, cwd: &Path, name: &str) -> HookEvent {
    HookEvent {
        session_id: session.to_owned(),
        transcript_path: None,
        cwd: Some(cwd.to_owned()),
        hook_event_name: name.to_owned(),
        prompt: None,
        tool_name: None,
        tool_input: None,
        tool_response: None,
        tool_use_id: None,
        error: None,
        source: None,
        turn_id: None,
        last_assistant_message: None,
        prompt_response: None,
    }
}

/// A tool call's event as PostToolUse carries it with the tool's response, or as
/// PostToolUseFailure with its error.
pub(crate) fn tool_event(
    session: &str,
    cwd: &Path,
    tool: &str,
    input: serde_json::Value,
    id: Option<&str>,
    outcome: Result<serde_json::Value, String>,
) -> HookEvent {
    let name = if outcome.is_ok() { "PostToolUse" } else { "PostToolUseFailure" };
    let (tool_response, error) = match outcome {
        Ok(response) => (Some(response), None),
        Err(error) => (None, Some(error)),
    };
    HookEvent {
        tool_name: Some(tool.to_owned()),
        tool_input: Some(input),
        tool_use_id: id.map(str::to_owned),
        tool_response,
        error,
        ..event(session, cwd, name)
    }
}

impl FoundSession {
    /// The repository the session worked in.
    pub fn project(&self) -> PathBuf {
        project_of(&self.cwd)
    }

    /// When it started (its first step's time), if any step has one.
    pub fn started(&self) -> Option<Timestamp> {
        self.steps.iter().find_map(Step::at)
    }

    /// What the hooks would have stored of it, in `tenant`, in order.
    pub fn messages(&self, tenant: &str, output_chars: usize) -> Vec<MessageInput> {
        let session = Session {
            conversation: ConversationKey::new(tenant, self.id.clone()),
            project: self.project().display().to_string(),
            agent: self.agent,
        };
        let fallback = self.started().unwrap_or(Timestamp(0));
        self.steps
            .iter()
            .filter_map(|step| match step {
                Step::Prompt { text, at } => Some(session.prompt(text, *at)),
                Step::Tool { event, at } => {
                    session.action(event, tool_failed(self.agent, event), *at, output_chars)
                }
                Step::Reply(reply) => Some(session.reply(reply, fallback)),
                Step::TurnEnd { event, text, at } => Some(session.final_reply(event, text, *at)),
            })
            .collect()
    }
}

impl Step {
    fn at(&self) -> Option<Timestamp> {
        match self {
            Step::Prompt { at, .. } | Step::Tool { at, .. } | Step::TurnEnd { at, .. } => Some(*at),
            Step::Reply(reply) => reply.timestamp,
        }
    }
}
