//! The best k of a stream of scored items, in bounded memory.

/// The `k` largest scores offered, ties broken by the earlier offer.
pub(super) struct TopK<T> {
    k: usize,
    items: Vec<(f32, usize, T)>,
    offered: usize,
    /// Once k items are kept, the worst of them: a later offer that does not beat it cannot
    /// get in (ties go to the earlier offer).
    floor: Option<f32>,
}

impl<T> TopK<T> {
    pub(super) fn new(k: usize) -> Self {
        Self { k, items: Vec::with_capacity(k.min(1024) * 2), offered: 0, floor: None }
    }

    pub(super) fn offer(&mut self, score: f32, item: T) {
        if self.k == 0 || self.floor.is_some_and(|f| score <= f) {
            self.offered += 1;
            return;
        }
        self.items.push((score, self.offered, item));
        self.offered += 1;
        // Keep the buffer bounded: cut back to the best k whenever it doubles.
        if self.items.len() >= self.k * 2 + 64 {
            self.truncate();
        }
    }

    /// Whether an offer of `score` could be kept now (one that cannot need not be made).
    pub(super) fn admits(&self, score: f32) -> bool {
        self.k > 0 && self.floor.is_none_or(|f| score > f)
    }

    fn truncate(&mut self) {
        if self.k > 0 && self.items.len() >= self.k {
            self.items
                .select_nth_unstable_by(self.k - 1, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            self.items.truncate(self.k);
            self.floor = Some(self.items[self.k - 1].0);
        }
    }

    pub(super) fn into_sorted(mut self) -> Vec<(f32, T)> {
        self.truncate();
        self.items.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        self.items.into_iter().map(|(s, _, t)| (s, t)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_keeps_the_best_in_order() {
        let mut top = TopK::new(3);
        for (i, s) in [0.1f32, 0.9, 0.5, 0.9, 0.2, 0.7, 0.3].iter().enumerate() {
            top.offer(*s, i);
        }
        assert_eq!(top.into_sorted(), [(0.9, 1), (0.9, 3), (0.7, 5)]);
        let mut none = TopK::new(0);
        none.offer(1.0, 0);
        assert!(none.into_sorted().is_empty());
    }

    #[test]
    fn once_the_best_are_known_only_a_better_offer_is_admitted() {
        let mut top = TopK::new(2);
        assert!(top.admits(0.0), "nothing kept yet");
        for i in 0..100 {
            top.offer(i as f32 / 100.0, i);
        }
        assert!(!top.admits(0.5) && top.admits(0.995));
        assert!(!TopK::<usize>::new(0).admits(1.0));
        assert_eq!(top.into_sorted(), [(0.99, 99), (0.98, 98)]);
    }
}
