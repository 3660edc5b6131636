//! The open tail in recall: messages stored and not yet closed into an episode, found as soon
//! as they are stored. They are read from the store before the search index is caught up, so
//! a message closed into an episode meanwhile is in one or the other (or both, and then told
//! once: a context block quotes the episode's line), and embedded once per process.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
};

use epimem_core::{ConversationKey, Episode, EpisodeId, Message, Scope};
use epimem_search::TailLine;
use epimem_store::Store;

use crate::{Engine, EngineError};

/// The most messages of the open tail one recall searches: the newest of its scope.
pub(crate) const TAIL_LINES: usize = 2_000;

/// Vectors of tail messages kept by this process, by what they were made from.
const KEPT_VECTORS: usize = 20_000;

/// The open tail a recall searches: each message with its conversation, and its vector.
#[derive(Debug, Default)]
pub(crate) struct OpenTail {
    pub(crate) messages: Vec<(ConversationKey, Message)>,
    vectors: Vec<Option<Arc<[f32]>>>,
}

impl OpenTail {
    /// The lines as a search index takes them.
    pub(crate) fn lines(&self) -> Vec<TailLine<'_>> {
        self.messages
            .iter()
            .zip(&self.vectors)
            .map(|((conversation, m), vector)| TailLine {
                conversation,
                seq: m.seq,
                role: m.role,
                author: m.author(),
                content: &m.content,
                at: m.timestamp,
                vector: vector.as_deref(),
            })
            .collect()
    }

    /// The tail of `id`'s conversation as an episode to quote its lines under, and its
    /// messages; `None` when `id` is not an open tail this recall read.
    pub(crate) fn episode(&self, id: &EpisodeId) -> Option<(Episode, Vec<Message>)> {
        let mut messages: Vec<Message> = Vec::new();
        let mut conversation = None;
        for (key, m) in &self.messages {
            if EpisodeId::open_tail(key) == *id {
                conversation.get_or_insert(key);
                messages.push(m.clone());
            }
        }
        let conversation = conversation?.clone();
        messages.sort_by_key(|m| m.seq);
        let (first, last) = (messages.first()?, messages.last()?);
        let episode = Episode {
            id: id.clone(),
            conversation,
            user: None,
            agent: None,
            first_seq: first.seq,
            last_seq: last.seq,
            context_first_seq: None,
            start: first.timestamp,
            end: last.timestamp,
            title: String::new(),
            summary: String::new(),
            keywords: Vec::new(),
            surprise: 0.0,
            boundary_reason: epimem_core::BoundaryReason::Flush,
            fsrs: Default::default(),
            told_by: Default::default(),
            told_note: None,
        };
        Some((episode, messages))
    }
}

/// Vectors of tail messages this process made, so a tail searched again is not embedded again.
#[derive(Debug, Default)]
pub(crate) struct TailVectors(Mutex<HashMap<u64, Arc<[f32]>>>);

impl<S: Store> Engine<S> {
    /// The open tail of `scope`, newest first, embedded (with the engine's embedder).
    pub(crate) fn open_tail(&self, scope: &Scope) -> Result<OpenTail, EngineError> {
        let messages = self.store.pending_messages(scope, TAIL_LINES)?;
        let Some(embedder) = &self.embedder else {
            let vectors = vec![None; messages.len()];
            return Ok(OpenTail { messages, vectors });
        };
        let fingerprint = embedder.fingerprint();
        let made_of = |(key, m): &(ConversationKey, Message)| {
            let mut hasher = xxhash_rust::xxh3::Xxh3::new();
            for part in [fingerprint, &key.tenant, &key.conversation, &m.content] {
                hasher.update(&(part.len() as u64).to_le_bytes());
                hasher.update(part.as_bytes());
            }
            hasher.update(&m.seq.to_le_bytes());
            hasher.digest()
        };
        let keys: Vec<u64> = messages.iter().map(made_of).collect();
        let missing: Vec<usize> = {
            let kept = self.tail_vectors.0.lock().unwrap_or_else(PoisonError::into_inner);
            (0..keys.len()).filter(|&i| !kept.contains_key(&keys[i])).collect()
        };
        if !missing.is_empty() {
            let texts: Vec<&str> =
                missing.iter().map(|&i| messages[i].1.content.as_str()).collect();
            let made = embedder.embed(&texts)?;
            let mut kept = self.tail_vectors.0.lock().unwrap_or_else(PoisonError::into_inner);
            if kept.len() + made.len() > KEPT_VECTORS {
                kept.clear();
            }
            for (&i, vector) in missing.iter().zip(made) {
                kept.insert(keys[i], vector.into());
            }
        }
        let kept = self.tail_vectors.0.lock().unwrap_or_else(PoisonError::into_inner);
        let vectors = keys.iter().map(|k| kept.get(k).cloned()).collect();
        Ok(OpenTail { messages, vectors })
    }
}
