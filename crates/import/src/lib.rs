//! Other tools' exports read into the messages epimem takes: a ChatGPT data export's
//! `conversations.json`, a Claude.ai export's, and what mem0 answers for `get_all`.
//!
//! Pure: each reader takes the file's text and answers, record by record, what it holds or why
//! it was left out, with where the record starts in the file. Nothing is stored here: the
//! caller sends the messages through the same validation as any other (`epimem import`).

mod chatgpt;
mod claude;
mod mem0;
mod records;
pub mod sample;

pub use records::{Imported, IngestLine, Notes, Place, Record};

/// Which tool wrote the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A ChatGPT data export's `conversations.json`.
    ChatGpt,
    /// A Claude.ai data export's `conversations.json`.
    Claude,
    /// What mem0's `get_all` answers (or its export): memories with their owners.
    Mem0,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::ChatGpt => "chatgpt",
            Source::Claude => "claude",
            Source::Mem0 => "mem0",
        }
    }
}

/// A file that is not the export it was said to be: nothing of it can be read.
#[derive(Debug, thiserror::Error)]
#[error("not {what}: {why}")]
pub struct FormatError {
    pub what: &'static str,
    pub why: String,
}

/// Every record of `text`, written by `source`, in file order.
pub fn read(source: Source, text: &str) -> Result<Vec<Record>, FormatError> {
    match source {
        Source::ChatGpt => chatgpt::read(text),
        Source::Claude => claude::read(text),
        Source::Mem0 => mem0::read(text),
    }
}
