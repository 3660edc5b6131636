//! How the retrievers' opinions of a candidate become one number: by their ranks (reciprocal
//! rank fusion) or by their scores (a weighted sum of each retriever's score, scaled to the
//! range the candidates span). Pure.

use serde::{Deserialize, Serialize};

use crate::recall::Candidate;

/// How candidates' ranks or scores are fused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fusion {
    /// Reciprocal rank fusion, `Σ 1 / (k + rank)`: needs nothing but ranks, so it suits
    /// retrievers whose scores cannot be compared.
    Ranks,
    /// `Σ weight · scaled score`, where BM25 and word scores are divided by the best
    /// candidate's and similarities are scaled from the lowest candidate's (0) to the best
    /// one's (1). Keeps how far apart candidates are, which ranks throw away.
    Scores,
}

/// Reciprocal rank fusion of the candidate's ranks.
pub fn rrf(candidate: &Candidate, k: f64) -> f64 {
    [candidate.lexical_rank, candidate.vector_rank, candidate.word_rank]
        .into_iter()
        .flatten()
        .map(|rank| 1.0 / (k + rank as f64))
        .sum()
}

/// The fused value of every candidate, in input order. `weights` are those of the lexical,
/// vector and word scores (used by [`Fusion::Scores`]).
pub fn fuse(candidates: &[Candidate], fusion: Fusion, rrf_k: f64, weights: [f64; 3]) -> Vec<f64> {
    match fusion {
        Fusion::Ranks => candidates.iter().map(|c| rrf(c, rrf_k)).collect(),
        Fusion::Scores => {
            let lexical = Scale::from_zero(candidates.iter().filter_map(|c| c.lexical_score));
            let vector = Scale::over_range(candidates.iter().filter_map(|c| c.similarity));
            let words = Scale::from_zero(candidates.iter().filter_map(|c| c.word_score));
            candidates
                .iter()
                .map(|c| {
                    weights[0] * lexical.apply(c.lexical_score)
                        + weights[1] * vector.apply(c.similarity)
                        + weights[2] * words.apply(c.word_score)
                })
                .collect()
        }
    }
}

/// Maps one retriever's scores onto 0..=1: `(s − low) / (high − low)`; a missing score is 0.
struct Scale {
    low: f64,
    high: f64,
    /// What a score is worth when all candidates score alike.
    flat: f64,
}

impl Scale {
    /// Scores that start at zero (BM25, word matching): divided by the best; all zero, all 0.
    fn from_zero(scores: impl Iterator<Item = f64>) -> Self {
        Self { low: 0.0, high: scores.fold(0.0, f64::max), flat: 0.0 }
    }

    /// Scores that may be negative (cosine similarity): the lowest candidate's is 0, the best
    /// one's 1; all alike, all 1.
    fn over_range(scores: impl Iterator<Item = f64>) -> Self {
        let (low, high) =
            scores.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| (lo.min(s), hi.max(s)));
        Self { low, high, flat: 1.0 }
    }

    fn apply(&self, score: Option<f64>) -> f64 {
        match score {
            Some(s) if self.high > self.low => {
                ((s - self.low) / (self.high - self.low)).clamp(0.0, 1.0)
            }
            Some(_) => self.flat,
            None => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn scored(lexical: Option<f64>, similarity: Option<f64>, words: Option<f64>) -> Candidate {
        Candidate {
            lexical_rank: None,
            vector_rank: None,
            word_rank: None,
            lexical_score: lexical,
            similarity,
            word_score: words,
            weight: 1.0,
        }
    }

    const EVEN: [f64; 3] = [1.0, 1.0, 1.0];

    #[test]
    fn scores_are_scaled_per_retriever_and_summed() {
        let cands = [
            scored(Some(10.0), Some(0.5), Some(0.2)),
            scored(Some(5.0), Some(0.9), None),
            scored(None, Some(0.1), Some(0.4)),
        ];
        let fused = fuse(&cands, Fusion::Scores, 60.0, EVEN);
        // lexical 1, 0.5, 0; vector 0.5, 1, 0; words 0.5, 0, 1.
        let want = [2.0, 1.5, 1.0];
        for (got, want) in fused.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{fused:?}");
        }
        let lexical_only = fuse(&cands, Fusion::Scores, 60.0, [1.0, 0.0, 0.0]);
        assert_eq!(lexical_only, [1.0, 0.5, 0.0]);
    }

    #[test]
    fn ranks_fuse_reciprocally() {
        let c =
            Candidate { lexical_rank: Some(1), vector_rank: Some(3), ..scored(None, None, None) };
        let fused = fuse(&[c, scored(Some(1.0), None, None)], Fusion::Ranks, 60.0, EVEN);
        assert!((fused[0] - (1.0 / 61.0 + 1.0 / 63.0)).abs() < 1e-15);
        assert_eq!(fused[1], 0.0, "scores without ranks count for nothing");
    }

    #[test]
    fn one_candidate_or_equal_scores_are_all_best() {
        let fused = fuse(&[scored(Some(3.0), Some(-0.2), Some(0.5))], Fusion::Scores, 60.0, EVEN);
        assert_eq!(fused, [3.0]);
        let same = [scored(None, Some(0.4), None), scored(None, Some(0.4), None)];
        assert_eq!(fuse(&same, Fusion::Scores, 60.0, EVEN), [1.0, 1.0]);
        assert_eq!(fuse(&[], Fusion::Scores, 60.0, EVEN), Vec::<f64>::new());
    }

    #[test]
    fn config_names_the_fusion_in_lower_case() {
        #[derive(Deserialize)]
        struct Holder {
            fusion: Fusion,
        }
        let h: Holder = serde_json::from_str(r#"{"fusion": "scores"}"#).unwrap();
        assert_eq!(h.fusion, Fusion::Scores);
        assert!(serde_json::from_str::<Holder>(r#"{"fusion": "mean"}"#).is_err());
    }

    fn candidate() -> impl Strategy<Value = Candidate> {
        (
            prop::option::of(0.0f64..30.0),
            prop::option::of(-1.0f64..1.0),
            prop::option::of(0.0f64..1.0),
        )
            .prop_map(|(l, v, w)| scored(l, v, w))
    }

    proptest! {
        #[test]
        fn scores_stay_in_range_and_the_best_everywhere_is_first(
            cands in prop::collection::vec(candidate(), 1..40),
            weights in prop::array::uniform3(0.0f64..2.0),
        ) {
            let fused = fuse(&cands, Fusion::Scores, 60.0, weights);
            prop_assert_eq!(fused.len(), cands.len());
            let total: f64 = weights.iter().sum();
            for &f in &fused {
                prop_assert!(f >= 0.0 && f <= total + 1e-9, "{} outside 0..={}", f, total);
            }
            // A candidate with the best score of every retriever fuses to the most.
            let best = |get: fn(&Candidate) -> Option<f64>| {
                cands.iter().filter_map(get).fold(f64::NEG_INFINITY, f64::max)
            };
            let top = [best(|c| c.lexical_score), best(|c| c.similarity), best(|c| c.word_score)];
            let mut with_best = cands.clone();
            with_best.push(scored(
                Some(top[0].max(0.0)),
                Some(if top[1].is_finite() { top[1] } else { 0.0 }),
                Some(top[2].max(0.0)),
            ));
            let fused = fuse(&with_best, Fusion::Scores, 60.0, weights);
            let last = *fused.last().unwrap();
            prop_assert!(fused.iter().all(|&f| f <= last + 1e-9), "{:?}", fused);
        }

        #[test]
        fn a_better_score_never_lets_another_candidate_pass(
            cands in prop::collection::vec(candidate(), 2..40),
            which in 0usize..3,
            raise in 0.0f64..0.5,
        ) {
            let before = fuse(&cands, Fusion::Scores, 60.0, EVEN);
            // (A score the candidate lacked counts as the lowest; giving it one below every
            // other candidate's would move the scale, so only scores it has are raised.)
            let mut better = cands.clone();
            let first = &mut better[0];
            let slot = match which {
                0 => &mut first.lexical_score,
                1 => &mut first.similarity,
                _ => &mut first.word_score,
            };
            prop_assume!(slot.is_some());
            let top = if which == 0 { 30.0 } else { 1.0 };
            *slot = slot.map(|s| (s + raise * top).min(top));
            let after = fuse(&better, Fusion::Scores, 60.0, EVEN);
            for j in 1..cands.len() {
                if before[j] < before[0] - 1e-9 {
                    prop_assert!(after[j] <= after[0] + 1e-9, "{} passed the raised candidate", j);
                }
            }
        }
    }
}
