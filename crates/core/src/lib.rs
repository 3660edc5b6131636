//! epimem's pure core: domain types and the algorithms that decide what an episode is.
//!
//! Nothing in this crate performs I/O or reads a clock: `now`, seeds and configuration are
//! always parameters, so every function here is deterministic and testable in isolation.

mod episode;
mod error;
pub mod facts;
pub mod fsrs;
mod ids;
mod job;
pub mod llm;
mod message;
pub mod recall;
mod scope;
pub mod segment;
pub mod telling;
mod time;
pub mod timeline;
mod tokens;
mod trigger;
pub mod work;

pub use episode::{Episode, EpisodeId, FsrsState, ToldBy};
pub use error::ErrorKind;
pub use ids::{episode_id, message_key};
pub use job::{Job, JobId, JobKind};
pub use llm::{AnswerError, ChatPrompt, LlmStage, LlmUsage};
pub use message::{
    Message, MessageFields, MessageProblem, NewMessage, Role, RoleParseError, check_message,
    clip_middle, limits as message_limits, name_words,
};
pub use scope::{ConversationKey, Scope};
pub use segment::{Boundary, BoundaryReason, SegmentMessage, SegmentationPolicy, Strength};
pub use time::{Timestamp, TimestampParseError};
pub use timeline::{
    NodeSummary, TimelineNode, TocLevel, TocNode, TocNodeParseError, extractive_rollup,
    period_named, session_summary, timeline_of, top_nodes,
};
pub use tokens::TokenCounter;
pub use trigger::{QueueSnapshot, Trigger, TriggerConfig, TriggerKind, evaluate_trigger};
