//! Values numbered in the order first seen: how an index numbers the episodes and turns of a
//! [`TurnTable`](epimem_core::recall::TurnTable) it gathers.

use std::{borrow::Borrow, collections::HashMap, hash::Hash};

/// Each distinct value gets the next number when first seen.
#[derive(Debug, Clone)]
pub struct Seen<K> {
    items: Vec<K>,
    at: HashMap<K, u32>,
}

impl<K> Default for Seen<K> {
    fn default() -> Self {
        Self { items: Vec::new(), at: HashMap::new() }
    }
}

impl<K: Hash + Eq + Clone> Seen<K> {
    /// The value's number, given now if it is new.
    pub fn index<Q>(&mut self, key: &Q) -> u32
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        if let Some(&i) = self.at.get(key) {
            return i;
        }
        let i = u32::try_from(self.items.len()).expect("fewer than 4 billion values a query");
        self.items.push(key.to_owned());
        self.at.insert(key.to_owned(), i);
        i
    }

    /// The value's number, if it was seen.
    pub fn get<Q>(&self, key: &Q) -> Option<u32>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.at.get(key).copied()
    }

    /// The values in the order they were numbered.
    pub fn items(&self) -> &[K] {
        &self.items
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_numbered_once_in_order_of_first_sight() {
        let mut seen = Seen::default();
        assert_eq!([seen.index(&"b"), seen.index(&"a"), seen.index(&"b")], [0, 1, 0]);
        assert_eq!(seen.items(), ["b", "a"]);
        assert_eq!((seen.get(&"a"), seen.get(&"c")), (Some(1), None));
    }
}
