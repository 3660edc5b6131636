//! Message vectors grouped by their nearest centroid (an inverted file), so that a search over
//! very many vectors scans the groups nearest the query instead of every row.
//!
//! Centroids come from spherical k-means over an evenly spaced sample of the rows, in their
//! 8-bit form; every row is then put in the group of its nearest centroid, and rows added later
//! join the group nearest them. Groups are trained again once the rows have doubled, so a
//! centroid never stands for far more rows than it was fitted to. Hand-written: the vector
//! crates on crates.io either build a C++ library (usearch, faiss) or keep f32 rows in memory,
//! where the rows here are the 8-bit ones the exact scan already holds.
//!
//! Groups hold positions in the vector data, not rows: the owner stores the rows group after
//! group (it is told the order to store them in, [`Packing`]), so that a search reads each
//! group it probes as one run of memory. Rows scattered over a large file cost a cache and a
//! TLB miss each; a run is read at memory speed. Rows added since the last packing are
//! appended at the end and listed with their group (`joined`) until the next one.

use serde::{Deserialize, Serialize};

use crate::{
    vector_file::Components,
    vectors::{dot_i8, quantize},
};

/// Sample rows per centroid when training.
const SAMPLE_PER_GROUP: usize = 24;
/// Rounds of k-means (the assignment barely moves after a handful on sentence vectors).
const ROUNDS: usize = 8;
/// Rows per group aimed at: about the square root of the rows, so that scanning the nearest
/// centroids and the nearest groups cost about the same.
const MIN_GROUPS: usize = 64;
/// Rows from which finding their groups is shared between threads.
const THREADS_FROM: usize = 1_024;
/// The rows are packed again once those outside their group's run are more than this share
/// of those inside (1/8: a probe then reads at most about a ninth of its rows scattered).
const LOOSE_SHARE: usize = 8;

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub(crate) struct Clusters {
    dim: usize,
    /// One 8-bit unit centroid of `dim` components per group...
    centroids: Vec<i8>,
    /// ...and what one unit of it is worth.
    scales: Vec<f32>,
    /// Where each group's run of packed positions starts; the last entry ends the last run.
    starts: Vec<u32>,
    /// Positions put in each group since the rows were last packed, ascending.
    joined: Vec<Vec<u32>>,
    /// Rows there were when trained.
    trained_for: usize,
    /// Positions added since, not in a group yet: they join theirs together (`assign`), on
    /// every core, instead of one by one as they come.
    pending: Vec<u32>,
}

/// The order to store the rows in: new position `i` takes the row at old position `order[i]`.
pub(crate) type Packing = Vec<u32>;

impl Clusters {
    /// Groups for the `data.len() / dim` rows of `data` (8-bit, `scales` per row), and the
    /// order to store those rows in so that each group's are one run.
    pub(crate) fn train(data: Components<'_>, scales: &[f32], dim: usize) -> (Self, Packing) {
        let rows = scales.len();
        let groups = ((rows as f64).sqrt() as usize).max(MIN_GROUPS).min(rows.max(1));
        let sample_n = (groups * SAMPLE_PER_GROUP).min(rows);
        let sample: Vec<usize> = (0..sample_n).map(|i| i * rows / sample_n).collect();
        let row = |r: usize| data.row(r, dim);
        let mut clusters = Self { dim, trained_for: rows, ..Self::default() };
        // Start from sample rows spread over the data: in the order it was added, or group after
        // group when trained again, either way spread over what the rows are about.
        for g in 0..groups {
            let r = sample[g * sample_n / groups];
            clusters.set_centroid(g, &dequantize(row(r), scales[r]));
        }
        for _ in 0..ROUNDS {
            let nearest = clusters.nearest_each(&sample, data);
            let mut sums = vec![0.0f32; groups * dim];
            let mut counts = vec![0usize; groups];
            for (&r, &g) in sample.iter().zip(&nearest) {
                counts[g as usize] += 1;
                let sum = &mut sums[g as usize * dim..(g as usize + 1) * dim];
                for (s, &x) in sum.iter_mut().zip(row(r)) {
                    *s += f32::from(x) * scales[r];
                }
            }
            for g in 0..groups {
                // A group nothing joined keeps its centroid.
                if counts[g] > 0 {
                    clusters.set_centroid(g, &sums[g * dim..(g + 1) * dim]);
                }
            }
        }
        let all: Vec<usize> = (0..rows).collect();
        clusters.joined = vec![Vec::new(); groups];
        clusters.starts = vec![0; groups + 1];
        for (p, g) in clusters.nearest_each(&all, data).into_iter().enumerate() {
            clusters.joined[g as usize].push(p as u32);
        }
        let packing = clusters.pack();
        (clusters, packing)
    }

    /// Whether the rows have outgrown the groups.
    pub(crate) fn outgrown(&self, rows: usize) -> bool {
        rows >= self.trained_for.saturating_mul(2)
    }

    pub(crate) fn groups(&self) -> usize {
        self.joined.len()
    }

    /// Takes the row at position `p` in (positions come in ascending order); it joins its
    /// group at the next `assign`, and is searched with every group until then.
    pub(crate) fn add(&mut self, p: usize) {
        self.pending.push(p as u32);
    }

    /// Puts the positions added since the last call in the groups nearest them.
    pub(crate) fn assign(&mut self, data: Components<'_>) {
        let pending: Vec<usize> = self.pending.drain(..).map(|p| p as usize).collect();
        for (p, g) in pending.iter().zip(self.nearest_each(&pending, data)) {
            self.joined[g as usize].push(*p as u32);
        }
    }

    /// Whether so many rows joined their groups since the last packing that it is time for
    /// another ([`Clusters::pack`]): more than `slack` times the usual share.
    pub(crate) fn pack_due(&self, slack: usize) -> bool {
        let loose = self.joined.iter().map(Vec::len).sum::<usize>() + self.pending.len();
        let packed = self.starts.last().map_or(0, |&end| end as usize);
        loose > 0 && loose * LOOSE_SHARE > packed * slack
    }

    /// Makes each group one run again, the rows that joined it last: the order to store the
    /// rows in (the positions held here are already the new ones). Assigns pending rows first.
    pub(crate) fn pack(&mut self) -> Packing {
        debug_assert!(self.pending.is_empty(), "assign before packing");
        let mut order = Vec::with_capacity(self.starts.last().map_or(0, |&e| e as usize));
        let mut starts = Vec::with_capacity(self.starts.len());
        for g in 0..self.groups() {
            starts.push(order.len() as u32);
            order.extend(self.starts[g]..self.starts[g + 1]);
            order.append(&mut self.joined[g]);
        }
        starts.push(order.len() as u32);
        self.starts = starts;
        order
    }

    /// Whether the groups hold together over `positions` positions of `dim` components (a
    /// saved file read back may be damaged).
    pub(crate) fn check(&self, positions: usize, dim: usize) -> bool {
        let groups = self.joined.len();
        self.dim == dim
            && self.centroids.len() == groups * dim
            && self.scales.len() == groups
            && self.starts.len() == groups + 1
            && self.starts.first() == Some(&0)
            && self.starts.windows(2).all(|w| w[0] <= w[1])
            && self.starts.last().is_some_and(|&end| end as usize <= positions)
            && self
                .joined
                .iter()
                .chain([&self.pending])
                .flatten()
                .all(|&p| (p as usize) < positions)
    }

    pub(crate) fn pending(&self) -> &[u32] {
        &self.pending
    }

    /// Drops the positions `removed` (ascending) and renumbers those after them.
    pub(crate) fn remove_positions(&mut self, removed: &[u32]) {
        let before = |p: u32| removed.partition_point(|&r| r < p) as u32;
        for start in &mut self.starts {
            *start -= before(*start);
        }
        for positions in self.joined.iter_mut().chain([&mut self.pending]) {
            positions.retain(|p| removed.binary_search(p).is_err());
            for p in positions.iter_mut() {
                *p -= before(*p);
            }
        }
    }

    /// Groups, nearest to `query` first.
    pub(crate) fn by_nearness(&self, query: &[i8]) -> Vec<usize> {
        let mut order = pulp::Arch::new().dispatch(Nearness { clusters: self, query });
        order.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        order.into_iter().map(|(_, g)| g).collect()
    }

    /// The run of positions packed in `group`...
    pub(crate) fn span(&self, group: usize) -> std::ops::Range<usize> {
        self.starts[group] as usize..self.starts[group + 1] as usize
    }

    /// ...and those that joined it since.
    pub(crate) fn joined(&self, group: usize) -> &[u32] {
        &self.joined[group]
    }

    fn set_centroid(&mut self, g: usize, direction: &[f32]) {
        let norm = direction.iter().map(|x| x * x).sum::<f32>().sqrt();
        let unit: Vec<f32> =
            direction.iter().map(|x| if norm > 0.0 { x / norm } else { 0.0 }).collect();
        let mut quantized = Vec::with_capacity(self.dim);
        let scale = quantize(&unit, &mut quantized);
        let at = g * self.dim;
        if self.centroids.len() < at + self.dim {
            self.centroids.resize(at + self.dim, 0);
            self.scales.resize(g + 1, 0.0);
        }
        self.centroids[at..at + self.dim].copy_from_slice(&quantized);
        self.scales[g] = scale;
    }

    #[inline(always)]
    fn similarity(&self, g: usize, vector: &[i8]) -> f32 {
        dot_i8(&self.centroids[g * self.dim..(g + 1) * self.dim], vector) as f32 * self.scales[g]
    }

    /// The nearest group of each of `rows`, on the machine's cores (the costly part of
    /// training: every row against every centroid).
    fn nearest_each(&self, rows: &[usize], data: Components<'_>) -> Vec<u32> {
        let arch = pulp::Arch::new();
        // The few rows of one commit are not worth a thread each.
        if rows.len() < THREADS_FROM {
            return arch.dispatch(Nearest { clusters: self, chunk: rows, data });
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
        let share = rows.len().div_ceil(threads).max(1);
        std::thread::scope(|s| {
            let handles: Vec<_> = rows
                .chunks(share)
                .map(|chunk| {
                    s.spawn(move || arch.dispatch(Nearest { clusters: self, chunk, data }))
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().expect("training thread")).collect()
        })
    }
}

/// One thread's share of finding nearest groups, compiled for the widest SIMD the CPU has
/// (see the scan in `vectors/exact.rs`).
struct Nearest<'a> {
    clusters: &'a Clusters,
    chunk: &'a [usize],
    data: Components<'a>,
}

impl pulp::WithSimd for Nearest<'_> {
    type Output = Vec<u32>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Vec<u32> {
        let dim = self.clusters.dim;
        // Plain loops: an iterator chain's `fold` would be compiled outside the SIMD variant.
        let mut nearest = Vec::with_capacity(self.chunk.len());
        for &r in self.chunk {
            let vector = self.data.row(r, dim);
            let mut best = (f32::MIN, 0u32);
            for g in 0..self.clusters.scales.len() {
                let sim = self.clusters.similarity(g, vector);
                if sim > best.0 {
                    best = (sim, g as u32);
                }
            }
            nearest.push(best.1);
        }
        nearest
    }
}

/// The similarity of the query to each centroid, compiled for the widest SIMD the CPU has.
struct Nearness<'a> {
    clusters: &'a Clusters,
    query: &'a [i8],
}

impl pulp::WithSimd for Nearness<'_> {
    type Output = Vec<(f32, usize)>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Vec<(f32, usize)> {
        let mut order = Vec::with_capacity(self.clusters.groups());
        for g in 0..self.clusters.groups() {
            order.push((self.clusters.similarity(g, self.query), g));
        }
        order
    }
}

fn dequantize(row: &[i8], scale: f32) -> Vec<f32> {
    row.iter().map(|&x| f32::from(x) * scale).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows around `centres` well-separated directions, a little noise each.
    fn rows_around(centres: usize, per: usize, dim: usize) -> (Vec<i8>, Vec<f32>) {
        let mut data = Vec::new();
        let mut scales = Vec::new();
        let mut seed = 17u64;
        let mut noise = || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ((seed >> 33) as f32 / (1u64 << 31) as f32 - 0.5) * 0.2
        };
        for _ in 0..per {
            for c in 0..centres {
                let mut v: Vec<f32> = (0..dim).map(|_| noise()).collect();
                v[c] += 1.0;
                scales.push(quantize(&v, &mut data));
            }
        }
        (data, scales)
    }

    /// The rows of each group, by the number they had before packing.
    fn groups_of(clusters: &Clusters, packing: &[u32]) -> Vec<Vec<u32>> {
        (0..clusters.groups())
            .map(|g| {
                let mut rows: Vec<u32> = clusters.span(g).map(|p| packing[p]).collect();
                rows.extend(clusters.joined(g).iter().map(|&p| packing[p as usize]));
                rows
            })
            .collect()
    }

    #[test]
    fn rows_of_one_direction_share_a_group() {
        let (dim, centres) = (32, 8);
        let (data, scales) = rows_around(centres, 600, dim);
        let (clusters, packing) = Clusters::train(data[..].into(), &scales, dim);
        let mut sorted = packing.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..scales.len() as u32).collect::<Vec<_>>(), "a permutation");
        // A group never mixes directions (there are more groups than directions), and its
        // rows are one run.
        for (g, members) in groups_of(&clusters, &packing).iter().enumerate() {
            assert!(members.iter().all(|&r| r % centres as u32 == members[0] % centres as u32));
            assert!(clusters.joined(g).is_empty());
        }
        assert_eq!(clusters.span(clusters.groups() - 1).end, scales.len());
        // The group nearest a direction holds rows of that direction.
        let mut query = Vec::new();
        let mut axis = vec![0.0; dim];
        axis[3] = 1.0;
        quantize(&axis, &mut query);
        let nearest = clusters.by_nearness(&query)[0];
        assert!(clusters.span(nearest).all(|p| packing[p] as usize % centres == 3));
    }

    #[test]
    fn rows_that_joined_are_packed_into_their_groups_run() {
        let (dim, centres) = (16, 4);
        let (data, scales) = rows_around(centres, 100, dim);
        let first = 300;
        let (mut clusters, packing) =
            Clusters::train(data[..first * dim].into(), &scales[..first], dim);
        // Stored as told, then the rest appended.
        let mut stored: Vec<i8> =
            packing.iter().flat_map(|&r| data[r as usize * dim..][..dim].to_vec()).collect();
        stored.extend_from_slice(&data[first * dim..]);
        let mut number: Vec<u32> = packing;
        for r in first..scales.len() {
            clusters.add(r);
            number.push(r as u32);
        }
        clusters.assign(stored[..].into());
        assert!(clusters.pack_due(1), "a third of the rows are loose");
        let before = groups_of(&clusters, &number);
        let order = clusters.pack();
        let number: Vec<u32> = order.iter().map(|&p| number[p as usize]).collect();
        assert!(!clusters.pack_due(1));
        let after = groups_of(&clusters, &number);
        assert_eq!(after, before, "the same rows in each group, now in one run");
        assert!((0..clusters.groups()).all(|g| clusters.joined(g).is_empty()));
    }

    #[test]
    fn removing_positions_renumbers_the_rest() {
        let (dim, centres) = (16, 4);
        let (data, scales) = rows_around(centres, 100, dim);
        let (mut clusters, _) = Clusters::train(data[..].into(), &scales, dim);
        clusters.add(scales.len());
        let removed: Vec<u32> = vec![3, 10, 11, 12, 13, 14, 250];
        clusters.remove_positions(&removed);
        let n = scales.len() + 1 - removed.len();
        let mut all: Vec<u32> =
            (0..clusters.groups()).flat_map(|g| clusters.span(g)).map(|p| p as u32).collect();
        all.extend(clusters.pending());
        all.sort_unstable();
        assert_eq!(all, (0..n as u32).collect::<Vec<_>>());
        assert!(clusters.check(n, dim));
        assert!(!clusters.outgrown(scales.len()));
        assert!(clusters.outgrown(scales.len() * 2));
    }
}
