//! A ChatGPT data export's `conversations.json`: an array of conversations, each a tree of
//! messages (`mapping`, linked by `parent`) whose `current_node` is where the user ended. An
//! edited message or a regenerated answer starts a branch; the conversation is the branch
//! from the root to `current_node`, and the others are counted as abandoned.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::{
    FormatError, Imported, IngestLine, Notes, Record,
    records::{each, elements, epoch_seconds, with_attachments},
};

#[derive(Deserialize)]
struct Conversation {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    create_time: Option<f64>,
    #[serde(default)]
    conversation_id: Option<String>,
    #[serde(default)]
    id: Option<String>,
    mapping: HashMap<String, Node>,
    #[serde(default)]
    current_node: Option<String>,
}

#[derive(Deserialize)]
struct Node {
    #[serde(default)]
    message: Option<Said>,
    #[serde(default)]
    parent: Option<String>,
}

#[derive(Deserialize)]
struct Said {
    id: String,
    author: Author,
    #[serde(default)]
    create_time: Option<f64>,
    #[serde(default)]
    content: Map<String, Value>,
    #[serde(default)]
    metadata: Map<String, Value>,
}

#[derive(Deserialize)]
struct Author {
    role: String,
    #[serde(default)]
    name: Option<String>,
}

pub(crate) fn read(text: &str) -> Result<Vec<Record>, FormatError> {
    let what = "a ChatGPT export's conversations.json";
    Ok(each(elements(text, what)?, "a ChatGPT conversation", conversation))
}

fn conversation(c: Conversation) -> Result<Imported, String> {
    let id = c.conversation_id.or(c.id).ok_or("the conversation has no id")?;
    let name = format!("chatgpt-{id}");
    let branch = branch(&c.mapping, c.current_node.as_deref())?;
    let mut notes = Notes {
        abandoned: c.mapping.values().filter(|n| n.message.is_some()).count()
            - branch.iter().filter(|n| n.message.is_some()).count(),
        ..Notes::default()
    };
    let started = c.create_time.and_then(epoch_seconds);
    let mut messages = Vec::new();
    for said in branch.iter().filter_map(|n| n.message.as_ref()) {
        if said.metadata.get("is_visually_hidden_from_conversation") == Some(&Value::Bool(true)) {
            notes.hidden += 1;
            continue;
        }
        let (text, attachments) = text_of(said);
        notes.attachments += attachments.len();
        let content = with_attachments(text, &attachments);
        if content.trim().is_empty() {
            notes.empty += 1;
            continue;
        }
        let role = match said.author.role.as_str() {
            "user" => "user",
            "assistant" => "assistant",
            "system" => "system",
            _ => {
                notes.tool_outputs += 1;
                "tool"
            }
        };
        let mut metadata = json!({"source": "chatgpt", "title": c.title});
        if !attachments.is_empty() {
            metadata["attachments"] = json!(attachments);
        }
        messages.push(IngestLine {
            conversation: name.clone(),
            id: said.id.clone(),
            role,
            content,
            timestamp: said.create_time.and_then(epoch_seconds).or_else(|| started.clone()),
            speaker: (role == "tool").then(|| said.author.name.clone()).flatten(),
            user: None,
            metadata,
        });
    }
    Ok(Imported { conversation: name, title: c.title, messages, notes })
}

/// The nodes from the root to `current` (or, without one, to the newest leaf), in order.
fn branch<'a>(
    mapping: &'a HashMap<String, Node>,
    current: Option<&str>,
) -> Result<Vec<&'a Node>, String> {
    let end = match current.filter(|c| mapping.contains_key(*c)) {
        Some(end) => end.to_owned(),
        None => newest_leaf(mapping).ok_or("the conversation has no messages")?,
    };
    let mut path = Vec::new();
    let mut at = Some(end);
    while let Some(id) = at {
        let node = mapping.get(&id).ok_or_else(|| format!("node {id} is named but absent"))?;
        if path.len() > mapping.len() {
            return Err("the message tree has a cycle".into());
        }
        path.push(node);
        at = node.parent.clone();
    }
    path.reverse();
    Ok(path)
}

fn newest_leaf(mapping: &HashMap<String, Node>) -> Option<String> {
    let parents: std::collections::HashSet<&str> =
        mapping.values().filter_map(|n| n.parent.as_deref()).collect();
    mapping
        .iter()
        .filter(|(id, _)| !parents.contains(id.as_str()))
        .max_by(|(a_id, a), (b_id, b)| {
            let time = |n: &Node| n.message.as_ref().and_then(|m| m.create_time).unwrap_or(0.0);
            time(a).total_cmp(&time(b)).then_with(|| b_id.cmp(a_id))
        })
        .map(|(id, _)| id.clone())
}

/// A message's text, and the names of what was attached to it (files, images).
fn text_of(said: &Said) -> (String, Vec<String>) {
    let content = &said.content;
    let kind = content.get("content_type").and_then(Value::as_str).unwrap_or("text");
    let mut attached: Vec<String> = said
        .metadata
        .get("attachments")
        .and_then(Value::as_array)
        .map(|files| {
            files
                .iter()
                .map(|f| f.get("name").and_then(Value::as_str).unwrap_or("a file").to_owned())
                .collect()
        })
        .unwrap_or_default();
    let mut pieces: Vec<String> = Vec::new();
    for part in content.get("parts").and_then(Value::as_array).into_iter().flatten() {
        match part {
            Value::String(s) => pieces.push(s.clone()),
            Value::Object(o) => match o.get("content_type").and_then(Value::as_str) {
                Some("audio_transcription") => {
                    pieces.extend(o.get("text").and_then(Value::as_str).map(str::to_owned))
                }
                Some(other) => attached.push(other.trim_end_matches("_asset_pointer").to_owned()),
                None => attached.push("an attachment".to_owned()),
            },
            _ => {}
        }
    }
    for field in ["text", "result", "user_instructions"] {
        if let Some(s) = content.get(field).and_then(Value::as_str) {
            pieces.push(s.to_owned());
        }
    }
    let mut text = pieces.join("\n");
    if kind == "code" && !text.is_empty() {
        let language = content.get("language").and_then(Value::as_str).unwrap_or("");
        text = format!("```{}\n{text}\n```", if language == "unknown" { "" } else { language });
    }
    (text, attached)
}
