//! Messages: what agents stream in.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

use crate::{ConversationKey, Timestamp};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    User,
    Assistant,
    System,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
            Role::Tool => "tool",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A role name that is not one of `user`, `assistant`, `system`, `tool`.
#[derive(Debug, thiserror::Error)]
#[error("unknown role {0:?}: expected user, assistant, system or tool")]
pub struct RoleParseError(pub String);

impl FromStr for Role {
    type Err = RoleParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "user" | "human" => Ok(Role::User),
            "assistant" | "ai" | "agent" => Ok(Role::Assistant),
            "system" => Ok(Role::System),
            "tool" => Ok(Role::Tool),
            _ => Err(RoleParseError(s.to_owned())),
        }
    }
}

/// The words a query can name an author by, lowercased: each word of a speaker's name
/// ("Dr. Ana Silva" → dr, ana, silva), stopwords left out. A role (`user`, `assistant`,
/// `system`, `tool` and their synonyms) is never a person's name, so an author called after
/// one has no name words: "python" in a query stays a word to search for whoever spoke.
pub fn name_words(author: &str) -> Vec<String> {
    if author.parse::<Role>().is_ok() {
        return Vec::new();
    }
    let mut words: Vec<String> = author
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !crate::telling::is_stopword(w))
        .collect();
    words.dedup();
    words
}

/// A message as the store takes it: its time fixed and its tokens counted (once, so
/// segmentation never counts again), before the store gives it a sequence number. The engine
/// makes it from a caller's `MessageInput`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewMessage {
    pub conversation: ConversationKey,
    pub user: Option<String>,
    pub agent: Option<String>,
    /// Idempotency key: pushing a message whose key the conversation already holds is a no-op.
    pub key: String,
    pub role: Role,
    pub speaker: Option<String>,
    pub content: String,
    pub timestamp: Timestamp,
    pub metadata: serde_json::Value,
    /// Tokens in `content`, counted once at ingest so segmentation never re-tokenizes.
    pub tokens: u32,
}

/// What one message may hold, wherever it enters (HTTP, MCP, the command line, the hooks).
pub mod limits {
    /// Bytes of `content` (UTF-8).
    pub const CONTENT_BYTES: usize = 1 << 20;
    /// Bytes of `metadata` written as JSON.
    pub const METADATA_BYTES: usize = 64 << 10;
    /// Bytes of an id, a conversation, a user or a speaker.
    pub const NAME_BYTES: usize = 1024;
    /// Bytes of an agent's project (a folder's path).
    pub const AGENT_BYTES: usize = 4096;
    /// The first conversation time accepted: 1900-01-01T00:00:00Z.
    pub const EARLIEST_MS: i64 = -2_208_988_800_000;
    /// The first conversation time no longer accepted: 2200-01-01T00:00:00Z.
    pub const END_MS: i64 = 7_258_118_400_000;
}

/// What is wrong with a message: the field and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {why}")]
pub struct MessageProblem {
    pub field: &'static str,
    pub why: String,
}

/// The parts of a message [`check_message`] reads, borrowed from whatever carries them.
#[derive(Debug, Clone, Copy)]
pub struct MessageFields<'a> {
    pub key: &'a str,
    pub conversation: &'a str,
    pub user: Option<&'a str>,
    pub speaker: Option<&'a str>,
    pub agent: Option<&'a str>,
    pub content: &'a str,
    pub metadata: &'a serde_json::Value,
    /// `None`: the time it arrives, which is always accepted.
    pub timestamp: Option<Timestamp>,
}

/// Whether a message is within [`limits`]: sizes, names without control characters, and a
/// conversation time from 1900 to 2199. Names are stored and printed as they are, so a name
/// that could move a terminal's cursor or hide text is refused rather than cleaned.
pub fn check_message(message: MessageFields<'_>) -> Result<(), MessageProblem> {
    let problem = |field, why: String| Err(MessageProblem { field, why });
    let names = [
        ("id", Some(message.key), limits::NAME_BYTES),
        ("conversation", Some(message.conversation), limits::NAME_BYTES),
        ("user", message.user, limits::NAME_BYTES),
        ("speaker", message.speaker, limits::NAME_BYTES),
        ("agent", message.agent, limits::AGENT_BYTES),
    ];
    for (field, value, most) in names {
        let Some(value) = value else { continue };
        if value.len() > most {
            return problem(field, format!("{} bytes; at most {most} are kept", value.len()));
        }
        if let Some(c) = value.chars().find(|c| c.is_control()) {
            return problem(field, format!("holds the control character {c:?}"));
        }
    }
    if message.content.len() > limits::CONTENT_BYTES {
        return problem(
            "content",
            format!(
                "{} bytes; a message holds at most {} (split it, or keep the start and end)",
                message.content.len(),
                limits::CONTENT_BYTES
            ),
        );
    }
    if !message.metadata.is_null() {
        let bytes = serde_json::to_vec(message.metadata).map_or(usize::MAX, |b| b.len());
        if bytes > limits::METADATA_BYTES {
            return problem(
                "metadata",
                format!("{bytes} bytes as JSON; at most {} are kept", limits::METADATA_BYTES),
            );
        }
    }
    if let Some(at) = message.timestamp
        && !(limits::EARLIEST_MS..limits::END_MS).contains(&at.millis())
    {
        return problem(
            "timestamp",
            format!("{at} is outside the accepted range, 1900-01-01 to 2199-12-31"),
        );
    }
    Ok(())
}

/// `text` cut to at most `most` bytes on a character boundary, keeping its start and its end
/// with a note of what was left out between them (a tool's long output, whose end often tells
/// how it went).
pub fn clip_middle(text: &str, most: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= most {
        return text.into();
    }
    let note = format!("\n[… {} bytes left out …]\n", text.len());
    let keep = most.saturating_sub(note.len() + 8) / 2;
    let mut head = keep;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - keep;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    let left_out = tail - head;
    format!("{}\n[… {left_out} bytes left out …]\n{}", &text[..head], &text[tail..]).into()
}

/// A stored message: a [`NewMessage`] with its place in the conversation. What every reader of
/// the store gets back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// 1-based, gap-free position within the conversation.
    pub seq: u64,
    pub key: String,
    pub role: Role,
    pub speaker: Option<String>,
    pub content: String,
    pub timestamp: Timestamp,
    pub metadata: serde_json::Value,
    pub tokens: u32,
}

impl Message {
    /// The name to show for the author: the speaker's name if known, else the role.
    pub fn author(&self) -> &str {
        self.speaker.as_deref().unwrap_or(self.role.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message() -> NewMessage {
        NewMessage {
            conversation: ConversationKey::new("t", "c"),
            user: None,
            agent: None,
            key: "id:m1".into(),
            role: Role::User,
            speaker: None,
            content: "hello".into(),
            timestamp: Timestamp::parse_rfc3339("2026-03-01T09:00:00Z").unwrap(),
            metadata: serde_json::Value::Null,
            tokens: 1,
        }
    }

    fn field(change: impl FnOnce(&mut NewMessage)) -> Option<&'static str> {
        let mut m = message();
        change(&mut m);
        let fields = MessageFields {
            key: &m.key,
            conversation: &m.conversation.conversation,
            user: m.user.as_deref(),
            speaker: m.speaker.as_deref(),
            agent: m.agent.as_deref(),
            content: &m.content,
            metadata: &m.metadata,
            timestamp: Some(m.timestamp),
        };
        check_message(fields).err().map(|p| p.field)
    }

    #[test]
    fn limits_name_the_field() {
        assert_eq!(field(|_| {}), None);
        assert_eq!(field(|m| m.content = "x".repeat(limits::CONTENT_BYTES)), None);
        assert_eq!(field(|m| m.content = "x".repeat(limits::CONTENT_BYTES + 1)), Some("content"));
        assert_eq!(field(|m| m.key = format!("id:{}", "k".repeat(2000))), Some("id"));
        assert_eq!(field(|m| m.key = "id:a\u{1b}[2J".into()), Some("id"));
        assert_eq!(field(|m| m.conversation.conversation = "c\nd".into()), Some("conversation"));
        assert_eq!(field(|m| m.speaker = Some("Ana\u{7}".into())), Some("speaker"));
        assert_eq!(field(|m| m.agent = Some(format!("/{}", "p".repeat(3000)))), None);
        let big = serde_json::json!({"blob": "x".repeat(limits::METADATA_BYTES)});
        assert_eq!(field(|m| m.metadata = big), Some("metadata"));
    }

    #[test]
    fn conversation_time_is_within_1900_to_2199() {
        let at = |s| Timestamp::parse_rfc3339(s).unwrap();
        assert_eq!(field(|m| m.timestamp = at("1900-01-01T00:00:00Z")), None);
        assert_eq!(field(|m| m.timestamp = at("2199-12-31T23:59:59.999Z")), None);
        assert_eq!(field(|m| m.timestamp = at("2200-01-01T00:00:00Z")), Some("timestamp"));
        assert_eq!(field(|m| m.timestamp = at("9999-12-31T00:00:00Z")), Some("timestamp"));
        assert_eq!(field(|m| m.timestamp = at("1899-12-31T23:59:59Z")), Some("timestamp"));
    }

    #[test]
    fn clipping_keeps_start_and_end_within_the_limit() {
        let text = format!("{}middle{}", "é".repeat(3000), "z".repeat(3000));
        let clipped = clip_middle(&text, 1000);
        assert!(clipped.len() <= 1000, "{}", clipped.len());
        assert!(clipped.starts_with('é') && clipped.ends_with('z'));
        assert!(clipped.contains("bytes left out"));
        assert_eq!(clip_middle("short", 1000), "short");
    }

    #[test]
    fn roles_are_not_names_and_names_have_several_words() {
        for role in ["user", "User", "ASSISTANT", "system", "tool", "agent"] {
            assert!(name_words(role).is_empty(), "{role}");
        }
        assert_eq!(name_words("Dr. Ana Silva"), ["dr", "ana", "silva"]);
        assert_eq!(name_words("Caroline"), ["caroline"]);
        assert_eq!(name_words("Python"), ["python"], "a person may be called anything");
        assert!(name_words("").is_empty());
    }
}
