//! epimem's pure core: domain types and the algorithms that decide what an episode is.
//!
//! Nothing in this crate performs I/O or reads a clock: `now`, seeds and configuration are
//! always parameters, so every function here is deterministic and testable in isolation.

mod borrowing;
mod cjk;
mod context;
mod conversation_query;
mod dates;
mod episode;
mod error;
mod facts;
mod features;
mod filler;
mod fusion;
mod ids;
mod job;
mod key_phrases;
mod keywords;
pub mod llm;
mod memory;
mod message;
mod names;
mod next_turn;
mod plan;
mod ranking;
mod relevance;
mod review;
mod scope;
pub mod segment;
mod standing;
mod stopwords;
mod summary;
mod time;
pub mod timeline;
mod tokens;
mod trigger;
mod turn_context;
mod turn_ranking;
mod turn_rules;
mod word_match;
pub mod work;

pub use borrowing::{Borrow, Similarity, borrowed};
pub use cjk::{for_each_bigram, is_cjk};
pub use context::{ContextItem, RenderedContext, render_context};
pub use conversation_query::{EARLIER_MESSAGES, conversation_query};
pub use dates::{DateMention, date_mention};
pub use episode::{Episode, EpisodeId, FsrsState, ToldBy};
pub use error::ErrorKind;
pub use facts::{
    FACT_MIN_SIMILARITY, Fact, FactAction, FactChange, FactId, FactScore, SAME_FACT_COSINE,
    SourceEpisode, fact_id, plan_fact_changes, rank_facts,
};
pub use features::{
    EpisodeCandidates, EpisodeFeatures, KeptEpisode, LexicalMatch, TurnFeatures, TurnKey,
    TurnTable, VectorMatch, story_fingerprint,
};
pub use fusion::{Fusion, fuse, rrf};
pub use ids::{episode_id, message_key};
pub use job::{Job, JobId, JobKind};
pub use key_phrases::{KeyPhrase, key_phrases};
pub use keywords::{KeywordBag, jaccard, keyword_list};
pub use llm::{AnswerError, ChatPrompt, LlmStage, LlmUsage};
pub use memory::{MemoryConfig, MemoryStrength};
pub use message::{
    Message, MessageFields, MessageProblem, NewMessage, Role, RoleParseError, check_message,
    clip_middle, limits as message_limits, name_words,
};
pub use names::{HeldAs, NameReading, in_case_of, read_as, reread, slips, slips_allowed};
pub use next_turn::{
    MEMORY_HEADING, NextTurnConfig, RECENT_HEADING, SUMMARY_HEADING, Shares, quoted_lines,
    recent_fitting, render_next_turn, summary_fitting, verbatim,
};
pub use plan::{ClosedSegment, Plan, plan_proposed, plan_segmentation};
pub use ranking::{Candidate, Profile, Ranked, RankingConfig, rank, spread_to_neighbors};
pub use relevance::{
    Judgement, LineEvidence, Logistic, MEANING_FEATURES, MEANING_SIGNS, MeaningWeights,
    QueryEvidence, QueryForm, RelevanceConfig, WORDS_FEATURES, WORDS_SIGNS, WordsWeights, judge,
    meaning_features, proper_noun_spans, proper_nouns, query_form, reference_similarity, relevance,
    words_features,
};
pub use review::{PendingReview, Rating, ReviewItem, aggregate_reviews, may_review, rate_by_use};
pub use scope::{ConversationKey, Scope};
pub use segment::{Boundary, BoundaryReason, SegmentMessage, SegmentationPolicy, Strength};
pub use standing::{rule_sentences, standing_instructions, states_standing_instruction};
pub use stopwords::{Stopwords, is_stopword};
pub use summary::{Summary, SummaryConfig, summarize};
pub use time::{Timestamp, TimestampParseError};
pub use timeline::{
    NodeSummary, TimelineNode, TocLevel, TocNode, TocNodeParseError, extractive_rollup,
    period_named, session_summary, timeline_of, top_nodes,
};
pub use tokens::TokenCounter;
pub use trigger::{QueueSnapshot, Trigger, TriggerConfig, TriggerKind, evaluate_trigger};
pub use turn_context::{TurnContext, TurnItem, render_turns};
pub use turn_ranking::{
    EpisodeScore, EpisodeState, TurnScore, episode_context, rank_episodes, rank_turns,
};
pub use turn_rules::{
    EpisodeSignals, LineSignals, context_with_neighbors, episode_factor, line_factor,
};
pub use word_match::{max_sim, similarities};
