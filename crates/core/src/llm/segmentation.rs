//! Batch event segmentation: one call cuts a window of messages into episodes, each with a
//! title, a summary and how surprising it was.

use serde_json::{Value, json};

use super::{AnswerError, ChatPrompt, WindowMessage, json_in, message_lines};

/// The messages to cut, and what came before them.
#[derive(Debug, Clone, Copy)]
pub struct SegmentationWindow<'a> {
    pub messages: &'a [WindowMessage<'a>],
    /// The summary of the episode the window follows, so a continuation is recognised.
    pub previous_summary: Option<&'a str>,
}

/// An episode the model proposed: how many messages it takes, in order from the window's
/// start, and how it is told.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposedSegment {
    pub len: usize,
    pub title: String,
    pub summary: String,
    /// 0.2, 0.6 or 0.9 for `low`, `high` and `extremely_high`.
    pub surprise: f64,
}

/// What the model proposed, after counts that did not add up were repaired.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedSegmentation {
    pub segments: Vec<ProposedSegment>,
    /// What had to be repaired, if anything (kept with the episodes as their reason).
    pub repaired: Option<String>,
}

const SYSTEM: &str = "\
You split a conversation into episodes, the way a person remembers events. The messages are \
numbered from 0. Start a new episode where either of these happens:
1. The topic or the intent changes: a new subject, a new task, a different activity (for \
example from chatting to deciding), or a phrase that announces a change (\"by the way\", \
\"another thing\").
2. Something surprising happens: a feeling reverses, the conversation jumps to an unrelated \
domain, the tone changes sharply, or a long time passes between two messages.
Keep a question with its answer, and short follow-ups (\"and how much is it?\", \"ok, do \
that\") with the topic they follow. If nothing changes, return one episode.
For each episode, in order, give: start_message_index and end_message_index (inclusive), \
num_messages (how many messages it holds; episodes are cut by this number, so the numbers \
must add up to the number of messages), a title of 5 to 15 words naming what it is about, a \
summary of at most 50 words in the third person, and surprise_level: low for an ordinary \
continuation, high for a marked change, extremely_high for a shock or a life event.";

/// The prompt for one window.
pub fn segmentation_prompt(window: &SegmentationWindow<'_>) -> ChatPrompt {
    let mut user = String::new();
    if let Some(summary) = window.previous_summary.filter(|s| !s.trim().is_empty()) {
        user.push_str("The episode just before these messages: ");
        user.push_str(summary.trim());
        user.push_str("\n\n");
    }
    user.push_str(&format!("Messages ({}):\n", window.messages.len()));
    user.push_str(&message_lines(window.messages));
    ChatPrompt { system: SYSTEM.to_owned(), user, schema_name: "episodes", schema: schema() }
}

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "segments": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "start_message_index": {"type": "integer"},
                        "end_message_index": {"type": "integer"},
                        "num_messages": {"type": "integer"},
                        "title": {"type": "string"},
                        "summary": {"type": "string"},
                        "surprise_level": {"type": "string", "enum": ["low", "high", "extremely_high"]}
                    },
                    "required": ["start_message_index", "end_message_index", "num_messages", "title", "summary", "surprise_level"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["segments"],
        "additionalProperties": false
    })
}

/// Reads the model's answer for a window of `window_len` messages. `num_messages` decides the
/// cuts; counts that do not add up are repaired: too few, and the last episode takes the rest;
/// too many, and the episodes are clipped at the window's end. An answer that is not JSON, has
/// no episode, or lacks a field is an error naming what was wrong.
pub fn parse_segmentation(
    answer: &str,
    window_len: usize,
) -> Result<ParsedSegmentation, AnswerError> {
    let value = json_in(answer)?;
    let Some(items) = value.get("segments").and_then(Value::as_array) else {
        return Err(AnswerError("no \"segments\" array".into()));
    };
    let mut segments = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        segments.push(segment(item).map_err(|e| AnswerError(format!("segment {i}: {e}")))?);
    }
    repair(segments, window_len)
}

/// One segment as proposed; its length may be zero or negative until repaired.
struct Raw {
    len: i64,
    title: String,
    summary: String,
    surprise: f64,
}

fn segment(item: &Value) -> Result<Raw, String> {
    let text = |field: &str| {
        item.get(field)
            .and_then(Value::as_str)
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|s| !s.is_empty())
            .ok_or_else(|| format!("\"{field}\" is missing or not a non-empty string"))
    };
    let int = |field: &str| item.get(field).and_then(Value::as_f64).map(|v| v.round() as i64);
    let len = match (int("num_messages"), int("start_message_index"), int("end_message_index")) {
        (Some(n), _, _) => n,
        (None, Some(start), Some(end)) => end - start + 1,
        _ => return Err("\"num_messages\" is missing or not a number".into()),
    };
    let surprise = match text("surprise_level")?.to_ascii_lowercase().as_str() {
        "low" => 0.2,
        "high" => 0.6,
        "extremely_high" | "extremely high" => 0.9,
        other => {
            return Err(format!(
                "\"surprise_level\" is {other:?}, not low, high or extremely_high"
            ));
        }
    };
    let title = text("title")?.split(' ').take(15).collect::<Vec<_>>().join(" ");
    Ok(Raw { len, title, summary: text("summary")?, surprise })
}

fn repair(raw: Vec<Raw>, window_len: usize) -> Result<ParsedSegmentation, AnswerError> {
    let proposed: i64 = raw.iter().map(|s| s.len.max(0)).sum();
    let mut segments: Vec<ProposedSegment> = Vec::with_capacity(raw.len());
    let mut taken = 0usize;
    for s in raw {
        let len = usize::try_from(s.len).unwrap_or(0).min(window_len - taken.min(window_len));
        if len == 0 {
            continue;
        }
        taken += len;
        segments.push(ProposedSegment {
            len,
            title: s.title,
            summary: s.summary,
            surprise: s.surprise,
        });
    }
    let Some(last) = segments.last_mut() else {
        return Err(AnswerError("no episode with any message".into()));
    };
    let repaired = if taken < window_len {
        last.len += window_len - taken;
        Some(format!(
            "the counts added up to {proposed} of {window_len} messages: the last episode took the rest"
        ))
    } else if proposed > window_len as i64 {
        Some(format!(
            "the counts added up to {proposed} of {window_len} messages: clipped at the window's end"
        ))
    } else {
        None
    };
    Ok(ParsedSegmentation { segments, repaired })
}

#[cfg(test)]
mod tests;
