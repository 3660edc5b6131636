//! Turning messages as a door receives them (JSON) into the engine's, naming what is wrong
//! when one is not.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::{SystemTime, UNIX_EPOCH},
};

use crate::engine::{EngineError, MessageInput};
use epimem_core::{ConversationKey, Role, RoleParseError, Timestamp};

use crate::{MemoryError, wire::MessageIn};

/// Messages sent without an id get one that no other message has: the time the server read
/// them and a counter.
static SENT_WITHOUT_ID: AtomicU64 = AtomicU64::new(0);

/// The messages of a request body, and how its errors name a message.
#[derive(Debug)]
pub struct Batch {
    pub messages: Vec<MessageInput>,
    /// The body was an array: a message is named by its index (`[2].content`).
    in_array: bool,
    /// What the array is called where the caller sent it (`messages` in an MCP call), if
    /// anything.
    array: &'static str,
}

impl Batch {
    /// Where `field` of message `i` is in the body.
    fn place(&self, i: usize, field: &str) -> String {
        place(self.array, self.in_array, i, field)
    }

    /// The engine's refusal of a message, named by its place in the body.
    pub(crate) fn refusal(&self, error: EngineError) -> MemoryError {
        match error {
            EngineError::InvalidMessage { index, problem } => MemoryError::bad_input(format!(
                "{}: {}",
                self.place(index, problem.field),
                problem.why
            )),
            other => other.into(),
        }
    }
}

/// Where `field` of message `i` is in what the caller sent: `array[i].field` when the messages
/// came as an array (named `array` there, or nothing for a body that is the array), else
/// `field` alone.
fn place(array: &str, in_array: bool, i: usize, field: &str) -> String {
    let field = if field.is_empty() || field == "." { String::new() } else { format!(".{field}") };
    match in_array {
        true => format!("{array}[{i}]{field}"),
        false => field.trim_start_matches('.').to_owned(),
    }
}

/// The messages of a body that is one message object or an array of them. Either all of them
/// are valid or the error names the first one that is not (and nothing is stored).
pub fn parse_messages(tenant: &str, body: &[u8]) -> Result<Batch, MemoryError> {
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| MemoryError::bad_input(format!("the body is not JSON: {e}")))?;
    let (items, in_array) = match value {
        serde_json::Value::Array(items) => (items, true),
        object @ serde_json::Value::Object(_) => (vec![object], false),
        _ => {
            return Err(MemoryError::bad_input(
                "the body must be a message object or an array of them",
            ));
        }
    };
    if items.is_empty() {
        return Err(MemoryError::bad_input("the array holds no message"));
    }
    let at = |i: usize, field: &str| place("", in_array, i, field);
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let message: MessageIn = serde_path_to_error::deserialize(item).map_err(|e| {
            let path = at(i, &e.path().to_string());
            let place = if path.is_empty() { String::new() } else { format!("{path}: ") };
            MemoryError::bad_input(format!("{place}{}", e.into_inner()))
        })?;
        out.push(
            to_input(tenant, message).map_err(|(field, why)| {
                MemoryError::bad_input(format!("{}: {why}", at(i, field)))
            })?,
        );
    }
    Ok(Batch { messages: out, in_array, array: "" })
}

/// The messages of a list the caller names `array` (an MCP tool's `messages`), each named as
/// `array[i].field` in an error.
pub fn message_list(
    tenant: &str,
    array: &'static str,
    messages: Vec<MessageIn>,
) -> Result<Batch, MemoryError> {
    if messages.is_empty() {
        return Err(MemoryError::bad_input(format!("{array}: send at least one")));
    }
    let messages = messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            to_input(tenant, m).map_err(|(field, why)| {
                MemoryError::bad_input(format!("{}: {why}", place(array, true, i, field)))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Batch { messages, in_array: true, array })
}

fn to_input(tenant: &str, m: MessageIn) -> Result<MessageInput, (&'static str, String)> {
    if m.conversation.trim().is_empty() {
        return Err(("conversation", "must not be empty".into()));
    }
    let role: Role = m.role.parse().map_err(|e: RoleParseError| ("role", e.to_string()))?;
    let timestamp = m
        .timestamp
        .as_deref()
        .map(Timestamp::parse_rfc3339)
        .transpose()
        .map_err(|e| ("timestamp", e.to_string()))?;
    if let Some(meta) = &m.metadata
        && !(meta.is_object() || meta.is_null())
    {
        return Err(("metadata", "must be a JSON object".into()));
    }
    let key = match m.id {
        Some(id) if id.trim().is_empty() => return Err(("id", "must not be empty".into())),
        Some(id) => format!("id:{id}"),
        None => {
            let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos();
            format!("auto:{nanos:x}-{:x}", SENT_WITHOUT_ID.fetch_add(1, Ordering::Relaxed))
        }
    };
    Ok(MessageInput {
        conversation: ConversationKey::new(tenant, m.conversation),
        user: m.user,
        agent: m.project,
        key,
        role,
        speaker: m.speaker.filter(|s| !s.trim().is_empty()),
        content: m.content,
        timestamp,
        metadata: m.metadata.unwrap_or(serde_json::Value::Null),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(body: &str) -> String {
        parse_messages("t", body.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn one_message_or_an_array() {
        let one = r#"{"conversation": "c", "role": "user", "content": "hi", "id": "m1"}"#;
        let parsed = parse_messages("t", one.as_bytes()).unwrap().messages;
        assert_eq!(parsed.len(), 1);
        assert_eq!(
            (parsed[0].key.as_str(), parsed[0].conversation.tenant.as_str()),
            ("id:m1", "t")
        );
        let many = format!("[{one}, {one}]");
        assert_eq!(parse_messages("t", many.as_bytes()).unwrap().messages.len(), 2);
    }

    #[test]
    fn messages_without_an_id_are_each_new() {
        let body = r#"[{"conversation": "c", "role": "user", "content": "ok"},
                       {"conversation": "c", "role": "user", "content": "ok"}]"#;
        let parsed = parse_messages("t", body.as_bytes()).unwrap().messages;
        assert_ne!(parsed[0].key, parsed[1].key);
    }

    #[test]
    fn errors_name_the_message_and_the_field() {
        let ok = r#"{"conversation": "c", "role": "user", "content": "x"}"#;
        let e =
            error(&format!(r#"[{ok}, {{"conversation": "c", "role": "robot", "content": "x"}}]"#));
        assert!(e.contains("[1].role") && e.contains("robot"), "{e}");
        let e = error(r#"{"conversation": "c", "role": "user"}"#);
        assert!(e.contains("content"), "{e}");
        let e = error(r#"{"conversation": "c", "role": "user", "content": 7}"#);
        assert!(e.starts_with("bad_input: content:"), "{e}");
        let e = error(r#"{"conversation": "c", "role": "user", "content": "x", "colour": 1}"#);
        assert!(e.contains("colour"), "{e}");
        let e =
            error(r#"{"conversation": "c", "role": "user", "content": "x", "timestamp": "noon"}"#);
        assert!(e.contains("timestamp"), "{e}");
        assert!(error("{not json").contains("not JSON"));
        assert!(error("[]").contains("no message"));
        assert!(error("3").contains("message object"));
    }
}
