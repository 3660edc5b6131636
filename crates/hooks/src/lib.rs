//! epimem for coding agents: the hook events of Claude Code, Codex CLI, Gemini CLI and opencode
//! recorded as memory, and memory handed back when a session starts or a prompt matches
//! earlier work.
//!
//! This is the only crate that knows the agents' hook protocols (events on standard input,
//! `hookSpecificOutput` on standard output, transcripts, settings files). A hook must never
//! fail the agent's turn and must return within milliseconds: it only stores (segmentation is
//! left to a worker), and whatever goes wrong is written to its log, with the event kept in a
//! spool that the next hook stores first.

mod agent;
mod backfill;
mod event;
mod mcp;
mod opencode;
mod project;
mod record;
mod redact;
mod settings;
mod state;
mod transcript;

use epimem_api::{
    Memory, MemoryError, MessageInput,
    wire::{JobStateOut, JobsQuery},
};
use epimem_app::config::HookConfig;
use epimem_core::{ConversationKey, Scope, Timestamp};

pub use agent::Agent;
pub use backfill::{FoundSession, Step, Unreadable, find_sessions};
pub use event::{EventKind, HookEvent};
pub use mcp::{
    install_mcp_json, install_mcp_opencode, install_mcp_toml, uninstall_mcp_json,
    uninstall_mcp_opencode, uninstall_mcp_toml,
};
pub use opencode::{is_epimem_plugin, opencode_plugin};
pub use project::project_of;
pub use record::{CODING_AGENT_KEY, Session, action_of, clip};
pub use redact::redact;
pub use settings::{install, is_epimem_hook, uninstall};
pub use state::{HookDir, Spooled};
pub use transcript::{Reply, read_replies};

/// What a hook prints and what should run in the background after it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HookOutcome {
    /// The JSON for Claude Code's standard input (empty: print nothing).
    pub stdout: String,
    pub background: Option<Background>,
}

/// Work a hook leaves to a process of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Background {
    /// Run what is queued and close the conversations that fell silent (`epimem tick`).
    Tick,
    /// Close everything pending in this session now that it ended (`epimem flush
    /// --conversation`): a job queued earlier for a full window would leave the rest.
    Flush(String),
}

/// Why an event could not be stored (it is logged and spooled, never shown to the agent).
#[derive(Debug, thiserror::Error)]
enum HookError {
    #[error(transparent)]
    Memory(#[from] MemoryError),
    #[error("the transcript cursor: {0}")]
    Cursor(#[from] std::io::Error),
}

impl HookError {
    /// Whether trying again later may succeed (the database was busy or out of reach), as
    /// opposed to an event this version cannot store.
    fn passing(&self) -> bool {
        match self {
            Self::Memory(e) => e.kind() == epimem_core::ErrorKind::Unavailable,
            Self::Cursor(_) => true,
        }
    }
}

/// How often an event that fails for a reason other than an unreachable database is tried.
const MAX_FAILURES: u32 = 3;

/// A process that chooses a prompt's earlier work by recall, words and meaning: a server on
/// the same database, which holds the search index and the embedder a hook has no time to
/// load.
pub trait PromptRecall: std::fmt::Debug {
    /// The block to hand the agent for `prompt`, sent in `session` of `project` (empty when
    /// nothing bears on it), or why there is none.
    fn prompt_context(&self, project: &str, session: &str, prompt: &str) -> Result<String, String>;
}

/// One hook invocation's surroundings.
#[derive(Debug, Clone, Copy)]
pub struct Hook<'a> {
    /// The agent whose event this is.
    pub agent: Agent,
    pub tenant: &'a str,
    pub dir: &'a HookDir,
    pub config: &'a HookConfig,
    /// Where a prompt's earlier work is recalled, if anywhere; else its keywords choose it.
    pub recall: Option<&'a dyn PromptRecall>,
}

impl Hook<'_> {
    /// Handles the event in `raw` (received at `received`) on the engine `open` gives. Never
    /// fails: a bad event is logged; an event the store cannot take (it is locked, missing,
    /// corrupt) is logged and spooled, and stored first by the next hook that can.
    pub fn run(
        &self,
        raw: &str,
        received: Timestamp,
        open: impl FnOnce() -> Result<Memory, String>,
    ) -> HookOutcome {
        let event = match HookEvent::parse(raw) {
            Ok(event) => event,
            Err(e) => {
                self.dir.log(received, &format!("ignored an event: {e}"));
                return HookOutcome::default();
            }
        };
        let Some(kind) = event.kind(self.agent) else { return HookOutcome::default() };
        let spooled = |failures| Spooled {
            received: received.0,
            event: raw.to_owned(),
            agent: self.agent,
            failures,
        };
        let memory = match open() {
            Ok(memory) => memory,
            Err(e) => {
                let spooled = spooled(0);
                self.keep(spooled, &format!("cannot open the database: {e}"));
                return HookOutcome::default();
            }
        };
        for mut spooled in self.dir.take_spool() {
            let at = Timestamp(spooled.received);
            let Ok(old) = HookEvent::parse(&spooled.event) else { continue };
            let Some(old_kind) = old.kind(spooled.agent) else { continue };
            let sender = Hook { agent: spooled.agent, ..*self };
            if let Err(e) = sender.handle(&memory, &old, old_kind, at, true) {
                if !e.passing() {
                    spooled.failures += 1;
                }
                if spooled.failures >= MAX_FAILURES {
                    self.dir.log(
                        at,
                        &format!(
                            "a kept {} dropped after {MAX_FAILURES} failures: {e}",
                            old_kind.as_str()
                        ),
                    );
                } else {
                    self.keep(spooled, &format!("a kept {} again: {e}", old_kind.as_str()));
                }
            }
        }
        match self.handle(&memory, &event, kind, received, false) {
            Ok(outcome) => outcome,
            Err(e) => {
                self.keep(spooled(u32::from(!e.passing())), &format!("{}: {e}", kind.as_str()));
                HookOutcome::default()
            }
        }
    }

    /// Logs why and spools the event.
    fn keep(&self, spooled: Spooled, why: &str) {
        let at = Timestamp(spooled.received);
        self.dir.log(at, &format!("{why} (the event is kept and stored by a later hook)"));
        if let Err(e) = self.dir.spool(&spooled) {
            self.dir.log(at, &format!("the event is lost: the spool cannot be written: {e}"));
        }
    }

    fn handle(
        &self,
        memory: &Memory,
        event: &HookEvent,
        kind: EventKind,
        received: Timestamp,
        replayed: bool,
    ) -> Result<HookOutcome, HookError> {
        // The agents always say where the session works; a caller that does not is taken to
        // work where it runs.
        let cwd = event.cwd.clone().or_else(|| std::env::current_dir().ok()).unwrap_or_default();
        let project = project_of(&cwd).display().to_string();
        let session = Session {
            conversation: ConversationKey::new(self.tenant, event.session_id.clone()),
            project: project.clone(),
            agent: self.agent,
        };
        // The agent's replies so far come before what this event adds.
        let (mut messages, read_to) = if self.agent.reads_transcript() {
            self.replies(event, &session, received)
        } else {
            (Vec::new(), None)
        };
        match kind {
            EventKind::UserPromptSubmit => {
                let prompt = event.prompt.as_deref().unwrap_or("").trim();
                if !prompt.is_empty() {
                    messages.push(session.prompt(prompt, received));
                }
            }
            EventKind::PostToolUse | EventKind::PostToolUseFailure => {
                let failed = tool_failed(self.agent, event);
                messages.extend(session.action(event, failed, received, self.config.output_chars));
            }
            EventKind::Stop if !self.agent.reads_transcript() => {
                messages
                    .extend(event.reply().map(|text| session.final_reply(event, text, received)));
            }
            _ => {}
        }
        if !messages.is_empty() {
            memory.enqueue(messages)?;
        }
        if let Some(offset) = read_to {
            self.dir.set_cursor(&event.session_id, offset)?;
        }
        let conversation =
            Scope::tenant(self.tenant).with_conversation(Some(event.session_id.clone()));
        let mut outcome = HookOutcome::default();
        match kind {
            EventKind::SessionStart if !replayed => {
                if self.config.hand.at_start() {
                    outcome.stdout = output(event, &memory.start_context(self.tenant, &project)?);
                }
                // Sessions that ended without a word (a crash, a closed terminal) close now.
                outcome.background = Some(Background::Tick);
            }
            EventKind::UserPromptSubmit
                if !replayed
                    && self.config.hand.at_prompt(|| self.dir.first_prompt(&event.session_id)) =>
            {
                let prompt = event.prompt.as_deref().unwrap_or("");
                let recalled = self.recall.and_then(|r| {
                    r.prompt_context(&project, &event.session_id, prompt)
                        .inspect_err(|e| {
                            self.dir
                                .log(received, &format!("a prompt's earlier work by keywords: {e}"))
                        })
                        .ok()
                });
                let context = match recalled {
                    Some(context) => context,
                    None => {
                        memory.prompt_context(self.tenant, &project, &event.session_id, prompt)?
                    }
                };
                outcome.stdout = output(event, &context);
            }
            EventKind::SessionEnd => {
                // Queued for a server's worker; the flush below does it without one.
                memory.queue_flush(&conversation)?;
                outcome.background = Some(Background::Flush(event.session_id.clone()));
            }
            EventKind::Stop => {
                let asked =
                    JobsQuery { conversation: Some(event.session_id.clone()), limit: Some(16) };
                let queued = memory
                    .jobs(self.tenant, asked)?
                    .jobs
                    .iter()
                    .any(|j| matches!(j.state, JobStateOut::Queued));
                outcome.background = queued.then_some(Background::Tick);
            }
            _ => {}
        }
        if !self.config.background {
            outcome.background = None;
        }
        Ok(outcome)
    }

    /// The replies in the session's transcript since the last read, and where that read
    /// stopped (`None` when the cursor does not move: no transcript, or nothing new in it).
    fn replies(
        &self,
        event: &HookEvent,
        session: &Session,
        received: Timestamp,
    ) -> (Vec<MessageInput>, Option<u64>) {
        let Some(path) = &event.transcript_path else { return (Vec::new(), None) };
        let from = self.dir.cursor(&event.session_id);
        match read_replies(path, from) {
            Ok((replies, offset)) => {
                let replies = replies.iter().map(|r| session.reply(r, received)).collect();
                (replies, (offset != from).then_some(offset))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), None),
            Err(e) => {
                self.dir
                    .log(received, &format!("cannot read the transcript {}: {e}", path.display()));
                (Vec::new(), None)
            }
        }
    }
}

/// Whether a tool event of `agent` says the tool failed: its failure event, or a response that
/// says so although the tool returned.
pub(crate) fn tool_failed(agent: Agent, event: &HookEvent) -> bool {
    event.kind(agent) == Some(EventKind::PostToolUseFailure) || reports_failure(event)
}

/// Whether a tool's response says it failed although the tool returned.
fn reports_failure(event: &HookEvent) -> bool {
    let Some(response) = &event.tool_response else { return false };
    ["is_error", "interrupted"]
        .iter()
        .any(|f| response.get(*f).and_then(serde_json::Value::as_bool) == Some(true))
}

/// The JSON an agent reads from a hook to add context (the same for every agent, named by the
/// agent's own event name); empty for no context.
fn output(event: &HookEvent, context: &str) -> String {
    if context.trim().is_empty() {
        return String::new();
    }
    serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": event.hook_event_name,
            "additionalContext": context
        }
    })
    .to_string()
}
