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
    /// Episodes in scope by their best message similarity, best first.
    pub(crate) episodes: Vec<(EpisodeId, f64, u64)>,
    /// Messages in scope by similarity, best first (at most the requested number).
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

    pub(crate) fn search(&self, query: &[f32], scope: &Scope, max_messages: usize) -> VectorHits {
        if query.len() != self.dim || self.rows.is_empty() {
            return VectorHits::default();
        }
        let visible: Vec<bool> = self.episodes.iter().map(|e| in_scope(e, scope)).collect();
        let mut best: Vec<(f64, u64)> = vec![(f64::NEG_INFINITY, 0); self.episodes.len()];
        let mut messages: Vec<(usize, u64, f64)> = Vec::new();
        for (i, &(e, seq)) in self.rows.iter().enumerate() {
            if !visible[e] {
                continue;
            }
            let v = &self.data[i * self.dim..(i + 1) * self.dim];
            let sim = f64::from(v.iter().zip(query).map(|(a, b)| a * b).sum::<f32>());
            if sim > best[e].0 {
                best[e] = (sim, seq);
            }
            messages.push((e, seq, sim));
        }
        let mut episodes: Vec<(usize, f64, u64)> = best
            .iter()
            .enumerate()
            .filter(|(_, (s, _))| s.is_finite())
            .map(|(e, &(s, seq))| (e, s, seq))
            .collect();
        episodes.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let keep = max_messages.min(messages.len());
        if keep > 0 && keep < messages.len() {
            messages.select_nth_unstable_by(keep - 1, |a, b| b.2.total_cmp(&a.2));
        }
        messages.truncate(keep);
        messages.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1)));
        VectorHits {
            episodes: episodes
                .into_iter()
                .map(|(e, s, seq)| (self.episodes[e].id.clone(), s, seq))
                .collect(),
            messages: messages
                .into_iter()
                .map(|(e, seq, s)| (self.episodes[e].id.clone(), seq, s))
                .collect(),
        }
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
