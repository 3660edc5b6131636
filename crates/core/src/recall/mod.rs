//! Recall's rules: the features an index returns, rank fusion and ranking, relevance (does a
//! line bear on the query?), names as people misspell them, dates in queries, the query an
//! agent recalls with at its next turn, and the blocks rendered under a token budget.

pub(crate) mod block;
pub(crate) mod borrowing;
pub(crate) mod context;
pub(crate) mod conversation_query;
pub(crate) mod dates;
pub(crate) mod features;
pub(crate) mod fusion;
pub(crate) mod names;
pub(crate) mod next_turn;
pub(crate) mod ranking;
pub(crate) mod relevance;
pub(crate) mod turn_context;
pub(crate) mod turn_ranking;
pub(crate) mod turn_rules;
pub(crate) mod word_match;

pub use borrowing::{Borrow, Similarity, borrowed};
pub use context::{ContextItem, RenderedContext, render_context};
pub use conversation_query::{EARLIER_MESSAGES, conversation_query};
pub use dates::{DateMention, date_mention, is_calendar_word};
pub use features::{
    EpisodeCandidates, EpisodeFeatures, KeptEpisode, LexicalMatch, TurnFeatures, TurnKey,
    TurnTable, VectorMatch, story_fingerprint,
};
pub use fusion::{Fusion, fuse, rrf};
pub use names::{HeldAs, NameReading, in_case_of, read_as, reread, slips, slips_allowed};
pub use next_turn::{
    MEMORY_HEADING, NextTurnConfig, RECENT_HEADING, SUMMARY_HEADING, Shares, quoted_lines,
    recent_fitting, render_next_turn, summary_fitting, verbatim,
};
pub use ranking::{Candidate, Profile, Ranked, RankingConfig, rank, spread_to_neighbors};
pub use relevance::{
    Judgement, LineEvidence, Logistic, MEANING_FEATURES, MEANING_SIGNS, MeaningWeights,
    QueryEvidence, QueryForm, RelevanceConfig, WORDS_FEATURES, WORDS_SIGNS, WordsWeights, judge,
    meaning_features, proper_noun_spans, proper_nouns, query_form, reference_similarity, relevance,
    words_features,
};
pub use turn_context::{TurnContext, TurnItem, render_turns};
pub use turn_ranking::{
    EpisodeScore, EpisodeState, TurnScore, episode_context, rank_episodes, rank_turns,
};
pub use turn_rules::{
    EpisodeSignals, LineSignals, context_with_neighbors, episode_factor, line_factor,
};
pub use word_match::{max_sim, similarities};
