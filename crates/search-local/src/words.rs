//! Soft word matching for turn-level recall: each content word of the query is matched to the
//! closest word of a turn by their embeddings, and the turn scores the mean of those
//! similarities (MaxSim over words). It finds "puppy" in a line about a "dog", which BM25
//! cannot, without the blur of averaging a whole line into one vector.
//!
//! Word vectors come from the embedder, lazily: the words of the turns being ranked that have
//! none yet are embedded in one batch and kept, beside the lists, by the searches that need
//! them (the lists themselves change only with the episodes).

use std::{
    collections::HashMap,
    sync::{Mutex, MutexGuard, PoisonError},
};

use epimem_core::telling::keyword_list;
use serde::{Deserialize, Serialize};

use crate::ragged::Ragged;

/// A word id standing for a word of a forgotten turn.
const GONE: u32 = u32::MAX;

/// Vectors of query words no turn holds kept at most: a server is asked new words forever.
const QUERY_WORDS_KEPT: usize = 10_000;

#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct WordIndex {
    ids: HashMap<String, u32>,
    words: Vec<String>,
    /// Word vectors are the embedder's, asked for again after a load. Behind a lock of their
    /// own: searches add to them side by side, and beside a save reading the lists.
    #[serde(skip)]
    vectors: Mutex<WordVectors>,
    /// Each slot's turns (their messages' seqs) and each turn's content words, turns numbered
    /// across slots: flat lists, so a saved index reads back as a few long arrays.
    turns: Ragged<u64>,
    turn_words: Ragged<u32>,
}

/// The word vectors known so far.
#[derive(Debug, Default)]
struct WordVectors {
    /// Of the turns' words, by id.
    by_id: Vec<Option<Vec<f32>>>,
    /// Of query words no turn holds.
    query: HashMap<String, Vec<f32>>,
}

impl WordVectors {
    fn of_id(&self, id: u32) -> Option<&[f32]> {
        self.by_id.get(id as usize)?.as_deref()
    }
}

impl WordIndex {
    /// Adds a turn of `slot`, the newest episode (slots come in order).
    pub(crate) fn add_turn(&mut self, slot: usize, seq: u64, text: &str) {
        let ids: Vec<u32> = keyword_list(text).into_iter().map(|w| self.id(w)).collect();
        self.turn_words.push_list(&ids);
        self.turns.push(slot, seq);
    }

    /// The words of a forgotten episode's turns are gone at once; the room they took is
    /// given back once it is most of the lists ([`WordIndex::compact`]).
    pub(crate) fn remove_episode(&mut self, slot: usize) {
        for turn in self.turns.range(slot) {
            self.turn_words.get_mut(turn).fill(GONE);
        }
    }

    /// Turns of the slots `live` says are.
    pub(crate) fn turns_of_live(&self, live: impl Fn(usize) -> bool) -> u64 {
        (0..self.turns.slots())
            .filter(|&slot| live(slot))
            .map(|s| self.turns.get(s).len() as u64)
            .sum()
    }

    /// Slots with turns (up to the last).
    pub(crate) fn slots(&self) -> usize {
        self.turns.slots()
    }

    /// The words of turn (slot, seq), if it is known.
    fn turn(&self, (slot, seq): (usize, u64)) -> Option<&[u32]> {
        let at = self.turns.get(slot).iter().position(|&s| s == seq)?;
        Some(self.turn_words.get(self.turns.range(slot).start + at))
    }

    /// The content words of a query.
    pub(crate) fn query_words(text: &str) -> Vec<String> {
        keyword_list(text)
    }

    fn vectors(&self) -> MutexGuard<'_, WordVectors> {
        // A cache: what a panicking search left in it is still right.
        self.vectors.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Words of `turns` and `query` that have no vector yet, each once.
    pub(crate) fn missing(&self, turns: &[(usize, u64)], query: &[String]) -> Vec<String> {
        let vectors = self.vectors();
        let mut seen = std::collections::HashSet::new();
        let mut missing: Vec<String> = turns
            .iter()
            .filter_map(|&t| self.turn(t))
            .flatten()
            .filter(|&&id| id != GONE && vectors.of_id(id).is_none() && seen.insert(id))
            .map(|&id| self.words[id as usize].clone())
            .collect();
        for word in query {
            let lacks = match self.ids.get(word) {
                Some(&id) => vectors.of_id(id).is_none() && seen.insert(id),
                None => !vectors.query.contains_key(word) && !missing.contains(word),
            };
            if lacks {
                missing.push(word.clone());
            }
        }
        missing
    }

    /// Keeps the (unit) vectors of `words`.
    pub(crate) fn set_vectors(&self, words: &[String], vectors: Vec<Vec<f32>>) {
        let mut known = self.vectors();
        for (word, vector) in words.iter().zip(vectors) {
            match self.ids.get(word) {
                Some(&id) => {
                    let id = id as usize;
                    if known.by_id.len() <= id {
                        known.by_id.resize(id + 1, None);
                    }
                    known.by_id[id] = Some(vector);
                }
                None => {
                    if known.query.len() >= QUERY_WORDS_KEPT {
                        known.query.clear();
                    }
                    known.query.insert(word.clone(), vector);
                }
            }
        }
    }

    /// Mean over the query's words of the best cosine similarity to a word of the turn; 0 for
    /// a turn without words or a query whose words have no vectors.
    #[cfg(test)]
    pub(crate) fn score(&self, query: &[String], turn: (usize, u64)) -> f64 {
        self.scores(query, &[turn])[0]
    }

    /// [`WordIndex::score`] of each of `turns`, each word's similarities to the query
    /// computed once: a word is in many of the turns ranked together.
    pub(crate) fn scores(&self, query: &[String], turns: &[(usize, u64)]) -> Vec<f64> {
        let known = self.vectors();
        let vector = |id: u32| known.of_id(id);
        let query_vectors: Vec<&[f32]> = query
            .iter()
            .filter_map(|w| match self.ids.get(w) {
                Some(&id) => vector(id),
                None => known.query.get(w).map(Vec::as_slice),
            })
            .collect();
        // Each word's similarities to the query, computed once for all the turns.
        let mut similarities: HashMap<u32, Vec<f32>> = HashMap::new();
        turns
            .iter()
            .map(|&turn| {
                let Some(words) = self.turn(turn) else { return 0.0 };
                for &id in words {
                    if let Some(v) = vector(id) {
                        similarities.entry(id).or_insert_with(|| {
                            epimem_core::recall::similarities(v, &query_vectors)
                        });
                    }
                }
                let line_words = words.iter().filter_map(|id| similarities.get(id));
                epimem_core::recall::max_sim(query_vectors.len(), line_words)
            })
            .collect()
    }

    /// Also checks that the lists hold together (a saved file read back may be damaged).
    pub(crate) fn loaded(&mut self) -> Result<(), String> {
        self.turns.check()?;
        self.turn_words.check()?;
        let words = self.words.len() as u32;
        let whole = self.turn_words.slots() == self.turns.items().len()
            && self.turn_words.items().iter().all(|&id| id < words || id == GONE)
            && self.ids.values().all(|&id| id < words);
        if !whole {
            return Err("word lists out of step".into());
        }
        Ok(())
    }

    /// Forgets the words no turn holds any more, so the words of forgotten episodes (and of
    /// past queries, with their vectors) are kept nowhere.
    pub(crate) fn compact(&mut self) {
        self.shrink();
        let mut used = vec![false; self.words.len()];
        for &id in self.turn_words.items().iter().filter(|&&id| id != GONE) {
            used[id as usize] = true;
        }
        let known = self.vectors.get_mut().unwrap_or_else(PoisonError::into_inner);
        known.query.clear();
        for (id, used) in used.into_iter().enumerate() {
            if !used && !self.words[id].is_empty() {
                self.ids.remove(&self.words[id]);
                self.words[id] = String::new();
                if let Some(vector) = known.by_id.get_mut(id) {
                    *vector = None;
                }
            }
        }
    }

    /// The lists made again without forgotten turns' words, once those are most of them.
    fn shrink(&mut self) {
        let all = self.turn_words.items();
        if all.iter().filter(|&&id| id == GONE).count() * 2 <= all.len() {
            return;
        }
        let (mut turns, mut turn_words) = (Ragged::default(), Ragged::default());
        for slot in 0..self.turns.slots() {
            for (turn, &seq) in self.turns.range(slot).zip(self.turns.get(slot)) {
                let words = self.turn_words.get(turn);
                if words.first() != Some(&GONE) {
                    turn_words.push_list(words);
                    turns.push(slot, seq);
                }
            }
        }
        (self.turns, self.turn_words) = (turns, turn_words);
    }

    fn id(&mut self, word: String) -> u32 {
        if let Some(&id) = self.ids.get(&word) {
            return id;
        }
        let id = u32::try_from(self.words.len()).expect("fewer than 4 billion words");
        self.ids.insert(word.clone(), id);
        self.words.push(word);
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
        assert!(!index.ids.contains_key("puppy"), "a query's word is not listed, nor saved");
        let dog = index.score(&query, (0, 1));
        assert!(dog > 0.85, "{dog}");
        assert!(index.score(&query, (0, 2)) < 0.1);
        assert_eq!(index.score(&query, (1, 1)), 0.0, "no words");
        assert_eq!(index.score(&query, (9, 9)), 0.0, "unknown turn");
        index.remove_episode(0);
        assert_eq!(index.score(&query, (0, 1)), 0.0, "forgotten");
        index.compact();
        assert_eq!(index.missing(&[], &query), ["puppy"], "past queries' vectors go too");
    }

    #[test]
    fn forgotten_turns_leave_the_lists_once_they_are_most_of_them() {
        let mut index = WordIndex::default();
        index.add_turn(0, 1, "xylophone lessons");
        index.add_turn(1, 4, "marimba practice daily");
        index.add_turn(3, 2, "compost heap");
        index.add_turn(3, 3, "garden compost");
        index.remove_episode(0);
        index.compact();
        assert_eq!(index.turn_words.items().len(), 9, "under half forgotten: kept in place");
        assert!(!index.ids.contains_key("xylophone"), "its words are gone all the same");
        index.remove_episode(1);
        index.compact();
        assert_eq!(index.turn_words.items().len(), 4);
        assert!(!index.ids.contains_key("marimba"));
        assert_eq!(index.turn((0, 1)), None, "dropped");
        assert_eq!(index.turn((2, 1)), None, "a slot without turns");
        let words = |turn| -> Vec<&str> {
            index.turn(turn).unwrap().iter().map(|&id| index.words[id as usize].as_str()).collect()
        };
        assert_eq!(words((3, 2)), ["compost", "heap"]);
        assert_eq!(words((3, 3)), ["garden", "compost"]);
    }
}
