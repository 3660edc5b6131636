//! What epimem asks a language model and how it reads the answers: prompts rendered and answers
//! parsed by pure functions, so they can be snapshot-tested and never depend on a server.

mod consolidation;
mod review;
mod rollup;
mod segmentation;
mod story;

pub use consolidation::{
    EpisodeToConsolidate, ParsedConsolidation, consolidation_prompt, parse_consolidation,
};
pub use review::{MemoryToReview, parse_review, review_prompt};
pub use rollup::{parse_rollup, rollup_prompt};
pub use segmentation::{
    ParsedSegmentation, ProposedSegment, SegmentationWindow, parse_segmentation,
    segmentation_prompt,
};
pub use story::{Story, parse_story, story_prompt};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Timestamp;

/// What a call to the model was for; usage is accounted per stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LlmStage {
    /// Cutting a window of messages into episodes.
    Segmentation,
    /// Telling an episode as a story.
    Summary,
    /// Rating recalled memories against the conversation that followed.
    Review,
    /// Distilling facts from episodes.
    Consolidation,
}

impl LlmStage {
    pub const ALL: [LlmStage; 4] =
        [Self::Segmentation, Self::Summary, Self::Review, Self::Consolidation];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Segmentation => "segmentation",
            Self::Summary => "summary",
            Self::Review => "review",
            Self::Consolidation => "consolidation",
        }
    }
}

impl std::str::FromStr for LlmStage {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|stage| stage.as_str() == s).ok_or_else(|| {
            format!("unknown stage {s:?}: expected segmentation, summary, review or consolidation")
        })
    }
}

/// What calls to a model cost: every HTTP request counts, retried ones included, so the totals
/// add up to what the server saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LlmUsage {
    pub calls: u64,
    /// Calls that got no usable reply (an error status, a timeout, a broken connection).
    pub failures: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Time spent waiting for replies, all calls together.
    pub latency_ms: u64,
}

impl LlmUsage {
    pub fn add(&mut self, other: LlmUsage) {
        self.calls += other.calls;
        self.failures += other.failures;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.latency_ms += other.latency_ms;
    }
}

impl std::fmt::Display for LlmUsage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} call(s), {} failed, {} prompt + {} completion tokens, {:.1} s waiting",
            self.calls,
            self.failures,
            self.prompt_tokens,
            self.completion_tokens,
            self.latency_ms as f64 / 1000.0
        )
    }
}

/// One request to a chat model: instructions, the material, and the JSON schema the answer
/// must follow.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatPrompt {
    pub system: String,
    pub user: String,
    /// The schema's name, as OpenAI's `json_schema` response format wants one.
    pub schema_name: &'static str,
    pub schema: serde_json::Value,
}

impl ChatPrompt {
    /// The system message for servers that cannot be held to a schema (`json_object` mode):
    /// the schema is then stated in words, and the answer validated on arrival.
    pub fn system_with_schema(&self) -> String {
        format!(
            "{}\n\nAnswer with one JSON object, nothing else, that follows this JSON schema:\n{}",
            self.system, self.schema
        )
    }
}

/// An answer that cannot be used as it is; the caller may ask again or fall back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the model's answer is unusable: {0}")]
pub struct AnswerError(pub String);

/// One message as the model sees it.
#[derive(Debug, Clone, Copy)]
pub struct WindowMessage<'a> {
    pub author: &'a str,
    pub timestamp: Timestamp,
    pub content: &'a str,
}

impl<'a> From<&'a crate::Message> for WindowMessage<'a> {
    fn from(m: &'a crate::Message) -> Self {
        Self { author: m.author(), timestamp: m.timestamp, content: &m.content }
    }
}

/// Messages as numbered lines, `[index] time [author] text`: one line each, since line breaks
/// inside a message would read as new messages.
fn message_lines(messages: &[WindowMessage<'_>]) -> String {
    let mut out = String::new();
    for (i, m) in messages.iter().enumerate() {
        let time = m.timestamp.to_datetime().format("%Y-%m-%d %H:%M");
        let content = m.content.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push_str(&format!("[{i}] {time} [{}] {content}\n", m.author));
    }
    out
}

/// The JSON object in an answer: small models wrap it in a code fence or a sentence.
fn json_in(answer: &str) -> Result<Value, AnswerError> {
    let (Some(start), Some(end)) = (answer.find('{'), answer.rfind('}')) else {
        return Err(AnswerError("no JSON object in the answer".into()));
    };
    if end < start {
        return Err(AnswerError("no JSON object in the answer".into()));
    }
    serde_json::from_str(&answer[start..=end])
        .map_err(|e| AnswerError(format!("the answer is not valid JSON: {e}")))
}
