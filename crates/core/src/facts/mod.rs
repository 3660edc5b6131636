//! Facts distilled from episodes: what stays true beyond the events that told it. Facts carry
//! their provenance (the episodes they came from) and their validity in conversation time;
//! consolidation invalidates a fact, it never deletes one (only forgetting its episodes does).

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_128;

use crate::{ConversationKey, EpisodeId, Timestamp};

/// A deterministic fact id (see [`fact_id`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FactId(pub String);

impl std::fmt::Display for FactId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The id of the `n`th fact a consolidation of `conversation` up to message `upto_seq`
/// writes, so a retried job writes the same rows.
pub fn fact_id(conversation: &ConversationKey, upto_seq: u64, n: usize) -> FactId {
    let mut buf = Vec::with_capacity(64);
    for part in [conversation.tenant.as_bytes(), conversation.conversation.as_bytes()] {
        buf.extend_from_slice(&(part.len() as u64).to_le_bytes());
        buf.extend_from_slice(part);
    }
    buf.extend_from_slice(&upto_seq.to_le_bytes());
    buf.extend_from_slice(&(n as u64).to_le_bytes());
    FactId(format!("fact_{:032x}", xxh3_128(&buf)))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    pub id: FactId,
    pub conversation: ConversationKey,
    pub text: String,
    /// When it became true: the end of the latest episode it came from (conversation time).
    pub valid_at: Timestamp,
    /// When a later episode said otherwise; `None` while it holds.
    pub invalid_at: Option<Timestamp>,
    /// The episodes it came from or that confirmed it.
    pub sources: Vec<EpisodeId>,
    /// How often later episodes confirmed it.
    pub reinforced: u32,
}

impl Fact {
    pub fn is_valid(&self) -> bool {
        self.invalid_at.is_none()
    }
}

/// What a consolidation does to the facts, applied in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub enum FactChange {
    Insert(Fact),
    /// Confirmed again by these episodes.
    Reinforce {
        id: FactId,
        sources: Vec<EpisodeId>,
    },
    /// No longer true from `at` on.
    Invalidate {
        id: FactId,
        at: Timestamp,
    },
}

/// What the model proposed for one fact, by index into the facts and episodes it was shown.
#[derive(Debug, Clone, PartialEq)]
pub enum FactAction {
    New {
        text: String,
        episodes: Vec<usize>,
    },
    Reinforce {
        fact: usize,
        episodes: Vec<usize>,
    },
    /// The fact changed: the old one is invalidated and the new text inserted.
    Update {
        fact: usize,
        text: String,
        episodes: Vec<usize>,
    },
    Invalidate {
        fact: usize,
        episodes: Vec<usize>,
    },
}

/// An episode a consolidation read.
#[derive(Debug, Clone, Copy)]
pub struct SourceEpisode<'a> {
    pub id: &'a EpisodeId,
    pub end: Timestamp,
}

/// Facts whose vectors are at least this alike say the same thing: the newer confirms the older.
pub const SAME_FACT_COSINE: f32 = 0.95;

/// The changes `actions` make. A new fact that says what a valid fact (or an earlier new one)
/// already says, by `SAME_FACT_COSINE` on their unit vectors, confirms it instead of being
/// added; `new_vectors[i]` is the vector of action `i`'s text (if it has one and an embedder
/// is configured), `fact_vectors[j]` that of `facts[j]`.
pub fn plan_fact_changes(
    actions: &[FactAction],
    facts: &[Fact],
    fact_vectors: &[Option<Vec<f32>>],
    episodes: &[SourceEpisode<'_>],
    new_vectors: &[Option<Vec<f32>>],
    conversation: &ConversationKey,
    upto_seq: u64,
) -> Vec<FactChange> {
    let sources = |idx: &[usize]| -> (Vec<EpisodeId>, Timestamp) {
        let ids = idx.iter().filter_map(|&i| episodes.get(i)).map(|e| e.id.clone()).collect();
        let end = idx.iter().filter_map(|&i| episodes.get(i)).map(|e| e.end).max();
        (ids, end.unwrap_or(Timestamp(0)))
    };
    let mut changes: Vec<FactChange> = Vec::new();
    // Facts inserted by this plan, with their vectors, to merge near-duplicates among them.
    let mut inserted: Vec<(FactId, Option<&[f32]>)> = Vec::new();
    let mut insert = |changes: &mut Vec<FactChange>, i: usize, text: &str, idx: &[usize]| {
        let (ids, at) = sources(idx);
        let vector = new_vectors.get(i).and_then(Option::as_deref);
        let same_valid = facts
            .iter()
            .zip(fact_vectors)
            .find(|(f, v)| f.is_valid() && alike(vector, v.as_deref()));
        let same_new = inserted.iter().find(|(_, v)| alike(vector, *v));
        let existing =
            same_valid.map(|(f, _)| f.id.clone()).or_else(|| same_new.map(|(id, _)| id.clone()));
        match existing {
            Some(id) => changes.push(FactChange::Reinforce { id, sources: ids }),
            None => {
                let id = fact_id(conversation, upto_seq, i);
                inserted.push((id.clone(), vector));
                changes.push(FactChange::Insert(Fact {
                    id,
                    conversation: conversation.clone(),
                    text: text.to_owned(),
                    valid_at: at,
                    invalid_at: None,
                    sources: ids,
                    reinforced: 0,
                }));
            }
        }
    };
    for (i, action) in actions.iter().enumerate() {
        match action {
            FactAction::New { text, episodes } => insert(&mut changes, i, text, episodes),
            FactAction::Reinforce { fact, episodes } => {
                let id = facts[*fact].id.clone();
                changes.push(FactChange::Reinforce { id, sources: sources(episodes).0 });
            }
            FactAction::Update { fact, text, episodes } => {
                let at = sources(episodes).1;
                changes.push(FactChange::Invalidate { id: facts[*fact].id.clone(), at });
                insert(&mut changes, i, text, episodes);
            }
            FactAction::Invalidate { fact, episodes } => {
                let at = sources(episodes).1;
                changes.push(FactChange::Invalidate { id: facts[*fact].id.clone(), at });
            }
        }
    }
    changes
}

/// A fact recalled for a query, and how well it matched.
#[derive(Debug, Clone, PartialEq)]
pub struct FactScore {
    /// Index into the facts ranked.
    pub index: usize,
    pub score: f64,
    /// Cosine of the query's vector and the fact's, when both have one.
    pub similarity: Option<f64>,
    /// Share of the query's content words the fact holds.
    pub word_overlap: f64,
}

/// Facts below this similarity to the query, sharing none of its words, are not recalled: a
/// fact is handed to an agent only when it bears on what was asked.
pub const FACT_MIN_SIMILARITY: f64 = 0.5;

/// The facts that bear on a query, best first, at most `limit`: by the cosine of their vectors
/// (when both have one) plus the share of the query's content words they hold. A fact is
/// kept if it shares a content word with the query or is at least `FACT_MIN_SIMILARITY` alike.
pub fn rank_facts(
    query: &str,
    query_vector: Option<&[f32]>,
    facts: &[(&Fact, Option<&[f32]>)],
    limit: usize,
) -> Vec<FactScore> {
    let words = crate::telling::KeywordBag::from_text(query);
    let mut scored: Vec<FactScore> = facts
        .iter()
        .enumerate()
        .filter_map(|(index, (fact, vector))| {
            let similarity = match (query_vector, vector) {
                (Some(q), Some(v)) if q.len() == v.len() => {
                    Some(f64::from(q.iter().zip(*v).map(|(a, b)| a * b).sum::<f32>()))
                }
                _ => None,
            };
            let shared = words.intersection_len(&crate::telling::KeywordBag::from_text(&fact.text));
            let word_overlap =
                if words.is_empty() { 0.0 } else { shared as f64 / words.len() as f64 };
            let relevant = shared > 0 || similarity.is_some_and(|s| s >= FACT_MIN_SIMILARITY);
            relevant.then(|| FactScore {
                index,
                score: similarity.unwrap_or(0.0).max(0.0) + word_overlap,
                similarity,
                word_overlap,
            })
        })
        .collect();
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
    scored.truncate(limit);
    scored
}

fn alike(a: Option<&[f32]>, b: Option<&[f32]>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) if a.len() == b.len() => {
            a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>() >= SAME_FACT_COSINE
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests;
