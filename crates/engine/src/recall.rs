//! Recall: lexical and vector candidates, fused, weighted by memory strength, gated, and
//! recorded for review.

use std::collections::HashMap;

use epimem_core::{
    Candidate, DateMention, Episode, EpisodeId, EpisodeSignals, LineSignals, RankingConfig, Scope,
    Timestamp, context_with_neighbors, date_mention, episode_factor, fuse, line_factor, rank,
    spread_to_neighbors,
};
use epimem_store::{PendingReview, Store};

use crate::{
    Engine, EngineError,
    search::WordIndex,
    search::{LexicalHit, SearchIndex},
};

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
}

impl RecallQuery {
    pub fn new(scope: Scope, text: impl Into<String>, limit: usize) -> Self {
        let text = text.into();
        let date = date_mention(&text);
        Self { scope, text, limit, at: None, vector: None, date }
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
    /// Fused score; higher is better.
    pub score: f64,
}

impl<S: Store> Engine<S> {
    /// The episodes in the query's scope that best answer it, best first. A recall in one
    /// conversation is recorded as a pending review of what it returned.
    pub fn recall(&self, query: &RecallQuery) -> Result<Vec<RecallHit>, EngineError> {
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
        let q = self.embed_query(query)?;
        // Read before the index is locked: it may ask the store.
        let at = self.recall_moment(query)?;
        let mut index = self.search_index(&scope.tenant)?;
        let lexical = self.lexical_or_none(
            index.lexical_episodes(scope, &query.text, config.candidates)?,
            query,
        )?;

        // Merge the two candidate lists by slot.
        let mut order: Vec<usize> = lexical.iter().map(|h| h.slot).collect();
        // (rank among the lexical candidates, BM25 score).
        let lexical_rank: HashMap<usize, (usize, f64)> = lexical
            .iter()
            .enumerate()
            .map(|(i, h)| (h.slot, (i + 1, f64::from(h.score))))
            .collect();
        // (rank among the vector candidates, similarity, best message).
        let mut vector_rank: HashMap<usize, (Option<usize>, f64, u64)> = HashMap::new();
        if let Some(q) = &q {
            // The lexical candidates' similarities inform the gate too.
            let vector = index.vector(q, scope, config.candidates, 0, &order);
            for (&slot, found) in order.iter().zip(&vector.also) {
                if let Some((sim, seq)) = found {
                    vector_rank.insert(slot, (None, *sim, *seq));
                }
            }
            for (i, &(slot, sim, seq)) in vector.episodes.iter().enumerate() {
                if !lexical_rank.contains_key(&slot) {
                    order.push(slot);
                }
                vector_rank.insert(slot, (Some(i + 1), sim, seq));
            }
        }

        let retrievability: Vec<f64> = order
            .iter()
            .map(|&slot| self.memory.retrievability(&index.episode(slot).fsrs, at))
            .collect();
        let date_match: Vec<bool> =
            order.iter().map(|&slot| self.date_match(query, index.episode(slot))).collect();
        let candidates: Vec<Candidate> = order
            .iter()
            .zip(&retrievability)
            .zip(&date_match)
            .map(|((slot, &r), &dated)| {
                let v = vector_rank.get(slot);
                let date_weight = if dated { 1.0 + config.date_boost } else { 1.0 };
                Candidate {
                    lexical_rank: lexical_rank.get(slot).map(|l| l.0),
                    vector_rank: v.and_then(|v| v.0),
                    word_rank: None,
                    lexical_score: lexical_rank.get(slot).map(|l| l.1),
                    similarity: v.map(|v| v.1),
                    word_score: None,
                    weight: self.memory.recall_weight(r) * date_weight,
                }
            })
            .collect();
        // Near-duplicates: the same story told twice (say, one conversation imported under two
        // names) has the same title and summary; the better-ranked copy stays.
        let same = |a: usize, b: usize| {
            let (x, y) = (index.episode(order[a]), index.episode(order[b]));
            x.title == y.title && x.summary == y.summary
        };
        let ranked: Vec<_> = rank(&candidates, config, config.episode_fusion, same)
            .into_iter()
            .take(query.limit)
            .collect();
        // The store has the episodes as they are now (another process may have forgotten one).
        let ids: Vec<EpisodeId> =
            ranked.iter().map(|r| index.episode(order[r.index]).id.clone()).collect();
        drop(index);
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
                let slot = order[r.index];
                let c = &candidates[r.index];
                Some(RecallHit {
                    score: r.score,
                    fused: r.fused,
                    lexical_rank: c.lexical_rank,
                    vector_rank: c.vector_rank,
                    similarity: c.similarity,
                    best_seq: vector_rank.get(&slot).map(|v| v.2),
                    retrievability: retrievability[r.index],
                    date_match: date_match[r.index],
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

    /// Turn-level retrieval: single messages of closed episodes ranked by BM25, vectors and
    /// soft word matching, fused by reciprocal rank, weighted up by how well their episode
    /// answers the query and by a date it names; each of the best lends some of its score to
    /// the turns around it, then lines written by a person the query names rise. Best first.
    pub fn recall_messages(&self, query: &RecallQuery) -> Result<Vec<MessageHit>, EngineError> {
        if query.text.trim().is_empty() {
            return Err(EngineError::Invalid("the recall query is empty".into()));
        }
        let config = &self.config.ranking;
        let n = config.turn_candidates.max(query.limit);
        let q = self.embed_query(query)?;
        // Read before the index is locked: it may ask the store.
        let moment = self.recall_moment(query)?;
        let mut index = self.search_index(&query.scope.tenant)?;
        let lexical =
            self.lexical_or_none(index.lexical_messages(&query.scope, &query.text, n)?, query)?;
        let context_wanted = config.episode_context_weight > 0.0;
        let (vector, vector_episodes) = match &q {
            Some(q) => {
                let hits =
                    index.vector(q, &query.scope, if context_wanted { n } else { 0 }, n, &[]);
                (hits.messages, hits.episodes)
            }
            None => (Vec::new(), Vec::new()),
        };
        let context = if context_wanted {
            let lexical_episodes =
                index.lexical_episodes(&query.scope, &query.text, n)?.unwrap_or_default();
            episode_context(&lexical_episodes, &vector_episodes, config)
        } else {
            HashMap::new()
        };
        let mut keys: Vec<(usize, u64)> = Vec::new();
        let mut candidates: Vec<Candidate> = Vec::new();
        let mut slot_of: HashMap<(usize, u64), usize> = HashMap::new();
        let mut at = |key: (usize, u64), keys: &mut Vec<_>, candidates: &mut Vec<Candidate>| {
            *slot_of.entry(key).or_insert_with(|| {
                keys.push(key);
                candidates.push(BLANK);
                candidates.len() - 1
            })
        };
        for (i, hit) in lexical.iter().enumerate() {
            let s = at((hit.slot, hit.seq), &mut keys, &mut candidates);
            candidates[s].lexical_rank = Some(i + 1);
            candidates[s].lexical_score = Some(f64::from(hit.score));
        }
        for (i, (slot, seq, sim)) in vector.into_iter().enumerate() {
            let s = at((slot, seq), &mut keys, &mut candidates);
            candidates[s].vector_rank = Some(i + 1);
            candidates[s].similarity = Some(sim);
        }
        if config.word_match && q.is_some() {
            self.rank_by_words(&mut index, query, &keys, &mut candidates)?;
        }
        let max_gap = (config.neighbor_max_gap_minutes * 60_000.0) as i64;
        let context_of = |slot: usize| context.get(&slot).copied().unwrap_or(0.0);
        // Many candidate turns share an episode: weigh each episode once (`turn_rules.rs`).
        let mut episode_weight: HashMap<usize, f64> = HashMap::new();
        for (c, &(slot, _)) in candidates.iter_mut().zip(&keys) {
            c.weight = *episode_weight.entry(slot).or_insert_with(|| {
                let episode = index.episode(slot);
                let adjacent = index.adjacent(slot, max_gap).map(context_of);
                let signals = EpisodeSignals {
                    context: context_with_neighbors(context_of(slot), adjacent, config),
                    dated: self.date_match(query, episode),
                    strength: self
                        .memory
                        .recall_weight(self.memory.retrievability(&episode.fsrs, moment)),
                };
                episode_factor(&signals, config)
            });
        }
        let scored: Vec<((usize, u64), f64)> =
            rank(&candidates, config, config.turn_fusion, |_, _| false)
                .into_iter()
                .map(|r| (keys[r.index], r.score))
                .collect();
        // Neighbours cross episode edges (a cut can fall between a question and its answer)
        // within the conversation, unless a long silence separates the episodes, and stay
        // inside the query's time range.
        let neighbor = |(slot, seq): (usize, u64), offset: i64| {
            let seq = seq.checked_add_signed(offset).filter(|&s| s > 0)?;
            let found = index.holding(slot, seq)?;
            let to = index.episode(found);
            let near = index.within_gap(slot, found, max_gap);
            let in_time = query.scope.since.is_none_or(|t| to.end >= t)
                && query.scope.until.is_none_or(|t| to.start <= t);
            (near && in_time).then_some((found, seq))
        };
        let named = index.named_authors(&query.text);
        let mut spread = spread_to_neighbors(&scored, &config.neighbor_weights, neighbor);
        // Who wrote each line and how (`turn_rules.rs`), after spreading.
        for ((slot, seq), score) in &mut spread {
            let signals = LineSignals {
                by_named_author: !named.is_empty() && index.written_by(*slot, *seq, &named),
                asks: index.asks(*slot, *seq),
                by_machine: !index.by_person(*slot, *seq),
            };
            *score *= line_factor(&signals, config);
        }
        spread.sort_by(|a, b| b.1.total_cmp(&a.1));
        Ok(spread
            .into_iter()
            .take(query.limit)
            .map(|((slot, seq), score)| MessageHit {
                episode: index.episode(slot).id.clone(),
                seq,
                similarity: slot_of.get(&(slot, seq)).and_then(|&i| candidates[i].similarity),
                score,
            })
            .collect())
    }

    /// The lexical hits; a query with no word to search for has none, which is an error only
    /// when there are no vectors to fall back on.
    fn lexical_or_none(
        &self,
        hits: Option<Vec<LexicalHit>>,
        query: &RecallQuery,
    ) -> Result<Vec<LexicalHit>, EngineError> {
        match hits {
            Some(hits) => Ok(hits),
            None if self.embedder.is_some() => Ok(Vec::new()),
            None => Err(EngineError::Invalid(format!(
                "query {:?} has no words to search for",
                query.text
            ))),
        }
    }

    /// Ranks the candidate turns by soft word matching (`search/words.rs`), embedding the
    /// words not seen before.
    fn rank_by_words(
        &self,
        index: &mut SearchIndex,
        query: &RecallQuery,
        keys: &[(usize, u64)],
        candidates: &mut [Candidate],
    ) -> Result<(), EngineError> {
        let Some(embedder) = &self.embedder else { return Ok(()) };
        let words = WordIndex::query_words(&index.without_names(&query.text));
        if words.is_empty() {
            return Ok(());
        }
        let missing = index.words.missing(keys, &words);
        if !missing.is_empty() {
            let texts: Vec<&str> = missing.iter().map(String::as_str).collect();
            let vectors = embedder.embed(&texts)?;
            index.words.set_vectors(&missing, vectors);
        }
        let mut scored: Vec<(usize, f64)> = keys
            .iter()
            .enumerate()
            .map(|(i, &key)| (i, index.words.score(&words, key)))
            .filter(|&(_, s)| s > 0.0)
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for (rank, (i, score)) in scored.into_iter().enumerate() {
            candidates[i].word_rank = Some(rank + 1);
            candidates[i].word_score = Some(score);
        }
        Ok(())
    }

    /// Whether `episode` is from a date the query names.
    fn date_match(&self, query: &RecallQuery, episode: &Episode) -> bool {
        let after = (self.config.ranking.date_after_days * 24.0 * 3_600_000.0) as i64;
        query.date.as_ref().is_some_and(|d| d.covers(episode.start, episode.end, after))
    }

    /// The query's embedding: given, or made now (outside the index lock, which is held only
    /// to strip names); `None` without an embedder. A caller asking one query several ways
    /// can embed it once and pass it in `RecallQuery::vector`.
    pub fn embed_query(&self, query: &RecallQuery) -> Result<Option<Vec<f32>>, EngineError> {
        let Some(embedder) = &self.embedder else { return Ok(None) };
        if let Some(v) = &query.vector {
            return Ok(Some(v.clone()));
        }
        // Names of who spoke say little about what was said (LoCoMo: R@10 0.748 → 0.782).
        let text = self.search_index(&query.scope.tenant)?.without_names(&query.text);
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
        let Some(conversation) = &query.scope.conversation else { return Ok(()) };
        if episodes.is_empty() {
            return Ok(());
        }
        let key =
            epimem_core::ConversationKey::new(query.scope.tenant.clone(), conversation.clone());
        let review = PendingReview {
            query: query.text.clone(),
            memory_ids: episodes.iter().map(|e| e.id.clone()).collect(),
            at,
        };
        self.store.record_pending_review(&key, &review)?;
        Ok(())
    }
}

/// A candidate no retriever has seen yet.
const BLANK: Candidate = Candidate {
    lexical_rank: None,
    vector_rank: None,
    word_rank: None,
    lexical_score: None,
    similarity: None,
    word_score: None,
    weight: 1.0,
};

/// How well each episode answers the query as a whole: its lexical and vector ranks or scores
/// fused as turns are, scaled so the best is 1.
fn episode_context(
    lexical: &[LexicalHit],
    vector: &[(usize, f64, u64)],
    config: &RankingConfig,
) -> HashMap<usize, f64> {
    let mut slots: Vec<usize> = Vec::new();
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut at: HashMap<usize, usize> = HashMap::new();
    let mut index_of = |slot: usize, candidates: &mut Vec<Candidate>| {
        *at.entry(slot).or_insert_with(|| {
            slots.push(slot);
            candidates.push(BLANK);
            candidates.len() - 1
        })
    };
    for (i, h) in lexical.iter().enumerate() {
        let c = index_of(h.slot, &mut candidates);
        candidates[c].lexical_rank.get_or_insert(i + 1);
        candidates[c].lexical_score.get_or_insert(f64::from(h.score));
    }
    for (i, &(slot, similarity, _)) in vector.iter().enumerate() {
        let c = index_of(slot, &mut candidates);
        candidates[c].vector_rank.get_or_insert(i + 1);
        candidates[c].similarity.get_or_insert(similarity);
    }
    let [lexical_weight, vector_weight, _] = config.score_weights;
    let fused =
        fuse(&candidates, config.turn_fusion, config.rrf_k, [lexical_weight, vector_weight, 0.0]);
    let mut fused: HashMap<usize, f64> = slots.into_iter().zip(fused).collect();
    let best = fused.values().copied().fold(0.0, f64::max);
    if best > 0.0 {
        fused.values_mut().for_each(|v| *v /= best);
    }
    fused
}

#[cfg(test)]
mod tests {
    use epimem_core::Fusion;

    use super::*;

    #[test]
    fn episode_context_is_fused_and_scaled_to_the_best() {
        let lexical = [
            LexicalHit { slot: 7, seq: 0, score: 2.0 },
            LexicalHit { slot: 3, seq: 0, score: 1.8 },
        ];
        let vector = [(3, 0.9, 1), (5, 0.8, 2), (7, 0.1, 3)];
        for fusion in [Fusion::Ranks, Fusion::Scores] {
            let config = RankingConfig { turn_fusion: fusion, ..Default::default() };
            let context = episode_context(&lexical, &vector, &config);
            // Episode 3 is near the top of both lists, so it is the best.
            assert_eq!(context[&3], 1.0, "{fusion:?}");
            assert!(context.values().all(|&c| (0.0..=1.0).contains(&c)), "{fusion:?}");
            assert!(episode_context(&[], &[], &config).is_empty());
        }
        // Ranks forget that episode 7 is barely similar; scores remember.
        let by = |fusion| {
            let config = RankingConfig { turn_fusion: fusion, ..Default::default() };
            episode_context(&lexical, &vector, &config)
        };
        let (ranks, scores) = (by(Fusion::Ranks), by(Fusion::Scores));
        assert!(ranks[&7] > ranks[&5], "{ranks:?}");
        assert!(scores[&7] / scores[&3] < ranks[&7] / ranks[&3], "{scores:?} {ranks:?}");
    }
}
