//! Lists by slot in one flat array: a saved index reads back as two long arrays, not one
//! list per episode (a million allocations at a million episodes).

use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Ragged<T> {
    /// Where each slot's list ends in `items`.
    ends: Vec<u64>,
    items: Vec<T>,
}

impl<T> Default for Ragged<T> {
    fn default() -> Self {
        Self { ends: Vec::new(), items: Vec::new() }
    }
}

impl<T: Clone> Ragged<T> {
    /// The list of `slot` (empty past the last).
    pub(crate) fn get(&self, slot: usize) -> &[T] {
        &self.items[self.range(slot)]
    }

    /// The list of `slot`, to change in place.
    pub(crate) fn get_mut(&mut self, slot: usize) -> &mut [T] {
        let range = self.range(slot);
        &mut self.items[range]
    }

    /// Sets item `at` of `slot`, which must be the newest slot (lists grow at the end only),
    /// filling any gap before it with `blank`.
    pub(crate) fn set(&mut self, slot: usize, at: usize, item: T, blank: T) {
        let items = self.items.len() as u64;
        debug_assert!(slot + 1 >= self.ends.len(), "only the newest slot grows");
        while self.ends.len() <= slot {
            self.ends.push(items);
        }
        let start = self.range(slot).start;
        if self.items.len() <= start + at {
            self.items.resize(start + at + 1, blank);
            self.ends[slot] = self.items.len() as u64;
        }
        self.items[start + at] = item;
    }

    /// Whether the lists hold together (a saved file read back may not).
    pub(crate) fn check(&self) -> Result<(), String> {
        let ordered = self.ends.windows(2).all(|w| w[0] <= w[1]);
        let last = self.ends.last().map_or(0, |&end| end as usize);
        if ordered && last == self.items.len() {
            Ok(())
        } else {
            Err("lists by slot out of step".into())
        }
    }

    /// Slots with a list (up to the last).
    pub(crate) fn slots(&self) -> usize {
        self.ends.len()
    }

    /// Appends `item` to the list of `slot`, the newest (a slot between gets an empty list).
    pub(crate) fn push(&mut self, slot: usize, item: T) {
        debug_assert!(slot + 1 >= self.ends.len(), "only the newest slot grows");
        let items = self.items.len() as u64;
        while self.ends.len() <= slot {
            self.ends.push(items);
        }
        self.items.push(item);
        self.ends[slot] = self.items.len() as u64;
    }

    /// Adds `list` as the next slot's.
    pub(crate) fn push_list(&mut self, list: &[T]) {
        self.items.extend_from_slice(list);
        self.ends.push(self.items.len() as u64);
    }

    /// Every item of every slot.
    pub(crate) fn items(&self) -> &[T] {
        &self.items
    }

    /// Where the list of `slot` sits in [`Ragged::items`].
    pub(crate) fn range(&self, slot: usize) -> std::ops::Range<usize> {
        let Some(&end) = self.ends.get(slot) else { return 0..0 };
        let start = if slot == 0 { 0 } else { self.ends[slot - 1] };
        start as usize..end as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_grow_at_the_newest_slot_with_gaps_filled() {
        let mut lists: Ragged<u8> = Ragged::default();
        lists.set(0, 1, 7, 0);
        lists.set(2, 0, 5, 0);
        lists.set(2, 2, 6, 0);
        assert_eq!(lists.get(0), [0, 7]);
        assert!(lists.get(1).is_empty(), "a slot without a list");
        assert_eq!(lists.get(2), [5, 0, 6]);
        assert!(lists.get(9).is_empty());
        lists.get_mut(0).fill(1);
        assert_eq!(lists.items(), [1, 1, 5, 0, 6]);
        lists.push(2, 8);
        lists.push(4, 9);
        assert_eq!(lists.get(2), [5, 0, 6, 8]);
        assert_eq!((lists.get(3), lists.get(4)), (&[][..], &[9][..]));
        lists.push_list(&[3, 4]);
        assert_eq!((lists.range(5), lists.get(5)), (7..9, &[3, 4][..]));
        assert!(lists.check().is_ok());
    }
}
