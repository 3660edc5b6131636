//! opencode's sessions: its SQLite database, `$XDG_DATA_HOME/opencode/opencode.db`
//! (`~/.local/share/opencode` by default), read without writing. A session's messages hold
//! parts: a person's message its text, the model's its text and tool calls. A turn is the
//! person's message, the tools run, and the text of the last message that said something,
//! which is what epimem's plugin records of it (its Stop on `session.idle`). Sub-agents'
//! sessions (with a parent) are the agent's own and left out, as the plugin never sees them.

use std::path::{Path, PathBuf};

use epimem_core::Timestamp;
use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};

use super::{FoundSession, Step, Unreadable, event, tool_event};
use crate::agent::Agent;

fn database(home: &Path) -> PathBuf {
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".local").join("share"));
    data.join("opencode").join("opencode.db")
}

pub(super) fn sessions(home: &Path) -> (Vec<FoundSession>, Vec<Unreadable>) {
    let path = database(home);
    if !path.exists() {
        return (Vec::new(), Vec::new());
    }
    match read(&path) {
        Ok(found) => (found, Vec::new()),
        Err(e) => (Vec::new(), vec![Unreadable { source: path, why: e.to_string() }]),
    }
}

fn read(path: &Path) -> rusqlite::Result<Vec<FoundSession>> {
    let db = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut sessions = db.prepare(
        "SELECT id, directory FROM session WHERE parent_id IS NULL ORDER BY time_created",
    )?;
    let sessions: Vec<(String, String)> =
        sessions.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
    let mut messages = db.prepare(
        "SELECT id, time_created, data FROM message WHERE session_id = ?1 ORDER BY time_created, id",
    )?;
    let mut parts =
        db.prepare("SELECT data FROM part WHERE message_id = ?1 ORDER BY time_created, id")?;
    let mut found = Vec::new();
    for (id, directory) in sessions {
        let cwd = PathBuf::from(directory);
        let mut steps = Vec::new();
        // The turn's last message that said something: its id, text and time.
        let mut answer: Option<(String, String, Timestamp)> = None;
        let read: Vec<(String, i64, String)> = messages
            .query_map([&id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        for (message, created, data) in read {
            let data: Value = serde_json::from_str(&data).unwrap_or(Value::Null);
            let parts: Vec<Value> = parts
                .query_map([&message], |r| r.get::<_, String>(0))?
                .filter_map(|p| p.ok().and_then(|p| serde_json::from_str(&p).ok()))
                .collect();
            let said = texts(&parts);
            match data.get("role").and_then(Value::as_str) {
                Some("user") if !said.is_empty() => {
                    end_turn(&id, &cwd, &mut steps, &mut answer);
                    steps.push(Step::Prompt { text: said.join("\n"), at: Timestamp(created) });
                }
                Some("assistant") => {
                    for part in &parts {
                        steps.extend(tool_step(&id, &cwd, part));
                    }
                    if !said.is_empty() {
                        let done = data.pointer("/time/completed").and_then(Value::as_i64);
                        let at = Timestamp(done.unwrap_or(created));
                        answer = Some((message, said.join("\n\n"), at));
                    }
                }
                _ => {}
            }
        }
        end_turn(&id, &cwd, &mut steps, &mut answer);
        if steps.iter().any(|s| matches!(s, Step::Prompt { .. })) {
            found.push(FoundSession {
                agent: Agent::Opencode,
                id,
                cwd,
                source: path.to_owned(),
                steps,
            });
        }
    }
    Ok(found)
}

fn end_turn(
    id: &str,
    cwd: &Path,
    steps: &mut Vec<Step>,
    answer: &mut Option<(String, String, Timestamp)>,
) {
    if let Some((message, text, at)) = answer.take() {
        let mut stop = event(id, cwd, "Stop");
        stop.turn_id = Some(message);
        steps.push(Step::TurnEnd { event: stop, text, at });
    }
}

/// The text parts of a message that were written, not added by opencode itself.
fn texts(parts: &[Value]) -> Vec<String> {
    parts
        .iter()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
        .filter(|p| p.get("synthetic").and_then(Value::as_bool) != Some(true))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

/// A tool part that ran, as the plugin's PostToolUse carries it.
fn tool_step(id: &str, cwd: &Path, part: &Value) -> Option<Step> {
    if part.get("type").and_then(Value::as_str) != Some("tool") {
        return None;
    }
    let state = part.get("state")?;
    let status = state.get("status").and_then(Value::as_str)?;
    if status != "completed" && status != "error" {
        return None;
    }
    let output = state
        .get("output")
        .or_else(|| state.get("error"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let exit = state.pointer("/metadata/exit").and_then(Value::as_i64);
    let failed = status == "error" || exit.is_some_and(|e| e != 0);
    let ended = state.pointer("/time/end").and_then(Value::as_i64)?;
    // The plugin always sends PostToolUse: a failure is read from the response.
    let event = tool_event(
        id,
        cwd,
        part.get("tool").and_then(Value::as_str).unwrap_or_default(),
        state.get("input").cloned().unwrap_or(Value::Null),
        part.get("callID").and_then(Value::as_str),
        Ok(json!({"output": output, "is_error": failed})),
    );
    Some(Step::Tool { event, at: Timestamp(ended) })
}
