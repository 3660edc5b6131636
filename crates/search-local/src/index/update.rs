//! How updates reach a tenant's index and how it is saved. Adding stages every part at once
//! and leaves the BM25 documents to a [`PendingCommit`], which the caller makes without the
//! index's lock; forgetting commits at once; the state is taken out as a [`StateSave`],
//! encoded into its file while searches share the index, and its vectors written and the
//! state put in place without the lock. A save made once updates pause gives way to the next
//! update: it stops, and is made again at the next pause.

use std::{
    path::PathBuf,
    time::{Duration, Instant},
};

use epimem_core::{Episode, EpisodeId, Role, name_words, telling::standing_instructions};
use epimem_search::{IndexedEpisode, SearchError};
use tantivy::TantivyDocument;

use super::{LineFacts, TenantIndex, index_error, io_error};
use crate::{
    lexical, state, vector_file,
    vector_file::{VectorSave, Written},
    vectors::{Grouped, Grouping, Regroup, SaveMark},
};

/// The state is saved once updates pause for [`QUIET`] ([`TenantIndex::settled`]), after a
/// forget, when the index is dropped, and in a burst of updates that goes on, at most this
/// often. The BM25 indexes commit every update; a state behind them has them taken back to it
/// on the next open, which catches up from there: a crash costs the changes since the last
/// save, never a wrong answer.
const SAVE_EVERY: Duration = Duration::from_secs(10);

/// Encoding the state takes a core for a while (1.5-2 s for a million episodes' 600 MB beside
/// a server's load), so saves come further apart as that grows: at most this share of the
/// time goes to it.
const SAVE_SHARE: u32 = 20;

/// Updates that come within this long of each other are a burst, and their commits do not
/// save the state: a crash in a burst finds the state behind whenever it was saved (and
/// catches up from it), so saving then only costs time. The state is saved once the burst is
/// over ([`TenantIndex::settled`]), so a crash while nothing happens costs nothing.
pub(crate) const QUIET: Duration = Duration::from_secs(1);

/// A burst that does not stop (a server under steady load) still saves the state once this
/// many of [`save_interval`] have passed since the last save, in the update's own time: what
/// a crash, or every command run beside the server, catches up from stays a few minutes of
/// changes, not hours.
const BURST_SAVE_INTERVALS: u32 = 10;

/// How long after a save a burst's commit may save again ([`BURST_SAVE_INTERVALS`] of it),
/// when encoding the state took `encoding`.
fn save_interval(encoding: Duration) -> Duration {
    SAVE_EVERY.max(encoding.saturating_mul(SAVE_SHARE))
}

/// What catching up one change of the store's log takes when an index is opened (0.07-0.16 ms
/// on a 2-core machine, up to a million episodes).
const CATCH_UP_PER_CHANGE: Duration = Duration::from_micros(100);

/// A pause saves a large state only once catching up the changes made since the last save
/// would take at least this share of what encoding it takes: a few changes are cheaper to
/// catch up again on the next open (or in a process beside) than to save 600 MB for, at a
/// million episodes (1,000 changes there, a tenth of a second of catching up).
const CATCH_UP_SHARE: u32 = 20;

/// A state that encodes within this long is saved at any pause, for one change: small.
const CHEAP_SAVE: Duration = Duration::from_millis(50);

/// Whether a pause at `now` saves what commits left unsaved: the last commit was at least
/// [`QUIET`] ago, the last save (or the last that gave way) began at least [`SAVE_SHARE`]
/// times what `encoding` the state took ago, and catching up the `unsaved` changes would take
/// long enough ([`CATCH_UP_SHARE`]).
fn pause_save_due(
    now: Instant,
    committed_at: Option<Instant>,
    last_save: Option<Instant>,
    encoding: Duration,
    unsaved: u64,
) -> bool {
    let since = |at: Instant| now.saturating_duration_since(at);
    let catching_up = CATCH_UP_PER_CHANGE.saturating_mul(unsaved.min(u32::MAX as u64) as u32);
    committed_at.is_some_and(|at| since(at) >= QUIET)
        && last_save.is_none_or(|at| since(at) >= encoding.saturating_mul(SAVE_SHARE))
        && (encoding <= CHEAP_SAVE || catching_up.saturating_mul(CATCH_UP_SHARE) >= encoding)
}

/// Whether a pause has lasted long enough to regroup the vectors in: any pause the first time,
/// then twice what the last regrouping took since the last commit.
fn pause_long_enough(now: Instant, committed_at: Option<Instant>, took: Option<Duration>) -> bool {
    match (committed_at, took) {
        (Some(at), Some(took)) => now.saturating_duration_since(at) >= took.saturating_mul(2),
        _ => true,
    }
}

/// Whether a commit at `now` saves the state, in the update's own time: never at generation 0
/// (a build under way, whose state an open would start again whenever it was saved); the first
/// one of an index never saved does (a build just done: other processes then read it rather
/// than build a copy); later ones only in a burst that has gone on for [`BURST_SAVE_INTERVALS`]
/// intervals since the last save. Otherwise the state waits for a pause.
fn save_due(
    now: Instant,
    generation: u64,
    saved_at: Option<Instant>,
    save_every: Duration,
) -> bool {
    if generation == 0 {
        return false;
    }
    let Some(saved_at) = saved_at else { return true };
    now.saturating_duration_since(saved_at) >= save_every.saturating_mul(BURST_SAVE_INTERVALS)
}

/// A tenant's state to write ([`TenantIndex::take_save`]), encoded from the index by
/// [`StateSave::encode`] while nothing updates it.
pub(crate) struct StateSave {
    folder: PathBuf,
    /// The vectors' file, when they changed: written first, since the state names it. Shared
    /// with the index: copying 512 MB under its lock at every save (a million episodes) held
    /// searches up for as long.
    vectors: Option<VectorSave>,
    /// The vectors' file the state names (every other is deleted once it is written).
    keep: Option<String>,
    /// The generation the save was taken at: the state encoded must be of the same.
    generation: u64,
    /// How long encoding the state took, once it is encoded.
    encoding: Option<Duration>,
    /// What taking the save changed in the index, put back if it gives way.
    taken_from: TakenFrom,
}

/// What [`TenantIndex::take_save`] changes in the index.
struct TakenFrom {
    saved_at: Option<Instant>,
    vectors: SaveMark,
}

/// What a [`StateSave`] did ([`TenantIndex::saved`]).
pub(crate) struct SaveDone {
    /// The vectors it wrote, to read from their file after.
    vectors: Option<Written>,
    encoding: Duration,
    generation: u64,
}

impl StateSave {
    /// Encodes the state of `index`, which must not have changed since the save was taken,
    /// into a file beside the one saved before. Only reads it: searches share the index
    /// meanwhile (at a million episodes this takes a second or more, which searches used to
    /// wait for). Stops as soon as `give_way` says so: false then, and what it wrote is left
    /// for [`TenantIndex::gave_way`] to delete.
    pub(crate) fn encode(
        &mut self,
        index: &TenantIndex,
        give_way: &dyn Fn() -> bool,
    ) -> Result<bool, SearchError> {
        if index.generation != self.generation {
            return Err(SearchError::Index(format!(
                "the index moved from generation {} to {} while its state was saved",
                self.generation, index.generation
            )));
        }
        let started = Instant::now();
        let saved = state::SavedRef {
            tenant: &index.tenant,
            fingerprint: &index.fingerprint,
            generation: index.generation,
            parts: &index.parts,
        };
        let written = state::write_temporary(&self.folder, saved, give_way)
            .map_err(|e| io_error(&self.folder, e))?;
        if written {
            self.encoding = Some(started.elapsed());
        }
        Ok(written)
    }

    /// Writes the vectors, then puts the [`encode`](StateSave::encode)d state, which names
    /// them, in place.
    pub(crate) fn write(self) -> Result<SaveDone, SearchError> {
        let folder = &self.folder;
        // Never a temporary file some other save left.
        let Some(encoding) = self.encoding else {
            return Err(SearchError::Index("a state saved before it was encoded".into()));
        };
        let written = match &self.vectors {
            Some(vectors) => Some(vectors.write(folder).map_err(|e| io_error(folder, e))?),
            None => None,
        };
        state::put_in_place(folder).map_err(|e| io_error(folder, e))?;
        vector_file::remove_others(folder, self.keep.as_deref())
            .map_err(|e| io_error(folder, e))?;
        Ok(SaveDone { vectors: written, encoding, generation: self.generation })
    }
}

/// BM25 documents of episodes added, not yet handed to the writers.
#[derive(Default)]
pub(super) struct Staged {
    episodes: Vec<TantivyDocument>,
    messages: Vec<TantivyDocument>,
}

impl std::fmt::Debug for Staged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Staged")
            .field("episodes", &self.episodes.len())
            .field("messages", &self.messages.len())
            .finish()
    }
}

/// The BM25 writes of an update ([`TenantIndex::pending`]): each index's documents and commit.
pub(crate) struct PendingCommit {
    episodes: (lexical::Committer, Vec<TantivyDocument>),
    messages: (lexical::Committer, Vec<TantivyDocument>),
    generation: u64,
}

impl PendingCommit {
    /// Commits both BM25 indexes; with `compact`, merged into one segment each, so removed
    /// documents leave their files.
    pub(crate) fn commit(self, compact: bool) -> Result<(), SearchError> {
        let (episodes, documents) = self.episodes;
        episodes.commit(documents, self.generation, compact).map_err(index_error)?;
        let (messages, documents) = self.messages;
        messages.commit(documents, self.generation, compact).map_err(index_error)
    }
}

impl TenantIndex {
    /// Brings the memory strength of the episodes here up to `episodes`'.
    pub(crate) fn restate(&mut self, episodes: &[Episode]) {
        for episode in episodes {
            self.unsaved |= self.parts.table.restate(episode);
        }
    }

    /// Adds closed episodes with their messages (an episode already in is left as it is):
    /// every part has them at once, BM25 once they are committed ([`TenantIndex::pending`]).
    pub(crate) fn add(&mut self, episodes: &[IndexedEpisode<'_>]) {
        for e in episodes {
            self.stage_episode(e);
        }
    }

    /// Forgets episodes in every part (BM25 after the next commit); whether any was here.
    fn remove(&mut self, ids: &[EpisodeId]) -> bool {
        let mut removed = false;
        for id in ids {
            let Some(slot) = self.parts.table.remove(id) else { continue };
            self.scopes_changed();
            self.episodes.remove(slot);
            self.messages.remove(slot);
            self.parts.vectors.remove(slot);
            self.parts.words.remove_episode(slot);
            self.parts.lines.get_mut(slot).fill(LineFacts::BLANK);
            removed = true;
        }
        removed
    }

    fn stage_episode(&mut self, indexed: &IndexedEpisode<'_>) {
        let (episode, lines) = (indexed.episode, &indexed.lines);
        if self.parts.table.contains(&episode.id) {
            return; // indexed once, its vectors in one run
        }
        let slot = self.parts.table.insert(episode);
        self.scopes_changed();
        let conversation = self.parts.table.conversation_of(slot);
        let mut body = String::new();
        let mut authors: Vec<String> = Vec::new();
        let rules = standing_instructions(lines.iter().map(|l| (l.role, l.content)));
        let in_work = indexed.is_work();
        for (line, instructs) in lines.iter().zip(rules) {
            let id = self.author_id(line.author);
            let said_by = &self.parts.author_names[id as usize];
            // Lines are the episode's own, from its first message on.
            if let Some(at) = line.seq.checked_sub(episode.first_seq) {
                let asks = line.content.trim_end().ends_with('?');
                let by_person = line.role == Role::User;
                let facts = LineFacts { author: id, asks, by_person, instructs, in_work };
                self.parts.lines.set(slot, at as usize, facts, LineFacts::BLANK);
            }
            self.parts.words.add_turn(slot, line.seq, line.content);
            for word in said_by {
                if !authors.contains(word) {
                    authors.push(word.clone());
                }
            }
            let text = format!("{}: {}", line.author, line.content);
            self.staged.messages.push(self.messages.document(&lexical::Doc {
                slot,
                episode,
                seq: line.seq,
                title: "",
                summary: "",
                body: &text,
                authors: said_by,
            }));
            body.push_str(&text);
            body.push('\n');
            if let Some(v) = line.vector {
                self.parts.vectors.add((slot, conversation, episode), line.seq, v);
            }
        }
        self.staged.episodes.push(self.episodes.document(&lexical::Doc {
            slot,
            episode,
            seq: 0,
            title: &episode.title,
            summary: &episode.summary,
            body: &body,
            authors: &authors,
        }));
    }

    /// The author's id, registering the author and its name words on first sight.
    fn author_id(&mut self, author: &str) -> u32 {
        let lower = author.to_lowercase();
        if let Some(&id) = self.parts.author_ids.get(&lower) {
            return id;
        }
        let id =
            u32::try_from(self.parts.author_names.len()).expect("fewer than 4 billion authors");
        let words = name_words(author);
        for word in &words {
            self.parts.names.entry(word.clone()).or_default().push(id);
        }
        self.parts.author_names.push(words);
        self.parts.author_ids.insert(lower, id);
        id
    }

    /// Forgets episodes and commits at once: the forgotten text leaves every part before
    /// anything searches again (merged out of the BM25 files, dropped from the word and name
    /// tables, the state saved without it). The generation is left as it was, so a crash
    /// before the update's additions are committed replays them (forgetting again changes
    /// nothing).
    pub(crate) fn forget(&mut self, ids: &[EpisodeId]) -> Result<(), SearchError> {
        if !self.remove(ids) {
            return Ok(());
        }
        self.pending(None).commit(true)?;
        self.parts.table.compact();
        self.parts.words.compact();
        self.compact_authors();
        self.unsaved = true;
        self.save()
    }

    /// The message vectors to group (again) or store anew, when `when` says that is due: run
    /// outside the index's lock, then handed to [`TenantIndex::grouped`].
    pub(crate) fn grouping(&mut self, when: Regroup) -> Option<Grouping> {
        self.parts.vectors.grouping(when)
    }

    /// The message vectors to group again or store anew in a pause, when that is due and the
    /// pause has lasted twice as long as the last such regrouping took: one an update cuts
    /// short is dropped, and starting again at every short pause would keep a core busy for
    /// nothing.
    pub(crate) fn grouping_in_pause(&mut self, now: Instant) -> Option<Grouping> {
        if !pause_long_enough(now, self.committed_at, self.regrouping_took) {
            return None;
        }
        self.parts.vectors.grouping(Regroup::Due)
    }

    /// Takes in what a pause's regrouping made (unless the vectors changed meanwhile), and
    /// how long it took.
    pub(crate) fn regrouped_in_pause(&mut self, done: Grouped, took: Duration) {
        self.regrouping_took = Some(took);
        self.grouped(done);
    }

    /// Takes in the groups a [`Grouping`] made, unless the vectors changed meanwhile.
    pub(crate) fn grouped(&mut self, done: Grouped) {
        if self.parts.vectors.grouped(done) {
            self.unsaved = true;
        }
    }

    /// Records that the index reflects the store's changes up to `generation`, once what was
    /// added is committed, and hands over that commit: its BM25 writes are made by the caller
    /// after letting go of this index, so searches go on meanwhile (seeing the new episodes'
    /// vectors before their words, for those milliseconds); then [`TenantIndex::committed`].
    pub(crate) fn pending(&mut self, generation: Option<u64>) -> PendingCommit {
        if let Some(generation) = generation {
            self.generation = self.generation.max(generation);
        }
        let staged = std::mem::take(&mut self.staged);
        PendingCommit {
            episodes: (self.episodes.committer(), staged.episodes),
            messages: (self.messages.committer(), staged.messages),
            generation: self.generation,
        }
    }

    /// After a [`PendingCommit`] was made: the state to save, when it is due ([`save_due`]).
    pub(crate) fn committed(&mut self) -> Result<Option<StateSave>, SearchError> {
        self.unsaved = true;
        let now = Instant::now();
        self.committed_at = Some(now);
        if save_due(now, self.generation, self.saved_at, save_interval(self.encoding)) {
            return self.take_save();
        }
        Ok(None)
    }

    /// The state to save if commits were made since it was last saved and none for
    /// [`QUIET`] before `now`, unless the last save began less than [`SAVE_SHARE`] times what
    /// encoding it took ago: what updates left unsaved, once they pause. Such a save gives
    /// way to the next update ([`TenantIndex::gave_way`]), and the next is tried as long after
    /// it, so that pauses too short for a save do not keep a core encoding.
    pub(crate) fn settled(&mut self, now: Instant) -> Result<Option<StateSave>, SearchError> {
        let last_save = self.saved_at.max(self.gave_way_at);
        let unsaved = self.generation.saturating_sub(self.saved_generation);
        let due = pause_save_due(now, self.committed_at, last_save, self.encoding, unsaved);
        if self.unsaved && due && self.generation > 0 {
            return self.take_save();
        }
        Ok(None)
    }

    /// Writes the state if commits were made since it was last written (on disk only).
    pub(crate) fn save(&mut self) -> Result<(), SearchError> {
        let Some(mut save) = self.take_save()? else { return Ok(()) };
        let written = save.encode(self, &|| false).and_then(|_| save.write());
        self.saved(written)
    }

    /// How encoding and writing a [`StateSave`] went: the vectors it wrote are read from their
    /// file from then on (the copy in memory that rows added or stored anew made goes), and the
    /// next save waits for longer the longer encoding took; if it failed, the next save writes
    /// everything again.
    pub(crate) fn saved(&mut self, done: Result<SaveDone, SearchError>) -> Result<(), SearchError> {
        match done {
            Ok(done) => {
                self.encoding = done.encoding;
                self.saved_generation = done.generation;
                if let Some(written) = done.vectors {
                    self.parts.vectors.written(written);
                }
                Ok(())
            }
            Err(e) => {
                self.not_saved();
                Err(e)
            }
        }
    }

    /// What [`TenantIndex::save`] would write, taken out so that the caller can encode it
    /// sharing the index with searches and write it after letting go of it (`None`: nothing
    /// to write). Nothing may update the index until it is encoded.
    pub(crate) fn take_save(&mut self) -> Result<Option<StateSave>, SearchError> {
        if !self.unsaved {
            return Ok(None);
        }
        let taken_from =
            TakenFrom { saved_at: self.saved_at, vectors: self.parts.vectors.save_mark() };
        self.unsaved = false;
        self.saved_at = Some(Instant::now());
        let Some(folder) = &self.folder else { return Ok(None) };
        let vectors = self.parts.vectors.take_save(self.generation);
        let keep = self.parts.vectors.saved_file().map(str::to_owned);
        Ok(Some(StateSave {
            folder: folder.clone(),
            vectors,
            keep,
            generation: self.generation,
            encoding: None,
            taken_from,
        }))
    }

    /// `save` gave way before writing anything but a temporary file (an update came): the
    /// index is as if it had not been taken, and the next pause saves it.
    pub(crate) fn gave_way(&mut self, save: StateSave) {
        // Else the next save writes over it: nothing reads a temporary file.
        let _ = state::remove_temporary(&save.folder);
        self.unsaved = true;
        self.gave_way_at = self.saved_at;
        self.saved_at = save.taken_from.saved_at;
        self.parts.vectors.restore(save.taken_from.vectors);
    }

    /// A [`StateSave`] failed: the next save writes everything again.
    fn not_saved(&mut self) {
        self.unsaved = true;
        self.parts.vectors.unsaved();
    }

    /// Drops what was not saved: the index is about to be thrown away.
    pub(crate) fn abandon(&mut self) {
        self.unsaved = false;
    }

    /// Forgets the authors no line is by any more (their names are text too).
    fn compact_authors(&mut self) {
        let mut used = vec![false; self.parts.author_names.len()];
        for line in self.parts.lines.items() {
            if let Some(u) = used.get_mut(line.author as usize) {
                *u = true;
            }
        }
        for (id, names) in self.parts.author_names.iter_mut().enumerate() {
            if !used[id] {
                names.clear();
            }
        }
        self.parts.author_ids.retain(|_, id| used[*id as usize]);
        self.parts.names.retain(|_, ids| {
            ids.retain(|id| used[*id as usize]);
            !ids.is_empty()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_saves_the_state_only_after_a_build_or_in_a_long_burst() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let due = |now, saved_at| save_due(now, 7, saved_at, SAVE_EVERY);
        assert!(due(at(0), None), "the first commit of an index never saved (a build) saves");
        assert!(!save_due(at(0), 0, None, SAVE_EVERY), "a build's commits do not");
        // Past an interval: left to the next pause...
        let every = SAVE_EVERY.as_millis() as u64;
        assert!(!due(at(every), Some(at(0))));
        // ...unless commits have gone on for as many intervals as a burst may.
        let long = every * u64::from(BURST_SAVE_INTERVALS);
        assert!(!due(at(long - 1), Some(at(0))));
        assert!(due(at(long), Some(at(0))));
    }

    #[test]
    fn a_pause_saves_the_state_once_quiet_and_as_often_as_its_share_of_time_allows() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let quiet = QUIET.as_millis() as u64;
        let fast = Duration::from_micros(50);
        let due = |now, last_save, encoding, unsaved| {
            pause_save_due(now, Some(at(0)), last_save, encoding, unsaved)
        };
        assert!(due(at(quiet), None, fast, 1), "quiet, never saved");
        assert!(!due(at(quiet - 1), None, fast, 1), "not quiet yet");
        assert!(!pause_save_due(at(quiet), None, None, fast, 1), "nothing committed");
        assert!(due(at(quiet + 100), Some(at(0)), fast, 1), "a small state, for one change");
        // A save that took 2 s is made again 40 s after it began at the earliest...
        let slow = Duration::from_secs(2);
        let share = 2_000 * u64::from(SAVE_SHARE);
        assert!(!due(at(share - 1), Some(at(0)), slow, 5_000));
        assert!(due(at(share), Some(at(0)), slow, 5_000));
        // ...and only for as many changes as take a twentieth of that to catch up.
        assert!(!due(at(share), Some(at(0)), slow, 999));
        assert!(due(at(share), Some(at(0)), slow, 1_000));
    }

    #[test]
    fn a_pause_regroups_the_vectors_once_it_has_lasted_twice_what_the_last_regrouping_took() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let took = Some(Duration::from_secs(2));
        assert!(pause_long_enough(at(0), Some(at(0)), None), "the first time, any pause");
        assert!(!pause_long_enough(at(3_999), Some(at(0)), took), "one cut short by an update");
        assert!(pause_long_enough(at(4_000), Some(at(0)), took));
        assert!(pause_long_enough(at(0), None, took), "nothing committed since the open");
    }

    #[test]
    fn saves_come_further_apart_as_encoding_the_state_takes_longer() {
        assert_eq!(save_interval(Duration::from_millis(20)), SAVE_EVERY, "small states");
        let slow = Duration::from_millis(1_200);
        assert_eq!(save_interval(slow), slow * SAVE_SHARE);
        let share = slow.as_secs_f64() / save_interval(slow).as_secs_f64();
        assert!(share <= 1.0 / f64::from(SAVE_SHARE) + 1e-9, "the lock held {share} of the time");
    }
}
