//! The agent's replies, read from Claude Code's transcript (JSON lines) from where the last
//! read stopped. Only whole lines are read: a line still being written waits for the next
//! event.

use std::{
    io::{Read, Seek, SeekFrom},
    path::Path,
};

use epimem_core::Timestamp;
use serde_json::Value;

/// One reply of the agent: the text blocks of an assistant entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The entry's id in the transcript (its idempotency key).
    pub key: String,
    pub timestamp: Option<Timestamp>,
    pub text: String,
}

/// The replies in `path` after byte `offset`, and the offset after the last whole line read.
/// A transcript shorter than `offset` (rewritten) is read from its start: replies already
/// stored are recognised by their keys.
pub fn read_replies(path: &Path, offset: u64) -> std::io::Result<(Vec<Reply>, u64)> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let from = if offset > len { 0 } else { offset };
    file.seek(SeekFrom::Start(from))?;
    let mut bytes = Vec::with_capacity((len - from) as usize);
    file.read_to_end(&mut bytes)?;
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let replies = bytes[..whole]
        .split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .filter_map(|entry| reply(&entry))
        .collect();
    Ok((replies, from + whole as u64))
}

/// The reply an entry holds: an assistant's message of the main thread with some text.
pub(crate) fn reply(entry: &Value) -> Option<Reply> {
    if entry.get("type")?.as_str()? != "assistant"
        || entry.get("isSidechain").and_then(Value::as_bool) == Some(true)
    {
        return None;
    }
    let content = entry.get("message")?.get("content")?;
    let text = match content {
        Value::String(text) => text.trim().to_owned(),
        Value::Array(blocks) => text_blocks(blocks, "\n\n"),
        _ => return None,
    };
    if text.is_empty() {
        return None;
    }
    let key = entry
        .get("uuid")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| format!("{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes())));
    let timestamp = entry
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(|t| Timestamp::parse_rfc3339(t).ok());
    Some(Reply { key: format!("reply:{key}"), timestamp, text })
}

/// The text blocks of a message's content, trimmed, the empty ones left out, joined by
/// `separator`.
pub(crate) fn text_blocks(blocks: &[Value], separator: &str) -> String {
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(separator)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use serde_json::json;

    use super::*;

    fn line(entry: Value) -> String {
        format!("{entry}\n")
    }

    #[test]
    fn replies_are_read_once_and_a_half_written_line_waits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut file = std::fs::File::create(&path).unwrap();
        let user = line(
            json!({"type": "user", "uuid": "u1", "message": {"role": "user", "content": "fix it"}}),
        );
        let first = line(
            json!({"type": "assistant", "uuid": "a1", "timestamp": "2026-11-20T09:00:05Z",
            "message": {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "Looking at the test."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cargo test"}}]}}),
        );
        let side = line(json!({"type": "assistant", "uuid": "a2", "isSidechain": true,
            "message": {"content": [{"type": "text", "text": "subagent"}]}}));
        let tools_only = line(json!({"type": "assistant", "uuid": "a3",
            "message": {"content": [{"type": "tool_use", "id": "t2", "name": "Read", "input": {}}]}}));
        writeln!(file, "{user}{first}{side}{tools_only}not json").unwrap();
        let later =
            line(json!({"type": "assistant", "uuid": "a4", "message": {"content": "Fixed."}}));
        // Half of the next entry is written.
        file.write_all(&later.as_bytes()[..20]).unwrap();
        file.flush().unwrap();

        let (replies, offset) = read_replies(&path, 0).unwrap();
        assert_eq!(replies.len(), 1);
        assert_eq!(replies[0].key, "reply:a1");
        assert_eq!(replies[0].text, "Looking at the test.");
        assert_eq!(
            replies[0].timestamp,
            Some(Timestamp::parse_rfc3339("2026-11-20T09:00:05Z").unwrap())
        );

        let (again, same) = read_replies(&path, offset).unwrap();
        assert!(again.is_empty());
        assert_eq!(same, offset, "a half-written line is not consumed");

        file.write_all(&later.as_bytes()[20..]).unwrap();
        let (rest, end) = read_replies(&path, offset).unwrap();
        assert_eq!(rest.iter().map(|r| r.text.as_str()).collect::<Vec<_>>(), ["Fixed."]);
        assert_eq!(end, std::fs::metadata(&path).unwrap().len());
        // A transcript rewritten shorter is read again from its start.
        let (from_start, _) = read_replies(&path, end + 100).unwrap();
        assert_eq!(from_start.len(), 2);
    }
}
