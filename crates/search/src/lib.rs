//! The search port of epimem.
//!
//! A [`Search`] index is derived state: it holds what the store's change log told it (episodes
//! closed, episodes forgotten), records the number of the last change it applied, and answers
//! queries with raw features only (scores of each retriever, neighbours, who wrote a line). The
//! ranking rules that turn features into one score are `epimem-core`'s; an index never mixes
//! policy into what it returns.
//!
//! Indexes are per tenant: nothing one tenant stores may change what another's queries return
//! or how they rank.

#[cfg(feature = "conformance")]
pub mod conformance;
mod names;
mod seen;
mod tail;
mod traced;

pub use names::{HeldNames, read_names};
pub use seen::Seen;
pub use tail::{
    BM25_B, BM25_K1, HeldWords, LineWords, TailLine, TailScores, TailWords, add_tail,
    proper_nouns_beyond, score_tail,
};
pub use traced::TracedSearch;

use std::fmt;

use epimem_core::{
    Episode, EpisodeId, ErrorKind, Role, Scope,
    recall::{EpisodeCandidates, NameReading, TurnTable},
};

/// A search index over closed episodes, one per tenant inside.
pub trait Search: Send + Sync + fmt::Debug {
    /// The number of the store's last episode change the tenant's index reflects (0 when it
    /// reflects none: a new or discarded index).
    fn generation(&self, tenant: &str) -> Result<u64, SearchError>;

    /// Applies an update to the tenant's index. Applying one twice changes nothing: adding an
    /// episode that is there, or forgetting one that is not, is harmless.
    fn apply(&self, tenant: &str, update: &Update<'_>) -> Result<(), SearchError>;

    /// Drops the tenant's index after a failed update, so that it is built again from the
    /// store (from generation 0) instead of answering half-updated.
    fn discard(&self, tenant: &str) -> Result<(), SearchError>;

    /// Why the tenant's saved index could not be used and was started again empty when this
    /// process opened it (built with another embedder, damaged, out of step), so that whoever
    /// waits for the rebuild can be told. `None` when it was used, is new, or is not saved.
    /// Beside a process that holds the saved index, only what no later save of the holder's
    /// would change is told (another embedder): a wait for that save cannot help.
    fn started_again(&self, _tenant: &str) -> Result<Option<String>, SearchError> {
        Ok(None)
    }

    /// Whether this process keeps the tenant's index in memory because another process holds
    /// the saved one (so a build here makes a copy, and leaves the saved index alone).
    fn held_elsewhere(&self, _tenant: &str) -> Result<bool, SearchError> {
        Ok(false)
    }

    /// Takes over the tenant's saved index once the process that held it has let it go (it
    /// stopped), so that this process saves it from then on instead of keeping its own in
    /// memory. True when it did: the index may then be behind the one it replaced (catch it
    /// up). The owner calls it on a timer; an index that is always its own does nothing.
    fn adopt(&self, _tenant: &str) -> Result<bool, SearchError> {
        Ok(false)
    }

    /// Writes what the tenant's index holds and has not saved, once no update has come for a
    /// moment: an index that saves only now and then (not during a burst of updates) must not
    /// be left behind by the last one. The owner calls it on a timer; an index that keeps
    /// nothing unsaved does nothing. A save that takes long may stop for an update that comes
    /// meanwhile, and be made by a later call.
    fn settle(&self, _tenant: &str) -> Result<(), SearchError> {
        Ok(())
    }

    /// Checks the tenant's index, if this process holds it open, against what it was saved as:
    /// `Damaged` when a file changed behind its back (bytes a search would read without
    /// noticing). The owner calls it now and then; an index with no files does nothing.
    fn verify(&self, _tenant: &str) -> Result<(), SearchError> {
        Ok(())
    }

    /// Candidates of episode recall, with their features.
    fn episodes(&self, query: &EpisodeQuery<'_>) -> Result<EpisodeCandidates, SearchError>;

    /// Candidates of turn-level recall, with their features, neighbours and episodes.
    fn turns(
        &self,
        query: &TurnQuery<'_>,
        words: Option<&dyn WordVectors>,
    ) -> Result<TurnTable, SearchError>;

    /// The query as worth embedding: without the words that name someone who spoke in the
    /// tenant's conversations (all of it if nothing else is left).
    fn embedding_text(&self, tenant: &str, text: &str) -> Result<String, SearchError>;

    /// The words of `text` the tenant's memory (and the open tail's lines `tail`) never heard,
    /// each read as a name it holds ([`read_names`]): "Katrina" where she writes as "Katrin".
    fn read_names(
        &self,
        tenant: &str,
        text: &str,
        tail: &[TailLine<'_>],
    ) -> Result<Vec<NameReading>, SearchError>;

    /// Message vectors held, over every tenant.
    fn vectors(&self) -> usize;
}

impl<T: Search + ?Sized> Search for std::sync::Arc<T> {
    fn generation(&self, tenant: &str) -> Result<u64, SearchError> {
        (**self).generation(tenant)
    }
    fn apply(&self, tenant: &str, update: &Update<'_>) -> Result<(), SearchError> {
        (**self).apply(tenant, update)
    }
    fn discard(&self, tenant: &str) -> Result<(), SearchError> {
        (**self).discard(tenant)
    }
    fn started_again(&self, tenant: &str) -> Result<Option<String>, SearchError> {
        (**self).started_again(tenant)
    }
    fn held_elsewhere(&self, tenant: &str) -> Result<bool, SearchError> {
        (**self).held_elsewhere(tenant)
    }
    fn adopt(&self, tenant: &str) -> Result<bool, SearchError> {
        (**self).adopt(tenant)
    }
    fn settle(&self, tenant: &str) -> Result<(), SearchError> {
        (**self).settle(tenant)
    }
    fn verify(&self, tenant: &str) -> Result<(), SearchError> {
        (**self).verify(tenant)
    }
    fn episodes(&self, query: &EpisodeQuery<'_>) -> Result<EpisodeCandidates, SearchError> {
        (**self).episodes(query)
    }
    fn turns(
        &self,
        query: &TurnQuery<'_>,
        words: Option<&dyn WordVectors>,
    ) -> Result<TurnTable, SearchError> {
        (**self).turns(query, words)
    }
    fn embedding_text(&self, tenant: &str, text: &str) -> Result<String, SearchError> {
        (**self).embedding_text(tenant, text)
    }
    fn read_names(
        &self,
        tenant: &str,
        text: &str,
        tail: &[TailLine<'_>],
    ) -> Result<Vec<NameReading>, SearchError> {
        (**self).read_names(tenant, text, tail)
    }
    fn vectors(&self) -> usize {
        (**self).vectors()
    }
}

/// What to change in a tenant's index.
#[derive(Debug, Clone, Copy, Default)]
pub struct Update<'a> {
    /// Episodes to forget.
    pub forgotten: &'a [EpisodeId],
    /// Episodes to add, with their messages.
    pub added: &'a [IndexedEpisode<'a>],
    /// Episodes whose memory strength changed (a review), their words not: the index's copy
    /// of each takes the new state.
    pub restated: &'a [Episode],
    /// The store's change this update brings the index to, if it comes from the change log.
    pub generation: Option<u64>,
}

/// A closed episode and its messages, as indexed.
#[derive(Debug, Clone)]
pub struct IndexedEpisode<'a> {
    pub episode: &'a Episode,
    /// Its messages in sequence order.
    pub lines: Vec<IndexedLine<'a>>,
}

impl IndexedEpisode<'_> {
    /// Whether an agent worked in it with tools (a line is tool output): every index keeps
    /// this of each of its lines, which ranking reads as `LineSignals::in_work`.
    pub fn is_work(&self) -> bool {
        self.lines.iter().any(|l| l.role == Role::Tool)
    }
}

/// A message of a closed episode, as indexed.
#[derive(Debug, Clone, Copy)]
pub struct IndexedLine<'a> {
    pub seq: u64,
    pub role: Role,
    /// Its speaker, else its role.
    pub author: &'a str,
    pub content: &'a str,
    /// Its vector, from the embedder the index is kept for.
    pub vector: Option<&'a [f32]>,
}

/// An episode-recall query.
#[derive(Debug, Clone, Copy)]
pub struct EpisodeQuery<'a> {
    pub scope: &'a Scope,
    pub text: &'a str,
    /// The query's embedding, if there is an embedder.
    pub vector: Option<&'a [f32]>,
    /// Candidates taken from each retriever.
    pub candidates: usize,
}

/// A turn-level query.
#[derive(Debug, Clone, Copy)]
pub struct TurnQuery<'a> {
    pub scope: &'a Scope,
    pub text: &'a str,
    pub vector: Option<&'a [f32]>,
    /// Candidates taken from each retriever.
    pub candidates: usize,
    /// Whether to rank episodes for the query as a whole too (the episode context).
    pub episode_context: bool,
    /// Whether to score candidates by soft word matching (needs `words`).
    pub word_match: bool,
    /// How many turns each way a candidate's neighbours are wanted.
    pub reach: usize,
    /// Turns (and episodes) of one conversation are neighbours only if at most this many
    /// milliseconds of silence separate their episodes.
    pub max_gap_ms: i64,
    /// The words of the query a line's relevance is weighed against (the query less a date it
    /// names, which no line's words say): `TurnTable::lexical_ceiling` is computed from them.
    pub weighed: &'a str,
    /// Messages not yet in an episode, searched beside the index's lines (`add_tail`): the
    /// index scores their words as its own and puts them among its candidates.
    pub tail: &'a [TailLine<'a>],
}

/// Word vectors for soft word matching, from the embedder the caller holds.
pub trait WordVectors {
    /// One unit vector per word.
    fn embed_words(&self, words: &[&str]) -> Result<Vec<Vec<f32>>, SearchError>;
}

/// A failure of a search index.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The index (or a file of it) failed; derived state, so rebuilding it from the store
    /// repairs it.
    #[error("search index: {0}")]
    Index(String),
    /// The caller's embedder failed while the index asked it for word vectors.
    #[error("embedding words for search: {0}")]
    Embed(String),
    /// The index lives in a database that cannot be reached now; trying again may work.
    #[error("search index unavailable: {0}")]
    Unavailable(String),
    /// A read of the index failed or found it damaged (a file changed behind its back): its
    /// answers cannot be trusted until it is rebuilt from the store.
    #[error("the search index is damaged: {0}")]
    Damaged(String),
}

impl SearchError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Index(_) => ErrorKind::Internal,
            Self::Embed(_) | Self::Unavailable(_) | Self::Damaged(_) => ErrorKind::Unavailable,
        }
    }
}
