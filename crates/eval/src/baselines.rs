//! Reference points that every segmentation result is printed next to.

use epimem_core::{
    segment::tiling::{Cutoff, depth_scores, gap_similarities, select_boundaries, smooth},
    telling::KeywordBag,
};

/// `count` distinct boundaries in `1..n`, uniformly at random from `seed`.
pub(crate) fn random(n: usize, count: usize, seed: u64) -> Vec<usize> {
    let mut positions: Vec<usize> = (1..n).collect();
    let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
    let count = count.min(positions.len());
    for i in 0..count {
        state =
            state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let j = i + ((state >> 33) as usize) % (positions.len() - i);
        positions.swap(i, j);
    }
    let mut out = positions[..count].to_vec();
    out.sort_unstable();
    out
}

/// `count` boundaries spread evenly over `1..n`.
pub(crate) fn even(n: usize, count: usize) -> Vec<usize> {
    let mut out: Vec<usize> = (1..=count)
        .map(|j| ((n * j) as f64 / (count + 1) as f64).round() as usize)
        .filter(|&b| b >= 1 && b < n)
        .collect();
    out.dedup();
    out
}

/// Classic lexical TextTiling (Hearst 1997) adapted to dialogue: keyword vectors, windows of
/// three utterances, smoothing, depth scores, cut-off at the mean minus half a deviation.
pub(crate) fn texttiling(utterances: &[&str]) -> Vec<usize> {
    const DIM: usize = 4096;
    let vectors: Vec<Vec<f32>> = utterances
        .iter()
        .map(|u| {
            let mut v = vec![0.0f32; DIM];
            for &h in KeywordBag::from_text(u).hashes() {
                v[(h % DIM as u64) as usize] += 1.0;
            }
            v
        })
        .collect();
    let views: Vec<&[f32]> = vectors.iter().map(Vec::as_slice).collect();
    let sims = smooth(&gap_similarities(&views, 3), 1);
    select_boundaries(&depth_scores(&sims), Cutoff { std_devs: -0.5, min_depth: 0.0, min_gap: 1 })
        .into_iter()
        .filter(|&b| b < utterances.len())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_is_seeded_distinct_and_sized() {
        let a = random(20, 5, 7);
        assert_eq!(a, random(20, 5, 7));
        assert_ne!(a, random(20, 5, 8));
        assert_eq!(a.len(), 5);
        assert!(a.windows(2).all(|w| w[0] < w[1]) && a.iter().all(|&b| (1..20).contains(&b)));
        assert_eq!(random(3, 9, 1), [1, 2]);
    }

    #[test]
    fn even_spacing() {
        assert_eq!(even(12, 2), [4, 8]);
        assert_eq!(even(4, 0), Vec::<usize>::new());
    }

    #[test]
    fn texttiling_splits_unrelated_halves() {
        let u = [
            "tomato garden soil watering",
            "garden soil needs compost",
            "water the tomato plants daily",
            "compost improves garden soil",
            "train tickets to paris",
            "paris hotel booking tickets",
            "book the paris train early",
            "hotel near the paris station",
        ];
        assert_eq!(texttiling(&u), [4]);
    }
}
