//! Recall: lexical and vector candidates, fused, weighted by memory strength, gated, and
//! recorded for review.

use std::collections::HashMap;

use epimem_core::{Candidate, Episode, EpisodeId, Scope, Timestamp, rank};
use epimem_store::{PendingReview, Store};

use crate::{Engine, EngineError, vector_index::VectorIndex};

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
}

impl RecallQuery {
    pub fn new(scope: Scope, text: impl Into<String>, limit: usize) -> Self {
        Self { scope, text: text.into(), limit, at: None, vector: None }
    }
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
}

/// A message-level hit (turn-level retrieval).
#[derive(Debug, Clone, PartialEq)]
pub struct MessageHit {
    pub episode: EpisodeId,
    pub seq: u64,
    /// Cosine similarity to the query, when the message was a vector candidate.
    pub similarity: Option<f64>,
    /// Fused score; higher is better.
    pub score: f64,
}

impl<S: Store> Engine<S> {
    /// The episodes in the query's scope that best answer it, best first. A recall in one
    /// conversation is recorded as a pending review of what it returned.
    pub fn recall(&self, query: &RecallQuery) -> Result<Vec<RecallHit>, EngineError> {
        if query.text.trim().is_empty() {
            return Err(EngineError::Invalid("the recall query is empty".into()));
        }
        if query.limit == 0 {
            return Err(EngineError::Invalid("the recall limit must be at least 1".into()));
        }
        let config = &self.config.ranking;
        let scope = &query.scope;
        let lexical = match self.store.search_lexical(scope, &query.text, config.candidates) {
            Ok(hits) => hits,
            // A query of stopwords or punctuation only has no lexical candidates, but may
            // still have vector ones.
            Err(epimem_store::StoreError::Invalid(_)) if self.embedder.is_some() => Vec::new(),
            Err(e) => return Err(e.into()),
        };

        // Merge the two candidate lists by episode id.
        let mut order: Vec<EpisodeId> = Vec::new();
        let mut episodes: HashMap<EpisodeId, Episode> = HashMap::new();
        let mut lexical_rank: HashMap<EpisodeId, usize> = HashMap::new();
        for (i, hit) in lexical.into_iter().enumerate() {
            lexical_rank.insert(hit.episode.id.clone(), i + 1);
            order.push(hit.episode.id.clone());
            episodes.insert(hit.episode.id.clone(), hit.episode);
        }
        // The lexical candidates' similarities inform the gate too.
        let vector = self.vector_search(query, config.candidates, 0, &order)?;
        // (rank among the vector candidates, similarity, best message).
        let mut vector_rank: HashMap<EpisodeId, (Option<usize>, f64, u64)> = HashMap::new();
        for (id, found) in order.iter().zip(&vector.also) {
            if let Some((sim, seq)) = found {
                vector_rank.insert(id.clone(), (None, *sim, *seq));
            }
        }
        for (i, (id, sim, seq)) in vector.episodes.iter().enumerate() {
            if !episodes.contains_key(id) {
                order.push(id.clone());
            }
            vector_rank.insert(id.clone(), (Some(i + 1), *sim, *seq));
        }
        let missing: Vec<EpisodeId> =
            order.iter().filter(|id| !episodes.contains_key(*id)).cloned().collect();
        for e in self.store.episodes_by_id(scope, &missing)? {
            episodes.insert(e.id.clone(), e);
        }
        order.retain(|id| episodes.contains_key(id));

        let at = match query.at {
            Some(at) => at,
            None => self.conversation_now(scope)?,
        };
        let retrievability: Vec<f64> =
            order.iter().map(|id| self.memory.retrievability(&episodes[id].fsrs, at)).collect();
        let candidates: Vec<Candidate> = order
            .iter()
            .zip(&retrievability)
            .map(|(id, &r)| {
                let v = vector_rank.get(id);
                Candidate {
                    lexical_rank: lexical_rank.get(id).copied(),
                    vector_rank: v.and_then(|v| v.0),
                    similarity: v.map(|v| v.1),
                    weight: self.memory.recall_weight(r),
                }
            })
            .collect();
        // Near-duplicates: the same story told twice (say, one conversation imported under two
        // names) has the same title and summary; the better-ranked copy stays.
        let same = |a: usize, b: usize| {
            let (x, y) = (&episodes[&order[a]], &episodes[&order[b]]);
            x.title == y.title && x.summary == y.summary
        };
        let ranked = rank(&candidates, config, same);
        let hits: Vec<RecallHit> = ranked
            .into_iter()
            .take(query.limit)
            .map(|r| {
                let id = &order[r.index];
                let c = &candidates[r.index];
                let episode = episodes[id].clone();
                let retrievability = retrievability[r.index];
                RecallHit {
                    score: r.score,
                    fused: r.fused,
                    lexical_rank: c.lexical_rank,
                    vector_rank: c.vector_rank,
                    similarity: c.similarity,
                    best_seq: vector_rank.get(id).map(|v| v.2),
                    retrievability,
                    episode,
                }
            })
            .collect();
        self.record_review(query, &hits, at)?;
        Ok(hits)
    }

    /// "Now" in conversation time: the newest message of the scoped conversation (so replayed
    /// conversations age as they did), else the clock.
    fn conversation_now(&self, scope: &Scope) -> Result<Timestamp, EngineError> {
        let newest = match &scope.conversation {
            Some(c) => {
                let key = epimem_core::ConversationKey::new(scope.tenant.clone(), c.clone());
                self.store.queue(&key)?.and_then(|q| q.newest)
            }
            None => None,
        };
        Ok(newest.unwrap_or_else(|| self.clock.now()))
    }

    /// Turn-level retrieval: single messages of closed episodes, BM25 and vector candidates
    /// fused by reciprocal rank, best first.
    pub fn recall_messages(&self, query: &RecallQuery) -> Result<Vec<MessageHit>, EngineError> {
        let config = &self.config.ranking;
        let n = config.candidates.max(query.limit);
        let lexical = match self.store.search_messages_lexical(&query.scope, &query.text, n) {
            Ok(hits) => hits,
            Err(epimem_store::StoreError::Invalid(_)) if self.embedder.is_some() => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        let vector = self.vector_search(query, 0, n, &[])?.messages;
        let mut keys: Vec<(EpisodeId, u64)> = Vec::new();
        let mut candidates: Vec<Candidate> = Vec::new();
        let mut slot: HashMap<(EpisodeId, u64), usize> = HashMap::new();
        let mut at = |key: (EpisodeId, u64), keys: &mut Vec<_>, candidates: &mut Vec<Candidate>| {
            *slot.entry(key.clone()).or_insert_with(|| {
                keys.push(key);
                candidates.push(Candidate {
                    lexical_rank: None,
                    vector_rank: None,
                    similarity: None,
                    weight: 1.0,
                });
                candidates.len() - 1
            })
        };
        for (i, hit) in lexical.into_iter().enumerate() {
            let s = at((hit.episode, hit.seq), &mut keys, &mut candidates);
            candidates[s].lexical_rank = Some(i + 1);
        }
        for (i, (episode, seq, sim)) in vector.into_iter().enumerate() {
            let s = at((episode, seq), &mut keys, &mut candidates);
            candidates[s].vector_rank = Some(i + 1);
            candidates[s].similarity = Some(sim);
        }
        Ok(rank(&candidates, config, |_, _| false)
            .into_iter()
            .take(query.limit)
            .map(|r| {
                let (episode, seq) = keys[r.index].clone();
                MessageHit {
                    episode,
                    seq,
                    similarity: candidates[r.index].similarity,
                    score: r.score,
                }
            })
            .collect())
    }

    fn vector_search(
        &self,
        query: &RecallQuery,
        episodes: usize,
        messages: usize,
        also: &[EpisodeId],
    ) -> Result<crate::vector_index::VectorHits, EngineError> {
        let Some(embedder) = &self.embedder else {
            return Ok(crate::vector_index::VectorHits {
                also: vec![None; also.len()],
                ..Default::default()
            });
        };
        let q = match &query.vector {
            Some(v) => v.clone(),
            None => embedder.embed(&[query.text.as_str()])?.pop().unwrap_or_default(),
        };
        let mut guard = self.index.lock().map_err(|_| {
            EngineError::Store(epimem_store::StoreError::Internal("vector index poisoned".into()))
        })?;
        if guard.is_none() {
            let rows = self.store.episode_message_vectors(embedder.fingerprint())?;
            *guard = Some(VectorIndex::build(rows, self.config.ranking.approximate_from));
        }
        let index = guard.as_mut().expect("built above");
        Ok(index.search(&q, &query.scope, episodes, messages, also))
    }

    fn record_review(
        &self,
        query: &RecallQuery,
        hits: &[RecallHit],
        at: Timestamp,
    ) -> Result<(), EngineError> {
        let Some(conversation) = &query.scope.conversation else { return Ok(()) };
        if hits.is_empty() {
            return Ok(());
        }
        let key =
            epimem_core::ConversationKey::new(query.scope.tenant.clone(), conversation.clone());
        let review = PendingReview {
            query: query.text.clone(),
            memory_ids: hits.iter().map(|h| h.episode.id.clone()).collect(),
            at,
        };
        self.store.record_pending_review(&key, &review)?;
        Ok(())
    }

    /// Number of message vectors in the loaded index (0 before the first vector recall).
    pub fn indexed_vectors(&self) -> usize {
        self.index.lock().ok().and_then(|g| g.as_ref().map(VectorIndex::len)).unwrap_or(0)
    }
}
