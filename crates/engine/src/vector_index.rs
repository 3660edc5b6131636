//! The vector index: message vectors of closed episodes, in memory. Derived state: rebuilt
//! from the store on first use and extended as episodes close.
//!
//! Search is exact (one dot product per message vector, scope checked per episode first) until
//! the index holds `approximate_from` vectors; past that an HNSW graph (usearch) answers, with
//! the scope check as its filter, and exact dot products only for the episodes asked about.
//! The default threshold is high: at 200,000 vectors the scan takes a few milliseconds while
//! building the graph took minutes on two cores.

use std::collections::HashMap;

use epimem_core::{Episode, EpisodeId, Scope};
use epimem_store::IndexedVector;

#[derive(Default)]
pub(crate) struct VectorIndex {
    dim: usize,
    /// Vectors from which searches go through the graph.
    approximate_from: usize,
    /// The HNSW graph over `data` (keys are row numbers), built on the first search past the
    /// threshold and dropped when rows are removed.
    graph: Option<usearch::Index>,
    /// Rows of each episode.
    episode_rows: Vec<Vec<usize>>,
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

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex")
            .field("rows", &self.rows.len())
            .field("graph", &self.graph.is_some())
            .finish_non_exhaustive()
    }
}

impl VectorIndex {
    pub(crate) fn build(rows: Vec<IndexedVector>, approximate_from: usize) -> Self {
        let mut index = Self { approximate_from, ..Self::default() };
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
                self.episode_rows.push(Vec::new());
                self.by_id.insert(episode.id.clone(), self.episodes.len() - 1);
                self.episodes.len() - 1
            }
        };
        let row = self.rows.len();
        self.rows.push((slot, seq));
        self.data.extend_from_slice(vector);
        self.episode_rows[slot].push(row);
        if let Some(graph) = &self.graph {
            let added = graph.reserve(row + 1).and_then(|()| graph.add(row as u64, vector));
            if added.is_err() {
                self.graph = None; // rebuilt on the next search
            }
        }
    }

    /// Builds the graph if the index has grown past the threshold and has none.
    fn ensure_graph(&mut self) {
        if self.graph.is_some() || self.rows.len() < self.approximate_from.max(1) {
            return;
        }
        let options = usearch::IndexOptions {
            dimensions: self.dim,
            // Vectors are unit length: inner product is cosine, and cheaper.
            metric: usearch::MetricKind::IP,
            quantization: usearch::ScalarKind::F32,
            ..Default::default()
        };
        let Ok(graph) = usearch::Index::new(&options) else { return };
        if graph.reserve(self.rows.len()).is_err() {
            return;
        }
        for row in 0..self.rows.len() {
            if graph.add(row as u64, &self.data[row * self.dim..(row + 1) * self.dim]).is_err() {
                return;
            }
        }
        self.graph = Some(graph);
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
        self.graph = None;
        self.episode_rows = vec![Vec::new(); self.episodes.len()];
        for (row, &(e, _)) in self.rows.iter().enumerate() {
            self.episode_rows[e].push(row);
        }
    }

    /// The `episodes` best episodes and `messages` best messages in `scope`, and the
    /// similarity of the `also` episodes.
    pub(crate) fn search(
        &mut self,
        query: &[f32],
        scope: &Scope,
        episodes: usize,
        messages: usize,
        also: &[EpisodeId],
    ) -> VectorHits {
        if query.len() != self.dim || self.rows.is_empty() {
            return VectorHits { also: vec![None; also.len()], ..VectorHits::default() };
        }
        let visible: Vec<bool> = self
            .episodes
            .iter()
            .map(|e| self.by_id.contains_key(&e.id) && in_scope(e, scope))
            .collect();
        self.ensure_graph();
        if let Some(graph) = &self.graph {
            return self.search_graph(graph, query, &visible, episodes, messages, also);
        }
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
        let also = also
            .iter()
            .map(|id| {
                let &e = self.by_id.get(id)?;
                let (sim, seq) = best[e];
                sim.is_finite().then_some((f64::from(sim), seq))
            })
            .collect();
        self.hits(top_episodes, also, top_messages)
    }
}

impl VectorIndex {
    /// Turns the best (row-level) picks into ids.
    fn hits(
        &self,
        episodes: TopK<(usize, u64)>,
        also: Vec<Option<(f64, u64)>>,
        messages: TopK<(usize, u64)>,
    ) -> VectorHits {
        VectorHits {
            episodes: episodes
                .into_sorted()
                .into_iter()
                .map(|(sim, (e, seq))| (self.episodes[e].id.clone(), f64::from(sim), seq))
                .collect(),
            also,
            messages: messages
                .into_sorted()
                .into_iter()
                .map(|(sim, (e, seq))| (self.episodes[e].id.clone(), seq, f64::from(sim)))
                .collect(),
        }
    }

    /// Approximate search: the graph's nearest messages (filtered by scope), grouped by
    /// episode; exact similarities for the `also` episodes.
    fn search_graph(
        &self,
        graph: &usearch::Index,
        query: &[f32],
        visible: &[bool],
        episodes: usize,
        messages: usize,
        also: &[EpisodeId],
    ) -> VectorHits {
        // Several messages per episode may come first: ask for more than needed.
        let k = (episodes * 4).max(messages).max(16);
        let found = graph
            .filtered_search(query, k, |key| {
                self.rows.get(key as usize).is_some_and(|&(e, _)| visible[e])
            })
            .map(|m| (m.keys, m.distances))
            .unwrap_or_default();
        let mut best: HashMap<usize, (f32, u64)> = HashMap::new();
        let mut top_messages = TopK::new(messages);
        for (key, distance) in found.0.into_iter().zip(found.1) {
            let Some(&(e, seq)) = self.rows.get(key as usize) else { continue };
            let sim = 1.0 - distance;
            let entry = best.entry(e).or_insert((f32::NEG_INFINITY, seq));
            if sim > entry.0 {
                *entry = (sim, seq);
            }
            top_messages.offer(sim, (e, seq));
        }
        let mut top_episodes = TopK::new(episodes);
        for (&e, &(sim, seq)) in &best {
            top_episodes.offer(sim, (e, seq));
        }
        let exact = |e: usize| -> Option<(f64, u64)> {
            self.episode_rows[e]
                .iter()
                .map(|&row| {
                    (dot(&self.data[row * self.dim..(row + 1) * self.dim], query), self.rows[row].1)
                })
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(sim, seq)| (f64::from(sim), seq))
        };
        let also = also
            .iter()
            .map(|id| self.by_id.get(id).filter(|&&e| visible[e]).and_then(|&e| exact(e)))
            .collect();
        self.hits(top_episodes, also, top_messages)
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
