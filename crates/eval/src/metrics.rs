//! Segmentation metrics: Pk, WindowDiff and boundary precision / recall.
//!
//! A segmentation of `n` utterances is given by its segment lengths; a boundary at `j` (in
//! `1..n`) means utterance `j` starts a segment. Window `k` is half the mean reference segment
//! length of the dialogue, rounded, at least 2, and at most `n - 1`.

/// Boundary positions from segment lengths.
pub(crate) fn boundaries(lengths: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(lengths.len().saturating_sub(1));
    let mut at = 0;
    for &len in &lengths[..lengths.len().saturating_sub(1)] {
        at += len;
        out.push(at);
    }
    out
}

/// Segment lengths from sorted boundary positions in `1..n`.
pub(crate) fn lengths(n: usize, boundaries: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(boundaries.len() + 1);
    let mut start = 0;
    for &b in boundaries {
        out.push(b - start);
        start = b;
    }
    if n > 0 {
        out.push(n - start);
    }
    out
}

/// The evaluation window for a dialogue of `n` utterances; `None` below two utterances, where
/// no pair of positions exists.
pub(crate) fn window(reference: &[usize]) -> Option<usize> {
    let n: usize = reference.iter().sum();
    if n < 2 {
        return None;
    }
    let mean = n as f64 / reference.len() as f64;
    Some(((mean / 2.0).round() as usize).max(2).min(n - 1))
}

/// Segment index of every utterance.
fn labels(n: usize, boundaries: &[usize]) -> Vec<usize> {
    let mut out = vec![0; n];
    for &b in boundaries {
        out[b..].iter_mut().for_each(|l| *l += 1);
    }
    out
}

/// Pk: the share of position pairs `(i, i + k)` on which reference and hypothesis disagree
/// about being in the same segment.
pub(crate) fn pk(n: usize, reference: &[usize], hypothesis: &[usize], k: usize) -> f64 {
    let (r, h) = (labels(n, reference), labels(n, hypothesis));
    let pairs = n - k;
    let errors = (0..pairs).filter(|&i| (r[i] == r[i + k]) != (h[i] == h[i + k])).count();
    errors as f64 / pairs as f64
}

/// WindowDiff: the share of windows `(i, i + k]` holding a different number of boundaries.
pub(crate) fn window_diff(n: usize, reference: &[usize], hypothesis: &[usize], k: usize) -> f64 {
    let count = |b: &[usize], i: usize| b.iter().filter(|&&j| j > i && j <= i + k).count();
    let pairs = n - k;
    let errors = (0..pairs).filter(|&i| count(reference, i) != count(hypothesis, i)).count();
    errors as f64 / pairs as f64
}

/// Exact-position boundary matches, summed over dialogues.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BoundaryCounts {
    pub(crate) true_positives: usize,
    pub(crate) predicted: usize,
    pub(crate) reference: usize,
}

impl BoundaryCounts {
    pub(crate) fn add(&mut self, reference: &[usize], hypothesis: &[usize]) {
        self.true_positives += hypothesis.iter().filter(|b| reference.contains(b)).count();
        self.predicted += hypothesis.len();
        self.reference += reference.len();
    }

    /// Precision, recall and F1 (0 where undefined).
    pub(crate) fn prf(&self) -> (f64, f64, f64) {
        let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let p = ratio(self.true_positives, self.predicted);
        let r = ratio(self.true_positives, self.reference);
        let f = if p + r == 0.0 { 0.0 } else { 2.0 * p * r / (p + r) };
        (p, r, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_and_boundaries_round_trip() {
        assert_eq!(boundaries(&[2, 3, 1]), [2, 5]);
        assert_eq!(lengths(6, &[2, 5]), [2, 3, 1]);
        assert_eq!(boundaries(&[4]), Vec::<usize>::new());
        assert_eq!(lengths(4, &[]), [4]);
    }

    #[test]
    fn window_is_half_the_mean_segment_at_least_two() {
        assert_eq!(window(&[6, 6, 6]), Some(3));
        assert_eq!(window(&[3, 3]), Some(2)); // 1.5 rounds to 2
        assert_eq!(window(&[1, 1, 1, 1]), Some(2)); // floor of 2
        assert_eq!(window(&[2]), Some(1)); // shorter than the window: k = n - 1
        assert_eq!(window(&[1]), None);
    }

    #[test]
    fn missing_every_boundary() {
        // ref [2,2]: boundary at 2; k = 2; both pairs straddle it.
        assert_eq!(pk(4, &[2], &[], 2), 1.0);
        assert_eq!(window_diff(4, &[2], &[], 2), 1.0);
    }

    #[test]
    fn off_by_one_boundary_by_hand() {
        // ref [3,3] (boundary 3), hyp boundary 2, k = 2: pairs (0,2) and (2,4) disagree.
        assert_eq!(pk(6, &[3], &[2], 2), 0.5);
        // windows (0,2] and (2,4] differ in boundary count.
        assert_eq!(window_diff(6, &[3], &[2], 2), 0.5);
    }

    #[test]
    fn no_boundary_anywhere_is_perfect() {
        assert_eq!(pk(5, &[], &[], 2), 0.0);
        assert_eq!(window_diff(5, &[], &[], 2), 0.0);
        // A spurious boundary in a one-segment reference.
        assert_eq!(pk(5, &[], &[2], 2), 2.0 / 3.0);
    }

    #[test]
    fn one_utterance_segments() {
        // ref [1,1,1,1]: boundaries 1,2,3; k = 2; hypothesis finds them all.
        assert_eq!(pk(4, &[1, 2, 3], &[1, 2, 3], 2), 0.0);
        // WindowDiff counts boundaries: one missing inside a window is an error.
        assert_eq!(window_diff(4, &[1, 2, 3], &[1, 3], 2), 1.0);
        // Pk only asks "same segment?", which a missing middle boundary may not change.
        assert_eq!(pk(4, &[1, 2, 3], &[1, 3], 2), 0.0);
    }

    #[test]
    fn dialogue_shorter_than_the_window() {
        // Two utterances, two segments: k = 1, one pair.
        let k = window(&[1, 1]).unwrap();
        assert_eq!(k, 1);
        assert_eq!(pk(2, &[1], &[], k), 1.0);
        assert_eq!(pk(2, &[1], &[1], k), 0.0);
    }

    #[test]
    fn precision_recall_f1() {
        let mut c = BoundaryCounts::default();
        c.add(&[2, 5], &[2, 4]);
        c.add(&[3], &[]);
        let (p, r, f) = c.prf();
        assert_eq!((p, r), (0.5, 1.0 / 3.0));
        assert!((f - 0.4).abs() < 1e-12);
        assert_eq!(BoundaryCounts::default().prf(), (0.0, 0.0, 0.0));
    }
}
