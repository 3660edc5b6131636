//! Claude Code's sessions: one JSON-lines transcript per session under
//! `~/.claude/projects/<the folder, encoded>/<session id>.jsonl` (`$CLAUDE_CONFIG_DIR` instead
//! of `~/.claude` when set). A user entry holds a prompt or the results of tool calls; an
//! assistant entry holds text and tool calls; entries of sub-agents (`isSidechain`) and meta
//! entries are the agent's own and left out, as the hooks never see them.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
};

use epimem_core::Timestamp;
use serde_json::{Value, json};

use super::{FoundSession, Step, Unreadable, tool_event};
use crate::{agent::Agent, transcript};

/// Claude Code's folder of sessions under `home`.
fn projects_dir(home: &Path) -> PathBuf {
    match std::env::var_os("CLAUDE_CONFIG_DIR") {
        Some(dir) => PathBuf::from(dir).join("projects"),
        None => home.join(".claude").join("projects"),
    }
}

pub(super) fn sessions(home: &Path) -> (Vec<FoundSession>, Vec<Unreadable>) {
    let (mut found, mut unreadable) = (Vec::new(), Vec::new());
    let Ok(folders) = std::fs::read_dir(projects_dir(home)) else { return (found, unreadable) };
    let mut files: Vec<PathBuf> = folders
        .flatten()
        .filter_map(|folder| std::fs::read_dir(folder.path()).ok())
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    for file in files {
        match std::fs::read_to_string(&file) {
            Ok(text) => match session(&file, &text) {
                Ok(Some(session)) => found.push(session),
                Ok(None) => {}
                Err(why) => unreadable.push(Unreadable { source: file, why }),
            },
            Err(e) => unreadable.push(Unreadable { source: file, why: e.to_string() }),
        }
    }
    found.sort_by_key(|s| s.started());
    (found, unreadable)
}

/// The session a transcript holds; `None` when it holds no prompt (a session opened and left).
fn session(file: &Path, text: &str) -> Result<Option<FoundSession>, String> {
    let entries: Vec<Value> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let main = |e: &&Value| {
        e.get("isSidechain").and_then(Value::as_bool) != Some(true)
            && e.get("isMeta").and_then(Value::as_bool) != Some(true)
    };
    let Some(first) = entries.iter().filter(main).find(|e| e.get("cwd").is_some()) else {
        return Ok(None);
    };
    let id = first.get("sessionId").and_then(Value::as_str).ok_or("no sessionId")?.to_owned();
    let cwd = PathBuf::from(first.get("cwd").and_then(Value::as_str).unwrap_or_default());
    // Each tool call, by its id, until its result comes.
    let mut calls: HashMap<String, (String, Value)> = HashMap::new();
    let mut steps = Vec::new();
    for entry in entries.iter().filter(main) {
        let at = entry
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(|t| Timestamp::parse_rfc3339(t).ok());
        let content = entry.get("message").and_then(|m| m.get("content"));
        match entry.get("type").and_then(Value::as_str) {
            Some("assistant") => {
                for block in content.and_then(Value::as_array).into_iter().flatten() {
                    if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                        let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
                        let name = block.get("name").and_then(Value::as_str).unwrap_or_default();
                        let input = block.get("input").cloned().unwrap_or(Value::Null);
                        calls.insert(id.to_owned(), (name.to_owned(), input));
                    }
                }
                steps.extend(transcript::reply(entry).map(Step::Reply));
            }
            Some("user") => {
                let Some(at) = at else { continue };
                match content {
                    Some(Value::String(prompt)) if !prompt.trim().is_empty() => {
                        steps.push(Step::Prompt { text: prompt.trim().to_owned(), at });
                    }
                    Some(Value::Array(blocks)) => {
                        let results: Vec<&Value> = blocks
                            .iter()
                            .filter(|b| {
                                b.get("type").and_then(Value::as_str) == Some("tool_result")
                            })
                            .collect();
                        if results.is_empty() {
                            let text = transcript::text_blocks(blocks, "\n");
                            if !text.is_empty() {
                                steps.push(Step::Prompt { text, at });
                            }
                        }
                        for result in results {
                            steps.extend(tool_step(entry, result, &mut calls, &id, &cwd, at));
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    if !steps.iter().any(|s| matches!(s, Step::Prompt { .. })) {
        return Ok(None);
    }
    Ok(Some(FoundSession { agent: Agent::Claude, id, cwd, source: file.to_owned(), steps }))
}

/// A tool call's step, as its PostToolUse event would have carried it: the structured result
/// the transcript keeps (`toolUseResult`) is the event's `tool_response`.
fn tool_step(
    entry: &Value,
    result: &Value,
    calls: &mut HashMap<String, (String, Value)>,
    session: &str,
    cwd: &Path,
    at: Timestamp,
) -> Option<Step> {
    let id = result.get("tool_use_id").and_then(Value::as_str)?;
    let (name, input) = calls.remove(id)?;
    let failed = result.get("is_error").and_then(Value::as_bool) == Some(true);
    let said = match result.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => transcript::text_blocks(blocks, "\n"),
        _ => String::new(),
    };
    let outcome = match failed {
        true => Err(said),
        false => Ok(entry.get("toolUseResult").cloned().unwrap_or_else(|| json!(said))),
    };
    let event = tool_event(session, cwd, &name, input, Some(id), outcome);
    Some(Step::Tool { event, at })
}
