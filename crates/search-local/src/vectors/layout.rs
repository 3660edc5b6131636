//! Where each row's components are stored once the rows are grouped: group after group (see
//! `clusters.rs`), so a row's position in the data is looked up. Before that, a row is stored
//! at its own number and there is no layout.

use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Layout {
    /// The row stored at each position.
    row_at: Vec<u32>,
    /// The position of each row: the inverse, built again when read back.
    #[serde(skip)]
    position_of: Vec<u32>,
    /// The episode slot of the row at each position, so that a search tells which positions
    /// are visible in one pass over memory; built again when read back.
    #[serde(skip)]
    slot_at: Vec<u32>,
}

impl Layout {
    /// Each of `rows` (their slots) at its own number.
    pub(super) fn identity(rows: &[(usize, u64)]) -> Self {
        let row_at: Vec<u32> = (0..rows.len() as u32).collect();
        let slot_at = rows.iter().map(|&(slot, _)| slot as u32).collect();
        Self { position_of: row_at.clone(), row_at, slot_at }
    }

    #[inline(always)]
    pub(super) fn position(&self, row: usize) -> usize {
        self.position_of[row] as usize
    }

    #[inline(always)]
    pub(super) fn row_at(&self, position: usize) -> usize {
        self.row_at[position] as usize
    }

    #[inline(always)]
    pub(super) fn slot_at(&self, position: usize) -> usize {
        self.slot_at[position] as usize
    }

    /// A new row of episode `slot`, stored after the others.
    pub(super) fn push(&mut self, slot: usize) {
        self.row_at.push(self.position_of.len() as u32);
        self.position_of.push(self.row_at.len() as u32 - 1);
        self.slot_at.push(slot as u32);
    }

    /// The rows are stored again in `order` (new position `i` holds what position `order[i]`
    /// held).
    pub(super) fn permute(&mut self, order: &[u32]) {
        self.row_at = permute(&self.row_at, 1, order);
        self.slot_at = permute(&self.slot_at, 1, order);
        self.invert();
    }

    /// Drops rows `start..end` and renumbers the rows after them: the positions they were
    /// stored at, ascending, which the caller drops from the data.
    pub(super) fn remove_rows(&mut self, start: usize, end: usize) -> Vec<u32> {
        let mut positions = self.position_of[start..end].to_vec();
        positions.sort_unstable();
        remove_positions(&mut self.row_at, 1, &positions);
        remove_positions(&mut self.slot_at, 1, &positions);
        let len = (end - start) as u32;
        for row in self.row_at.iter_mut().filter(|row| **row >= end as u32) {
            *row -= len;
        }
        self.invert();
        positions
    }

    /// Builds what is not saved after the layout was read back: whether it is a permutation
    /// of `rows` (a saved file read back may be damaged).
    pub(super) fn restore(&mut self, rows: &[(usize, u64)]) -> bool {
        let n = rows.len();
        if self.row_at.len() != n || self.row_at.iter().any(|&r| r as usize >= n) {
            return false;
        }
        self.slot_at = self.row_at.iter().map(|&r| rows[r as usize].0 as u32).collect();
        self.invert();
        // Every row stored once: each position is where its row says it is.
        self.row_at.iter().enumerate().all(|(p, &r)| self.position_of[r as usize] as usize == p)
    }

    fn invert(&mut self) {
        self.position_of = vec![0; self.row_at.len()];
        for (p, &r) in self.row_at.iter().enumerate() {
            self.position_of[r as usize] = p as u32;
        }
    }
}

/// `items` of `width` values per position, stored in `order` (new position `i` holds what
/// position `order[i]` held).
pub(super) fn permute<T: Copy>(items: &[T], width: usize, order: &[u32]) -> Vec<T> {
    let mut out = Vec::with_capacity(order.len() * width);
    for &p in order {
        out.extend_from_slice(&items[p as usize * width..(p as usize + 1) * width]);
    }
    out
}

/// Drops the positions `removed` (ascending) from `items` of `width` values per position,
/// moving each run between them down once.
pub(super) fn remove_positions<T: Copy>(items: &mut Vec<T>, width: usize, removed: &[u32]) {
    let Some(&first) = removed.first() else { return };
    let positions = items.len() / width;
    let mut write = first as usize * width;
    for (i, &p) in removed.iter().enumerate() {
        let from = (p as usize + 1) * width;
        let to = removed.get(i + 1).map_or(positions, |&next| next as usize) * width;
        items.copy_within(from..to, write);
        write += to - from;
    }
    items.truncate(write);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removing_positions_keeps_the_others_in_order() {
        let mut items: Vec<u8> = (0..20).collect();
        remove_positions(&mut items, 2, &[0, 3, 4, 9]);
        assert_eq!(items, [2, 3, 4, 5, 10, 11, 12, 13, 14, 15, 16, 17]);
        let mut same: Vec<u8> = (0..4).collect();
        remove_positions(&mut same, 1, &[]);
        assert_eq!(same, [0, 1, 2, 3]);
    }

    #[test]
    fn a_layout_follows_its_rows_through_packing_and_removal() {
        // Row r of slot 10 + r.
        let rows = |n: usize| (0..n).map(|r| (10 + r, 0)).collect::<Vec<(usize, u64)>>();
        let mut layout = Layout::identity(&rows(6));
        // Stored as 5 3 1 0 2 4.
        layout.permute(&[5, 3, 1, 0, 2, 4]);
        assert_eq!((layout.position(5), layout.row_at(3), layout.slot_at(0)), (0, 0, 15));
        layout.push(16);
        assert_eq!((layout.position(6), layout.row_at(6), layout.slot_at(6)), (6, 6, 16));
        // Rows 1 and 2 go: they were at positions 2 and 4; rows after them move down by two.
        assert_eq!(layout.remove_rows(1, 3), [2, 4]);
        assert_eq!(layout.row_at, [3, 1, 0, 2, 4]);
        assert_eq!(layout.slot_at, [15, 13, 10, 14, 16]);
        // Read back, against the rows as they are now.
        let now = [(10, 0), (13, 0), (14, 0), (15, 0), (16, 0)];
        let mut saved = Layout { row_at: layout.row_at.clone(), ..Layout::default() };
        assert!(saved.restore(&now));
        assert_eq!(saved.slot_at, layout.slot_at);
        assert_eq!((0..5).map(|r| saved.position(r)).collect::<Vec<_>>(), [2, 1, 3, 0, 4]);
        let mut twice = Layout { row_at: vec![0, 0, 1], ..Layout::default() };
        assert!(!twice.restore(&rows(3)), "a row stored twice is damage");
    }
}
