//! Gemini CLI's sessions: one JSON-lines log per session under
//! `~/.gemini/tmp/<project>/chats/session-*.jsonl`, the project's folder named in
//! `.project_root` beside `chats`. The first line says the session; then each line is a message
//! (a message written again, with its tool calls filled in, has the same id: the last writing
//! stands) or a `$set` of the session's fields. A turn is a prompt, the model's tool calls and
//! its last answer, which is what the hooks record of it (AfterAgent's response).

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
};

use epimem_core::Timestamp;
use serde_json::{Value, json};

use super::{FoundSession, Step, Unreadable, event, tool_event};
use crate::{HookEvent, agent::Agent};

pub(super) fn sessions(home: &Path) -> (Vec<FoundSession>, Vec<Unreadable>) {
    let (mut found, mut unreadable) = (Vec::new(), Vec::new());
    let Ok(projects) = std::fs::read_dir(home.join(".gemini").join("tmp")) else {
        return (found, unreadable);
    };
    for project in projects.flatten().map(|p| p.path()) {
        let Ok(root) = std::fs::read_to_string(project.join(".project_root")) else { continue };
        let Ok(chats) = std::fs::read_dir(project.join("chats")) else { continue };
        let mut files: Vec<PathBuf> = chats
            .flatten()
            .map(|c| c.path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        files.sort();
        for file in files {
            match std::fs::read_to_string(&file)
                .map_err(|e| e.to_string())
                .and_then(|text| session(&file, &text, Path::new(root.trim())))
            {
                Ok(Some(session)) => found.push(session),
                Ok(None) => {}
                Err(why) => unreadable.push(Unreadable { source: file, why }),
            }
        }
    }
    found.sort_by_key(|s| s.started());
    (found, unreadable)
}

fn session(file: &Path, text: &str, cwd: &Path) -> Result<Option<FoundSession>, String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let head: Value = lines
        .next()
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or("the first line does not say the session")?;
    let id = head.get("sessionId").and_then(Value::as_str).ok_or("no sessionId")?.to_owned();
    // The messages by id, in the order each was first written; the last writing stands.
    let (mut order, mut messages): (Vec<String>, HashMap<String, Value>) = Default::default();
    for line in lines {
        let Ok(record) = serde_json::from_str::<Value>(line) else { continue };
        let Some(message_id) = record.get("id").and_then(Value::as_str) else { continue };
        if !messages.contains_key(message_id) {
            order.push(message_id.to_owned());
        }
        messages.insert(message_id.to_owned(), record);
    }
    let mut steps = Vec::new();
    let mut answer: Option<(String, Timestamp)> = None;
    let end_turn = |steps: &mut Vec<Step>, answer: &mut Option<(String, Timestamp)>| {
        if let Some((text, at)) = answer.take() {
            steps.push(Step::TurnEnd { event: stop_event(&id, cwd), text, at });
        }
    };
    for message in order.iter().filter_map(|m| messages.get(m)) {
        let at = time(message.get("timestamp"));
        match message.get("type").and_then(Value::as_str) {
            Some("user") => {
                let text = user_text(message);
                if text.is_empty() {
                    continue;
                }
                end_turn(&mut steps, &mut answer);
                steps.push(Step::Prompt { text, at: at.ok_or("a prompt without a time")? });
            }
            Some("gemini") => {
                for call in message.get("toolCalls").and_then(Value::as_array).into_iter().flatten()
                {
                    steps.push(tool_step(&id, cwd, call, at)?);
                }
                let said = message.get("content").and_then(Value::as_str).unwrap_or("").trim();
                if let (false, Some(at)) = (said.is_empty(), at) {
                    answer = Some((said.to_owned(), at));
                }
            }
            _ => {}
        }
    }
    end_turn(&mut steps, &mut answer);
    if !steps.iter().any(|s| matches!(s, Step::Prompt { .. })) {
        return Ok(None);
    }
    Ok(Some(FoundSession {
        agent: Agent::Gemini,
        id,
        cwd: cwd.to_owned(),
        source: file.to_owned(),
        steps,
    }))
}

/// What the person typed: the text parts of a user message that is not the context the CLI
/// writes at a session's start, nor the results of tool calls.
fn user_text(message: &Value) -> String {
    let parts = message.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
    let text: Vec<&str> =
        parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
    let text = text.join("\n").trim().to_owned();
    if text.starts_with("<session_context>") { String::new() } else { text }
}

fn tool_step(id: &str, cwd: &Path, call: &Value, at: Option<Timestamp>) -> Result<Step, String> {
    let at = time(call.get("timestamp")).or(at).ok_or("a tool call without a time")?;
    let shown = call.get("resultDisplay").and_then(Value::as_str).unwrap_or("").to_owned();
    let llm: Vec<String> = call
        .get("result")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.pointer("/functionResponse/response/output").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    let response = json!({"llmContent": llm.join("\n"), "returnDisplay": shown});
    let event = tool_event(
        id,
        cwd,
        call.get("name").and_then(Value::as_str).unwrap_or_default(),
        call.get("args").cloned().unwrap_or(Value::Null),
        call.get("id").and_then(Value::as_str),
        // AfterTool carries what the tool showed, failed or not.
        Ok(response),
    );
    Ok(Step::Tool { event, at })
}

fn stop_event(id: &str, cwd: &Path) -> HookEvent {
    event(id, cwd, "AfterAgent")
}

fn time(value: Option<&Value>) -> Option<Timestamp> {
    value.and_then(Value::as_str).and_then(|t| Timestamp::parse_rfc3339(t).ok())
}
