//! Recall: lexical and vector candidates, fused, weighted by memory strength, gated, and
//! recorded for review.

use std::collections::HashMap;

use epimem_core::{
    ConversationKey, Episode, EpisodeId, Scope, Timestamp,
    recall::{
        DateMention, EpisodeState, NameReading, QueryEvidence, RelevanceConfig, date_mention,
        query_form, rank_episodes, rank_turns, reference_similarity, reread,
    },
};
use epimem_embed::Embedder;
use epimem_search::{EpisodeQuery, SearchError, TailLine, TurnQuery, WordVectors};
use epimem_store::PendingReview;

use crate::engine::{Engine, EngineError};

/// What to recall.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallQuery {
    pub scope: Scope,
    pub text: String,
    pub limit: usize,
    /// Conversation time to judge memory strength at; when absent, the newest message of the
    /// scoped conversation, or the clock's now.
    pub at: Option<Timestamp>,
    /// The query's embedding, when the caller already has it (else the engine embeds `text`).
    pub vector: Option<Vec<f32>>,
    /// A date the query names: episodes from then rank higher. `new` reads it from the text.
    pub date: Option<DateMention>,
    /// How a context block judges what bears on the query; the engine's (`[relevance]`)
    /// when absent. `RelevanceConfig::FILL` fills the budget whatever the lines are.
    pub relevance: Option<RelevanceConfig>,
    /// The conversation the recall is made for, and the first of its messages the caller
    /// already holds: a context block leaves those out, and what it quotes is reviewed
    /// against what that conversation says next (as for a recall scoped to it).
    pub asked_in: Option<(ConversationKey, u64)>,
    /// The words of the query already read as names this memory holds, its text saying the
    /// names (`Engine::read_names`); `None` until they are read, which a recall does first.
    pub names_read: Option<Vec<NameReading>>,
}

impl RecallQuery {
    pub fn new(scope: Scope, text: impl Into<String>, limit: usize) -> Self {
        let text = text.into();
        let date = date_mention(&text);
        Self {
            scope,
            text,
            limit,
            at: None,
            vector: None,
            date,
            relevance: None,
            asked_in: None,
            names_read: None,
        }
    }

    /// The query's words a line's relevance is weighed against: all but a date it names
    /// (the date is in the episodes' time, not in their words).
    fn weighed(&self) -> std::borrow::Cow<'_, str> {
        match &self.date {
            Some(d) if d.span.end <= self.text.len() => {
                format!("{} {}", &self.text[..d.span.start], &self.text[d.span.end..]).into()
            }
            _ => self.text.as_str().into(),
        }
    }
}

/// What turn-level ranking found, and what quoting it needs.
pub(crate) struct RankedLines {
    pub(crate) hits: Vec<MessageHit>,
    /// The moment memory strength was judged at.
    pub(crate) moment: Timestamp,
    /// What the index told of the query as a whole.
    pub(crate) evidence: QueryEvidence,
}

/// One recalled episode and why it came back.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallHit {
    pub episode: Episode,
    /// Fused score times the memory weight; higher is better.
    pub score: f64,
    /// Reciprocal rank fusion of the two ranks.
    pub fused: f64,
    /// 1-based rank among the lexical (BM25) candidates.
    pub lexical_rank: Option<usize>,
    /// 1-based rank among the vector candidates.
    pub vector_rank: Option<usize>,
    /// Cosine similarity of the query to the episode's best-matching message.
    pub similarity: Option<f64>,
    /// The message that matched the query best (by vector).
    pub best_seq: Option<u64>,
    /// FSRS retrievability at the recall's moment.
    pub retrievability: f64,
    /// Whether the episode is from a date the query names (its score was raised).
    pub date_match: bool,
}

/// A message-level hit (turn-level retrieval).
#[derive(Debug, Clone, PartialEq)]
pub struct MessageHit {
    pub episode: EpisodeId,
    pub seq: u64,
    /// Cosine similarity to the query, when the message was a vector candidate.
    pub similarity: Option<f64>,
    /// Its BM25 score, when it was a lexical candidate.
    pub lexical: Option<f64>,
    /// Its length in words as BM25 counted them, when it was a lexical candidate.
    pub length: Option<u32>,
    /// Its soft word matching score (query words against the line's closest words), if any.
    pub words: Option<f64>,
    /// The final score, `(fused · episode_factor + lent) · line_factor`; higher is better.
    pub score: f64,
    /// Its retrievers' scores fused (0 for a turn found only beside a better one).
    pub fused: f64,
    /// What its episode adds: how well the episode answers, a named date, memory strength.
    pub episode_factor: f64,
    /// What the best turns around it lent it.
    pub lent: f64,
    /// Who wrote it and how: a person the query names, a question, an assistant's line.
    pub line_factor: f64,
}

impl Engine {
    /// The episodes in the query's scope that best answer it, best first. A recall in one
    /// conversation is recorded as a pending review of what it returned.
    pub(crate) fn recall(&self, query: &RecallQuery) -> Result<Vec<RecallHit>, EngineError> {
        let (hits, at) = self.rank_episodes(query)?;
        self.record_review(query, &hits, at)?;
        Ok(hits)
    }

    /// The episodes in the query's scope that best answer it, best first, and the moment
    /// their strength was judged at; no review is recorded.
    pub(crate) fn rank_episodes(
        &self,
        query: &RecallQuery,
    ) -> Result<(Vec<RecallHit>, Timestamp), EngineError> {
        if query.text.trim().is_empty() {
            return Err(EngineError::Invalid("the recall query is empty".into()));
        }
        if query.limit == 0 {
            return Err(EngineError::Invalid("the recall limit must be at least 1".into()));
        }
        let config = &self.config.ranking;
        let scope = &query.scope;
        self.index_for_recall(&scope.tenant)?;
        let tail = match query.names_read {
            Some(_) => None,
            None => Some(self.open_tail(scope)?),
        };
        let lines = tail.as_ref().map(|t| t.lines()).unwrap_or_default();
        let query = &self.read_names_with(query, &lines)?;
        let q = self.embed_synced(query)?;
        let at = self.recall_moment(query)?;
        let found = self.searched(&scope.tenant, || {
            self.index.search.episodes(&EpisodeQuery {
                scope,
                text: &query.text,
                vector: q.as_deref(),
                candidates: config.candidates,
            })
        })?;
        self.words_or_vector(found.searched_words, query)?;
        let retrievability: Vec<f64> = found
            .candidates
            .iter()
            .map(|c| self.memory.retrievability(&c.episode.fsrs, at))
            .collect();
        let states: Vec<EpisodeState> = found
            .candidates
            .iter()
            .zip(&retrievability)
            .map(|(c, &r)| EpisodeState {
                dated: self.date_match(query, (c.episode.start, c.episode.end)),
                strength: self.memory.recall_weight(r),
            })
            .collect();
        let config = config.for_query(&query_form(&query.text));
        let ranked: Vec<_> =
            rank_episodes(&found, &states, &config).into_iter().take(query.limit).collect();
        // The store has the episodes as they are now (another process may have forgotten one).
        let ids: Vec<EpisodeId> =
            ranked.iter().map(|r| found.candidates[r.index].episode.id.clone()).collect();
        let mut current: HashMap<EpisodeId, Episode> = self
            .store
            .episodes_by_id(scope, &ids)?
            .into_iter()
            .map(|e| (e.id.clone(), e))
            .collect();
        let hits: Vec<RecallHit> = ranked
            .into_iter()
            .zip(&ids)
            .filter_map(|(r, id)| {
                let episode = current.remove(id)?;
                let c = &found.candidates[r.index];
                Some(RecallHit {
                    score: r.score,
                    fused: r.fused,
                    lexical_rank: c.lexical.map(|l| l.rank),
                    vector_rank: c.vector.and_then(|v| v.rank),
                    similarity: c.vector.map(|v| v.similarity),
                    best_seq: c.best_seq,
                    retrievability: retrievability[r.index],
                    date_match: states[r.index].dated,
                    episode,
                })
            })
            .collect();
        Ok((hits, at))
    }

    /// The moment memory strength is judged at: the query's, else conversation time now.
    pub(crate) fn recall_moment(&self, query: &RecallQuery) -> Result<Timestamp, EngineError> {
        match query.at {
            Some(at) => Ok(at),
            None => self.conversation_now(&query.scope),
        }
    }

    /// "Now" in conversation time: the newest message of the scoped conversation (so replayed
    /// conversations age as they did), else the clock.
    pub(crate) fn conversation_now(&self, scope: &Scope) -> Result<Timestamp, EngineError> {
        let newest = match &scope.conversation {
            Some(c) => {
                let key = epimem_core::ConversationKey::new(scope.tenant.clone(), c.clone());
                self.store.queue(&key)?.and_then(|q| q.newest)
            }
            None => None,
        };
        Ok(newest.unwrap_or_else(|| self.clock.now()))
    }

    /// Turn-level ranking, of the episodes' lines and of the open tail's (messages not yet
    /// in an episode: a hit among them has `EpisodeId::open_tail` for its episode).
    pub(crate) fn rank_messages(&self, query: &RecallQuery) -> Result<RankedLines, EngineError> {
        if query.text.trim().is_empty() {
            return Err(EngineError::Invalid("the recall query is empty".into()));
        }
        let config = &self.config.ranking;
        // Read before the index catches up: a message closed meanwhile is then found in the
        // tail, or in its episode, or in both (told once), never in neither.
        let tail = self.open_tail(&query.scope)?;
        let lines = tail.lines();
        self.index_for_recall(&query.scope.tenant)?;
        let query = &self.read_names_with(query, &lines)?;
        let q = self.embed_synced(query)?;
        let moment = self.recall_moment(query)?;
        let words = self.embedder.as_deref().map(EmbedderWords);
        let weighed = query.weighed();
        let table = self.searched(&query.scope.tenant, || {
            self.index.search.turns(
                &TurnQuery {
                    scope: &query.scope,
                    text: &query.text,
                    vector: q.as_deref(),
                    candidates: config.turn_candidates.max(query.limit),
                    episode_context: config.episode_context_weight > 0.0,
                    word_match: config.word_match && q.is_some(),
                    reach: config.neighbor_weights.len(),
                    max_gap_ms: (config.neighbor_max_gap_minutes * 60_000.0) as i64,
                    weighed: &weighed,
                    tail: &lines,
                },
                words.as_ref().map(|w| w as &dyn WordVectors),
            )
        })?;
        self.words_or_vector(table.searched_words, query)?;
        let states: Vec<EpisodeState> = table
            .episodes
            .iter()
            .map(|e| EpisodeState {
                dated: self.date_match(query, (e.start, e.end)),
                // What was just said is as strong as a memory gets.
                strength: match e.id.is_open_tail() {
                    true => self.memory.recall_weight(1.0),
                    false => self.memory.recall_weight(self.memory.retrievability(&e.fsrs, moment)),
                },
            })
            .collect();
        let form = query_form(&query.text);
        let hits = rank_turns(&table, &states, &config.for_query(&form))
            .into_iter()
            .take(query.limit)
            .map(|t| MessageHit {
                episode: table.episodes[t.turn.episode as usize].id.clone(),
                seq: t.turn.seq,
                similarity: t.similarity,
                lexical: t.lexical,
                length: t.length,
                words: t.words,
                score: t.score,
                fused: t.fused,
                episode_factor: t.episode_factor,
                lent: t.lent,
                line_factor: t.line_factor,
            })
            .collect();
        let evidence = QueryEvidence {
            lexical_ceiling: table.lexical_ceiling,
            names_absent: table.named_authors > 0
                && !table.lines.values().any(|line| line.by_named_author),
            unknown_names: table.unknown_names > 0,
            reference_similarity: reference_similarity(
                table.turns.iter().filter_map(|t| t.vector.map(|v| v.similarity)),
            ),
            form,
        };
        Ok(RankedLines { hits, moment, evidence })
    }

    /// `query` with each word this memory (its index and open tail) never heard that slips
    /// from a name it holds read as that name ("Katrina" as "Katrin"), and the readings in
    /// `names_read`. A recall reads them itself; a door that tells what was read reads them
    /// first, once.
    pub(crate) fn read_names(&self, query: &RecallQuery) -> Result<RecallQuery, EngineError> {
        if query.names_read.is_some() {
            return Ok(query.clone());
        }
        self.index_for_recall(&query.scope.tenant)?;
        let tail = self.open_tail(&query.scope)?;
        self.read_names_with(query, &tail.lines())
    }

    /// [`Engine::read_names`] with the open tail's lines already read (the index caught up).
    fn read_names_with(
        &self,
        query: &RecallQuery,
        tail: &[TailLine<'_>],
    ) -> Result<RecallQuery, EngineError> {
        if query.names_read.is_some() {
            return Ok(query.clone());
        }
        let readings = self.searched(&query.scope.tenant, || {
            self.index.search.read_names(&query.scope.tenant, &query.text, tail)
        })?;
        if readings.is_empty() {
            return Ok(RecallQuery { names_read: Some(readings), ..query.clone() });
        }
        // The names as read are searched, embedded and dated: the vector and the date's place
        // were the words' as written.
        let text = reread(&query.text, &readings);
        let date = query.date.as_ref().and_then(|_| date_mention(&text));
        Ok(RecallQuery { text, date, vector: None, names_read: Some(readings), ..query.clone() })
    }

    /// A query with no word to search for is an error only when there are no vectors to fall
    /// back on.
    fn words_or_vector(
        &self,
        searched_words: bool,
        query: &RecallQuery,
    ) -> Result<(), EngineError> {
        if searched_words || self.embedder.is_some() {
            return Ok(());
        }
        Err(EngineError::Invalid(format!("query {:?} has no words to search for", query.text)))
    }

    /// Whether an episode running from `start` to `end` is from a date the query names.
    fn date_match(&self, query: &RecallQuery, (start, end): (Timestamp, Timestamp)) -> bool {
        let after = (self.config.ranking.date_after_days * 24.0 * 3_600_000.0) as i64;
        query.date.as_ref().is_some_and(|d| d.covers(start, end, after))
    }

    /// [`crate::engine::Measure::embed_query`] once the tenant's index is current (it knows the names).
    pub(crate) fn embed_synced(
        &self,
        query: &RecallQuery,
    ) -> Result<Option<Vec<f32>>, EngineError> {
        let Some(embedder) = &self.embedder else { return Ok(None) };
        if let Some(v) = &query.vector {
            return Ok(Some(v.clone()));
        }
        // Names of who spoke say little about what was said (LoCoMo: R@10 0.748 → 0.782).
        let text = self.index.search.embedding_text(&query.scope.tenant, &query.text)?;
        Ok(Some(embedder.embed(&[text.as_str()])?.pop().unwrap_or_default()))
    }

    pub(crate) fn record_review(
        &self,
        query: &RecallQuery,
        hits: &[RecallHit],
        at: Timestamp,
    ) -> Result<(), EngineError> {
        let episodes: Vec<&Episode> = hits.iter().map(|h| &h.episode).collect();
        self.record_review_of(query, &episodes, at)
    }

    /// Records what a recall in one conversation returned, for the review job.
    pub(crate) fn record_review_of(
        &self,
        query: &RecallQuery,
        episodes: &[&Episode],
        at: Timestamp,
    ) -> Result<(), EngineError> {
        let asked_in = query.asked_in.as_ref().map(|(key, _)| key.conversation.clone());
        let Some(conversation) = query.scope.conversation.clone().or(asked_in) else {
            return Ok(());
        };
        if episodes.is_empty() {
            return Ok(());
        }
        let key = ConversationKey::new(query.scope.tenant.clone(), conversation);
        let review = PendingReview {
            query: query.text.clone(),
            memory_ids: episodes.iter().map(|e| e.id.clone()).collect(),
            at,
        };
        match self.store.record_pending_review(&key, &review) {
            // Asked in a conversation not stored yet (a session's first turn): it has said
            // nothing yet to review the recall against.
            Err(epimem_store::StoreError::NotFound(_)) if query.scope.conversation.is_none() => {
                Ok(())
            }
            written => Ok(written?),
        }
    }
}

/// The engine's embedder as the search index asks it for word vectors.
struct EmbedderWords<'a>(&'a dyn Embedder);

impl WordVectors for EmbedderWords<'_> {
    fn embed_words(&self, words: &[&str]) -> Result<Vec<Vec<f32>>, SearchError> {
        self.0.embed(words).map_err(|e| SearchError::Embed(e.to_string()))
    }
}
