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

use epimem_core::Episode;
use serde::{Deserialize, Serialize};

use crate::{
    clusters::Clusters,
    top_k::TopK,
    vector_file::{self, VectorData},
};

/// Rows from which vectors are grouped and searched by group by default (`bench recall`
/// compares the two searches at 100,000 and 1,000,000 episodes).
pub const APPROXIMATE_FROM: usize = 500_000;
/// Visible rows a grouped search scans, nearest groups first.
const PROBE_ROWS: usize = 24_000;

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
    /// The rows grouped by nearest centroid, once there are `approximate_from` of them.
    clusters: Option<Clusters>,
    /// `dim` quantized components per row, in a file of their own when saved (`vector_file`).
    #[serde(skip)]
    data: VectorData,
    /// The file the components were last saved to, and its length; `None` before any save.
    saved: Option<(String, u64)>,
    /// Whether the components changed since they were last saved.
    #[serde(skip)]
    changed: bool,
    /// What one quantized unit is worth, per row.
    scales: Vec<f32>,
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

/// How much of its neighbours' similarity a message borrows: a message is scored
/// `max(own, before · previous, after · next)`, so an answer that shares no word with a
/// query rises behind the question that does. Neighbours are the rows right before and after
/// in the same conversation (consecutive messages, usually of one episode; across an
/// episode's edge only if the silence between the two is at most `max_gap_ms`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Borrow {
    pub(crate) before: f32,
    pub(crate) after: f32,
    pub(crate) max_gap_ms: i64,
}

/// Rows from which a scan is split over threads.
const PARALLEL_FROM: usize = 50_000;
const MAX_THREADS: usize = 4;

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
        self.scales.push(quantize(vector, self.data.to_mut()));
        self.changed = true;
        self.episode_rows[slot] = (if start == end { row as u32 } else { start }, row as u32 + 1);
        if let Some(clusters) = &mut self.clusters {
            clusters.add(row);
        }
    }

    /// Groups the rows by nearest centroid if there are enough of them and they are not
    /// grouped yet, or have doubled since they were (whether it did); else puts the rows
    /// added since in their groups.
    pub(crate) fn settle(&mut self) -> bool {
        let rows = self.rows.len();
        let due = rows >= self.config.approximate_from
            && self.clusters.as_ref().is_none_or(|c| c.outgrown(rows));
        if due {
            self.clusters = Some(Clusters::train(self.data.as_slice(), &self.scales, self.dim));
        } else if let Some(clusters) = &mut self.clusters {
            clusters.assign(self.data.as_slice());
        }
        due
    }

    /// Writes the components to a file of their own in `folder` if they changed since they
    /// were last saved (named by `generation`); the state saved next names that file.
    pub(crate) fn write_data(&mut self, folder: &Path, generation: u64) -> std::io::Result<()> {
        let data = self.data.as_slice();
        if data.is_empty() {
            self.saved = None;
        } else if self.changed || self.saved.is_none() {
            let name = vector_file::file_name(generation);
            vector_file::write(folder, &name, data)?;
            self.saved = Some((name, data.len() as u64));
        }
        self.changed = false;
        Ok(())
    }

    /// The vector file the state names, if any.
    pub(crate) fn saved_file(&self) -> Option<&str> {
        self.saved.as_ref().map(|(name, _)| name.as_str())
    }

    /// Maps the components from the file the loaded state names in `folder`.
    pub(crate) fn attach(&mut self, folder: &Path) -> std::io::Result<()> {
        self.data = match &self.saved {
            Some((name, len)) => vector_file::map(folder, name, *len)?,
            None => VectorData::Empty,
        };
        let expected = self.rows.len() * self.dim;
        if self.data.as_slice().len() != expected {
            return Err(std::io::Error::other(format!(
                "{} vector components for {expected}",
                self.data.as_slice().len()
            )));
        }
        self.changed = false;
        Ok(())
    }

    /// Removes an episode's vectors.
    pub(crate) fn remove(&mut self, slot: usize) {
        let Some(&(start, end)) = self.episode_rows.get(slot).filter(|(s, e)| s < e) else {
            return;
        };
        let (start, end, dim) = (start as usize, end as usize, self.dim);
        self.rows.drain(start..end);
        self.data.to_mut().drain(start * dim..end * dim);
        self.changed = true;
        self.scales.drain(start..end);
        let len = (end - start) as u32;
        for span in &mut self.episode_rows {
            if span.0 >= end as u32 {
                *span = (span.0 - len, span.1 - len);
            }
        }
        self.episode_rows[slot] = (0, 0);
        if let Some(clusters) = &mut self.clusters {
            clusters.remove_rows(start, end - start);
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
        let threads = if self.rows.len() >= PARALLEL_FROM {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS))
        } else {
            1
        };
        // Shares end where an episode's run of rows ends, so no episode is split.
        let mut bounds = vec![0];
        for t in 1..threads {
            let mut b = (self.rows.len() * t / threads).max(*bounds.last().expect("starts at 0"));
            while b > 0 && b < self.rows.len() && self.rows[b].0 == self.rows[b - 1].0 {
                b += 1;
            }
            bounds.push(b);
        }
        bounds.push(self.rows.len());
        // The scan is compiled again for the widest SIMD the CPU has (AVX2 on most x86),
        // picked at run time: the baseline build only knows SSE2.
        let arch = pulp::Arch::new();
        let scan = |t: usize| {
            let rows = bounds[t]..bounds[t + 1];
            arch.dispatch(ScanShare {
                index: self,
                rows,
                query: &query,
                visible,
                episodes,
                messages,
            })
        };
        let mut parts: Vec<Scan> = if threads == 1 {
            vec![scan(0)]
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..threads).map(|t| s.spawn(move || scan(t))).collect();
                handles.into_iter().map(|h| h.join().expect("scan thread")).collect()
            })
        };
        let Scan { episodes: mut top_episodes, messages: mut top_messages } = parts.remove(0);
        for part in parts {
            for (sim, item) in part.episodes.into_sorted() {
                top_episodes.offer(sim, item);
            }
            for (sim, item) in part.messages.into_sorted() {
                top_messages.offer(sim, item);
            }
        }
        hits(top_episodes, top_messages)
    }
}

/// One thread's share of a scan, as pulp dispatches it: `with_simd` and the scan it calls are
/// inlined into each SIMD variant (a closure would stay a separate, baseline function).
struct ScanShare<'a> {
    index: &'a VectorIndex,
    rows: std::ops::Range<usize>,
    query: &'a Quantized,
    visible: &'a [bool],
    episodes: usize,
    messages: usize,
}

impl pulp::WithSimd for ScanShare<'_> {
    type Output = Scan;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Scan {
        let Self { index, rows, query, visible, episodes, messages } = self;
        index.scan(rows, query, visible, episodes, messages)
    }
}

/// Similarities of some rows, as pulp dispatches them (see [`ScanShare`]).
struct Similarities<'a> {
    index: &'a VectorIndex,
    rows: &'a [usize],
    query: &'a Quantized,
}

impl pulp::WithSimd for Similarities<'_> {
    type Output = Vec<f32>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Vec<f32> {
        // A plain loop: an iterator chain's `fold` would be compiled outside the SIMD variant.
        let mut sims = Vec::with_capacity(self.rows.len());
        for &row in self.rows {
            sims.push(self.index.similarity(row, self.query));
        }
        sims
    }
}

/// What one thread's share of a scan found.
struct Scan {
    episodes: TopK<(usize, u64)>,
    messages: TopK<(usize, u64)>,
}

impl VectorIndex {
    /// Scans `rows`, which hold whole episodes: an episode's rows are contiguous, as each
    /// episode's vectors are added together. Always inlined, so that it is compiled inside
    /// each SIMD variant of the dispatch above.
    #[inline(always)]
    fn scan(
        &self,
        rows: std::ops::Range<usize>,
        query: &Quantized,
        visible: &[bool],
        episodes: usize,
        messages: usize,
    ) -> Scan {
        let mut top_episodes = TopK::new(episodes);
        let mut top_messages = TopK::new(messages);
        // The episode being scanned and its best (similarity, message) so far.
        let mut run: Option<(usize, f32, u64)> = None;
        // The message waiting for its successor's similarity: (slot, seq, own, borrowed).
        let mut waiting: Option<(usize, u64, f32, f32)> = None;
        let borrow = self.config.borrow;
        let dim = self.dim;
        let data = self.data.as_slice()[rows.start * dim..rows.end * dim].chunks_exact(dim);
        for ((&(e, seq), vector), &scale) in
            self.rows[rows.clone()].iter().zip(data).zip(&self.scales[rows])
        {
            if !visible.get(e).copied().unwrap_or(false) {
                continue;
            }
            let sim = dot_i8(vector, &query.data) as f32 * scale * query.scale;
            run = match run {
                Some((r, best, at)) if r == e => {
                    Some(if sim > best { (e, sim, seq) } else { (r, best, at) })
                }
                Some((r, best, at)) => {
                    top_episodes.offer(best, (r, at));
                    Some((e, sim, seq))
                }
                None => Some((e, sim, seq)),
            };
            let mut lent = f32::MIN;
            if let Some((we, wseq, own, borrowed)) = waiting {
                let adjacent = self.next_to((we, wseq), (e, seq));
                let from_next =
                    if adjacent && borrow.after > 0.0 { borrow.after * sim } else { f32::MIN };
                top_messages.offer(own.max(borrowed).max(from_next), (we, wseq));
                if adjacent && borrow.before > 0.0 {
                    lent = borrow.before * own;
                }
            }
            waiting = Some((e, seq, sim, lent));
        }
        if let Some((we, wseq, own, borrowed)) = waiting {
            top_messages.offer(own.max(borrowed), (we, wseq));
        }
        if let Some((r, best, at)) = run {
            top_episodes.offer(best, (r, at));
        }
        Scan { episodes: top_episodes, messages: top_messages }
    }

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
        s2 == s1 + 1 && (e1 == e2 || (c1 == c2 && start - end <= self.config.borrow.max_gap_ms))
    }

    /// A grouped search: the visible rows of the groups nearest the query, until `probe_rows`
    /// were scanned; then its best candidates scored exactly (a message with its neighbours'
    /// shares, an episode by its best message). `None` when the scope hides most rows, so
    /// that the nearest groups hold too few of its own: the exact scan serves it.
    fn probe(
        &self,
        clusters: &Clusters,
        query: &Quantized,
        visible: &[bool],
        episodes: usize,
        messages: usize,
    ) -> Option<VectorHits> {
        let is_visible = |row: usize| visible.get(self.rows[row].0).copied().unwrap_or(false);
        let mut best_rows = TopK::new(episodes * 4);
        // A row is offered once for itself and once for what each neighbour lends it.
        let mut message_rows = TopK::new(messages * 3);
        let probe_rows = self.config.probe_rows;
        // The visible rows not in a group yet, then those of the groups nearest the query.
        let groups = clusters.by_nearness(&query.data);
        let sources =
            std::iter::once(clusters.pending()).chain(groups.iter().map(|&g| clusters.members(g)));
        let (mut scanned, mut probed) = (0, Vec::with_capacity(probe_rows + 4_096));
        for members in sources {
            if probed.len() >= probe_rows {
                break;
            }
            if scanned >= probe_rows * 4 && probed.len() < probe_rows {
                return None;
            }
            scanned += members.len();
            probed.extend(members.iter().map(|&row| row as usize).filter(|&row| is_visible(row)));
        }
        for (&row, sim) in probed.iter().zip(self.similarities(&probed, query)) {
            best_rows.offer(sim, row);
            message_rows.offer(sim, row);
            let here = self.rows[row];
            if self.config.borrow.before > 0.0
                && row + 1 < self.rows.len()
                && is_visible(row + 1)
                && self.next_to(here, self.rows[row + 1])
            {
                message_rows.offer(self.config.borrow.before * sim, row + 1);
            }
            if self.config.borrow.after > 0.0
                && row > 0
                && is_visible(row - 1)
                && self.next_to(self.rows[row - 1], here)
            {
                message_rows.offer(self.config.borrow.after * sim, row - 1);
            }
        }
        let mut slots: Vec<usize> =
            best_rows.into_sorted().into_iter().map(|(_, row)| self.rows[row].0).collect();
        dedup_in_order(&mut slots);
        let mut found_episodes: Vec<(usize, f64, u64)> = slots
            .into_iter()
            .filter_map(|slot| self.best_of(slot, query).map(|(sim, seq)| (slot, sim, seq)))
            .collect();
        found_episodes.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        found_episodes.truncate(episodes);
        let mut rows: Vec<usize> =
            message_rows.into_sorted().into_iter().map(|(_, row)| row).collect();
        dedup_in_order(&mut rows);
        let mut found_messages: Vec<(usize, f32)> = rows
            .into_iter()
            .map(|row| (row, self.message_score(row, query, &is_visible)))
            .collect();
        found_messages.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        found_messages.truncate(messages);
        Some(VectorHits {
            episodes: found_episodes,
            messages: found_messages
                .into_iter()
                .map(|(row, sim)| (self.rows[row].0, self.rows[row].1, f64::from(sim)))
                .collect(),
        })
    }

    /// A message's score as the exact scan gives it: its own similarity or the shares its
    /// visible neighbours lend, whichever is more.
    fn message_score(
        &self,
        row: usize,
        query: &Quantized,
        is_visible: &impl Fn(usize) -> bool,
    ) -> f32 {
        let here = self.rows[row];
        let mut score = self.similarity(row, query);
        if self.config.borrow.before > 0.0
            && row > 0
            && is_visible(row - 1)
            && self.next_to(self.rows[row - 1], here)
        {
            score = score.max(self.config.borrow.before * self.similarity(row - 1, query));
        }
        if self.config.borrow.after > 0.0
            && row + 1 < self.rows.len()
            && is_visible(row + 1)
            && self.next_to(here, self.rows[row + 1])
        {
            score = score.max(self.config.borrow.after * self.similarity(row + 1, query));
        }
        score
    }

    /// The similarity of each of `rows` to the query, on two threads when there are many,
    /// compiled for the widest SIMD the CPU has.
    fn similarities(&self, rows: &[usize], query: &Quantized) -> Vec<f32> {
        let arch = pulp::Arch::new();
        let part = |rows: &[usize]| arch.dispatch(Similarities { index: self, rows, query });
        if rows.len() < PARALLEL_FROM / 8 {
            return part(rows);
        }
        let (first, second) = rows.split_at(rows.len() / 2);
        std::thread::scope(|s| {
            let other = s.spawn(|| part(second));
            let mut sims = part(first);
            sims.extend(other.join().expect("similarity thread"));
            sims
        })
    }

    #[inline(always)]
    fn similarity(&self, row: usize, query: &Quantized) -> f32 {
        let data = &self.data.as_slice()[row * self.dim..(row + 1) * self.dim];
        dot_i8(data, &query.data) as f32 * self.scales[row] * query.scale
    }
}

/// Drops repeated items, keeping each one's first place.
fn dedup_in_order(items: &mut Vec<usize>) {
    let mut seen = std::collections::HashSet::new();
    items.retain(|&item| seen.insert(item));
}

/// A query vector quantized like the rows.
struct Quantized {
    data: Vec<i8>,
    scale: f32,
}

impl Quantized {
    fn new(vector: &[f32]) -> Self {
        let mut data = Vec::with_capacity(vector.len());
        let scale = quantize(vector, &mut data);
        Self { data, scale }
    }
}

/// Appends `vector` as 8-bit integers to `out`; returns what one unit is worth.
pub(crate) fn quantize(vector: &[f32], out: &mut Vec<i8>) -> f32 {
    let max = vector.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 && max.is_finite() { max / 127.0 } else { 1.0 };
    out.extend(vector.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8));
    scale
}

fn hits(episodes: TopK<(usize, u64)>, messages: TopK<(usize, u64)>) -> VectorHits {
    VectorHits {
        episodes: episodes
            .into_sorted()
            .into_iter()
            .map(|(sim, (e, seq))| (e, f64::from(sim), seq))
            .collect(),
        messages: messages
            .into_sorted()
            .into_iter()
            .map(|(sim, (e, seq))| (e, seq, f64::from(sim)))
            .collect(),
    }
}

/// Dot product in sixteen lanes, which the compiler turns into SIMD.
#[inline(always)]
pub(crate) fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let mut lanes = [0i32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail: i32 =
        ca.remainder().iter().zip(cb.remainder()).map(|(&x, &y)| i32::from(x) * i32::from(y)).sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..16 {
            lanes[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    lanes.iter().sum::<i32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::tests::episode;

    fn exact(borrow: Borrow) -> VectorConfig {
        VectorConfig { borrow, approximate_from: usize::MAX, probe_rows: PROBE_ROWS }
    }

    fn unit(seed: u32, dim: usize) -> Vec<f32> {
        let v: Vec<f32> =
            (0..dim).map(|i| ((i as f32 + 1.0) * (seed as f32 + 0.37)).sin()).collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / norm).collect()
    }

    #[test]
    fn quantized_similarity_is_close_to_the_exact_one() {
        let dim = 37; // not a multiple of the lanes: the tail counts too
        let mut index = VectorIndex::new(exact(Borrow::default()));
        let rows: Vec<Vec<f32>> = (0..20).map(|s| unit(s, dim)).collect();
        for (i, r) in rows.iter().enumerate() {
            index.add((i, 0, &episode("t", "c", None, 0)), 1, r);
        }
        let q = unit(99, dim);
        let quantized = Quantized::new(&q);
        for (i, r) in rows.iter().enumerate() {
            let exact: f32 = r.iter().zip(&q).map(|(x, y)| x * y).sum();
            assert!((index.similarity(i, &quantized) - exact).abs() < 0.02, "row {i}");
        }
        assert_eq!(Quantized::new(&vec![0.0; dim]).scale, 1.0, "a zero vector stays finite");
    }

    #[test]
    fn an_answer_borrows_from_the_question_before_it() {
        let dim = 8;
        let axis = |i: usize| {
            let mut v = vec![0.0; dim];
            v[i] = 1.0;
            v
        };
        let borrow = Borrow { before: 0.8, after: 0.6, max_gap_ms: 100 };
        let ep = |start| episode("t", "c", None, start);
        let q: Vec<f32> = axis(0).iter().zip(axis(1)).map(|(a, b)| a * 0.9 + b * 0.3).collect();
        let search = |index: &VectorIndex| {
            let found = index.search(&q, &[true; 4], 4, 8).messages;
            move |seq| found.iter().find(|m| m.1 == seq).map(|m| m.2 as f32).unwrap()
        };
        let mut index = VectorIndex::new(exact(borrow));
        // Conversation 1: a question (episode 0, seq 1) answered in the next episode (seq 2),
        // a few moments later.
        index.add((0, 1, &ep(0)), 1, &axis(0));
        index.add((1, 1, &ep(20)), 2, &axis(1));
        // Conversation 2 follows in the rows with the next seq: no neighbour of either.
        index.add((2, 2, &ep(30)), 3, &axis(2));
        // Conversation 2 again, after a long silence.
        index.add((3, 2, &ep(1_000)), 4, &axis(3));
        let score = search(&mut index);
        assert!((score(1) - 0.9).abs() < 0.02);
        assert!((score(2) - 0.8 * 0.9).abs() < 0.02, "the answer borrows");
        assert!(score(3).abs() < 0.02, "another conversation lends nothing");
        assert!(score(4).abs() < 0.02, "nothing borrowed over a long silence");
        // Borrowing off: a message scores its own similarity only.
        let mut plain = VectorIndex::new(exact(Borrow::default()));
        plain.add((0, 1, &ep(0)), 1, &axis(0));
        plain.add((1, 1, &ep(20)), 2, &axis(1));
        assert!((search(&mut plain)(2) - 0.3).abs() < 0.02);
    }

    #[test]
    fn threads_find_what_one_thread_finds() {
        let dim = 16;
        let mut index = VectorIndex::new(exact(Borrow::default()));
        // Each episode's rows together, as the search index adds them.
        for row in 0..PARALLEL_FROM + 10 {
            let slot = row * 1000 / (PARALLEL_FROM + 10);
            index.add((slot, 0, &episode("t", "c", None, 0)), row as u64, &unit(row as u32, dim));
        }
        let visible = vec![true; 1000];
        let q = unit(7, dim);
        let parallel = index.search(&q, &visible, 20, 20);
        let one = index.scan(0..index.rows.len(), &Quantized::new(&q), &visible, 20, 20);
        let single: Vec<(usize, u64)> =
            one.messages.into_sorted().into_iter().map(|(_, item)| item).collect();
        let found: Vec<(usize, u64)> =
            parallel.messages.iter().map(|&(slot, seq, _)| (slot, seq)).collect();
        assert_eq!(found, single);
        let single: Vec<(usize, u64)> =
            one.episodes.into_sorted().into_iter().map(|(_, item)| item).collect();
        let found: Vec<(usize, u64)> =
            parallel.episodes.iter().map(|&(slot, _, seq)| (slot, seq)).collect();
        assert_eq!(found, single);
        let best3 = index.best_of(3, &Quantized::new(&q));
        let best_of = index.best_of_each(&q, &visible, &[3, 5000]);
        assert_eq!(best_of, [best3, None], "an unknown slot has none");
    }

    /// 3,000 rows about 30 directions, two messages an episode, each episode its own
    /// conversation, searched exactly and by groups.
    fn indexes(probe_rows: usize) -> (VectorIndex, VectorIndex) {
        let dim = 24;
        let borrow = Borrow { before: 0.8, after: 0.6, max_gap_ms: 0 };
        let mut exact_index = VectorIndex::new(exact(borrow));
        let mut grouped =
            VectorIndex::new(VectorConfig { borrow, approximate_from: 0, probe_rows });
        for row in 0..3_000u32 {
            let mut v = unit(row, dim);
            v[row as usize % 30 % dim] += 2.0;
            let slot = row as usize / 2;
            let at = (slot, slot as u64, &episode("t", "c", None, 0));
            exact_index.add(at, u64::from(row), &v);
            grouped.add(at, u64::from(row), &v);
        }
        grouped.settle();
        exact_index.settle();
        assert!(grouped.clusters.is_some() && exact_index.clusters.is_none());
        (exact_index, grouped)
    }

    #[test]
    fn a_grouped_search_scores_what_it_finds_exactly() {
        let (exact_index, grouped) = indexes(300);
        let visible = vec![true; 1_500];
        let mut q = unit(5, 24);
        q[7] += 2.0;
        let want = exact_index.search(&q, &visible, 10, 10);
        let got = grouped.search(&q, &visible, 10, 10);
        // What it returns carries the exact scores, neighbours' shares included...
        let exact_all = exact_index.search(&q, &visible, 1_500, 3_000);
        for m in &got.messages {
            let exact = exact_all.messages.iter().find(|e| (e.0, e.1) == (m.0, m.1)).unwrap();
            assert_eq!(m.2, exact.2, "message {m:?}");
        }
        for e in &got.episodes {
            let exact = exact_all.episodes.iter().find(|x| x.0 == e.0).unwrap();
            assert_eq!((e.1, e.2), (exact.1, exact.2), "episode {e:?}");
        }
        // ...and most of the best ones, from a tenth of the rows.
        let overlap = |a: &[(usize, u64, f64)], b: &[(usize, u64, f64)]| {
            a.iter().filter(|x| b.iter().any(|y| (y.0, y.1) == (x.0, x.1))).count()
        };
        assert!(overlap(&got.messages, &want.messages) >= 8, "{got:?} against {want:?}");
    }

    #[test]
    fn a_grouped_search_over_every_row_or_a_narrow_scope_equals_the_exact_scan() {
        let same = |a: &VectorHits, b: &VectorHits| {
            assert_eq!(a.messages, b.messages);
            assert_eq!(a.episodes, b.episodes);
        };
        let q = unit(11, 24);
        // Probing at least every row: nothing is missed.
        let (exact_index, grouped) = indexes(3_000);
        let all = vec![true; 1_500];
        same(&grouped.search(&q, &all, 10, 10), &exact_index.search(&q, &all, 10, 10));
        // A scope that hides nearly every row falls back to the exact scan.
        let (exact_index, grouped) = indexes(100);
        let narrow: Vec<bool> = (0..1_500).map(|slot| slot % 50 == 0).collect();
        same(&grouped.search(&q, &narrow, 10, 10), &exact_index.search(&q, &narrow, 10, 10));
    }

    #[test]
    fn rows_added_after_grouping_are_found_before_and_after_they_join_a_group() {
        let (_, mut grouped) = indexes(300);
        // Away from every direction earlier rows lean to.
        let v = vec![-1.0 / 24f32.sqrt(); 24];
        let slot = 1_500;
        grouped.add((slot, slot as u64, &episode("t", "c", None, 0)), 9_000, &v);
        let visible = vec![true; slot + 1];
        let best = |index: &VectorIndex| index.search(&v, &visible, 1, 1).messages[0];
        assert_eq!(best(&mut grouped).1, 9_000, "not yet in a group");
        assert!(!grouped.settle(), "a single row does not regroup");
        assert_eq!(grouped.clusters.as_ref().unwrap().pending(), &[] as &[u32]);
        assert_eq!(best(&mut grouped).1, 9_000, "in its group");
    }
}
