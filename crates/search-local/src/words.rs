//! Soft word matching for turn-level recall: each content word of the query is matched to the
//! closest word of a turn by their embeddings, and the turn scores the mean of those
//! similarities (MaxSim over words). It finds "puppy" in a line about a "dog", which BM25
//! cannot, without the blur of averaging a whole line into one vector.
//!
//! Word vectors come from the embedder, lazily: the words of the turns being ranked that have
//! none yet are embedded in one batch and kept.

use std::collections::HashMap;

use epimem_core::keyword_list;
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct WordIndex {
    ids: HashMap<String, u32>,
    words: Vec<String>,
    /// Word vectors are the embedder's, asked for again after a load.
    #[serde(skip)]
    vectors: Vec<Option<Vec<f32>>>,
    /// The distinct content words of each turn (episode slot, seq).
    turns: HashMap<(usize, u64), Vec<u32>>,
}

impl WordIndex {
    pub(crate) fn add_turn(&mut self, slot: usize, seq: u64, text: &str) {
        let ids: Vec<u32> = keyword_list(text).into_iter().map(|w| self.id(w)).collect();
        self.turns.insert((slot, seq), ids);
    }

    pub(crate) fn remove_episode(&mut self, slot: usize) {
        self.turns.retain(|&(s, _), _| s != slot);
    }

    /// The content words of a query.
    pub(crate) fn query_words(text: &str) -> Vec<String> {
        keyword_list(text)
    }

    /// Words of `turns` and `query` that have no vector yet, each once.
    pub(crate) fn missing(&mut self, turns: &[(usize, u64)], query: &[String]) -> Vec<String> {
        let query_ids: Vec<u32> = query.iter().map(|w| self.id(w.clone())).collect();
        let mut seen = std::collections::HashSet::new();
        turns
            .iter()
            .filter_map(|t| self.turns.get(t))
            .flatten()
            .chain(&query_ids)
            .filter(|&&id| self.vectors[id as usize].is_none() && seen.insert(id))
            .map(|&id| self.words[id as usize].clone())
            .collect()
    }

    /// Keeps the (unit) vectors of `words`.
    pub(crate) fn set_vectors(&mut self, words: &[String], vectors: Vec<Vec<f32>>) {
        for (word, vector) in words.iter().zip(vectors) {
            let id = self.id(word.clone());
            self.vectors[id as usize] = Some(vector);
        }
    }

    /// Mean over the query's words of the best cosine similarity to a word of the turn; 0 for
    /// a turn without words or a query whose words have no vectors.
    pub(crate) fn score(&self, query: &[String], turn: (usize, u64)) -> f64 {
        let Some(words) = self.turns.get(&turn) else { return 0.0 };
        let vector = |id: u32| self.vectors[id as usize].as_deref();
        let turn_vectors: Vec<&[f32]> = words.iter().filter_map(|&id| vector(id)).collect();
        let query_vectors: Vec<&[f32]> =
            query.iter().filter_map(|w| self.ids.get(w)).filter_map(|&id| vector(id)).collect();
        if turn_vectors.is_empty() || query_vectors.is_empty() {
            return 0.0;
        }
        let best = |q: &[f32]| {
            turn_vectors
                .iter()
                .map(|t| t.iter().zip(q).map(|(a, b)| a * b).sum::<f32>())
                .fold(f32::MIN, f32::max)
        };
        let total: f32 = query_vectors.iter().map(|q| best(q)).sum();
        f64::from(total) / query_vectors.len() as f64
    }

    /// After a load: word vectors are the embedder's, asked for again when needed.
    pub(crate) fn loaded(&mut self) {
        self.vectors = vec![None; self.words.len()];
    }

    /// Forgets the words no turn holds any more, so the words of forgotten episodes (and of
    /// past queries) are kept nowhere.
    pub(crate) fn compact(&mut self) {
        let mut used = vec![false; self.words.len()];
        for &id in self.turns.values().flatten() {
            used[id as usize] = true;
        }
        for (id, used) in used.into_iter().enumerate() {
            if !used && !self.words[id].is_empty() {
                self.ids.remove(&self.words[id]);
                self.words[id] = String::new();
                self.vectors[id] = None;
            }
        }
    }

    fn id(&mut self, word: String) -> u32 {
        if let Some(&id) = self.ids.get(&word) {
            return id;
        }
        let id = u32::try_from(self.words.len()).expect("fewer than 4 billion words");
        self.ids.insert(word.clone(), id);
        self.words.push(word);
        self.vectors.push(None);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unit vectors on a few axes: "puppy" and "dog" share most of theirs.
    fn vector_of(word: &str) -> Vec<f32> {
        let v = match word {
            "puppy" => [0.9, 0.43, 0.0, 0.0],
            "dog" => [1.0, 0.0, 0.0, 0.0],
            "walk" => [0.0, 0.0, 1.0, 0.0],
            _ => [0.0, 0.0, 0.0, 1.0],
        };
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn a_near_word_matches_and_vectors_are_fetched_once() {
        let mut index = WordIndex::default();
        index.add_turn(0, 1, "We walked the dog in the rain");
        index.add_turn(0, 2, "Taxes are due in April");
        index.add_turn(1, 1, "");
        let query = WordIndex::query_words("Where did the puppy go?");
        assert_eq!(query, ["puppy"]);
        let turns = [(0, 1), (0, 2), (1, 1), (9, 9)];
        let missing = index.missing(&turns, &query);
        assert!(missing.contains(&"dog".to_owned()) && missing.contains(&"puppy".to_owned()));
        let vectors = missing.iter().map(|w| vector_of(w)).collect();
        index.set_vectors(&missing, vectors);
        assert!(index.missing(&turns, &query).is_empty(), "kept");
        let dog = index.score(&query, (0, 1));
        assert!(dog > 0.85, "{dog}");
        assert!(index.score(&query, (0, 2)) < 0.1);
        assert_eq!(index.score(&query, (1, 1)), 0.0, "no words");
        assert_eq!(index.score(&query, (9, 9)), 0.0, "unknown turn");
        index.remove_episode(0);
        assert_eq!(index.score(&query, (0, 1)), 0.0, "forgotten");
    }
}
