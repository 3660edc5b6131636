//! Opening a tenant's saved index: as the process that holds it, beside the one that does, or
//! starting it again empty when it cannot be used.

use std::{path::Path, time::Duration};

use epimem_search::SearchError;

use super::{Parts, TenantIndex, index_error, io_error, update::Staged};
use crate::{
    lexical::{self, Documents},
    state, vectors,
    vectors::{Regroup, VectorConfig},
};

/// Whether a saved state belongs with the BM25 indexes beside it, at `generations`: the
/// same tenant and embedder, and not ahead of either index. Behind them is what a process
/// stopped between a commit and the next save leaves, or what a process beside the holder
/// reads while the holder commits faster than it saves: the indexes are then taken back to
/// the state's generation ([`lexical::Bm25::back_to`]) and caught up from there.
fn check(
    head: &state::Head,
    tenant: &str,
    fingerprint: &str,
    (in_episodes, in_messages): (u64, u64),
) -> Result<(), OpenError> {
    if head.fingerprint != fingerprint {
        return Err(OpenError::OtherEmbedder(format!(
            "built with the embedder {}, not {fingerprint}",
            head.fingerprint
        )));
    }
    if head.tenant != tenant || head.generation > in_episodes.min(in_messages) {
        return Err(OpenError::Unusable(format!(
            "out of step: state at {}, BM25 at {in_episodes} and {in_messages}",
            head.generation
        )));
    }
    Ok(())
}

/// Whether this process opens a saved index as its holder or beside the process that holds it.
#[derive(Debug, Clone, Copy)]
enum Access {
    Mine,
    Held,
}

/// Times a saved index another process holds is read before a copy is built instead, and the
/// wait between two: the holder may commit while it is read.
const HELD_ATTEMPTS: usize = 3;
const HELD_RETRY: Duration = Duration::from_millis(20);

/// Why a saved index could not be opened.
enum OpenError {
    /// Another process holds it for writing.
    Busy,
    /// Missing parts, unreadable or out of step: it is rebuilt from the store.
    Unusable(String),
    /// Built with another embedder: rebuilt from the store too, and beside its holder no
    /// save of the holder's will change that.
    OtherEmbedder(String),
}

impl From<tantivy::TantivyError> for OpenError {
    fn from(e: tantivy::TantivyError) -> Self {
        match e {
            tantivy::TantivyError::LockFailure(
                tantivy::directory::error::LockError::LockBusy,
                _,
            ) => Self::Busy,
            e => Self::Unusable(e.to_string()),
        }
    }
}

impl From<std::io::Error> for OpenError {
    fn from(e: std::io::Error) -> Self {
        Self::Unusable(e.to_string())
    }
}

impl TenantIndex {
    /// The tenant's index saved in `folder` (made empty there if it is missing, unreadable
    /// or out of step: the engine then fills it from the store), read beside the process that
    /// holds it when another does ([`TenantIndex::held`]), or in memory only when `folder` is
    /// `None`. `config` says how much a message vector borrows from its neighbours'.
    pub(crate) fn open(
        folder: Option<&Path>,
        tenant: &str,
        fingerprint: &str,
        config: VectorConfig,
    ) -> Result<Self, SearchError> {
        let Some(folder) = folder else { return Self::empty(None, tenant, fingerprint, config) };
        match Self::load(folder, tenant, fingerprint, config, Access::Mine) {
            Ok(index) => Ok(index),
            Err(OpenError::Busy) => Self::held(folder, tenant, fingerprint, config),
            Err(OpenError::Unusable(why) | OpenError::OtherEmbedder(why)) => {
                if folder.exists() {
                    std::fs::remove_dir_all(folder).map_err(|e| io_error(folder, e))?;
                }
                let mut index = Self::empty(Some(folder), tenant, fingerprint, config)?;
                index.restarted = Some(why);
                Ok(index)
            }
        }
    }

    /// Whether the files of an index this process saves still hold what it saved: the BM25
    /// files' checksums and the vectors' CRC-32. An index in memory, or read beside the
    /// process that holds it (whose files that process changes), is not checked.
    pub(crate) fn verify(&self) -> Result<(), SearchError> {
        let Some(folder) = &self.folder else { return Ok(()) };
        for (part, bm25) in [("episodes", &self.episodes), ("messages", &self.messages)] {
            let damaged = bm25.damaged_files().map_err(|e| SearchError::Damaged(e.to_string()))?;
            if !damaged.is_empty() {
                let files = damaged.join(", ");
                return Err(SearchError::Damaged(format!("{part}/{files} fail their checksums")));
            }
        }
        self.parts.vectors.verify(folder).map_err(|e| SearchError::Damaged(e.to_string()))
    }

    /// The saved index another process holds, as it last saved it, changed from there in this
    /// process's memory only (its folder is never written to). An empty one in memory, to be
    /// built from the store, when the saved one cannot be read: the holder is building it, or
    /// it was built with another embedder (which `restarted` then says, as no later save of
    /// the holder's can be read either). (One the holder committed past since its last save
    /// is read as saved: its BM25 taken back to the state, in memory.)
    fn held(
        folder: &Path,
        tenant: &str,
        fingerprint: &str,
        config: VectorConfig,
    ) -> Result<Self, SearchError> {
        for attempt in 0..HELD_ATTEMPTS {
            if attempt > 0 {
                std::thread::sleep(HELD_RETRY);
            }
            match Self::load(folder, tenant, fingerprint, config, Access::Held) {
                Ok(index) => return Ok(index),
                Err(OpenError::OtherEmbedder(why)) => {
                    let mut index = Self::empty(None, tenant, fingerprint, config)?;
                    index.restarted = Some(format!("the saved index was {why}"));
                    return Ok(index);
                }
                Err(OpenError::Busy | OpenError::Unusable(_)) => {}
            }
        }
        Self::empty(None, tenant, fingerprint, config)
    }

    /// An empty index, in `folder` or in memory.
    fn empty(
        folder: Option<&Path>,
        tenant: &str,
        fingerprint: &str,
        config: VectorConfig,
    ) -> Result<Self, SearchError> {
        let part = |name: &str| folder.map(|f| f.join(name));
        let open = |name: &str, documents| {
            lexical::Bm25::open(part(name).as_deref(), documents).map_err(index_error)
        };
        let episodes = open("episodes", Documents::Episodes)?;
        let messages = open("messages", Documents::Messages)?;
        let parts = Parts { vectors: vectors::VectorIndex::new(config), ..Parts::default() };
        Ok(Self::assemble((episodes, messages), parts, 0, folder, tenant, fingerprint))
    }

    fn load(
        folder: &Path,
        tenant: &str,
        fingerprint: &str,
        config: VectorConfig,
        access: Access,
    ) -> Result<Self, OpenError> {
        let (episodes, messages) = (folder.join("episodes"), folder.join("messages"));
        let (episodes, messages) = match access {
            Access::Mine => (
                lexical::Bm25::open(Some(&episodes), Documents::Episodes)?,
                lexical::Bm25::open(Some(&messages), Documents::Messages)?,
            ),
            Access::Held => (
                lexical::Bm25::open_held(&episodes, Documents::Episodes)?,
                lexical::Bm25::open_held(&messages, Documents::Messages)?,
            ),
        };
        // Saved by this process only if it holds the folder.
        let saved_in = matches!(access, Access::Mine).then_some(folder);
        let (Some(in_episodes), Some(in_messages)) = (episodes.generation(), messages.generation())
        else {
            return Err(OpenError::Unusable("no generation in a BM25 index".into()));
        };
        // Every byte of the commit as it was written (a scribbled postings file would make
        // searches fail, or worse, answer wrongly).
        for (part, bm25) in [("episodes", &episodes), ("messages", &messages)] {
            let damaged = bm25.damaged_files()?;
            if !damaged.is_empty() {
                return Err(OpenError::Unusable(format!(
                    "damaged: {part}/{} fail their checksums",
                    damaged.join(", ")
                )));
            }
        }
        let bm25 = (episodes, messages);
        // Its head first: a state that does not belong with these BM25 indexes is not decoded.
        if let Some(head) = state::head(folder)? {
            check(&head, tenant, fingerprint, (in_episodes, in_messages))?;
        }
        let Some(saved) = state::load(folder)? else {
            // Empty, as a new index is: not one whose first commits came before its state.
            let empty = bm25.0.documents() == 0 && bm25.1.documents() == 0;
            if in_episodes == 0 && in_messages == 0 && empty {
                let parts =
                    Parts { vectors: vectors::VectorIndex::new(config), ..Parts::default() };
                return Ok(Self::assemble(bm25, parts, 0, saved_in, tenant, fingerprint));
            }
            return Err(OpenError::Unusable("BM25 indexes without their state".into()));
        };
        // Again: the holder of the folder may have saved a new state meanwhile.
        check(&saved.head, tenant, fingerprint, (in_episodes, in_messages))?;
        let mut parts = saved.parts;
        parts.table.loaded().map_err(OpenError::Unusable)?;
        parts.words.loaded().map_err(OpenError::Unusable)?;
        parts.lines.check().map_err(OpenError::Unusable)?;
        let slots = parts.table.slots();
        if [parts.lines.slots(), parts.words.slots(), parts.vectors.slots()]
            .iter()
            .any(|&n| n > slots)
        {
            return Err(OpenError::Unusable("parts know of episodes the table does not".into()));
        }
        let generation = saved.head.generation;
        for (index, at) in [(&bm25.0, in_episodes), (&bm25.1, in_messages)] {
            if at != generation {
                index.back_to(slots, generation).map_err(OpenError::from)?;
            }
        }
        // BM25 commits on every update and the state is saved less often: at one generation
        // (a build commits its chunks at 0) the two can still hold different episodes. Taken
        // back to the state's generation they hold the same, since a forget saves the state
        // at once (between its commit and that save they do not: read again, or rebuilt).
        let live = (0..slots).filter(|&slot| parts.table.is_live(slot)).count() as u64;
        let lines = parts.words.turns_of_live(|slot| parts.table.is_live(slot));
        let (in_episodes, in_messages) = (bm25.0.documents(), bm25.1.documents());
        if (in_episodes, in_messages) != (live, lines) {
            return Err(OpenError::Unusable(format!(
                "out of step: the state holds {live} episodes of {lines} lines, BM25 \
                 {in_episodes} and {in_messages}"
            )));
        }
        parts.vectors.config = config;
        parts.vectors.attach(folder).map_err(|e| OpenError::Unusable(e.to_string()))?;
        // Saved before vectors were grouped at this size (or with fewer rows to group from).
        let grouped = parts.vectors.settle(Regroup::Due);
        let mut index = Self::assemble(bm25, parts, generation, saved_in, tenant, fingerprint);
        index.unsaved = grouped;
        // As good as saved now: a burst's commits wait their intervals from here.
        index.saved_at = Some(std::time::Instant::now());
        index.saved_generation = generation;
        Ok(index)
    }

    fn assemble(
        (episodes, messages): (lexical::Bm25, lexical::Bm25),
        parts: Parts,
        generation: u64,
        folder: Option<&Path>,
        tenant: &str,
        fingerprint: &str,
    ) -> Self {
        Self {
            episodes,
            messages,
            parts,
            generation,
            tenant: tenant.to_owned(),
            fingerprint: fingerprint.to_owned(),
            folder: folder.map(Path::to_path_buf),
            restarted: None,
            staged: Staged::default(),
            unsaved: false,
            saved_at: None,
            gave_way_at: None,
            saved_generation: 0,
            encoding: Duration::ZERO,
            committed_at: None,
            regrouping_took: None,
            visible: std::sync::Mutex::default(),
        }
    }
}
