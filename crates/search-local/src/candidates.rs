//! A tenant's index answering the port's queries: each retriever's candidates gathered with
//! their raw features, the turns around them, the episodes they belong to and what is known
//! of each line. No ranking happens here.

use std::collections::HashMap;

use epimem_core::recall::{
    EpisodeCandidates, EpisodeFeatures, LexicalMatch, LineSignals, TurnFeatures, TurnKey,
    TurnTable, VectorMatch,
};
use epimem_search::{EpisodeQuery, SearchError, Seen, TurnQuery, WordVectors};

use crate::{index::TenantIndex, words::WordIndex};

impl TenantIndex {
    /// Lexical candidates first, then the vector candidates no lexical one was; the lexical
    /// ones get their similarity too (the gate reads it).
    pub(crate) fn episode_candidates(
        &self,
        q: &EpisodeQuery<'_>,
    ) -> Result<EpisodeCandidates, SearchError> {
        let visible = self.look_in(q.scope);
        // BM25 and the vectors side by side, on two cores: BM25 on the new thread, which can
        // start a millisecond or more late where idle cores sleep (a virtual machine's do).
        // Over a million episodes the vectors there put p99 at 6.9 ms, against 5-6 here (when
        // the vectors were read row by row); one after the other on this thread, 4.8-5.4 ms
        // against 3.6-3.9 here.
        let (lexical, vector) = std::thread::scope(|s| {
            let lexical = s.spawn(move || self.lexical_episodes(q.scope, q.text, q.candidates));
            let vector = q.vector.map(|v| self.parts.vectors.search(v, &visible, q.candidates, 0));
            (lexical.join().expect("lexical search thread"), vector)
        });
        let lexical = lexical?;
        let searched_words = lexical.is_some();
        let lexical = lexical.unwrap_or_default();
        let order: Vec<usize> = lexical.iter().map(|h| h.slot).collect();
        let mut candidates: Vec<EpisodeFeatures> = lexical
            .iter()
            .enumerate()
            .map(|(i, h)| EpisodeFeatures {
                episode: self.parts.table.indexed(h.slot),
                story: self.parts.table.story(h.slot),
                lexical: Some(LexicalMatch {
                    rank: i + 1,
                    score: f64::from(h.score),
                    length: h.length,
                }),
                vector: None,
                best_seq: None,
            })
            .collect();
        if let (Some(v), Some(hits)) = (q.vector, vector) {
            let also = self.parts.vectors.best_of_each(v, &visible, &order);
            for (c, found) in candidates.iter_mut().zip(&also) {
                if let Some((similarity, seq)) = *found {
                    c.vector = Some(VectorMatch { rank: None, similarity });
                    c.best_seq = Some(seq);
                }
            }
            let at: HashMap<usize, usize> =
                order.iter().enumerate().map(|(i, &s)| (s, i)).collect();
            for (i, &(slot, similarity, seq)) in hits.episodes.iter().enumerate() {
                let c = match at.get(&slot) {
                    Some(&c) => c,
                    None => {
                        candidates.push(EpisodeFeatures {
                            episode: self.parts.table.indexed(slot),
                            story: self.parts.table.story(slot),
                            lexical: None,
                            vector: None,
                            best_seq: None,
                        });
                        candidates.len() - 1
                    }
                };
                candidates[c].vector = Some(VectorMatch { rank: Some(i + 1), similarity });
                candidates[c].best_seq = Some(seq);
            }
        }
        Ok(EpisodeCandidates { searched_words, candidates })
    }

    /// Candidate turns from BM25 over messages and the message vectors (and their soft word
    /// match), with their neighbours, what is known of each line, the episodes as BM25 and
    /// vectors rank them for the query as a whole, and each episode's adjacent ones.
    pub(crate) fn turn_candidates(
        &self,
        q: &TurnQuery<'_>,
        words: Option<&dyn WordVectors>,
    ) -> Result<TurnTable, SearchError> {
        let n = q.candidates;
        let visible = self.look_in(q.scope);
        // The three retrievers side by side (BM25 over messages, over episodes, the vectors).
        let (lexical, lexical_episodes, vector) = std::thread::scope(|s| {
            let (context, visible) = (q.episode_context, &visible);
            let vector = q.vector.map(|v| {
                s.spawn(move || {
                    self.parts.vectors.search(v, visible, if context { n } else { 0 }, n)
                })
            });
            let episodes =
                context.then(|| s.spawn(move || self.lexical_episode_lines(q.scope, q.text, n)));
            let lexical = self.lexical_messages(q.scope, q.text, n);
            let episodes = episodes.map(|h| h.join().expect("episode search thread"));
            (lexical, episodes, vector.map(|h| h.join().expect("vector search thread")))
        });
        let lexical = lexical?;
        let searched_words = lexical.is_some();
        let (vector, vector_episodes) = match vector {
            Some(hits) => (hits.messages, hits.episodes),
            None => (Vec::new(), Vec::new()),
        };
        let lexical_episodes = match lexical_episodes {
            Some(found) => found?.unwrap_or_default(),
            None => Vec::new(),
        };
        let mut table: Seen<usize> = Seen::default();
        let mut found = Turns::default();
        for (i, hit) in lexical.unwrap_or_default().iter().enumerate() {
            let t = found.index((hit.slot, hit.seq), &mut table);
            found.turns[t].lexical =
                Some(LexicalMatch { rank: i + 1, score: f64::from(hit.score), length: hit.length });
        }
        for (i, &(slot, seq, similarity)) in vector.iter().enumerate() {
            let t = found.index((slot, seq), &mut table);
            found.turns[t].vector = Some(VectorMatch { rank: Some(i + 1), similarity });
        }
        let Turns { keys, mut turns } = found;
        let keys = keys.items();
        if q.word_match
            && let Some(words) = words
        {
            self.score_words(q.text, keys, &mut turns, words)?;
        }
        let context_lexical: Vec<(u32, f64)> =
            lexical_episodes.iter().map(|h| (table.index(&h.slot), f64::from(h.score))).collect();
        let context_vector: Vec<(u32, f64)> =
            vector_episodes.iter().map(|&(slot, sim, _)| (table.index(&slot), sim)).collect();

        let mut adjacent: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut neighbors: HashMap<(TurnKey, i64), TurnKey> = HashMap::new();
        let mut lines: HashMap<TurnKey, LineSignals> = HashMap::new();
        let named = self.named_authors(q.text);
        let mut line_of = |index: &Self, (slot, seq): (usize, u64), turn: TurnKey| {
            lines.entry(turn).or_insert_with(|| LineSignals {
                by_named_author: !named.is_empty() && index.written_by(slot, seq, &named),
                asks: index.asks(slot, seq),
                by_machine: !index.by_person(slot, seq),
                in_work: index.in_work(slot, seq),
                instructs: index.instructs(slot, seq),
            });
        };
        for (&(slot, seq), t) in keys.iter().zip(&turns) {
            adjacent.entry(t.turn.episode).or_insert_with(|| {
                let near: Vec<usize> = self.adjacent(slot, q.max_gap_ms).collect();
                near.into_iter().map(|n| table.index(&n)).collect()
            });
            line_of(self, (slot, seq), t.turn);
            for d in 1..=q.reach as i64 {
                for offset in [-d, d] {
                    if let Some((found, s)) = self.neighbor(q, (slot, seq), offset) {
                        let turn = TurnKey { episode: table.index(&found), seq: s };
                        neighbors.insert((t.turn, offset), turn);
                        line_of(self, (found, s), turn);
                    }
                }
            }
        }
        let episodes: Vec<_> = table.items().iter().map(|&s| self.parts.table.indexed(s)).collect();
        let adjacent =
            (0..episodes.len() as u32).map(|e| adjacent.remove(&e).unwrap_or_default()).collect();
        let mut table = TurnTable {
            searched_words,
            episodes,
            adjacent,
            context_lexical,
            context_vector,
            turns,
            neighbors,
            lines,
            // With a tail, its scoring sets the ceiling (on the same scale).
            lexical_ceiling: match q.tail.is_empty() {
                true => self.lexical_ceiling(q.weighed)?,
                false => 0.0,
            },
            named_authors: named.len(),
            unknown_names: self.unknown_names(q.weighed, q.tail)?,
        };
        if !q.tail.is_empty() {
            let scores = self.score_outside(q.text, q.weighed, q.tail)?;
            table.lexical_ceiling = scores.ceiling;
            let bounds = (q.candidates, q.reach);
            epimem_search::add_tail(&mut table, q.tail, &scores, q.vector, bounds);
        }
        Ok(table)
    }

    /// The turn `offset` messages from `(slot, seq)` in its conversation: across episode edges
    /// (a cut can fall between a question and its answer) unless a long silence separates the
    /// episodes, and inside the query's time range.
    fn neighbor(
        &self,
        q: &TurnQuery<'_>,
        (slot, seq): (usize, u64),
        offset: i64,
    ) -> Option<(usize, u64)> {
        let seq = seq.checked_add_signed(offset).filter(|&s| s > 0)?;
        // Most neighbours are in the same episode: no search of the conversation for those.
        let own = self.span(slot);
        let found = if (own.first_seq..=own.last_seq).contains(&seq) {
            slot
        } else {
            self.holding(slot, seq)?
        };
        let to = self.span(found);
        let near = self.within_gap(slot, found, q.max_gap_ms);
        let in_time = q.scope.since.is_none_or(|t| to.end >= t)
            && q.scope.until.is_none_or(|t| to.start <= t);
        (near && in_time).then_some((found, seq))
    }

    /// Scores the candidate turns by soft word matching, embedding the words not seen before.
    fn score_words(
        &self,
        text: &str,
        keys: &[(usize, u64)],
        turns: &mut [TurnFeatures],
        embedder: &dyn WordVectors,
    ) -> Result<(), SearchError> {
        let query = WordIndex::query_words(&self.without_names(text));
        if query.is_empty() {
            return Ok(());
        }
        let words = &self.parts.words;
        let missing = words.missing(keys, &query);
        // Embedded without the lock: a search beside this one may embed some of the same
        // words, and either's vectors do.
        let vectors = match missing.is_empty() {
            true => Vec::new(),
            false => {
                let texts: Vec<&str> = missing.iter().map(String::as_str).collect();
                embedder.embed_words(&texts)?
            }
        };
        words.set_vectors(&missing, vectors);
        for (t, score) in turns.iter_mut().zip(words.scores(&query, keys)) {
            t.words = (score > 0.0).then_some(score);
        }
        Ok(())
    }
}

/// The candidate turns, each once, in order of first sight.
#[derive(Default)]
struct Turns {
    keys: Seen<(usize, u64)>,
    turns: Vec<TurnFeatures>,
}

impl Turns {
    fn index(&mut self, key: (usize, u64), episodes: &mut Seen<usize>) -> usize {
        let t = self.keys.index(&key) as usize;
        if t == self.turns.len() {
            let turn = TurnKey { episode: episodes.index(&key.0), seq: key.1 };
            self.turns.push(TurnFeatures { turn, lexical: None, vector: None, words: None });
        }
        t
    }
}
