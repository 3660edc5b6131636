//! What a reader answers: each record of the file, where it starts, and what was read of it.

use std::fmt;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::FormatError;

/// Where a record starts in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// The line its first character is on (1-based).
    pub line: usize,
    /// Its position among the file's records (1-based).
    pub record: usize,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {} (record {})", self.line, self.record)
    }
}

/// One record of a file: what was read of it, or why it was left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub place: Place,
    pub read: Result<Imported, String>,
}

/// A conversation read from a record, its messages in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub conversation: String,
    pub title: Option<String>,
    pub messages: Vec<IngestLine>,
    pub notes: Notes,
}

/// A message as `epimem ingest` reads a line: the caller checks it as any other.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IngestLine {
    pub conversation: String,
    /// Its id in the export: importing the file again stores it once.
    pub id: String,
    pub role: &'static str,
    pub content: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speaker: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    pub metadata: serde_json::Value,
}

/// What a record held that is not a message of its own, counted so that nothing is left out
/// silently.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Notes {
    /// Files and images attached to messages: each named in its message, not imported.
    pub attachments: usize,
    /// Tools' outputs, imported as `tool` messages.
    pub tool_outputs: usize,
    /// Messages the tool hid from its own view (system prompts, context it added).
    pub hidden: usize,
    /// Messages with nothing to say (an empty reply, a bare placeholder).
    pub empty: usize,
    /// Messages on branches the user left (an edited message's first version, a retried
    /// answer): the conversation is the branch the user ended on.
    pub abandoned: usize,
}

impl Notes {
    pub fn add(&mut self, other: Notes) {
        self.attachments += other.attachments;
        self.tool_outputs += other.tool_outputs;
        self.hidden += other.hidden;
        self.empty += other.empty;
        self.abandoned += other.abandoned;
    }
}

/// The elements of the JSON array `text`, each with where it starts. `what` names the file
/// for the error when `text` is not such an array.
pub(crate) fn elements<'a>(
    text: &'a str,
    what: &'static str,
) -> Result<Vec<(Place, &'a RawValue)>, FormatError> {
    let items: Vec<&RawValue> = serde_json::from_str(text)
        .map_err(|e| FormatError { what, why: format!("expected a JSON array: {e}") })?;
    Ok(placed(text, items))
}

/// `items` (borrowed from `text`) with the line each starts on.
pub(crate) fn placed<'a>(text: &'a str, items: Vec<&'a RawValue>) -> Vec<(Place, &'a RawValue)> {
    let base = text.as_ptr() as usize;
    let (mut line, mut counted) = (1, 0);
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let at = (item.get().as_ptr() as usize).saturating_sub(base).min(text.len());
            line += text.as_bytes()[counted..at].iter().filter(|&&b| b == b'\n').count();
            counted = at;
            (Place { line, record: i + 1 }, item)
        })
        .collect()
}

/// A time given as seconds since the epoch (ChatGPT's), as RFC 3339.
pub(crate) fn epoch_seconds(seconds: f64) -> Option<String> {
    let millis = (seconds * 1000.0).round();
    if !millis.is_finite() {
        return None;
    }
    chrono::DateTime::from_timestamp_millis(millis as i64)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

/// The message's text with each attachment named after it.
pub(crate) fn with_attachments(text: String, names: &[String]) -> String {
    let mut out = text;
    for name in names {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("[attached: {name}]"));
    }
    out
}

/// Each placed element read as a `T` (or told why it is not `what`), then by `read`.
pub(crate) fn each<T: serde::de::DeserializeOwned>(
    placed: Vec<(Place, &RawValue)>,
    what: &str,
    read: impl Fn(T) -> Result<Imported, String>,
) -> Vec<Record> {
    placed
        .into_iter()
        .map(|(place, raw)| Record {
            place,
            read: serde_json::from_str::<T>(raw.get()).map_err(|e| not_a(what, &e)).and_then(&read),
        })
        .collect()
}

/// Why a record is not `what`, without serde's position inside the record (the record's own
/// place is told beside it).
fn not_a(what: &str, e: &serde_json::Error) -> String {
    let text = e.to_string();
    let why = text.rsplit_once(" at line ").map_or(text.as_str(), |(why, _)| why);
    format!("not {what}: {why}")
}
