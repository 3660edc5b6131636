//! Message vectors of closed episodes, in memory, by episode slot.
//!
//! Vectors are kept as 8-bit integers with one scale each: a scan is bound by memory
//! bandwidth, and a quarter of the bytes makes it about twice as fast (unit vectors lose
//! about 0.01 of cosine similarity to rounding, far below what separates a match).
//!
//! Search scans every message vector of a visible episode, on up to four threads once there
//! are many: exact, and at 200,000 vectors a few milliseconds on two cores (an HNSW graph,
//! tried here before, lost on both build time and latency at that size).

use epimem_core::Episode;
use serde::{Deserialize, Serialize};

use crate::top_k::TopK;

#[derive(Default, Serialize, Deserialize)]
pub(crate) struct VectorIndex {
    dim: usize,
    /// Rows of each episode slot.
    episode_rows: Vec<Vec<usize>>,
    /// (episode slot, message seq) of each row of `data`.
    rows: Vec<(usize, u64)>,
    /// The conversation, start and end (ms) of each episode slot, to tell which rows are
    /// neighbouring messages of one conversation.
    episodes: Vec<(u64, i64, i64)>,
    /// Shares of the similarity of the message before and after that a message borrows
    /// (configuration, set again after a load).
    #[serde(skip)]
    pub(crate) borrow: Borrow,
    /// `dim` quantized components per row (saved as one byte string: element by element,
    /// decoding hundreds of megabytes was most of what opening a saved index cost).
    #[serde(with = "as_bytes")]
    data: Vec<i8>,
    /// What one quantized unit is worth, per row.
    scales: Vec<f32>,
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
    /// Similarity and best message of each of the `also` slots asked about (if visible).
    pub(crate) also: Vec<Option<(f64, u64)>>,
    /// The best visible messages, best first: (slot, seq, similarity).
    pub(crate) messages: Vec<(usize, u64, f64)>,
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex").field("rows", &self.rows.len()).finish_non_exhaustive()
    }
}

impl VectorIndex {
    pub(crate) fn new(borrow: Borrow) -> Self {
        Self { borrow, ..Self::default() }
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
            self.episode_rows.resize(slot + 1, Vec::new());
            self.episodes.resize(slot + 1, (0, 0, 0));
        }
        self.episodes[slot] = (conversation, episode.start.0, episode.end.0);
        let row = self.rows.len();
        self.rows.push((slot, seq));
        self.scales.push(quantize(vector, &mut self.data));
        self.episode_rows[slot].push(row);
    }

    /// Removes an episode's vectors.
    pub(crate) fn remove(&mut self, slot: usize) {
        if self.episode_rows.get(slot).is_none_or(Vec::is_empty) {
            return;
        }
        let dim = self.dim;
        let mut rows = Vec::with_capacity(self.rows.len());
        let mut data = Vec::with_capacity(self.data.len());
        let mut scales = Vec::with_capacity(self.scales.len());
        for (i, &(e, seq)) in self.rows.iter().enumerate() {
            if e != slot {
                rows.push((e, seq));
                data.extend_from_slice(&self.data[i * dim..(i + 1) * dim]);
                scales.push(self.scales[i]);
            }
        }
        self.rows = rows;
        self.data = data;
        self.scales = scales;
        for rows in &mut self.episode_rows {
            rows.clear();
        }
        for (row, &(e, _)) in self.rows.iter().enumerate() {
            self.episode_rows[e].push(row);
        }
    }

    /// The `episodes` best episodes and `messages` best messages among the `visible` slots,
    /// and the similarity of the `also` slots.
    pub(crate) fn search(
        &mut self,
        query: &[f32],
        visible: &[bool],
        episodes: usize,
        messages: usize,
        also: &[usize],
    ) -> VectorHits {
        if query.len() != self.dim || self.rows.is_empty() {
            return VectorHits { also: vec![None; also.len()], ..VectorHits::default() };
        }
        let query = Quantized::new(query);
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
        let also = also
            .iter()
            .map(|&e| if visible.get(e) == Some(&true) { self.best_of(e, &query) } else { None })
            .collect();
        hits(top_episodes, also, top_messages)
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
        let borrow = self.borrow;
        let next_to = |(e1, s1): (usize, u64), (e2, s2): (usize, u64)| {
            let ((c1, _, end), (c2, start, _)) = (self.episodes[e1], self.episodes[e2]);
            s2 == s1 + 1 && (e1 == e2 || (c1 == c2 && start - end <= borrow.max_gap_ms))
        };
        let dim = self.dim;
        let data = self.data[rows.start * dim..rows.end * dim].chunks_exact(dim);
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
                let adjacent = next_to((we, wseq), (e, seq));
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

    /// The best (similarity, message) of one episode.
    fn best_of(&self, slot: usize, query: &Quantized) -> Option<(f64, u64)> {
        self.episode_rows
            .get(slot)?
            .iter()
            .map(|&row| (self.similarity(row, query), self.rows[row].1))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(sim, seq)| (f64::from(sim), seq))
    }

    fn similarity(&self, row: usize, query: &Quantized) -> f32 {
        let data = &self.data[row * self.dim..(row + 1) * self.dim];
        dot_i8(data, &query.data) as f32 * self.scales[row] * query.scale
    }
}

/// `Vec<i8>` as a byte string.
mod as_bytes {
    use serde::{Deserializer, Serializer, de::Visitor};

    pub(super) fn serialize<S: Serializer>(data: &[i8], s: S) -> Result<S::Ok, S::Error> {
        let bytes: Vec<u8> = data.iter().map(|&x| x as u8).collect();
        s.serialize_bytes(&bytes)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<i8>, D::Error> {
        struct Bytes;
        impl Visitor<'_> for Bytes {
            type Value = Vec<i8>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("quantized vector components as bytes")
            }

            fn visit_bytes<E>(self, bytes: &[u8]) -> Result<Vec<i8>, E> {
                Ok(bytes.iter().map(|&x| x as i8).collect())
            }
        }
        d.deserialize_bytes(Bytes)
    }
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
fn quantize(vector: &[f32], out: &mut Vec<i8>) -> f32 {
    let max = vector.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 && max.is_finite() { max / 127.0 } else { 1.0 };
    out.extend(vector.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8));
    scale
}

fn hits(
    episodes: TopK<(usize, u64)>,
    also: Vec<Option<(f64, u64)>>,
    messages: TopK<(usize, u64)>,
) -> VectorHits {
    VectorHits {
        episodes: episodes
            .into_sorted()
            .into_iter()
            .map(|(sim, (e, seq))| (e, f64::from(sim), seq))
            .collect(),
        also,
        messages: messages
            .into_sorted()
            .into_iter()
            .map(|(sim, (e, seq))| (e, seq, f64::from(sim)))
            .collect(),
    }
}

/// Dot product in sixteen lanes, which the compiler turns into SIMD.
#[inline(always)]
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
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

    fn unit(seed: u32, dim: usize) -> Vec<f32> {
        let v: Vec<f32> =
            (0..dim).map(|i| ((i as f32 + 1.0) * (seed as f32 + 0.37)).sin()).collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / norm).collect()
    }

    #[test]
    fn quantized_similarity_is_close_to_the_exact_one() {
        let dim = 37; // not a multiple of the lanes: the tail counts too
        let mut index = VectorIndex::new(Borrow::default());
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
        let search = |index: &mut VectorIndex| {
            let found = index.search(&q, &[true; 4], 4, 8, &[]).messages;
            move |seq| found.iter().find(|m| m.1 == seq).map(|m| m.2 as f32).unwrap()
        };
        let mut index = VectorIndex::new(borrow);
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
        let mut plain = VectorIndex::new(Borrow::default());
        plain.add((0, 1, &ep(0)), 1, &axis(0));
        plain.add((1, 1, &ep(20)), 2, &axis(1));
        assert!((search(&mut plain)(2) - 0.3).abs() < 0.02);
    }

    #[test]
    fn threads_find_what_one_thread_finds() {
        let dim = 16;
        let mut index = VectorIndex::new(Borrow::default());
        // Each episode's rows together, as the search index adds them.
        for row in 0..PARALLEL_FROM + 10 {
            let slot = row * 1000 / (PARALLEL_FROM + 10);
            index.add((slot, 0, &episode("t", "c", None, 0)), row as u64, &unit(row as u32, dim));
        }
        let visible = vec![true; 1000];
        let q = unit(7, dim);
        let parallel = index.search(&q, &visible, 20, 20, &[3, 5000]);
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
        assert_eq!(parallel.also[0], best3);
        assert_eq!(parallel.also[1], None, "an unknown slot");
    }
}
