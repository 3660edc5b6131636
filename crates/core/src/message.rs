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
        .filter(|w| !crate::is_stopword(w))
        .collect();
    words.dedup();
    words
}

/// A message as pushed by a caller, before the store gives it a sequence number.
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

/// A stored message: a [`NewMessage`] with its place in the conversation.
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
