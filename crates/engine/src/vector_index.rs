//! The vector index: message vectors of closed episodes, in memory. Derived state: rebuilt
//! from the store on first use and extended as episodes close.
//!
//! Search is exact (one dot product per message vector, scope checked per episode first).

use std::collections::HashMap;

use epimem_core::{Episode, EpisodeId, Scope};
use epimem_store::IndexedVector;

#[derive(Debug, Default)]
pub(crate) struct VectorIndex {
    dim: usize,
    episodes: Vec<Episode>,
    by_id: HashMap<EpisodeId, usize>,
    /// (episode index, message seq) of each row of `data`.
    rows: Vec<(usize, u64)>,
    data: Vec<f32>,
}

/// What a search found.
#[derive(Debug, Default)]
pub(crate) struct VectorHits {
    /// The best episodes in scope by their best message similarity, best first:
    /// (id, similarity, best message).
    pub(crate) episodes: Vec<(EpisodeId, f64, u64)>,
    /// Similarity and best message of each of the `also` episodes asked about (if in scope).
    pub(crate) also: Vec<Option<(f64, u64)>>,
    /// The best messages in scope, best first: (episode, seq, similarity).
    pub(crate) messages: Vec<(EpisodeId, u64, f64)>,
}

impl VectorIndex {
    pub(crate) fn build(rows: Vec<IndexedVector>) -> Self {
        let mut index = Self::default();
        for row in rows {
            index.add(&row.episode, row.seq, &row.vector);
        }
        index
    }

    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    pub(crate) fn add(&mut self, episode: &Episode, seq: u64, vector: &[f32]) {
        if self.dim == 0 {
            self.dim = vector.len();
        }
        if vector.len() != self.dim {
            return; // another model's vector: never mixed in
        }
        let slot = match self.by_id.get(&episode.id) {
            Some(&i) => i,
            None => {
                self.episodes.push(episode.clone());
                self.by_id.insert(episode.id.clone(), self.episodes.len() - 1);
                self.episodes.len() - 1
            }
        };
        self.rows.push((slot, seq));
        self.data.extend_from_slice(vector);
    }

    /// Removes an episode's vectors.
    pub(crate) fn remove(&mut self, id: &EpisodeId) {
        let Some(slot) = self.by_id.remove(id) else { return };
        let dim = self.dim;
        let mut rows = Vec::with_capacity(self.rows.len());
        let mut data = Vec::with_capacity(self.data.len());
        for (i, &(e, seq)) in self.rows.iter().enumerate() {
            if e != slot {
                rows.push((e, seq));
                data.extend_from_slice(&self.data[i * dim..(i + 1) * dim]);
            }
        }
        self.rows = rows;
        self.data = data;
    }

    /// The `episodes` best episodes and `messages` best messages in `scope`, and the
    /// similarity of the `also` episodes.
    pub(crate) fn search(
        &self,
        query: &[f32],
        scope: &Scope,
        episodes: usize,
        messages: usize,
        also: &[EpisodeId],
    ) -> VectorHits {
        if query.len() != self.dim || self.rows.is_empty() {
            return VectorHits { also: vec![None; also.len()], ..VectorHits::default() };
        }
        let visible: Vec<bool> = self.episodes.iter().map(|e| in_scope(e, scope)).collect();
        let mut best: Vec<(f32, u64)> = vec![(f32::NEG_INFINITY, 0); self.episodes.len()];
        let mut top_messages = TopK::new(messages);
        for (i, &(e, seq)) in self.rows.iter().enumerate() {
            if !visible[e] {
                continue;
            }
            let sim = dot(&self.data[i * self.dim..(i + 1) * self.dim], query);
            if sim > best[e].0 {
                best[e] = (sim, seq);
            }
            top_messages.offer(sim, (e, seq));
        }
        let mut top_episodes = TopK::new(episodes);
        for (e, &(sim, seq)) in best.iter().enumerate() {
            if sim.is_finite() {
                top_episodes.offer(sim, (e, seq));
            }
        }
        VectorHits {
            episodes: top_episodes
                .into_sorted()
                .into_iter()
                .map(|(sim, (e, seq))| (self.episodes[e].id.clone(), f64::from(sim), seq))
                .collect(),
            also: also
                .iter()
                .map(|id| {
                    let &e = self.by_id.get(id)?;
                    let (sim, seq) = best[e];
                    sim.is_finite().then_some((f64::from(sim), seq))
                })
                .collect(),
            messages: top_messages
                .into_sorted()
                .into_iter()
                .map(|(sim, (e, seq))| (self.episodes[e].id.clone(), seq, f64::from(sim)))
                .collect(),
        }
    }
}

/// The `k` largest scores offered, ties broken by the earlier offer.
struct TopK<T> {
    k: usize,
    items: Vec<(f32, usize, T)>,
    offered: usize,
}

impl<T> TopK<T> {
    fn new(k: usize) -> Self {
        Self { k, items: Vec::with_capacity(k.min(1024) * 2), offered: 0 }
    }

    fn offer(&mut self, score: f32, item: T) {
        if self.k == 0 {
            return;
        }
        self.items.push((score, self.offered, item));
        self.offered += 1;
        // Keep the buffer bounded: cut back to the best k whenever it doubles.
        if self.items.len() >= self.k * 2 + 64 {
            self.truncate();
        }
    }

    fn truncate(&mut self) {
        if self.items.len() > self.k {
            self.items
                .select_nth_unstable_by(self.k - 1, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            self.items.truncate(self.k);
        }
    }

    fn into_sorted(mut self) -> Vec<(f32, T)> {
        self.truncate();
        self.items.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        self.items.into_iter().map(|(s, _, t)| (s, t)).collect()
    }
}

/// The scope check, done once per episode before any vector is touched.
fn in_scope(e: &Episode, scope: &Scope) -> bool {
    e.conversation.tenant == scope.tenant
        && scope.user.as_ref().is_none_or(|u| e.user.as_ref() == Some(u))
        && scope.agent.as_ref().is_none_or(|a| e.agent.as_ref() == Some(a))
        && scope.conversation.as_ref().is_none_or(|c| e.conversation.conversation == *c)
        && scope.since.is_none_or(|t| e.end >= t)
        && scope.until.is_none_or(|t| e.start <= t)
}

/// Dot product in eight lanes, which the compiler turns into SIMD.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_keeps_the_best_in_order() {
        let mut top = TopK::new(3);
        for (i, s) in [0.1f32, 0.9, 0.5, 0.9, 0.2, 0.7, 0.3].iter().enumerate() {
            top.offer(*s, i);
        }
        assert_eq!(top.into_sorted(), [(0.9, 1), (0.9, 3), (0.7, 5)]);
        let mut none = TopK::new(0);
        none.offer(1.0, 0);
        assert!(none.into_sorted().is_empty());
    }

    #[test]
    fn dot_matches_the_plain_sum() {
        let a: Vec<f32> = (0..37).map(|i| i as f32 * 0.5 - 3.0).collect();
        let b: Vec<f32> = (0..37).map(|i| (i as f32).sin()).collect();
        let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - plain).abs() < 1e-3);
    }
}
