//! A Claude.ai data export's `conversations.json`: an array of conversations, each with its
//! `chat_messages` in order. Newer exports link each message to its parent
//! (`parent_message_uuid`): an edited message or a retried answer starts a branch, and the
//! conversation is the branch that ends with its last message.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::{
    FormatError, Imported, IngestLine, Notes, Record,
    records::{each, elements, with_attachments},
};

#[derive(Deserialize)]
struct Conversation {
    uuid: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    chat_messages: Vec<Said>,
}

#[derive(Deserialize)]
struct Said {
    uuid: String,
    #[serde(default)]
    text: String,
    sender: String,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    content: Vec<Map<String, Value>>,
    #[serde(default)]
    attachments: Vec<Map<String, Value>>,
    #[serde(default)]
    files: Vec<Map<String, Value>>,
    #[serde(default)]
    parent_message_uuid: Option<String>,
}

pub(crate) fn read(text: &str) -> Result<Vec<Record>, FormatError> {
    let what = "a Claude.ai export's conversations.json";
    Ok(each(elements(text, what)?, "a Claude conversation", |c| Ok(conversation(c))))
}

fn conversation(c: Conversation) -> Imported {
    let name = format!("claude-{}", c.uuid);
    let title = c.name.filter(|n| !n.trim().is_empty());
    let branch = branch(&c.chat_messages);
    let mut notes = Notes { abandoned: c.chat_messages.len() - branch.len(), ..Notes::default() };
    let mut messages = Vec::new();
    for said in branch {
        let (text, tools) = text_of(said);
        notes.tool_outputs += tools;
        let attached: Vec<String> = said
            .attachments
            .iter()
            .chain(&said.files)
            .map(|f| f.get("file_name").and_then(Value::as_str).unwrap_or("a file").to_owned())
            .collect();
        notes.attachments += attached.len();
        let content = with_attachments(text, &attached);
        if content.trim().is_empty() {
            notes.empty += 1;
            continue;
        }
        let mut metadata = json!({"source": "claude", "title": title});
        if !attached.is_empty() {
            metadata["attachments"] = json!(attached);
        }
        messages.push(IngestLine {
            conversation: name.clone(),
            id: said.uuid.clone(),
            role: if said.sender == "human" { "user" } else { "assistant" },
            content,
            timestamp: said.created_at.clone().or_else(|| c.created_at.clone()),
            speaker: None,
            user: None,
            metadata,
        });
    }
    Imported { conversation: name, title, messages, notes }
}

/// The messages of the branch that ends with the last one, in order: all of them when the
/// export links no parents.
fn branch(all: &[Said]) -> Vec<&Said> {
    let Some(last) = all.last() else { return Vec::new() };
    if all.iter().all(|m| m.parent_message_uuid.is_none()) {
        return all.iter().collect();
    }
    let by_id: HashMap<&str, &Said> = all.iter().map(|m| (m.uuid.as_str(), m)).collect();
    let mut path = vec![last];
    while let Some(parent) = path.last().and_then(|m| m.parent_message_uuid.as_deref()) {
        // The root's parent is a placeholder id that names no message.
        match by_id.get(parent) {
            Some(m) if path.len() <= all.len() => path.push(m),
            _ => break,
        }
    }
    path.reverse();
    path
}

/// A message's text (its `content` parts when the export has them, else `text`), and how many
/// of its parts were tools' calls or results (named in the text).
fn text_of(said: &Said) -> (String, usize) {
    if said.content.is_empty() {
        return (said.text.clone(), 0);
    }
    let (mut pieces, mut tools) = (Vec::new(), 0);
    for part in &said.content {
        let name = part.get("name").and_then(Value::as_str).unwrap_or("a tool");
        match part.get("type").and_then(Value::as_str) {
            Some("text") => {
                pieces.extend(part.get("text").and_then(Value::as_str).map(str::to_owned))
            }
            Some("tool_use") => {
                tools += 1;
                pieces.push(format!("[used {name}]"));
            }
            Some("tool_result") => {
                tools += 1;
                pieces.push(format!("[result of {name}]"));
            }
            // The model's own thinking is not what it said.
            _ => {}
        }
    }
    (pieces.join("\n"), tools)
}
