//! Reading messages from JSONL: one JSON object per line.

use epimem_api::MessageInput;
use epimem_core::{ConversationKey, Role, Timestamp, message_key};
use serde::Deserialize;

/// One line of an import file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    conversation: IdValue,
    role: String,
    content: String,
    #[serde(default)]
    speaker: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    metadata: Option<serde_json::Value>,
    /// Idempotency key; without it, one is derived from the line's position and content.
    #[serde(default)]
    id: Option<IdValue>,
    #[serde(default)]
    user: Option<String>,
    /// A coding agent's project; also read as `agent`.
    #[serde(default, alias = "agent")]
    project: Option<String>,
}

/// Ids may be written as strings or numbers.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum IdValue {
    Text(String),
    Number(serde_json::Number),
}

impl IdValue {
    fn into_string(self) -> String {
        match self {
            Self::Text(s) => s,
            Self::Number(n) => n.to_string(),
        }
    }
}

/// What is wrong with a line serde could not read, placed by column: the line is its own
/// JSON document, so serde's "line 1" would only mislead.
fn json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let what = text.rsplit_once(" at line ").map_or(text.as_str(), |(what, _)| what);
    if e.is_syntax() || e.is_eof() {
        format!("not valid JSON: {what} (column {})", e.column())
    } else {
        what.to_owned()
    }
}

/// Parses line `line_no` (1-based) of an import. `Ok(None)` for a blank line.
pub(crate) fn parse_line(
    tenant: &str,
    line_no: u64,
    text: &str,
) -> Result<Option<MessageInput>, String> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let line: Line = serde_json::from_str(text).map_err(|e| json_error(&e))?;
    let conversation = line.conversation.into_string();
    if conversation.trim().is_empty() {
        return Err("\"conversation\" is empty".into());
    }
    let role: Role = line.role.parse().map_err(|e: epimem_core::RoleParseError| e.to_string())?;
    let timestamp = line
        .timestamp
        .as_deref()
        .map(Timestamp::parse_rfc3339)
        .transpose()
        .map_err(|e| format!("\"timestamp\": {e}"))?;
    if let Some(m) = &line.metadata
        && !(m.is_object() || m.is_null())
    {
        return Err("\"metadata\" must be a JSON object".into());
    }
    let key = match line.id {
        Some(id) => format!("id:{}", id.into_string()),
        None => message_key(line_no, role, line.speaker.as_deref(), &line.content, timestamp),
    };
    let message = MessageInput {
        conversation: ConversationKey::new(tenant, conversation),
        user: line.user,
        agent: line.project,
        key,
        role,
        speaker: line.speaker.filter(|s| !s.trim().is_empty()),
        content: line.content,
        timestamp,
        metadata: line.metadata.unwrap_or(serde_json::Value::Null),
    };
    message.check().map_err(|p| format!("\"{}\": {}", p.field, p.why))?;
    Ok(Some(message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_full_line() {
        let m = parse_line(
            "t",
            3,
            r#"{"conversation": 7, "role": "user", "speaker": "Caroline", "content": "hi",
                "timestamp": "2026-01-30T09:15:00Z", "metadata": {"a": 1}, "id": "x1"}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.conversation, ConversationKey::new("t", "7"));
        assert_eq!((m.key.as_str(), m.speaker.as_deref()), ("id:x1", Some("Caroline")));
        assert_eq!(m.timestamp.unwrap().to_rfc3339(), "2026-01-30T09:15:00Z");
    }

    #[test]
    fn derived_keys_depend_on_position() {
        let line = r#"{"conversation": "c", "role": "user", "content": "ok"}"#;
        let a = parse_line("t", 1, line).unwrap().unwrap();
        let b = parse_line("t", 2, line).unwrap().unwrap();
        assert_ne!(a.key, b.key);
        assert_eq!(a.key, parse_line("t", 1, line).unwrap().unwrap().key);
    }

    #[test]
    fn errors_name_what_is_wrong() {
        let err = |text: &str| parse_line("t", 1, text).unwrap_err();
        assert!(err(r#"{"conversation": "c", "role": "robot", "content": "x"}"#).contains("robot"));
        assert!(err(r#"{"conversation": "c", "role": "user"}"#).contains("content"));
        assert!(
            err(r#"{"conversation": "c", "role": "user", "content": "x", "timestamp": "noon"}"#)
                .contains("timestamp")
        );
        assert!(
            err(r#"{"conversation": "c", "role": "user", "content": "x", "colour": 1}"#)
                .contains("colour")
        );
        assert_eq!(err("{not json"), "not valid JSON: key must be a string (column 2)");
        assert_eq!(err("not json"), "not valid JSON: expected ident (column 2)");
        assert_eq!(
            err(r#"{"conversation": "c", "#),
            "not valid JSON: EOF while parsing a value (column 22)"
        );
        // A line that is JSON but not a message is told by field, with no column.
        assert_eq!(err(r#"{"role": "user", "content": "x"}"#), "missing field `conversation`");
        assert_eq!(parse_line("t", 1, "   ").unwrap(), None);
        // The limits every door holds a message to.
        assert!(
            err(r#"{"conversation": "c", "role": "user", "content": "x", "timestamp": "9999-12-31T00:00:00Z"}"#)
                .starts_with("\"timestamp\": 9999-12-31")
        );
        assert!(
            err(r#"{"conversation": "c", "role": "user", "content": "x", "id": "a\u001b[2J"}"#)
                .contains("control character")
        );
    }
}
