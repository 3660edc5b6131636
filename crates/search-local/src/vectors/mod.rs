//! Message vectors of closed episodes, in memory, by episode slot.
//!
//! Vectors are kept as 8-bit integers with one scale each: a scan is bound by memory
//! bandwidth, and a quarter of the bytes makes it about twice as fast (unit vectors lose
//! about 0.01 of cosine similarity to rounding, far below what separates a match).
//!
//! Search scans every message vector of a visible episode, on up to four threads once there
//! are many: exact, and at 200,000 vectors a few milliseconds on two cores (an HNSW graph,
//! tried here before, lost on both build time and latency at that size). Past
//! `approximate_from` rows the vectors are grouped by nearest centroid ([`Clusters`]) and a
//! search scans the groups nearest the query only, then scores its best candidates exactly.

use std::path::Path;

use epimem_core::{Episode, recall::Borrow};
use serde::{Deserialize, Serialize};

use crate::{
    clusters::{Clusters, Packing},
    vector_file::{self, VectorData, VectorSave, Written},
};
use layout::Layout;

mod exact;
mod grouped;
mod layout;
mod quantize;

use quantize::Quantized;
pub(crate) use quantize::{dot_i8, quantize};

use grouped::PROBE_ROWS;

/// Rows from which vectors are grouped and searched by group by default (`bench recall`
/// compares the two searches at 100,000 and 1,000,000 episodes).
pub const APPROXIMATE_FROM: usize = 500_000;
#[derive(Default, Serialize, Deserialize)]
pub(crate) struct VectorIndex {
    dim: usize,
    /// Rows of each episode slot, `start..end` (an episode's vectors are added together).
    episode_rows: Vec<(u32, u32)>,
    /// (episode slot, message seq) of each row of `data`.
    rows: Vec<(usize, u64)>,
    /// The conversation, start and end (ms) of each episode slot, to tell which rows are
    /// neighbouring messages of one conversation.
    episodes: Vec<(u64, i64, i64)>,
    /// Configuration, set again after a load.
    #[serde(skip)]
    pub(crate) config: VectorConfig,
    /// The rows grouped by nearest centroid, once there are `approximate_from` of them...
    clusters: Option<Clusters>,
    /// ...and from then, where each row is stored: before, at its own number.
    layout: Option<Layout>,
    /// `dim` quantized components per stored row, in a file of their own when saved
    /// (`vector_file`).
    #[serde(skip)]
    data: VectorData,
    /// The file the components were last saved to; `None` before any save.
    saved: Option<SavedFile>,
    /// How the components changed since they were last saved.
    #[serde(skip)]
    changed: Changed,
    /// Counts the changes to the rows, so that a grouping made of them meanwhile is known to
    /// be of the rows as they are.
    #[serde(skip)]
    revision: u64,
    /// Counts the times the rows were stored anew (removed or grouped), so that a file written
    /// meanwhile is known to hold the first rows as they are.
    #[serde(skip)]
    rewrites: u64,
    /// What one quantized unit is worth, per stored row.
    scales: Vec<f32>,
}

/// What a save of the components is taken from ([`VectorIndex::save_mark`]).
#[derive(Debug)]
pub(crate) struct SaveMark {
    saved: Option<SavedFile>,
    changed: Changed,
}

/// The file a state names for its components: its name, how many of its bytes are the
/// state's, and their CRC-32, checked when the file is mapped (a scribbled byte would
/// otherwise change what searches find, silently).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SavedFile {
    name: String,
    len: u64,
    crc: u32,
}

/// How the components changed since they were last saved, least first.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Changed {
    #[default]
    Nothing,
    /// Rows were added at the end only: a save appends them to the file.
    RowsAdded,
    /// Rows were removed or stored in another order (or a save failed): a save writes them all.
    All,
}

/// How vectors are searched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct VectorConfig {
    /// Shares of the similarity of the message before and after that a message borrows.
    pub(crate) borrow: Borrow,
    /// Rows from which a search goes by groups of rows instead of scanning them all...
    pub(crate) approximate_from: usize,
    /// ...and how many visible rows it then scans.
    pub(crate) probe_rows: usize,
}

impl Default for VectorConfig {
    fn default() -> Self {
        Self {
            borrow: Borrow::default(),
            approximate_from: APPROXIMATE_FROM,
            probe_rows: PROBE_ROWS,
        }
    }
}

/// What a search found.
#[derive(Debug, Default)]
pub(crate) struct VectorHits {
    /// The best visible episodes by their best message similarity, best first:
    /// (slot, similarity, best message).
    pub(crate) episodes: Vec<(usize, f64, u64)>,
    /// The best visible messages, best first: (slot, seq, similarity).
    pub(crate) messages: Vec<(usize, u64, f64)>,
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex").field("rows", &self.rows.len()).finish_non_exhaustive()
    }
}

impl VectorIndex {
    pub(crate) fn new(config: VectorConfig) -> Self {
        Self { config, ..Self::default() }
    }

    /// Episode slots it knows of (up to the last with vectors).
    pub(crate) fn slots(&self) -> usize {
        self.episodes.len()
    }

    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// Adds message `seq` of `episode` (in slot `slot`, of conversation `conversation`).
    pub(crate) fn add(
        &mut self,
        (slot, conversation, episode): (usize, u64, &Episode),
        seq: u64,
        vector: &[f32],
    ) {
        if self.dim == 0 {
            self.dim = vector.len();
        }
        if vector.len() != self.dim {
            return; // another model's vector: never mixed in
        }
        if self.episode_rows.len() <= slot {
            self.episode_rows.resize(slot + 1, (0, 0));
            self.episodes.resize(slot + 1, (0, 0, 0));
        }
        let row = self.rows.len();
        let (start, end) = self.episode_rows[slot];
        if start != end && end as usize != row {
            return; // an episode's vectors come together, once
        }
        self.episodes[slot] = (conversation, episode.start.0, episode.end.0);
        self.rows.push((slot, seq));
        // Stored after every other row, wherever the layout has put those.
        let position = self.scales.len();
        self.scales.push(quantize(vector, self.data.added_mut()));
        self.changed = self.changed.max(Changed::RowsAdded);
        self.revision += 1;
        self.episode_rows[slot] = (if start == end { row as u32 } else { start }, row as u32 + 1);
        if let Some(layout) = &mut self.layout {
            layout.push(slot);
        }
        if let Some(clusters) = &mut self.clusters {
            clusters.add(position);
        }
    }

    /// Groups the rows by nearest centroid if there are enough of them and they are not
    /// grouped yet, or have doubled since they were; else puts the rows added since in their
    /// groups, and stores the rows group after group again once many are out of their
    /// group's run (each as `when` says). Whether it grouped or stored the rows anew.
    pub(crate) fn settle(&mut self, when: Regroup) -> bool {
        match self.grouping(when) {
            Some(grouping) => self.grouped(grouping.run()),
            None => false,
        }
    }

    /// Whether the rows are to be grouped (again): there are enough of them (`slack` times
    /// the threshold) and they are not grouped yet, or have grown `2 × slack` times since
    /// they were.
    fn grouping_due(&self, slack: usize) -> bool {
        let rows = self.rows.len();
        rows > 0
            && rows >= self.config.approximate_from.saturating_mul(slack)
            && self.clusters.as_ref().is_none_or(|c| c.outgrown(rows / slack))
    }

    /// The rows to group, when that is due, or to store group after group again (the rows
    /// added since the last time put in their groups first): grouping them takes seconds
    /// over a million episodes, and storing them anew a third of a second, so either runs on
    /// what this shares ([`Grouping::run`]) while searches go on, and
    /// [`VectorIndex::grouped`] takes the result in.
    pub(crate) fn grouping(&mut self, when: Regroup) -> Option<Grouping> {
        let clusters = if self.grouping_due(when.slack()) {
            None
        } else {
            let clusters = self.clusters.as_mut()?;
            clusters.assign(self.data.components());
            if !clusters.pack_due(when.slack()) {
                return None;
            }
            Some(clusters.clone())
        };
        Some(Grouping {
            data: self.data.clone(),
            scales: self.scales.clone(),
            dim: self.dim,
            revision: self.revision,
            clusters,
        })
    }

    /// Takes in a [`Grouping`]'s result if the rows did not change since it was made (else
    /// the next [`VectorIndex::settle`] groups them); whether it did.
    pub(crate) fn grouped(&mut self, done: Grouped) -> bool {
        if done.revision != self.revision {
            return false;
        }
        self.clusters = Some(done.clusters);
        self.store(done.data, done.scales, &done.packing);
        true
    }

    /// Takes the rows' components and scales as stored anew in the order `packing` gave.
    fn store(&mut self, data: Vec<i8>, scales: Vec<f32>, packing: &Packing) {
        self.data = VectorData::owned(data);
        self.scales = scales;
        self.layout.get_or_insert_with(|| Layout::identity(&self.rows)).permute(packing);
        self.changed = Changed::All;
        self.revision += 1;
        self.rewrites += 1;
    }

    /// The components to write, if they changed since they were last saved: appended to the
    /// file saved last when rows were only added since, else a new file (named by
    /// `generation`); shared, not copied. The state saved next names that file. Written by the
    /// caller ([`VectorSave::write`]), outside any lock; if that fails,
    /// [`VectorIndex::unsaved`].
    pub(crate) fn take_save(&mut self, generation: u64) -> Option<VectorSave> {
        let len = self.data.len();
        let out = if len == 0 {
            self.saved = None;
            None
        } else if self.changed != Changed::Nothing || self.saved.is_none() {
            // Rows added only: appended, and the checksum goes on from the saved bytes'.
            let (name, from, hasher) = match &self.saved {
                Some(file) if self.changed == Changed::RowsAdded => (
                    file.name.clone(),
                    file.len as usize,
                    crc32fast::Hasher::new_with_initial_len(file.crc, file.len),
                ),
                current => {
                    let current = current.as_ref().map(|c| c.name.as_str());
                    (vector_file::file_name(generation, current), 0, crc32fast::Hasher::new())
                }
            };
            let crc = vector_file::checksum(hasher, self.data.components().parts_from(from));
            self.saved = Some(SavedFile { name: name.clone(), len: len as u64, crc });
            Some(VectorSave { name, from, data: self.data.clone(), rewrites: self.rewrites })
        } else {
            None
        };
        self.changed = Changed::Nothing;
        out
    }

    /// What [`VectorIndex::take_save`] changes, to put back with [`VectorIndex::restore`]
    /// when the save it was taken for gave way before writing anything.
    pub(crate) fn save_mark(&self) -> SaveMark {
        SaveMark { saved: self.saved.clone(), changed: self.changed }
    }

    /// Back to before the [`VectorIndex::take_save`] `mark` was made for: nothing changed the
    /// rows meanwhile, and nothing was written.
    pub(crate) fn restore(&mut self, mark: SaveMark) {
        self.saved = mark.saved;
        self.changed = mark.changed;
    }

    /// A save wrote the components: they are read from its file from then on, and only rows
    /// added since stay in memory, unless the rows were stored anew meanwhile. Whether they
    /// are.
    pub(crate) fn written(&mut self, written: Written) -> bool {
        let same = written.rewrites == self.rewrites && written.data.len() <= self.data.len();
        if same {
            self.data = self.data.rebased(written.data);
        }
        same
    }

    /// Bytes of components held in memory rather than mapped from a file.
    #[cfg(test)]
    pub(crate) fn in_memory(&self) -> usize {
        self.data.in_memory()
    }

    /// The last [`VectorIndex::take_save`] was not written (maybe in part): the next save
    /// writes them again, whole, into a new file.
    pub(crate) fn unsaved(&mut self) {
        self.changed = Changed::All;
    }

    /// The vector file the state names, if any.
    pub(crate) fn saved_file(&self) -> Option<&str> {
        self.saved.as_ref().map(|file| file.name.as_str())
    }

    /// The components the saved file holds, if they are what was saved.
    fn read_saved(&self, folder: &Path) -> std::io::Result<VectorData> {
        let Some(file) = &self.saved else { return Ok(VectorData::default()) };
        let data = vector_file::map(folder, &file.name, file.len)?;
        let crc = vector_file::checksum(crc32fast::Hasher::new(), data.components().parts_from(0));
        if crc != file.crc {
            return Err(std::io::Error::other(format!(
                "{} fails its checksum: its bytes changed since they were saved",
                file.name
            )));
        }
        Ok(data)
    }

    /// Whether the saved file still holds what was saved (nothing is being saved meanwhile).
    /// Components stored anew since the last save (or whose save failed) are written whole by
    /// the next, and are not checked against a file that may not hold them yet.
    pub(crate) fn verify(&self, folder: &Path) -> std::io::Result<()> {
        match self.changed {
            Changed::Nothing | Changed::RowsAdded => self.read_saved(folder).map(drop),
            Changed::All => Ok(()),
        }
    }

    /// Maps the components from the file the loaded state names in `folder`.
    pub(crate) fn attach(&mut self, folder: &Path) -> std::io::Result<()> {
        self.data = self.read_saved(folder)?;
        let expected = self.rows.len() * self.dim;
        if self.data.len() != expected {
            return Err(std::io::Error::other(format!(
                "{} vector components for {expected}",
                self.data.len()
            )));
        }
        let rows = self.rows.len();
        let slots = self.episodes.len();
        let laid_out = match &mut self.layout {
            Some(layout) => layout.restore(&self.rows) && self.clusters.is_some(),
            None => self.clusters.is_none(),
        };
        let whole = laid_out
            && self.scales.len() == rows
            && self.episode_rows.len() == slots
            && self.episode_rows.iter().all(|&(s, e)| s <= e && e as usize <= rows)
            && self.rows.iter().all(|&(slot, _)| slot < slots)
            && self.clusters.as_ref().is_none_or(|c| c.check(rows, self.dim));
        if !whole {
            return Err(std::io::Error::other("vector rows out of step"));
        }
        self.changed = Changed::Nothing;
        Ok(())
    }

    /// Removes an episode's vectors.
    pub(crate) fn remove(&mut self, slot: usize) {
        let Some(&(start, end)) = self.episode_rows.get(slot).filter(|(s, e)| s < e) else {
            return;
        };
        let (start, end, dim) = (start as usize, end as usize, self.dim);
        let positions: Vec<u32> = match &mut self.layout {
            Some(layout) => layout.remove_rows(start, end),
            None => (start as u32..end as u32).collect(),
        };
        self.rows.drain(start..end);
        layout::remove_positions(self.data.to_mut(), dim, &positions);
        self.changed = Changed::All;
        self.revision += 1;
        self.rewrites += 1;
        layout::remove_positions(&mut self.scales, 1, &positions);
        let len = (end - start) as u32;
        for span in &mut self.episode_rows {
            if span.0 >= end as u32 {
                *span = (span.0 - len, span.1 - len);
            }
        }
        self.episode_rows[slot] = (0, 0);
        if let Some(clusters) = &mut self.clusters {
            clusters.remove_positions(&positions);
        }
    }

    /// The `episodes` best episodes and `messages` best messages among the `visible` slots.
    pub(crate) fn search(
        &self,
        query: &[f32],
        visible: &[bool],
        episodes: usize,
        messages: usize,
    ) -> VectorHits {
        if query.len() != self.dim || self.rows.is_empty() {
            return VectorHits::default();
        }
        let query = Quantized::new(query);
        let grouped =
            self.clusters.as_ref().filter(|_| self.rows.len() >= self.config.approximate_from);
        if let Some(found) =
            grouped.and_then(|c| self.probe(c, &query, visible, episodes, messages))
        {
            return found;
        }
        self.scan_all(&query, visible, episodes, messages)
    }
}

impl VectorIndex {
    /// The best (similarity, message) of each of the `slots` (`None` where hidden).
    pub(crate) fn best_of_each(
        &self,
        query: &[f32],
        visible: &[bool],
        slots: &[usize],
    ) -> Vec<Option<(f64, u64)>> {
        if query.len() != self.dim {
            return vec![None; slots.len()];
        }
        let query = Quantized::new(query);
        slots
            .iter()
            .map(|&e| if visible.get(e) == Some(&true) { self.best_of(e, &query) } else { None })
            .collect()
    }

    /// The best (similarity, message) of one episode.
    fn best_of(&self, slot: usize, query: &Quantized) -> Option<(f64, u64)> {
        let &(start, end) = self.episode_rows.get(slot).filter(|(s, e)| s < e)?;
        (start as usize..end as usize)
            .map(|row| (self.similarity(row, query), self.rows[row].1))
            .reduce(|best, this| if this.0 > best.0 { this } else { best })
            .map(|(sim, seq)| (f64::from(sim), seq))
    }

    /// Whether `b` is the message right after `a` in one conversation (in one episode, or
    /// across an episode's edge after a silence of at most `max_gap_ms`).
    fn next_to(&self, (e1, s1): (usize, u64), (e2, s2): (usize, u64)) -> bool {
        let ((c1, _, end), (c2, start, _)) = (self.episodes[e1], self.episodes[e2]);
        s2 == s1 + 1 && (e1 == e2 || c1 == c2) && self.config.borrow.adjacent(e1 == e2, start - end)
    }

    #[inline(always)]
    fn similarity(&self, row: usize, query: &Quantized) -> f32 {
        self.similarity_at(self.position(row), query)
    }

    /// The similarity of the row stored at `position`.
    #[inline(always)]
    fn similarity_at(&self, position: usize, query: &Quantized) -> f32 {
        let data = self.data.components().row(position, self.dim);
        dot_i8(data, &query.data) as f32 * self.scales[position] * query.scale
    }

    /// Where `row` is stored.
    #[inline(always)]
    fn position(&self, row: usize) -> usize {
        self.layout.as_ref().map_or(row, |layout| layout.position(row))
    }

    /// The row stored at `position`.
    #[inline(always)]
    fn row_at(&self, position: usize) -> usize {
        self.layout.as_ref().map_or(position, |layout| layout.row_at(position))
    }
}

/// The rows of a [`VectorIndex`] to group, or to store anew by the groups they are in; the
/// rows shared with the index.
pub(crate) struct Grouping {
    data: VectorData,
    scales: Vec<f32>,
    dim: usize,
    revision: u64,
    /// The groups to store the rows by, every row in one; `None` to train them first.
    clusters: Option<Clusters>,
}

/// The groups of a [`Grouping`] and its rows stored group after group.
pub(crate) struct Grouped {
    clusters: Clusters,
    packing: Packing,
    data: Vec<i8>,
    scales: Vec<f32>,
    revision: u64,
}

impl Grouping {
    /// Trains the groups, unless it has them, and stores the rows in their order (the costly
    /// part; training on every core).
    pub(crate) fn run(self) -> Grouped {
        let (clusters, packing) = match self.clusters {
            Some(mut clusters) => {
                let packing = clusters.pack();
                (clusters, packing)
            }
            None => Clusters::train(self.data.components(), &self.scales, self.dim),
        };
        Grouped {
            data: self.data.components().permuted(self.dim, &packing),
            scales: layout::permute(&self.scales, 1, &packing),
            clusters,
            packing,
            revision: self.revision,
        }
    }
}

/// When the rows are grouped again or stored anew, which takes seconds over millions of rows
/// (storing two million anew, about 2 s) while no other update runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Regroup {
    /// At the usual sizes: in a pause, on open, in a build.
    Due,
    /// Only past twice them: in an update, which a writer's flush may be waiting for; the next
    /// pause does the usual work.
    Overdue,
}

impl Regroup {
    fn slack(self) -> usize {
        match self {
            Regroup::Due => 1,
            Regroup::Overdue => 2,
        }
    }
}

#[cfg(test)]
pub(super) mod tests;
