//! The exact search: every visible row scanned, on several threads once there are many, each
//! share compiled for the widest SIMD the CPU has.

use epimem_core::recall::borrowed;

use super::{Quantized, VectorHits, VectorIndex, dot_i8, layout::Layout};
use crate::top_k::TopK;

/// Rows from which a scan is split over threads.
const PARALLEL_FROM: usize = 50_000;
const MAX_THREADS: usize = 4;

impl VectorIndex {
    /// The best episodes and messages among every visible row.
    pub(super) fn scan_all(
        &self,
        query: &Quantized,
        visible: &[bool],
        episodes: usize,
        messages: usize,
    ) -> VectorHits {
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
        // Rows stored group after group are scored in the order they are stored first: read
        // in the order they were added, each would be a miss in a file of hundreds of MB.
        let stored =
            self.layout.as_ref().map(|l| self.stored_similarities(l, query, visible, threads));
        let stored = stored.as_deref();
        let scan = |t: usize| {
            let rows = bounds[t]..bounds[t + 1];
            let share = ScanShare { index: self, rows, query, visible, episodes, messages, stored };
            arch.dispatch(share)
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

    /// The similarity of each visible position to the query (what an invisible one holds is
    /// never read), on `threads` threads.
    fn stored_similarities(
        &self,
        layout: &Layout,
        query: &Quantized,
        visible: &[bool],
        threads: usize,
    ) -> Vec<f32> {
        let mut out = vec![0.0f32; self.scales.len()];
        let share = out.len().div_ceil(threads).max(1);
        let arch = pulp::Arch::new();
        let part = |start: usize, out: &mut [f32]| {
            arch.dispatch(StoredShare { index: self, layout, start, out, query, visible });
        };
        if threads == 1 {
            part(0, &mut out);
            return out;
        }
        std::thread::scope(|s| {
            for (t, chunk) in out.chunks_mut(share).enumerate() {
                s.spawn(move || part(t * share, chunk));
            }
        });
        out
    }

    /// Scans `rows`, which hold whole episodes: an episode's rows are contiguous, as each
    /// episode's vectors are added together; their similarities are computed here, or read
    /// from `stored` by position when the rows are laid out by group. Always inlined, so that
    /// it is compiled inside each SIMD variant of the dispatch above.
    #[inline(always)]
    fn scan(
        &self,
        rows: std::ops::Range<usize>,
        query: &Quantized,
        visible: &[bool],
        (episodes, messages): (usize, usize),
        stored: Option<&[f32]>,
    ) -> Scan {
        let mut top_episodes = TopK::new(episodes);
        let mut top_messages = TopK::new(messages);
        // The episode being scanned and its best (similarity, message) so far.
        let mut run: Option<(usize, f32, u64)> = None;
        // The message waiting for its successor's similarity: (slot, seq, own, what the
        // message before it lends it).
        let mut waiting: Option<(usize, u64, f32, Option<f32>)> = None;
        let borrow = self.config.borrow;
        let (dim, data) = (self.dim, self.data.components());
        for row in rows {
            let (e, seq) = self.rows[row];
            if !visible.get(e).copied().unwrap_or(false) {
                continue;
            }
            let sim = match stored {
                Some(stored) => stored[self.position(row)],
                None => {
                    dot_i8(data.row(row, dim), &query.data) as f32 * self.scales[row] * query.scale
                }
            };
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
            let mut lent = None;
            if let Some((we, wseq, own, from_before)) = waiting {
                let adjacent = self.next_to((we, wseq), (e, seq));
                let from_after = borrow.from_after(sim).filter(|_| adjacent);
                top_messages.offer(borrowed(own, [from_before, from_after]), (we, wseq));
                lent = borrow.from_before(own).filter(|_| adjacent);
            }
            waiting = Some((e, seq, sim, lent));
        }
        if let Some((we, wseq, own, from_before)) = waiting {
            top_messages.offer(borrowed(own, [from_before]), (we, wseq));
        }
        if let Some((r, best, at)) = run {
            top_episodes.offer(best, (r, at));
        }
        Scan { episodes: top_episodes, messages: top_messages }
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
    stored: Option<&'a [f32]>,
}

impl pulp::WithSimd for ScanShare<'_> {
    type Output = Scan;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Scan {
        let Self { index, rows, query, visible, episodes, messages, stored } = self;
        index.scan(rows, query, visible, (episodes, messages), stored)
    }
}

/// One thread's share of the similarities of rows in the order they are stored, from
/// position `start` on, as pulp dispatches it.
struct StoredShare<'a> {
    index: &'a VectorIndex,
    layout: &'a Layout,
    start: usize,
    out: &'a mut [f32],
    query: &'a Quantized,
    visible: &'a [bool],
}

impl pulp::WithSimd for StoredShare<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let Self { index, layout, start, out, query, visible } = self;
        // A plain loop: an iterator chain's `fold` would be compiled outside the SIMD variant.
        for (i, sim) in out.iter_mut().enumerate() {
            let position = start + i;
            if visible.get(layout.slot_at(position)).copied().unwrap_or(false) {
                *sim = index.similarity_at(position, query);
            }
        }
    }
}

/// What one thread's share of a scan found.
struct Scan {
    episodes: TopK<(usize, u64)>,
    messages: TopK<(usize, u64)>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vectors::Regroup;
    use crate::{
        table::tests::episode,
        vectors::{
            Borrow, VectorConfig,
            tests::{exact, unit},
        },
    };

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
        let one = index.scan(0..index.rows.len(), &Quantized::new(&q), &visible, (20, 20), None);
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
        // The same rows stored group after group: scanned on threads, the same found.
        let mut grouped = VectorIndex::new(VectorConfig { approximate_from: 0, ..index.config });
        for row in 0..PARALLEL_FROM + 10 {
            let slot = row * 1000 / (PARALLEL_FROM + 10);
            grouped.add((slot, 0, &episode("t", "c", None, 0)), row as u64, &unit(row as u32, dim));
        }
        assert!(grouped.settle(Regroup::Due) && grouped.layout.is_some());
        let by_layout = grouped.scan_all(&Quantized::new(&q), &visible, 20, 20);
        assert_eq!(by_layout.messages, parallel.messages);
        assert_eq!(by_layout.episodes, parallel.episodes);
        let best3 = index.best_of(3, &Quantized::new(&q));
        let best_of = index.best_of_each(&q, &visible, &[3, 5000]);
        assert_eq!(best_of, [best3, None], "an unknown slot has none");
    }
}
