//! Live episodes' slots by id, without a copy of any id: the table's ids column holds them, and
//! this holds slots hashed by them. Hand-written over hashbrown's `HashTable` because a map keyed
//! by `String` copied every id, and it is made under the index's lock on the first change after a
//! load, searches waiting: for a million ids 180-310 ms and about 90 MB, against 12-19 ms and
//! 6 MB here (a standalone timing of the two maps).

use hashbrown::HashTable;
use xxhash_rust::xxh3::xxh3_64;

use super::Texts;

#[derive(Default, Clone)]
pub(crate) struct SlotsById(HashTable<u32>);

impl std::fmt::Debug for SlotsById {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlotsById").field("len", &self.0.len()).finish()
    }
}

fn hash(id: &str) -> u64 {
    xxh3_64(id.as_bytes())
}

impl SlotsById {
    /// The slots `live` marks (their ids distinct) by their ids in `ids`.
    pub(crate) fn of(live: &[bool], ids: &Texts) -> Self {
        // Room for all at once: growing hashes every id again (a million took 130 ms, not 15).
        let mut table = HashTable::with_capacity(live.iter().filter(|&&l| l).count());
        for slot in (0..live.len()).filter(|&slot| live[slot]) {
            table.insert_unique(hash(ids.get(slot)), slot_number(slot), |&s| {
                hash(ids.get(s as usize))
            });
        }
        Self(table)
    }

    pub(crate) fn get(&self, id: &str, ids: &Texts) -> Option<usize> {
        self.0.find(hash(id), |&s| ids.get(s as usize) == id).map(|&s| s as usize)
    }

    /// Adds `slot`, whose id `ids` already holds and which is not here yet.
    pub(crate) fn insert(&mut self, slot: usize, ids: &Texts) {
        let id = ids.get(slot);
        debug_assert!(self.get(id, ids).is_none(), "an id is in one live slot");
        self.0.insert_unique(hash(id), slot_number(slot), |&s| hash(ids.get(s as usize)));
    }

    /// Takes out the slot of `id` (before `ids` lets go of its text); which it was.
    pub(crate) fn remove(&mut self, id: &str, ids: &Texts) -> Option<usize> {
        let found = self.0.find_entry(hash(id), |&s| ids.get(s as usize) == id).ok()?;
        Some(found.remove().0 as usize)
    }
}

fn slot_number(slot: usize) -> u32 {
    u32::try_from(slot).expect("fewer than 4 billion episodes")
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    proptest::proptest! {
        /// Whatever ids come and go (and whatever a load makes the map from), each live id is
        /// found at its slot and no forgotten one is found.
        #[test]
        fn slots_are_found_by_id_as_a_map_finds_them(
            ops in proptest::collection::vec((0u8..3, 0usize..40), 1..200),
        ) {
            let (mut ids, mut live) = (Texts::default(), Vec::new());
            let mut slots = SlotsById::default();
            let mut model: HashMap<String, usize> = HashMap::new();
            for (op, n) in ops {
                let id = format!("ep_{n}");
                match op {
                    0 if !model.contains_key(&id) => {
                        let slot = live.len();
                        ids.push(&id);
                        live.push(true);
                        slots.insert(slot, &ids);
                        model.insert(id, slot);
                    }
                    1 => {
                        let removed = slots.remove(&id, &ids);
                        proptest::prop_assert_eq!(removed, model.remove(&id));
                        if let Some(slot) = removed {
                            live[slot] = false;
                            ids.blank(slot, slot + 1);
                        }
                    }
                    _ => {
                        // Made again from the columns, as after a load.
                        slots = SlotsById::of(&live, &ids);
                    }
                }
                for n in 0..40 {
                    let id = format!("ep_{n}");
                    proptest::prop_assert_eq!(slots.get(&id, &ids), model.get(&id).copied());
                }
            }
        }
    }
}
