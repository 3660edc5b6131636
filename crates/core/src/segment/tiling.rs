//! The TextTiling family over vectors: similarity across each gap between neighbouring
//! windows, smoothing, depth scores, and a cut-off that adapts to each dialogue.
//!
//! Gap `g` (for `g` in `1..n`) sits between item `g - 1` and item `g`; results are indexed by
//! `g - 1`, and a boundary chosen at gap `g` starts a new segment at item `g`.

/// Cosine similarity between the sum of the `window` vectors before each gap and the sum of the
/// `window` vectors after it.
pub fn gap_similarities(vectors: &[&[f32]], window: usize) -> Vec<f64> {
    let n = vectors.len();
    let window = window.max(1);
    (1..n.max(1))
        .map(|g| {
            window_cosine(&vectors[g.saturating_sub(window)..g], &vectors[g..(g + window).min(n)])
        })
        .collect()
}

/// Cosine similarity between the sum of the `left` vectors and the sum of the `right` ones.
pub(crate) fn window_cosine(left: &[&[f32]], right: &[&[f32]]) -> f64 {
    cosine(&sum(left), &sum(right))
}

fn sum(vectors: &[&[f32]]) -> Vec<f64> {
    let mut acc = vec![0.0f64; vectors.iter().map(|v| v.len()).max().unwrap_or(0)];
    for v in vectors {
        for (a, &x) in acc.iter_mut().zip(*v) {
            *a += f64::from(x);
        }
    }
    acc
}

pub(crate) fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let (mut dot, mut na, mut nb) = (0.0, 0.0, 0.0);
    for (&x, &y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 { 0.0 } else { (dot / (na.sqrt() * nb.sqrt())).clamp(-1.0, 1.0) }
}

/// Moving average over `half_width` neighbours on each side.
pub fn smooth(values: &[f64], half_width: usize) -> Vec<f64> {
    (0..values.len())
        .map(|i| {
            let lo = i.saturating_sub(half_width);
            let hi = (i + half_width + 1).min(values.len());
            values[lo..hi].iter().sum::<f64>() / (hi - lo) as f64
        })
        .collect()
}

/// TextTiling depth: how far each gap's similarity lies below the peaks reached by climbing
/// left and right while the similarity keeps rising.
pub fn depth_scores(similarities: &[f64]) -> Vec<f64> {
    let n = similarities.len();
    (0..n)
        .map(|i| {
            let s = similarities[i];
            let mut left = s;
            for j in (0..i).rev() {
                if similarities[j] < left {
                    break;
                }
                left = similarities[j];
            }
            let mut right = s;
            for &x in &similarities[i + 1..] {
                if x < right {
                    break;
                }
                right = x;
            }
            (left - s) + (right - s)
        })
        .collect()
}

/// How deep a gap must be to become a boundary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cutoff {
    /// Relative part: mean depth of the dialogue plus this many standard deviations.
    pub std_devs: f64,
    /// Absolute floor, so a dialogue on one subject is not cut for lack of contrast.
    pub min_depth: f64,
    /// Boundaries closer than this many items are not both kept (the deeper one wins).
    pub min_gap: usize,
}

/// The gaps (1-based, as boundary indices) that are local maxima of depth, beat the cut-off,
/// and are at least `min_gap` apart; sorted.
pub fn select_boundaries(depths: &[f64], cutoff: Cutoff) -> Vec<usize> {
    if depths.is_empty() {
        return Vec::new();
    }
    let mean = depths.iter().sum::<f64>() / depths.len() as f64;
    let var = depths.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / depths.len() as f64;
    let threshold = (mean + cutoff.std_devs * var.sqrt()).max(cutoff.min_depth);
    let mut candidates: Vec<usize> = (0..depths.len())
        .filter(|&i| {
            let d = depths[i];
            d > threshold
                && (i == 0 || d >= depths[i - 1])
                && (i + 1 == depths.len() || d >= depths[i + 1])
        })
        .collect();
    candidates.sort_by(|&a, &b| depths[b].total_cmp(&depths[a]).then(a.cmp(&b)));
    let mut kept: Vec<usize> = Vec::new();
    for c in candidates {
        if kept.iter().all(|&k| k.abs_diff(c) >= cutoff.min_gap.max(1)) {
            kept.push(c);
        }
    }
    let mut out: Vec<usize> = kept.into_iter().map(|i| i + 1).collect();
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn depth_by_hand() {
        // A valley at index 2: climbs to 0.9 on the left and 0.8 on the right.
        let d = depth_scores(&[0.7, 0.9, 0.2, 0.8, 0.6]);
        assert!((d[2] - (0.7 + 0.6)).abs() < 1e-12);
        assert_eq!(d[1], 0.0);
        // The last gap climbs left to 0.8 only.
        assert!((d[4] - 0.2).abs() < 1e-12);
    }

    #[test]
    fn two_topics_split_where_they_meet() {
        let a: Vec<f32> = vec![1.0, 0.0];
        let b: Vec<f32> = vec![0.0, 1.0];
        let vs: Vec<&[f32]> = vec![&a, &a, &a, &a, &b, &b, &b, &b];
        let sims = gap_similarities(&vs, 2);
        let cut = Cutoff { std_devs: 0.0, min_depth: 0.1, min_gap: 2 };
        assert_eq!(select_boundaries(&depth_scores(&sims), cut), [4]);
        // One topic throughout: no contrast, no boundary.
        let same: Vec<&[f32]> = vec![&a; 8];
        assert!(select_boundaries(&depth_scores(&gap_similarities(&same, 2)), cut).is_empty());
    }

    #[test]
    fn smoothing_averages_neighbours() {
        assert_eq!(smooth(&[0.0, 3.0, 0.0], 1), [1.5, 1.0, 1.5]);
        assert_eq!(smooth(&[2.0], 3), [2.0]);
    }

    proptest! {
        #[test]
        fn selected_boundaries_are_sorted_spaced_and_in_range(
            depths in prop::collection::vec(0.0f64..2.0, 0..60),
            std_devs in -1.0f64..1.5,
            min_gap in 1usize..5,
        ) {
            let b = select_boundaries(&depths, Cutoff { std_devs, min_depth: 0.05, min_gap });
            for w in b.windows(2) {
                prop_assert!(w[1] - w[0] >= min_gap);
            }
            for &i in &b {
                prop_assert!(i >= 1 && i <= depths.len());
            }
        }

        #[test]
        fn depths_are_non_negative(sims in prop::collection::vec(-1.0f64..1.0, 0..60)) {
            prop_assert!(depth_scores(&sims).iter().all(|&d| d >= 0.0));
        }
    }
}
