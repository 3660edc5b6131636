//! Codex CLI's sessions: one JSON-lines rollout per session under
//! `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl` (`~/.codex` without `CODEX_HOME`). Its
//! first line (`session_meta`) says the session and its folder; then the events of each turn:
//! the person's message, each command run (`item_completed`), and the turn's end with its last
//! answer (`task_complete`), which is what the hooks record of it (Stop's
//! `last_assistant_message`, under the turn's id).

use std::path::{Path, PathBuf};

use epimem_core::Timestamp;
use serde_json::{Value, json};

use super::{FoundSession, Step, Unreadable, event, tool_event};
use crate::agent::Agent;

/// Codex's folder of sessions under `home`.
fn sessions_dir(home: &Path) -> PathBuf {
    match std::env::var_os("CODEX_HOME") {
        Some(dir) => PathBuf::from(dir).join("sessions"),
        None => home.join(".codex").join("sessions"),
    }
}

pub(super) fn sessions(home: &Path) -> (Vec<FoundSession>, Vec<Unreadable>) {
    let (mut found, mut unreadable) = (Vec::new(), Vec::new());
    let mut files = Vec::new();
    rollouts(&sessions_dir(home), &mut files);
    files.sort();
    for file in files {
        match std::fs::read_to_string(&file)
            .map_err(|e| e.to_string())
            .and_then(|text| session(&file, &text))
        {
            Ok(Some(session)) => found.push(session),
            Ok(None) => {}
            Err(why) => unreadable.push(Unreadable { source: file, why }),
        }
    }
    found.sort_by_key(|s| s.started());
    (found, unreadable)
}

/// Every `rollout-*.jsonl` under `dir`, its date folders walked.
fn rollouts(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for path in entries.flatten().map(|e| e.path()) {
        if path.is_dir() {
            rollouts(&path, into);
        } else if path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
        {
            into.push(path);
        }
    }
}

fn session(file: &Path, text: &str) -> Result<Option<FoundSession>, String> {
    let records: Vec<Value> =
        text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
    let meta = records
        .iter()
        .find(|r| r.get("type").and_then(Value::as_str) == Some("session_meta"))
        .and_then(|r| r.get("payload"))
        .ok_or("no session_meta line")?;
    let id = meta.get("id").and_then(Value::as_str).ok_or("the session has no id")?.to_owned();
    let cwd = PathBuf::from(meta.get("cwd").and_then(Value::as_str).unwrap_or_default());
    let mut steps = Vec::new();
    for record in &records {
        if record.get("type").and_then(Value::as_str) != Some("event_msg") {
            continue;
        }
        let Some(at) = record
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(|t| Timestamp::parse_rfc3339(t).ok())
        else {
            continue;
        };
        let payload = &record["payload"];
        match payload.get("type").and_then(Value::as_str) {
            Some("item_completed") => steps.extend(item_step(&id, &cwd, &payload["item"], at)),
            Some("task_complete") => {
                let said = payload.get("last_agent_message").and_then(Value::as_str).unwrap_or("");
                if !said.trim().is_empty() {
                    let mut stop = event(&id, &cwd, "Stop");
                    stop.turn_id =
                        payload.get("turn_id").and_then(Value::as_str).map(str::to_owned);
                    steps.push(Step::TurnEnd { event: stop, text: said.trim().to_owned(), at });
                }
            }
            _ => {}
        }
    }
    if !steps.iter().any(|s| matches!(s, Step::Prompt { .. })) {
        return Ok(None);
    }
    Ok(Some(FoundSession { agent: Agent::Codex, id, cwd, source: file.to_owned(), steps }))
}

/// The step a completed item is: the person's message, or a command run.
fn item_step(id: &str, cwd: &Path, item: &Value, at: Timestamp) -> Option<Step> {
    match item.get("type").and_then(Value::as_str)? {
        "UserMessage" => {
            let text: Vec<&str> = item
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            let text = text.join("\n").trim().to_owned();
            (!text.is_empty()).then_some(Step::Prompt { text, at })
        }
        "CommandExecution" => {
            // The command as the person would type it: the shell's `-lc` argument.
            let argv: Vec<&str> = item
                .get("command")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let command = match argv.as_slice() {
                [_, "-lc" | "-c", script] => (*script).to_owned(),
                other => other.join(" "),
            };
            let output = item.get("aggregated_output").and_then(Value::as_str).unwrap_or("");
            let event = tool_event(
                id,
                cwd,
                "Bash",
                json!({"command": command}),
                item.get("id").and_then(Value::as_str),
                // Codex has no failure event: a failed command is a PostToolUse whose output
                // says so, as its hook sends it.
                Ok(json!(output)),
            );
            Some(Step::Tool { event, at })
        }
        _ => None,
    }
}
