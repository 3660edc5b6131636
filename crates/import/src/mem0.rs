//! What mem0 answers for `get_all` (or writes in an export): memories, each one sentence about
//! a person (`user_id`), an agent (`agent_id`) or a run (`run_id`), with its metadata and times.
//! Either a bare array or an object holding one under `results` or `memories`.
//!
//! Each memory is read as a message of its owner's conversation (`mem0-<owner>`) carrying the
//! memory whole in its metadata: what it came from stays with it.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::{
    FormatError, Imported, IngestLine, Notes, Record,
    records::{each, placed},
};

#[derive(Deserialize)]
struct Memory {
    id: Value,
    memory: String,
    #[serde(default)]
    user_id: Option<String>,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    updated_at: Option<String>,
    #[serde(default)]
    metadata: Option<Value>,
    #[serde(default)]
    categories: Option<Value>,
    #[serde(default)]
    hash: Option<String>,
}

pub(crate) fn read(text: &str) -> Result<Vec<Record>, FormatError> {
    let what = "mem0's memories";
    let items: Vec<&RawValue> = match serde_json::from_str::<Vec<&RawValue>>(text) {
        Ok(items) => items,
        Err(_) => {
            let wrapped: Map<String, Value> = serde_json::from_str(text).map_err(|e| {
                FormatError { what, why: format!("expected a JSON array or object: {e}") }
            })?;
            let Some(key) = ["results", "memories"].into_iter().find(|k| wrapped.contains_key(*k))
            else {
                let why = "the object has neither `results` nor `memories`".to_owned();
                return Err(FormatError { what, why });
            };
            // Read again borrowing the inner array, so that each memory keeps its place.
            #[derive(Deserialize)]
            struct Wrapped<'a> {
                #[serde(borrow, alias = "memories")]
                results: Vec<&'a RawValue>,
            }
            let inner: Wrapped<'_> = serde_json::from_str(text)
                .map_err(|e| FormatError { what, why: format!("`{key}` is not an array: {e}") })?;
            inner.results
        }
    };
    let mut records = each(placed(text, items), "a mem0 memory", memory);
    // mem0 lists memories newest first; a conversation's time only moves forward, so they are
    // stored oldest first (a record that could not be read keeps its place ahead of them).
    records.sort_by_key(|r| match &r.read {
        Ok(read) => (1, read.messages.first().and_then(|m| millis(m.timestamp.as_deref()))),
        Err(_) => (0, None),
    });
    Ok(records)
}

fn memory(m: Memory) -> Result<Imported, String> {
    let id = match &m.id {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return Err("the memory's id is neither text nor a number".into()),
    };
    let owner = m
        .user_id
        .as_deref()
        .or(m.agent_id.as_deref())
        .or(m.run_id.as_deref())
        .ok_or("the memory has no user_id, agent_id or run_id: whose is it?")?;
    let conversation = format!("mem0-{owner}");
    let metadata = json!({
        "source": "mem0",
        "mem0": {
            "id": id, "user_id": m.user_id, "agent_id": m.agent_id, "run_id": m.run_id,
            "metadata": m.metadata, "categories": m.categories, "hash": m.hash,
            "created_at": m.created_at, "updated_at": m.updated_at,
        },
    });
    let message = IngestLine {
        conversation: conversation.clone(),
        id: format!("mem0-{id}"),
        role: "user",
        content: m.memory,
        timestamp: m.created_at.clone(),
        speaker: None,
        user: m.user_id.clone(),
        metadata,
    };
    Ok(Imported { conversation, title: None, messages: vec![message], notes: Notes::default() })
}

/// A time as milliseconds since the epoch, whatever its offset.
fn millis(time: Option<&str>) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(time?).ok().map(|t| t.timestamp_millis())
}
