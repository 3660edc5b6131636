//! One tenant's search index: a table giving every episode a slot; BM25 over episodes, BM25
//! over messages and the message vectors all speak in slots, and the table turns scopes into
//! per-slot visibility. How updates reach it and how it is saved: `update.rs`.

mod open;
mod update;

use update::Staged;
pub(crate) use update::StateSave;

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, MutexGuard, PoisonError},
    time::{Duration, Instant},
};

use epimem_core::Scope;
use epimem_search::SearchError;
use serde::{Deserialize, Serialize};

use crate::{lexical, ragged::Ragged, table, vectors, words};

/// Which slots a scope sees, by slot.
pub(crate) type Visible = Arc<Vec<bool>>;

/// What ranking knows of one message besides its words.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct LineFacts {
    /// Who wrote it (interned, lower case), to favour the lines of a person the query names.
    author: u32,
    /// Whether it ends in a question mark: a line that asks tells less than one that answers.
    asks: bool,
    /// Whether a person wrote it (a user), rather than an assistant, a tool or the system.
    by_person: bool,
    /// Whether a person set a standing rule in it (`states_standing_instruction`).
    instructs: bool,
    /// Whether its episode holds tool output: an agent's lines there are its findings.
    in_work: bool,
}

impl LineFacts {
    /// A message not known (or forgotten): by nobody, asking nothing.
    pub(crate) const BLANK: Self =
        Self { author: u32::MAX, asks: false, by_person: true, instructs: false, in_work: false };
}

#[derive(Debug)]
pub(crate) struct TenantIndex {
    episodes: lexical::Bm25,
    messages: lexical::Bm25,
    /// Everything else, saved beside the BM25 indexes.
    pub(crate) parts: Parts,
    /// The number of the store's last episode change this index reflects.
    pub(crate) generation: u64,
    /// The tenant whose index this is.
    tenant: String,
    /// The embedder its message vectors come from (`none` without one).
    fingerprint: String,
    /// Where the index lives on disk; in memory only when `None`.
    folder: Option<PathBuf>,
    /// Why the saved index could not be used and was started again, if it was.
    pub(crate) restarted: Option<String>,
    /// BM25 documents of episodes added since the last commit.
    staged: Staged,
    /// Whether commits were made since the state was last saved, when that was (or when the
    /// saved state was read) and when the last save that gave way to an update began, how
    /// long encoding it took (which spaces saves: `save_interval`), and when the last commit
    /// was.
    unsaved: bool,
    saved_at: Option<Instant>,
    gave_way_at: Option<Instant>,
    /// The generation the state was last saved (or read) at.
    saved_generation: u64,
    encoding: Duration,
    committed_at: Option<Instant>,
    /// How long the last regrouping of the vectors in a pause took (taken in or dropped).
    regrouping_took: Option<Duration>,
    /// The slots visible in the scope last searched, until an episode is added or forgotten:
    /// a server asks in one scope again and again, and checking every slot costs a
    /// millisecond at a million episodes. Behind a lock of its own, so that searches share the
    /// index.
    visible: Mutex<Option<(Scope, Visible)>>,
}

/// The parts of a tenant's index besides BM25: what is saved in its state file.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Parts {
    pub(crate) table: table::EpisodeTable,
    pub(crate) vectors: vectors::VectorIndex,
    /// What ranking knows of each message, by slot and by seq from the episode's first.
    pub(crate) lines: Ragged<LineFacts>,
    /// Authors as they spoke, lowercased.
    pub(crate) author_ids: HashMap<String, u32>,
    /// The authors each name word can mean ("ana" → "Ana Silva", "Ana Lima").
    pub(crate) names: HashMap<String, Vec<u32>>,
    /// The name words of each author, by id (`name_words`, worked out once per author).
    pub(crate) author_names: Vec<Vec<String>>,
    /// The content words of each message, for soft word matching.
    pub(crate) words: words::WordIndex,
}

/// A lexical (BM25) hit; hits come best first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LexicalHit {
    pub(crate) slot: usize,
    /// The message (message hits only).
    pub(crate) seq: u64,
    /// Its BM25 score (with what a named author adds).
    pub(crate) score: f32,
    /// Its length in words, as BM25 counted them.
    pub(crate) length: u32,
}

impl TenantIndex {
    /// Whether the index is saved on disk (else it lives in this process's memory only).
    pub(crate) fn on_disk(&self) -> bool {
        self.folder.is_some()
    }

    /// Where the episode in `slot` sits in its conversation and in time.
    pub(crate) fn span(&self, slot: usize) -> &table::Span {
        self.parts.table.span(slot)
    }

    /// The live episode holding message `seq` of `slot`'s conversation.
    pub(crate) fn holding(&self, slot: usize, seq: u64) -> Option<usize> {
        self.parts.table.holding(slot, seq)
    }

    /// The episodes just before and just after `slot`'s in its conversation, unless a silence
    /// of more than `max_gap_ms` separates them.
    pub(crate) fn adjacent(&self, slot: usize, max_gap_ms: i64) -> impl Iterator<Item = usize> {
        let e = *self.span(slot);
        let before = e.first_seq.checked_sub(1).filter(|&seq| seq > 0);
        [before, e.last_seq.checked_add(1)]
            .into_iter()
            .flatten()
            .filter_map(move |seq| self.holding(slot, seq))
            .filter(move |&n| self.within_gap(slot, n, max_gap_ms))
    }

    /// Whether at most `max_gap_ms` of silence separate episodes `a` and `b` (an episode is
    /// within any gap of itself).
    pub(crate) fn within_gap(&self, a: usize, b: usize, max_gap_ms: i64) -> bool {
        let (a, b) = (self.span(a), self.span(b));
        let gap = if b.start >= a.end { b.start.0 - a.end.0 } else { a.start.0 - b.end.0 };
        gap <= max_gap_ms
    }

    /// Message vectors held.
    pub(crate) fn vectors_len(&self) -> usize {
        self.parts.vectors.len()
    }

    /// BM25 over episodes (titles, summaries and lines). `None` if the query has no word to
    /// search for.
    pub(crate) fn lexical_episodes(
        &self,
        scope: &Scope,
        query: &str,
        limit: usize,
    ) -> Result<Option<Vec<LexicalHit>>, SearchError> {
        self.lexical(&self.episodes, scope, query, limit, false)
    }

    /// BM25 over episodes by their lines alone: the context of turn recall. Titles and
    /// summaries are drawn from the lines, so they add little there (LoCoMo and BEAM within
    /// their noise either way) and cost a third more (turn recall p99 at a million episodes
    /// 22 → 18-19 ms).
    pub(crate) fn lexical_episode_lines(
        &self,
        scope: &Scope,
        query: &str,
        limit: usize,
    ) -> Result<Option<Vec<LexicalHit>>, SearchError> {
        self.lexical(&self.episodes, scope, query, limit, true)
    }

    /// What a line matching every searched word of `query` would score over single messages
    /// (`TurnTable::lexical_ceiling`).
    pub(crate) fn lexical_ceiling(&self, query: &str) -> Result<f64, SearchError> {
        self.messages.ceiling(query).map_err(index_error)
    }

    /// The open tail's lines scored as this index's own (`Bm25::score_outside`).
    pub(crate) fn score_outside(
        &self,
        query: &str,
        weighed: &str,
        tail: &[epimem_search::TailLine<'_>],
    ) -> Result<epimem_search::TailScores, SearchError> {
        self.messages.score_outside(query, weighed, tail).map_err(index_error)
    }

    /// How many of the proper nouns of `query` no line holds (neither this index's nor one of
    /// `tail`) and no author is called.
    pub(crate) fn unknown_names(
        &self,
        query: &str,
        tail: &[epimem_search::TailLine<'_>],
    ) -> Result<usize, SearchError> {
        let words = epimem_search::proper_nouns_beyond(query, tail);
        self.messages.never_held(&words).map_err(index_error)
    }

    /// The words of `query` this index (and `tail`) never heard, each read as a name it holds.
    pub(crate) fn read_names(
        &self,
        query: &str,
        tail: &[epimem_search::TailLine<'_>],
    ) -> Result<Vec<epimem_core::recall::NameReading>, SearchError> {
        epimem_search::read_names(query, tail, self)
    }

    /// BM25 over single messages. `None` if the query has no word to search for.
    pub(crate) fn lexical_messages(
        &self,
        scope: &Scope,
        query: &str,
        limit: usize,
    ) -> Result<Option<Vec<LexicalHit>>, SearchError> {
        self.lexical(&self.messages, scope, query, limit, false)
    }

    /// The authors the query names (by a word of their name, in any case).
    pub(crate) fn named_authors(&self, query: &str) -> Vec<u32> {
        let mut named: Vec<u32> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter_map(|w| self.parts.names.get(&w.to_lowercase()))
            .flatten()
            .copied()
            .collect();
        named.sort_unstable();
        named.dedup();
        named
    }

    /// Whether message `seq` of `slot` was written by one of `authors`.
    pub(crate) fn written_by(&self, slot: usize, seq: u64, authors: &[u32]) -> bool {
        self.line(slot, seq).is_some_and(|line| authors.contains(&line.author))
    }

    /// Whether message `seq` of `slot` asks a question (ends in a question mark).
    pub(crate) fn asks(&self, slot: usize, seq: u64) -> bool {
        self.line(slot, seq).is_some_and(|line| line.asks)
    }

    /// Whether message `seq` of `slot` was written by a person (a user), rather than an
    /// assistant, a tool or the system.
    pub(crate) fn by_person(&self, slot: usize, seq: u64) -> bool {
        self.line(slot, seq).is_none_or(|line| line.by_person)
    }

    /// Whether message `seq` of `slot` belongs to an episode that holds tool output.
    pub(crate) fn in_work(&self, slot: usize, seq: u64) -> bool {
        self.line(slot, seq).is_some_and(|line| line.in_work)
    }

    /// Whether message `seq` of `slot` is a person's standing rule for later requests.
    pub(crate) fn instructs(&self, slot: usize, seq: u64) -> bool {
        self.line(slot, seq).is_some_and(|line| line.instructs)
    }

    fn line(&self, slot: usize, seq: u64) -> Option<&LineFacts> {
        let at = seq.checked_sub(self.span(slot).first_seq)?;
        self.parts.lines.get(slot).get(at as usize)
    }

    /// The query as worth embedding: without the words that name who spoke (all of it if
    /// nothing else is left).
    pub(crate) fn without_names(&self, text: &str) -> String {
        let kept: Vec<&str> = text
            .split_whitespace()
            .filter(|word| {
                let bare: String =
                    word.chars().filter(|c| c.is_alphanumeric()).collect::<String>().to_lowercase();
                !self.parts.names.contains_key(&bare)
            })
            .collect();
        if kept.iter().any(|w| w.chars().any(char::is_alphanumeric)) {
            kept.join(" ")
        } else {
            text.to_owned()
        }
    }

    /// The slots `scope` may see, for vector searches.
    pub(crate) fn look_in(&self, scope: &Scope) -> Visible {
        if let Some((seen, visible)) = self.cached_visible().as_ref()
            && seen == scope
        {
            return visible.clone();
        }
        // Worked out without the cache's lock: a search in another scope need not wait.
        let visible: Visible = Arc::new(self.parts.table.visible(scope));
        *self.cached_visible() = Some((scope.clone(), visible.clone()));
        visible
    }

    fn cached_visible(&self) -> MutexGuard<'_, Option<(Scope, Visible)>> {
        // A cache: one a panicking thread left is still right, or about to be replaced.
        self.visible.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Forgets which slots a scope sees: episodes were added or forgotten.
    fn scopes_changed(&mut self) {
        *self.visible.get_mut().unwrap_or_else(PoisonError::into_inner) = None;
    }

    fn lexical(
        &self,
        index: &lexical::Bm25,
        scope: &Scope,
        query: &str,
        limit: usize,
        lines_only: bool,
    ) -> Result<Option<Vec<LexicalHit>>, SearchError> {
        let hits = index.search(scope, query, limit, lines_only).map_err(index_error)?;
        // A slot the table does not have could only come from a damaged state: never used.
        let slots = self.parts.table.slots();
        Ok(hits.map(|hits| hits.into_iter().filter(|hit| hit.slot < slots).collect()))
    }
}

impl epimem_search::HeldNames for TenantIndex {
    fn speakers(&self) -> Vec<String> {
        self.parts.names.keys().cloned().collect()
    }

    fn is_speaker(&self, word: &str) -> bool {
        self.parts.names.contains_key(word)
    }

    fn holds(&self, word: &str) -> Result<bool, SearchError> {
        Ok(self.messages.never_held(&[word.to_owned()]).map_err(index_error)? == 0)
    }

    fn near(&self, word: &str) -> Result<Vec<String>, SearchError> {
        self.messages.near_terms(word).map_err(index_error)
    }

    fn stored(&self, word: &str) -> String {
        self.messages.stored(word)
    }
}

impl Drop for TenantIndex {
    fn drop(&mut self) {
        // A state that cannot be saved here is found out of step on the next open, and the
        // index is rebuilt from the store: nothing is lost but time.
        let _ = self.save();
    }
}

pub(crate) fn io_error(path: &Path, e: std::io::Error) -> SearchError {
    SearchError::Index(format!("{}: {e}", path.display()))
}

pub(crate) fn index_error(e: tantivy::TantivyError) -> SearchError {
    SearchError::Index(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vectors::VectorConfig;
    use epimem_core::Role;
    use epimem_search::{IndexedEpisode, IndexedLine};

    #[test]
    fn names_of_authors_are_not_words_to_embed() {
        let episode = table::tests::episode("t", "c", None, 0);
        let lines: Vec<IndexedLine<'_>> = ["Caroline", "Ana Silva", "user", "Assistant"]
            .into_iter()
            .enumerate()
            .map(|(i, author)| IndexedLine {
                seq: i as u64 + 1,
                role: Role::User,
                author,
                content: "I adopted a puppy",
                vector: None,
            })
            .collect();
        let mut index = TenantIndex::open(None, "t", "none", VectorConfig::default()).unwrap();
        index.add(&[IndexedEpisode { episode: &episode, lines }]);
        index.pending(None).commit(false).unwrap();
        assert_eq!(index.without_names("Where did Caroline go?"), "Where did go?");
        assert_eq!(index.without_names("caroline's puppy"), "caroline's puppy");
        assert_eq!(index.without_names("Caroline?"), "Caroline?", "nothing else left");
        assert_eq!(index.without_names("What did Silva adopt?"), "What did adopt?");
        // Roles are not names: the words stay in the query and name nobody.
        assert_eq!(
            index.without_names("the user asked the assistant"),
            "the user asked the assistant"
        );
        assert!(index.named_authors("what did the user ask the assistant").is_empty());
        assert_eq!(index.named_authors("Ana's dog").len(), 1, "a possessive names her");
        assert_eq!(index.named_authors("what did Ana Silva say"), index.named_authors("Silva"));
    }
}
