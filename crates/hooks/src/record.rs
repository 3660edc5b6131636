//! A hook event as the messages epimem stores: the user's prompt, a tool action as an
//! observation, the agent's replies from the transcript.

use std::path::Path;

use epimem_api::MessageInput;
use epimem_core::{
    ConversationKey, Role, Timestamp, clip_middle, message_limits,
    work::{ACTION_KEY, Action, ActionKind},
};
use serde_json::{Value, json};

use crate::{
    agent::Agent, event::HookEvent, project::relative_to, redact::redact, transcript::Reply,
};

/// The most of a command line or search kept in an action's metadata (a heredoc can hold a
/// whole file; the metadata of a message has a limit of its own).
const SUBJECT_CHARS: usize = 2000;

/// Where a session's messages go: its conversation, in its project.
#[derive(Debug, Clone)]
pub struct Session {
    pub conversation: ConversationKey,
    /// The project's root, the `agent` scope of the session's conversation.
    pub project: String,
    /// The coding agent that did the work (kept in each message's metadata).
    pub agent: Agent,
}

/// The metadata key naming the coding agent a message came from.
pub const CODING_AGENT_KEY: &str = "coding_agent";

impl Session {
    /// A message of the session; secrets in its text are redacted before it is stored, and a
    /// text longer than a message may hold keeps its start and end (the event is never lost
    /// for its size).
    fn message(
        &self,
        key: String,
        role: Role,
        content: String,
        at: Option<Timestamp>,
        mut metadata: Value,
    ) -> MessageInput {
        if let Some(fields) = metadata.as_object_mut() {
            fields.insert(CODING_AGENT_KEY.into(), self.agent.name().into());
        }
        MessageInput {
            conversation: self.conversation.clone(),
            user: None,
            agent: Some(self.project.clone()),
            key,
            role,
            speaker: None,
            content: clip_middle(&redact(&content), message_limits::CONTENT_BYTES).into_owned(),
            timestamp: at,
            metadata,
        }
    }

    /// The user's prompt, at the time it arrived.
    pub fn prompt(&self, text: &str, received: Timestamp) -> MessageInput {
        let key = format!("prompt:{}:{:016x}", received.0, hash(text));
        self.message(key, Role::User, text.to_owned(), Some(received), json!({"kind": "prompt"}))
    }

    /// A reply of the agent, at its transcript time (or when it was read).
    pub fn reply(&self, reply: &Reply, received: Timestamp) -> MessageInput {
        self.message(
            reply.key.clone(),
            Role::Assistant,
            reply.text.clone(),
            Some(reply.timestamp.unwrap_or(received)),
            json!({"kind": "reply"}),
        )
    }

    /// The reply that ended a turn, as the event ending it carries it (agents whose replies
    /// are not read from a transcript). Its key is the turn's, else the event's time and text.
    pub fn final_reply(&self, event: &HookEvent, text: &str, received: Timestamp) -> MessageInput {
        let key = match &event.turn_id {
            Some(turn) => format!("reply:{turn}"),
            None => format!("reply:{}:{:016x}", received.0, hash(text)),
        };
        self.message(
            key,
            Role::Assistant,
            text.to_owned(),
            Some(received),
            json!({"kind": "reply"}),
        )
    }

    /// A tool call as an observation: its one-line description, then what it printed (at
    /// most `output_chars` characters, its start and its end, where errors show).
    pub fn action(
        &self,
        event: &HookEvent,
        failed: bool,
        received: Timestamp,
        output_chars: usize,
    ) -> Option<MessageInput> {
        let tool = event.tool_name.as_deref()?;
        let input = event.tool_input.as_ref().unwrap_or(&Value::Null);
        let mut action = action_of(tool, input, failed, Path::new(&self.project));
        // The command line is kept in the metadata too: redacted like the text.
        action.subject = action.subject.map(|s| clip(&redact(&s), SUBJECT_CHARS));
        let output = if failed {
            event.error.clone().or_else(|| event.tool_response.as_ref().map(text_of))
        } else {
            match action.kind {
                ActionKind::FileRead | ActionKind::FileEdit | ActionKind::FileWrite => None,
                _ => event.tool_response.as_ref().map(text_of),
            }
        };
        let mut content = action.describe();
        if let Some(output) = output.map(|o| clip(o.trim(), output_chars)).filter(|o| !o.is_empty())
        {
            content.push('\n');
            content.push_str(&output);
        }
        let key = match &event.tool_use_id {
            Some(id) => format!("tool:{id}"),
            None => format!("tool:{}:{:016x}", received.0, hash(&content)),
        };
        let metadata = json!({"kind": action.kind.as_str(), ACTION_KEY: action});
        Some(self.message(key, Role::Tool, content, Some(received), metadata))
    }
}

/// What a tool did, from its name and input: its files (relative to the project), and what it
/// ran or looked for.
pub fn action_of(tool: &str, input: &Value, failed: bool, project: &Path) -> Action {
    let kind = ActionKind::of_tool(tool);
    let field = |name: &str| input.get(name).and_then(Value::as_str).map(str::to_owned);
    // Claude Code's and Gemini CLI's names, then opencode's.
    let mut files: Vec<String> = ["file_path", "notebook_path", "filePath"]
        .iter()
        .filter_map(|f| field(f))
        .map(|p| relative_to(&p, project))
        .collect();
    if kind == ActionKind::Search && files.is_empty() {
        files.extend(field("path").map(|p| relative_to(&p, project)));
    }
    let subject = match kind {
        ActionKind::Command => field("command"),
        ActionKind::Search => field("pattern").or_else(|| field("query")).or_else(|| field("url")),
        ActionKind::Other => field("description").or_else(|| field("prompt")),
        _ => None,
    };
    Action { kind, tool: tool.to_owned(), files, subject, failed }
}

/// A tool's response as text: a command's output, a search's results, else compact JSON.
fn text_of(response: &Value) -> String {
    match response {
        Value::String(text) => text.clone(),
        Value::Object(fields) => {
            // Claude Code's fields, then Gemini CLI's (what the person saw; what the model read).
            let parts: Vec<&str> =
                ["stdout", "stderr", "content", "output", "error", "returnDisplay"]
                    .iter()
                    .filter_map(|f| fields.get(*f).and_then(Value::as_str))
                    .filter(|t| !t.trim().is_empty())
                    .collect();
            if !parts.is_empty() {
                return parts.join("\n");
            }
            if let Some(text) = fields.get("llmContent").and_then(Value::as_str) {
                return text.to_owned();
            }
            if let Some(Value::Array(names)) = fields.get("filenames") {
                return names.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n");
            }
            response.to_string()
        }
        other => other.to_string(),
    }
}

/// At most `max` characters of `text`: two fifths from its start and the rest from its end.
pub fn clip(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let head = max * 2 / 5;
    let tail = max.saturating_sub(head);
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(count - tail).collect();
    format!("{start} … {end}")
}

fn hash(text: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_become_actions_with_project_relative_files() {
        let root = Path::new("/home/dev/shop");
        let edit = action_of(
            "Edit",
            &json!({"file_path": "/home/dev/shop/src/cart.rs", "old_string": "a"}),
            false,
            root,
        );
        assert_eq!(
            (edit.kind, edit.files.as_slice()),
            (ActionKind::FileEdit, &["src/cart.rs".to_owned()][..])
        );
        let bash = action_of(
            "Bash",
            &json!({"command": "cargo test -p cart", "description": "run"}),
            true,
            root,
        );
        assert_eq!(bash.describe(), "$ cargo test -p cart [failed]");
        let grep = action_of(
            "Grep",
            &json!({"pattern": "fn total", "path": "/home/dev/shop/src"}),
            false,
            root,
        );
        assert_eq!(grep.describe(), "Grep \"fn total\" src");
        let other = action_of("mcp__github__create_issue", &json!({"title": "x"}), false, root);
        assert_eq!(other.kind, ActionKind::Other);
    }

    #[test]
    fn long_output_keeps_its_start_and_its_end() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let clipped = clip(&text, 50);
        assert!(
            clipped.starts_with("line 0") && clipped.trim_end().ends_with("line 99"),
            "{clipped}"
        );
        assert!(clipped.chars().count() <= 53);
        assert_eq!(clip("short", 50), "short");
        assert_eq!(text_of(&json!({"stdout": "ok", "stderr": "", "interrupted": false})), "ok");
        assert_eq!(text_of(&json!({"filenames": ["a.rs", "b.rs"], "numFiles": 2})), "a.rs\nb.rs");
    }

    #[test]
    fn a_prompt_larger_than_a_message_keeps_its_start_and_end() {
        let session = Session {
            conversation: ConversationKey::new("t", "s1"),
            project: "/home/dev/shop".into(),
            agent: Agent::Claude,
        };
        let pasted = format!("fix this:\n{}\nthanks", "x".repeat(3 << 20));
        let message = session.prompt(&pasted, Timestamp::from_millis(1_772_000_000_000));
        assert!(message.content.len() <= message_limits::CONTENT_BYTES);
        assert!(message.content.starts_with("fix this") && message.content.ends_with("thanks"));
        message.check().unwrap();
        let heredoc = json!({"command": format!("cat <<EOF\n{}\nEOF", "y".repeat(200_000))});
        let event: HookEvent = serde_json::from_value(json!({
            "hook_event_name": "PostToolUse", "session_id": "s1", "cwd": "/home/dev/shop",
            "tool_name": "Bash", "tool_input": heredoc, "tool_use_id": "t1",
            "tool_response": {"stdout": "z".repeat(3 << 20)}
        }))
        .unwrap();
        let action = session.action(&event, false, Timestamp::from_millis(0), 1000).unwrap();
        action.check().unwrap();
    }
}
