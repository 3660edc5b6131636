//! The grouped search: the visible rows of the groups nearest the query ([`Clusters`]),
//! then its best candidates scored exactly.

use epimem_core::recall::borrowed;

use super::{Quantized, VectorHits, VectorIndex};
use crate::{clusters::Clusters, top_k::TopK};

/// Visible rows a grouped search scans, nearest groups first.
pub(super) const PROBE_ROWS: usize = 24_000;

impl VectorIndex {
    /// A grouped search: the visible rows of the groups nearest the query, until `probe_rows`
    /// were scanned; then its best candidates scored exactly (a message with its neighbours'
    /// shares, an episode by its best message). `None` when the scope hides most rows, so
    /// that the nearest groups hold too few of its own: the exact scan serves it.
    pub(super) fn probe(
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
        // The visible rows not in a group yet, then those of the groups nearest the query:
        // the run each group is stored in, then the rows that joined it since (positions).
        let layout = self.layout.as_ref()?;
        let visible_at =
            |&position: &usize| visible.get(layout.slot_at(position)).copied().unwrap_or(false);
        let pending = clusters.pending().iter().map(|&p| p as usize);
        let mut probed: Vec<usize> = pending.filter(visible_at).collect();
        let mut scanned = clusters.pending().len();
        for g in clusters.by_nearness(&query.data) {
            if probed.len() >= probe_rows {
                break;
            }
            if scanned >= probe_rows * 4 && probed.len() < probe_rows {
                return None;
            }
            let (span, joined) = (clusters.span(g), clusters.joined(g));
            scanned += span.len() + joined.len();
            probed.extend(span.filter(visible_at));
            probed.extend(joined.iter().map(|&p| p as usize).filter(visible_at));
        }
        let borrow = self.config.borrow;
        let lends = borrow.before.max(borrow.after) as f32;
        for (&position, sim) in probed.iter().zip(self.similarities(&probed, query)) {
            let row = self.row_at(position);
            best_rows.offer(sim, row);
            message_rows.offer(sim, row);
            // Finding the neighbours (scattered reads) is left out when what they would
            // borrow could not get in: most rows, once the best are known.
            if !message_rows.admits(lends * sim) {
                continue;
            }
            // It lends to the message after it what that one borrows from before, and the
            // other way round.
            let (previous, next) = self.neighbours(row, &is_visible);
            if let Some((next, lent)) = next.zip(borrow.from_before(sim)) {
                message_rows.offer(lent, next);
            }
            if let Some((previous, lent)) = previous.zip(borrow.from_after(sim)) {
                message_rows.offer(lent, previous);
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
        let borrow = self.config.borrow;
        let (previous, next) = self.neighbours(row, is_visible);
        let lent_before = previous.and_then(|p| borrow.from_before(self.similarity(p, query)));
        let lent_after = next.and_then(|n| borrow.from_after(self.similarity(n, query)));
        borrowed(self.similarity(row, query), [lent_before, lent_after])
    }

    /// The visible rows right before and after `row` in its conversation, if they are its
    /// neighbours (`next_to`).
    fn neighbours(
        &self,
        row: usize,
        is_visible: &impl Fn(usize) -> bool,
    ) -> (Option<usize>, Option<usize>) {
        let here = self.rows[row];
        let previous =
            row.checked_sub(1).filter(|&p| is_visible(p) && self.next_to(self.rows[p], here));
        let next = Some(row + 1)
            .filter(|&n| n < self.rows.len() && is_visible(n) && self.next_to(here, self.rows[n]));
        (previous, next)
    }

    /// The similarity to the query of the rows stored at each of `positions`, compiled for the
    /// widest SIMD the CPU has. On one thread: the probed rows are runs of memory, read in
    /// about a millisecond, and a second thread, which can start a millisecond late where idle
    /// cores sleep, made a recall slower (over a million episodes, episode recall p50 / p99
    /// 2.3-2.6 / 4.6 ms on two threads against 1.7-1.9 / 3.6-3.9 on one).
    fn similarities(&self, positions: &[usize], query: &Quantized) -> Vec<f32> {
        pulp::Arch::new().dispatch(Similarities { index: self, positions, query })
    }
}

/// Similarities of some rows, as pulp dispatches them (see the scan in `exact.rs`).
struct Similarities<'a> {
    index: &'a VectorIndex,
    positions: &'a [usize],
    query: &'a Quantized,
}

impl pulp::WithSimd for Similarities<'_> {
    type Output = Vec<f32>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Vec<f32> {
        // A plain loop: an iterator chain's `fold` would be compiled outside the SIMD variant.
        let mut sims = Vec::with_capacity(self.positions.len());
        for &position in self.positions {
            sims.push(self.index.similarity_at(position, self.query));
        }
        sims
    }
}

/// Drops repeated items, keeping each one's first place.
fn dedup_in_order(items: &mut Vec<usize>) {
    let mut seen = std::collections::HashSet::new();
    items.retain(|&item| seen.insert(item));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        table::tests::episode,
        vectors::{
            Borrow, Regroup, VectorConfig,
            tests::{exact, unit},
        },
    };

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
        grouped.settle(Regroup::Due);
        exact_index.settle(Regroup::Due);
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
    fn rows_grouped_apart_from_the_index_are_taken_in_unless_they_changed_meanwhile() {
        let config = VectorConfig {
            borrow: Borrow { before: 0.8, after: 0.6, max_gap_ms: 0 },
            approximate_from: 1_000,
            probe_rows: 10_000,
        };
        let build = || {
            let mut index = VectorIndex::new(config);
            for row in 0..1_200u32 {
                let mut v = unit(row, 24);
                v[row as usize % 30 % 24] += 2.0;
                let slot = row as usize / 2;
                index.add((slot, slot as u64, &episode("t", "c", None, 0)), u64::from(row), &v);
            }
            index
        };
        let (mut settled, mut apart) = (build(), build());
        assert!(settled.settle(Regroup::Due));
        let grouping = apart.grouping(Regroup::Due).expect("due");
        assert!(apart.grouped(grouping.run()), "nothing changed meanwhile");
        assert!(
            apart.grouping(Regroup::Due).is_none() && !apart.settle(Regroup::Due),
            "grouped once"
        );
        let visible = vec![true; 600];
        let q = unit(5, 24);
        let (a, b) = (apart.search(&q, &visible, 10, 10), settled.search(&q, &visible, 10, 10));
        assert_eq!((a.messages, a.episodes), (b.messages, b.episodes));
        // An episode forgotten while the grouping ran: its result is of other rows, left out.
        let mut changed = build();
        let grouping = changed.grouping(Regroup::Due).expect("due");
        changed.remove(7);
        assert!(!changed.grouped(grouping.run()));
        assert!(changed.settle(Regroup::Due), "grouped by the next settle instead");
        let mut visible = vec![true; 600];
        visible[7] = false;
        let mut exact_index = build();
        exact_index.config.approximate_from = usize::MAX;
        exact_index.remove(7);
        let (a, b) =
            (changed.search(&q, &visible, 10, 10), exact_index.search(&q, &visible, 10, 10));
        assert_eq!((a.messages, a.episodes), (b.messages, b.episodes));
    }

    /// Adds `rows` beyond the first 3,000 of [`indexes`], two messages an episode.
    fn more(index: &mut VectorIndex, rows: std::ops::Range<u32>) {
        for row in rows {
            let mut v = unit(row, 24);
            v[row as usize % 7] += 1.0;
            let slot = row as usize / 2;
            index.add((slot, slot as u64, &episode("t", "c", None, 0)), u64::from(row), &v);
        }
    }

    #[test]
    fn an_update_leaves_storing_rows_anew_to_a_pause_until_it_is_overdue() {
        let (_, mut grouped) = indexes(10_000);
        // A fifth more rows out of their groups' runs: past the usual eighth, not a quarter.
        more(&mut grouped, 3_000..3_600);
        assert!(grouped.grouping(Regroup::Overdue).is_none(), "left to a pause");
        assert!(!grouped.settle(Regroup::Overdue));
        // Nearly half more: overdue, so an update stores them anew too.
        more(&mut grouped, 3_600..4_400);
        assert!(grouped.settle(Regroup::Overdue));
        assert!(grouped.grouping(Regroup::Due).is_none(), "stored anew once");
        // Rows that doubled are grouped again at a pause; an update waits for twice that.
        more(&mut grouped, 4_400..6_200);
        let regroup = grouped.grouping(Regroup::Due).expect("6,200 rows, grouped at 3,000");
        assert!(regroup.clusters.is_none(), "trained again, not only stored anew");
        assert!(
            grouped.grouping(Regroup::Overdue).is_none_or(|g| g.clusters.is_some()),
            "an update does not train the groups again before the rows quadrupled"
        );
    }

    #[test]
    fn rows_stored_anew_apart_from_the_index_are_taken_in_unless_they_changed_meanwhile() {
        let (mut exact_index, mut grouped) = indexes(10_000);
        more(&mut exact_index, 3_000..3_600);
        more(&mut grouped, 3_000..3_600);
        let before = grouped.layout.as_ref().unwrap().position(3_000);
        let groups = grouped.clusters.as_ref().unwrap().groups();
        let storing =
            grouped.grouping(Regroup::Due).expect("a fifth more rows are out of their runs");
        assert!(storing.clusters.is_some(), "stored by the groups it has, not trained again");
        assert!(grouped.grouped(storing.run()), "nothing changed meanwhile");
        assert_ne!(grouped.layout.as_ref().unwrap().position(3_000), before);
        assert_eq!(grouped.clusters.as_ref().unwrap().groups(), groups);
        assert!(
            grouped.grouping(Regroup::Due).is_none() && !grouped.settle(Regroup::Due),
            "stored anew once"
        );
        let visible = vec![true; 1_800];
        for seed in [3, 11, 29] {
            let q = unit(seed, 24);
            let (got, want) =
                (grouped.search(&q, &visible, 10, 10), exact_index.search(&q, &visible, 10, 10));
            assert_eq!((got.messages, got.episodes), (want.messages, want.episodes));
        }
        // An episode forgotten while the rows were being stored anew: left out, and the next
        // settle stores them.
        more(&mut grouped, 3_600..4_200);
        let storing = grouped.grouping(Regroup::Due).expect("due again");
        grouped.remove(1_850);
        assert!(!grouped.grouped(storing.run()));
        assert!(grouped.settle(Regroup::Due), "stored anew by the next settle instead");
        more(&mut exact_index, 3_600..4_200);
        exact_index.remove(1_850);
        let mut visible = vec![true; 2_100];
        visible[1_850] = false;
        for seed in [3, 11, 29] {
            let q = unit(seed, 24);
            let (got, want) =
                (grouped.search(&q, &visible, 10, 10), exact_index.search(&q, &visible, 10, 10));
            assert_eq!((got.messages, got.episodes), (want.messages, want.episodes));
        }
    }

    #[test]
    fn no_rows_are_not_grouped() {
        let config = VectorConfig { approximate_from: 0, ..exact(Borrow::default()) };
        let mut index = VectorIndex::new(config);
        assert!(!index.settle(Regroup::Due));
        assert!(index.search(&unit(1, 8), &[], 5, 5).messages.is_empty());
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
        assert_eq!(best(&grouped).1, 9_000, "not yet in a group");
        assert!(!grouped.settle(Regroup::Due), "a single row does not regroup");
        assert_eq!(grouped.clusters.as_ref().unwrap().pending(), &[] as &[u32]);
        assert_eq!(best(&grouped).1, 9_000, "in its group");
    }

    #[test]
    fn rows_stored_anew_and_removed_are_found_as_the_exact_scan_finds_them() {
        let (mut exact_index, mut grouped) = indexes(10_000);
        // A fifth more rows: out of their groups' runs, so the next settle stores them anew.
        for row in 3_000..3_600u32 {
            let mut v = unit(row, 24);
            v[row as usize % 7] += 1.0;
            let slot = row as usize / 2;
            for index in [&mut exact_index, &mut grouped] {
                index.add((slot, slot as u64, &episode("t", "c", None, 0)), u64::from(row), &v);
            }
        }
        let layout_before = grouped.layout.as_ref().unwrap().position(3_000);
        assert!(grouped.settle(Regroup::Due), "stored anew");
        assert_ne!(grouped.layout.as_ref().unwrap().position(3_000), layout_before);
        // Episodes removed from the start, the middle and the end of the rows.
        for slot in [0, 700, 1_799] {
            exact_index.remove(slot);
            grouped.remove(slot);
        }
        let mut visible = vec![true; 1_800];
        for slot in [0, 700, 1_799] {
            visible[slot] = false;
        }
        for seed in [3, 11, 29] {
            let q = unit(seed, 24);
            let (got, want) =
                (grouped.search(&q, &visible, 10, 10), exact_index.search(&q, &visible, 10, 10));
            assert_eq!(got.messages, want.messages);
            assert_eq!(got.episodes, want.episodes);
            // A narrow scope: the same found.
            let narrow: Vec<bool> = (0..1_800).map(|slot| slot % 60 == 1).collect();
            let (got, want) =
                (grouped.search(&q, &narrow, 10, 10), exact_index.search(&q, &narrow, 10, 10));
            assert_eq!((got.messages, got.episodes), (want.messages, want.episodes));
            let slots = [1, 700, 1_500];
            assert_eq!(
                grouped.best_of_each(&q, &visible, &slots),
                exact_index.best_of_each(&q, &visible, &slots)
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

        /// Whatever episodes come and go, and whenever the rows are grouped, joined and
        /// stored anew, a grouped search that probes every row finds what the exact scan finds.
        #[test]
        fn grouped_rows_are_found_through_additions_removals_and_packings(
            ops in proptest::collection::vec((0u8..4, 0usize..1_000, 1usize..4), 1..80),
        ) {
            let (dim, borrow) = (12, Borrow { before: 0.8, after: 0.6, max_gap_ms: 0 });
            let mut exact_index = VectorIndex::new(exact(borrow));
            let mut grouped =
                VectorIndex::new(VectorConfig { borrow, approximate_from: 60, probe_rows: 1_000_000 });
            let (mut live, mut next_slot, mut seq) = (Vec::new(), 0usize, 0u64);
            let mut add = |exact_index: &mut VectorIndex, grouped: &mut VectorIndex, pick: usize, rows: usize| {
                let slot = next_slot;
                next_slot += 1;
                for r in 0..rows {
                    let mut v = unit((pick * 7 + r) as u32, dim);
                    v[pick % dim] += 1.5;
                    seq += 1;
                    for index in [&mut *exact_index, &mut *grouped] {
                        index.add((slot, slot as u64, &episode("t", "c", None, 0)), seq, &v);
                    }
                }
                slot
            };
            for pick in 0..40 {
                live.push(add(&mut exact_index, &mut grouped, pick, 2));
            }
            proptest::prop_assert!(grouped.settle(Regroup::Due), "grouped from the start");
            for (kind, pick, rows) in ops {
                match kind {
                    0 | 1 => live.push(add(&mut exact_index, &mut grouped, pick, rows)),
                    2 if !live.is_empty() => {
                        let slot = live.swap_remove(pick % live.len());
                        exact_index.remove(slot);
                        grouped.remove(slot);
                    }
                    _ => {
                        exact_index.settle(Regroup::Due);
                        grouped.settle(Regroup::Due);
                    }
                }
            }
            let mut visible = vec![false; next_slot];
            for &slot in &live {
                visible[slot] = true;
            }
            for q in [unit(3, dim), unit(500, dim)] {
                let (got, want) =
                    (grouped.search(&q, &visible, 8, 8), exact_index.search(&q, &visible, 8, 8));
                proptest::prop_assert_eq!(got.messages, want.messages);
                proptest::prop_assert_eq!(got.episodes, want.episodes);
                proptest::prop_assert_eq!(
                    grouped.best_of_each(&q, &visible, &live),
                    exact_index.best_of_each(&q, &visible, &live)
                );
            }
        }
    }
}
