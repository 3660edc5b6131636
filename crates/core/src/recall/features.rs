//! What a search index knows of its candidates, as raw features: scores of each retriever,
//! who wrote a line and how, which turns and episodes neighbour which. No policy: the ranking
//! rules that turn these into one score live in `turn_ranking.rs`, `turn_rules.rs` and
//! `ranking.rs`.

use std::collections::HashMap;

use crate::{Episode, EpisodeId, FsrsState, Timestamp, recall::LineSignals};

/// A BM25 candidate: its 1-based rank among the lexical candidates, its score, and its
/// length in words as BM25 counted them (0 where the index does not say): a long line holds a
/// share of any query's words by chance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LexicalMatch {
    pub rank: usize,
    pub score: f64,
    pub length: u32,
}

/// A vector candidate: its 1-based rank among the vector candidates (none when it is a
/// candidate only because another retriever found it), and its cosine similarity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorMatch {
    pub rank: Option<usize>,
    pub similarity: f64,
}

/// One candidate episode of episode recall.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeFeatures {
    /// The episode as indexed.
    pub episode: KeptEpisode,
    /// Its title and summary, fingerprinted ([`story_fingerprint`]): the same story told twice
    /// is one memory.
    pub story: u64,
    pub lexical: Option<LexicalMatch>,
    pub vector: Option<VectorMatch>,
    /// Its message most similar to the query.
    pub best_seq: Option<u64>,
}

/// The candidates of episode recall: lexical candidates first (best first), then the vector
/// candidates no lexical one was.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EpisodeCandidates {
    /// Whether the query had any word to search for.
    pub searched_words: bool,
    pub candidates: Vec<EpisodeFeatures>,
}

/// A turn of a [`TurnTable`]: its episode (an index into the table's episodes) and message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TurnKey {
    pub episode: u32,
    pub seq: u64,
}

/// One candidate turn of turn-level recall.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TurnFeatures {
    pub turn: TurnKey,
    pub lexical: Option<LexicalMatch>,
    pub vector: Option<VectorMatch>,
    /// Soft word matching (the mean over the query's words of the best similarity to a word of
    /// the turn), when positive.
    pub words: Option<f64>,
}

/// What ranking needs of an episode a search index returns: which it is, when it ran (a
/// query's date) and its memory strength. Not the whole record: a recall weighs hundreds, and
/// copying each one's title, summary and keywords was a fifth of a turn recall's time over a
/// million episodes; an index that kept them held more than half its state in texts the
/// ranking never reads (the store has them for the few answers).
#[derive(Debug, Clone, PartialEq)]
pub struct KeptEpisode {
    pub id: EpisodeId,
    pub start: Timestamp,
    pub end: Timestamp,
    pub fsrs: FsrsState,
}

impl From<&Episode> for KeptEpisode {
    fn from(e: &Episode) -> Self {
        Self { id: e.id.clone(), start: e.start, end: e.end, fsrs: e.fsrs }
    }
}

/// A fingerprint of an episode's title and summary: equal for the same story told twice (say,
/// one conversation imported under two names), different otherwise but by a 64-bit accident.
pub fn story_fingerprint(title: &str, summary: &str) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(title.as_bytes());
    // A separator no text holds, so that the title's end cannot pass for the summary's start.
    hasher.update(&[0xff]);
    hasher.update(summary.as_bytes());
    hasher.digest()
}

/// Everything turn-level ranking needs, as a search index found it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TurnTable {
    /// Whether the query had any word to search for.
    pub searched_words: bool,
    /// Every episode the table refers to, as indexed.
    pub episodes: Vec<KeptEpisode>,
    /// Per episode (of those holding a candidate): the episodes just before and after it in
    /// its conversation, unless a silence separates them.
    pub adjacent: Vec<Vec<u32>>,
    /// Episodes as BM25 ranks them for the query as a whole, best first: (episode, score).
    pub context_lexical: Vec<(u32, f64)>,
    /// Episodes by their best message's similarity to the query, best first.
    pub context_vector: Vec<(u32, f64)>,
    /// The candidate turns: lexical candidates first (best first), then the vector candidates
    /// no lexical one was.
    pub turns: Vec<TurnFeatures>,
    /// The turn `offset` messages away from a candidate, within its conversation, unless a
    /// silence or the query's time range separates them.
    pub neighbors: HashMap<(TurnKey, i64), TurnKey>,
    /// What is known of each candidate turn and each neighbour besides its words.
    pub lines: HashMap<TurnKey, LineSignals>,
    /// What a line holding every weighed word of the query once or more would score by BM25,
    /// each word as rare as it is in the tenant (one the tenant never holds, as rare as one it
    /// holds once), with what each author the query names adds: a line's BM25 over this is the
    /// share of the query it matches. 0 when the query has no word to weigh.
    pub lexical_ceiling: f64,
    /// How many of the tenant's authors the query names.
    pub named_authors: usize,
    /// How many of the weighed words' proper nouns (`proper_nouns`) no line of the tenant
    /// holds and no author is called.
    pub unknown_names: usize,
}
