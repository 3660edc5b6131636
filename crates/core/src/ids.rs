//! Deterministic identifiers, so that a retried job produces the same rows.

use xxhash_rust::xxh3::xxh3_128;

use crate::{ConversationKey, EpisodeId, Role, Timestamp};

/// The id of the episode covering messages `first_seq..=last_seq` of a conversation.
pub fn episode_id(conversation: &ConversationKey, first_seq: u64, last_seq: u64) -> EpisodeId {
    let mut buf = Vec::with_capacity(64);
    for part in [conversation.tenant.as_bytes(), conversation.conversation.as_bytes()] {
        buf.extend_from_slice(&(part.len() as u64).to_le_bytes());
        buf.extend_from_slice(part);
    }
    buf.extend_from_slice(&first_seq.to_le_bytes());
    buf.extend_from_slice(&last_seq.to_le_bytes());
    EpisodeId(format!("ep_{:032x}", xxh3_128(&buf)))
}

/// An idempotency key for a message that came without one: a hash of its content and of its
/// position in the source (say, a line number), so re-importing a file adds nothing while two
/// identical lines at different positions stay two messages.
pub fn message_key(
    position: u64,
    role: Role,
    speaker: Option<&str>,
    content: &str,
    timestamp: Option<Timestamp>,
) -> String {
    let mut buf = Vec::with_capacity(content.len() + 48);
    buf.extend_from_slice(&position.to_le_bytes());
    buf.extend_from_slice(role.as_str().as_bytes());
    buf.push(0);
    let speaker = speaker.unwrap_or("");
    buf.extend_from_slice(&(speaker.len() as u64).to_le_bytes());
    buf.extend_from_slice(speaker.as_bytes());
    buf.extend_from_slice(&timestamp.map_or(i64::MIN, Timestamp::millis).to_le_bytes());
    buf.extend_from_slice(content.as_bytes());
    format!("h:{:032x}", xxh3_128(&buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn episode_ids_depend_on_every_part() {
        let a = ConversationKey::new("t", "c");
        let id = episode_id(&a, 1, 5);
        assert_eq!(id, episode_id(&a, 1, 5));
        assert_ne!(id, episode_id(&a, 1, 6));
        assert_ne!(id, episode_id(&a, 2, 5));
        assert_ne!(id, episode_id(&ConversationKey::new("t2", "c"), 1, 5));
        // Length-prefixing keeps ("ab","c") and ("a","bc") apart.
        assert_ne!(
            episode_id(&ConversationKey::new("ab", "c"), 1, 5),
            episode_id(&ConversationKey::new("a", "bc"), 1, 5)
        );
        assert!(id.0.starts_with("ep_") && id.0.len() == 35);
    }

    #[test]
    fn message_keys_tell_positions_apart() {
        let k = |pos| message_key(pos, Role::User, None, "ok", None);
        assert_eq!(k(1), k(1));
        assert_ne!(k(1), k(2));
        assert_ne!(k(1), message_key(1, Role::Assistant, None, "ok", None));
    }
}
