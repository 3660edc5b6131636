//! Hybrid ranking: reciprocal rank fusion of lexical and vector candidates, weighted by memory
//! strength, gated, with near-duplicates collapsed. Pure: candidates in, ranked hits out.

use serde::{Deserialize, Serialize};

use crate::{recall::Fusion, recall::fusion::fuse};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RankingConfig {
    /// Candidates taken from each retriever.
    pub candidates: usize,
    /// Candidates taken from each retriever in turn-level recall, where a conversation has
    /// several times more messages than episodes.
    pub turn_candidates: usize,
    /// Messages not yet in an episode (the open tail) a turn-level recall searches beside the
    /// episodes: the newest of its scope. 0 searches none: what was just said is then found
    /// once it closes into an episode, and a recall under a stream of writes is faster.
    pub open_tail_lines: usize,
    /// The `k` of reciprocal rank fusion: `Σ 1 / (k + rank)`.
    pub rrf_k: f64,
    /// How turn-level recall fuses its three rankings.
    pub turn_fusion: Fusion,
    /// How episode recall fuses its two rankings. Scores keep how much better the best match
    /// is, so memory strength can reorder near-equal episodes without burying a clearly better
    /// one; ranks make the first two a few percent apart however far apart they are.
    pub episode_fusion: Fusion,
    /// Weights of the lexical, vector and word scores when fusing scores.
    pub score_weights: [f64; 3],
    /// The lexical weight is multiplied by this for a query that does not ask (a statement:
    /// "I'm performing at the party tonight"). A conversation's words rarely meet the
    /// memory's; its meaning does (MADial-Bench, the user's last message: the share of the
    /// relevant events in the first five 0.488 → 0.508, over a plain cosine's 0.493).
    pub statement_lexical_weight: f64,
    /// Gate: drop vector-only hits whose similarity is below this...
    pub min_similarity: f64,
    /// ...or more than this below the best hit's similarity.
    pub similarity_delta: f64,
    /// Whether hits found by BM25 are gated too (by default they pass).
    pub gate_lexical_hits: bool,
    /// Turn-level recall: share of a turn's score lent to the turns one, two, … before and
    /// after it (an answer sits next to its question, a story goes on over a few turns).
    pub neighbor_weights: Vec<f64>,
    /// Vector search over messages: a message scores the most of its own similarity and
    /// these shares of the similarity of the message before and of the one after it (an
    /// answer rises behind the question that shares the query's words).
    pub vector_neighbor_weights: [f64; 2],
    /// Neighbouring messages in two episodes count as neighbours (for both kinds of
    /// borrowing) only if at most this many minutes passed between the episodes.
    pub neighbor_max_gap_minutes: f64,
    /// A query that names a date ("on 25 May, 2022", "in July 2023") multiplies the score of
    /// episodes from that time by `1 + date_boost`...
    pub date_boost: f64,
    /// ...and from this many days after it (a day is told of in the days that follow).
    pub date_after_days: f64,
    /// Turn-level recall: rank candidate turns a third way, by soft word matching (each query
    /// word against the closest word of the turn, by embedding), fused with the other two.
    pub word_match: bool,
    /// Turn-level recall: a turn written by someone the query names scores `1 + this` times
    /// as much (after spreading, so an answer by that person next to a question rises too).
    pub author_boost: f64,
    /// Turn-level recall: a turn that asks (ends in a question mark) keeps this share of its
    /// score (after spreading, so the answer next to it still rises).
    pub question_weight: f64,
    /// Turn-level recall: a turn written by an assistant, a tool or the system keeps this share
    /// of its score (after spreading, so the person's line beside it still borrows from it),
    /// unless its episode holds tool output: an agent's work, whose lines are its findings.
    pub assistant_weight: f64,
    /// Turn-level recall: a person's line that sets a standing rule ("Always … when I ask
    /// about …") scores `1 + this` times as much.
    pub instruction_boost: f64,
    /// Turn-level recall: a turn's score is multiplied by `1 + this · c`, where c (0 to 1) is
    /// how well its episode answers the query.
    pub episode_context_weight: f64,
    /// Turn-level recall: an episode's context is at least this share of the context of the
    /// episode just before or after it (unless a silence separates them).
    pub context_neighbor_share: f64,
}

/// A named set of ranking weights (`[ranking] profile` in the configuration file; keys set
/// beside it override the profile's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// Holds for agent work sessions and chats alike: every rule in it gained more than the
    /// noise on at least one kind of conversation and lost beyond it on none.
    #[default]
    Default,
    /// Two people chatting about their lives (LoCoMo): adds the rules that help only there,
    /// turns lending to the turns around them (`neighbor_weights`) and questions weighing less
    /// than answers (`question_weight`). Together they gain on LoCoMo's tuning part (within
    /// 1,000 tokens 0.833 → 0.848) and lose beyond the noise on BEAM's (0.545 → 0.502): in a
    /// chat a story runs over several short turns, in a work session one long turn holds it.
    Dialogue,
}

impl std::str::FromStr for Profile {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "default" => Ok(Self::Default),
            "dialogue" => Ok(Self::Dialogue),
            other => Err(format!("unknown ranking profile `{other}` (default, dialogue)")),
        }
    }
}

impl RankingConfig {
    /// The weights for a query of `form`: a statement's words weigh less
    /// (`statement_lexical_weight`).
    pub fn for_query(&self, form: &crate::recall::QueryForm) -> std::borrow::Cow<'_, Self> {
        if form.asks || self.statement_lexical_weight == 1.0 {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut config = self.clone();
        config.score_weights[0] *= self.statement_lexical_weight;
        std::borrow::Cow::Owned(config)
    }

    /// The weights of a profile.
    pub fn for_profile(profile: Profile) -> Self {
        match profile {
            Profile::Default => Self::default(),
            Profile::Dialogue => Self {
                neighbor_weights: vec![0.2, 0.2, 0.1],
                question_weight: 0.8,
                ..Self::default()
            },
        }
    }
}

impl Default for RankingConfig {
    fn default() -> Self {
        Self {
            candidates: 100,
            turn_candidates: 300,
            open_tail_lines: 1000,
            rrf_k: 60.0,
            turn_fusion: Fusion::Scores,
            episode_fusion: Fusion::Scores,
            score_weights: [1.0, 1.0, 1.0],
            statement_lexical_weight: 0.5,
            min_similarity: 0.1,
            similarity_delta: 0.5,
            gate_lexical_hits: false,
            neighbor_weights: Vec::new(),
            vector_neighbor_weights: [0.8, 0.6],
            neighbor_max_gap_minutes: 30.0,
            date_boost: 2.0,
            date_after_days: 7.0,
            author_boost: 0.5,
            question_weight: 1.0,
            assistant_weight: 0.5,
            instruction_boost: 2.0,
            word_match: true,
            episode_context_weight: 4.0,
            context_neighbor_share: 0.8,
        }
    }
}

/// One candidate, as the retrievers saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// 1-based rank among the lexical (BM25) candidates.
    pub lexical_rank: Option<usize>,
    /// 1-based rank among the vector candidates.
    pub vector_rank: Option<usize>,
    /// 1-based rank by soft word matching (turn-level recall), when that was done.
    pub word_rank: Option<usize>,
    /// BM25 score, when a lexical candidate.
    pub lexical_score: Option<f64>,
    /// Cosine similarity of the query to the candidate, when known.
    pub similarity: Option<f64>,
    /// Soft word matching score, when that was done.
    pub word_score: Option<f64>,
    /// Recall weight from memory strength, `floor + (1 − floor) · R`.
    pub weight: f64,
}

/// A ranked candidate: its index in the input and its score parts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    pub index: usize,
    pub fused: f64,
    pub score: f64,
}

/// Fuses (`fusion`), weights and gates `candidates`; best first. `same(a, b)` tells whether
/// two candidates are near-duplicates (the caller knows their vectors).
pub fn rank(
    candidates: &[Candidate],
    config: &RankingConfig,
    fusion: Fusion,
    same: impl Fn(usize, usize) -> bool,
) -> Vec<Ranked> {
    let fused = fuse(candidates, fusion, config.rrf_k, config.score_weights);
    let best_similarity =
        candidates.iter().filter_map(|c| c.similarity).fold(f64::NEG_INFINITY, f64::max);
    let mut ranked: Vec<Ranked> = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| passes_gate(c, best_similarity, config))
        .map(|(index, c)| Ranked { index, fused: fused[index], score: fused[index] * c.weight })
        .collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
    let mut kept: Vec<Ranked> = Vec::with_capacity(ranked.len());
    for r in ranked {
        if !kept.iter().any(|k| same(k.index, r.index)) {
            kept.push(r);
        }
    }
    kept
}

fn passes_gate(c: &Candidate, best: f64, config: &RankingConfig) -> bool {
    if c.lexical_rank.is_some() && !config.gate_lexical_hits {
        return true;
    }
    match c.similarity {
        Some(s) => s >= config.min_similarity && s >= best - config.similarity_delta,
        // Nothing to gate on: a lexical hit with gating on but no vector.
        None => c.lexical_rank.is_some(),
    }
}

/// Turns that lend their score to their neighbours: the best this many.
const LENDERS: usize = 50;

/// Turn-level spreading: each of the best scored turns (`scored`: `(turn, score)`, best first)
/// lends `weights[d - 1]` of its score to the turns `d` before and after it, where
/// `neighbor(turn, offset)` says which turn that is (none past the conversation's edge). A
/// neighbour not scored yet joins with what it was lent. Returns every turn, best first (ties
/// in order of first appearance).
pub fn spread_to_neighbors<T: Copy + Eq + std::hash::Hash>(
    scored: &[(T, f64)],
    weights: &[f64],
    neighbor: impl Fn(T, i64) -> Option<T>,
) -> Vec<(T, f64)> {
    let mut out: Vec<(T, f64)> = scored.to_vec();
    let mut at: std::collections::HashMap<T, usize> =
        scored.iter().enumerate().map(|(i, &(t, _))| (t, i)).collect();
    for &(turn, score) in scored.iter().take(LENDERS) {
        for (d, &weight) in (1..).zip(weights) {
            if weight <= 0.0 {
                continue;
            }
            for n in [neighbor(turn, -d), neighbor(turn, d)].into_iter().flatten() {
                let i = *at.entry(n).or_insert_with(|| {
                    out.push((n, 0.0));
                    out.len() - 1
                });
                out[i].1 += weight * score;
            }
        }
    }
    // A stable sort keeps first appearance among equals.
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::recall::rrf;

    fn c(
        lexical: Option<usize>,
        vector: Option<usize>,
        similarity: Option<f64>,
        weight: f64,
    ) -> Candidate {
        Candidate {
            lexical_rank: lexical,
            vector_rank: vector,
            word_rank: None,
            lexical_score: None,
            similarity,
            word_score: None,
            weight,
        }
    }

    #[test]
    fn both_retrievers_beat_one_and_weak_memories_sink() {
        let cands = [
            c(Some(1), None, Some(0.3), 1.0),
            c(Some(2), Some(1), Some(0.9), 1.0),
            c(None, Some(2), Some(0.8), 1.0),
            c(Some(3), Some(3), Some(0.7), 0.3),
        ];
        let order: Vec<usize> =
            rank(&cands, &RankingConfig::default(), Fusion::Ranks, |_, _| false)
                .iter()
                .map(|r| r.index)
                .collect();
        assert_eq!(order, [1, 0, 2, 3]);
    }

    #[test]
    fn gating_drops_weak_vector_only_hits_but_not_lexical_ones() {
        let cands = [
            c(None, Some(1), Some(0.9), 1.0),
            c(None, Some(2), Some(0.3), 1.0), // more than 0.5 below the best
            c(None, Some(3), Some(0.05), 1.0), // below the minimum
            c(Some(1), None, Some(0.01), 1.0), // lexical: passes
        ];
        let kept: Vec<usize> = rank(&cands, &RankingConfig::default(), Fusion::Ranks, |_, _| false)
            .iter()
            .map(|r| r.index)
            .collect();
        assert_eq!(kept, [0, 3]); // equal scores: input order
        let strict = RankingConfig { gate_lexical_hits: true, ..Default::default() };
        let kept: Vec<usize> =
            rank(&cands, &strict, Fusion::Ranks, |_, _| false).iter().map(|r| r.index).collect();
        assert_eq!(kept, [0]);
    }

    #[test]
    fn duplicates_collapse_onto_the_better() {
        let cands =
            [c(Some(2), None, None, 1.0), c(Some(1), None, None, 1.0), c(Some(3), None, None, 1.0)];
        let kept: Vec<usize> = rank(&cands, &RankingConfig::default(), Fusion::Ranks, |a, b| {
            a.min(b) == 0 && a.max(b) == 1
        })
        .iter()
        .map(|r| r.index)
        .collect();
        assert_eq!(kept, [1, 2]);
    }

    /// Turns 1..=n of one conversation.
    fn within(n: u64) -> impl Fn(u64, i64) -> Option<u64> {
        move |t, d| t.checked_add_signed(d).filter(|u| (1..=n).contains(u))
    }

    #[test]
    fn an_answer_rises_next_to_its_question() {
        // Turn 5 asks what the question asks; turn 6 answers it but shares no word.
        let scored = [(5, 1.0), (2, 0.3), (9, 0.2)];
        let out = spread_to_neighbors(&scored, &[0.25], within(10));
        assert_eq!(out[0], (5, 1.0));
        let six = out.iter().position(|&(t, _)| t == 6).unwrap();
        let nine = out.iter().position(|&(t, _)| t == 9).unwrap();
        assert!(six < nine, "{out:?}");
        assert!(out.iter().all(|&(t, _)| (1..=10).contains(&t)), "never past the edges");
    }

    #[test]
    fn farther_turns_borrow_with_their_own_weight() {
        let scored = [(5, 1.0)];
        let out = spread_to_neighbors(&scored, &[0.25, 0.1], within(6));
        let score = |t| out.iter().find(|&&(u, _)| u == t).map(|&(_, s)| s);
        assert_eq!(score(4), Some(0.25));
        assert_eq!(score(6), Some(0.25));
        assert_eq!(score(3), Some(0.1));
        assert_eq!(score(7), None, "past the edge");
        assert_eq!(score(2), None, "three away lends nothing");
    }

    proptest! {
        #[test]
        fn spreading_only_adds_and_stays_next_to_lenders(
            raw in prop::collection::vec((1u64..40, 0.0f64..1.0), 0..30),
            weights in prop::collection::vec(0.0f64..1.0, 0..3),
        ) {
            let mut seen = std::collections::HashSet::new();
            let mut scored: Vec<(u64, f64)> =
                raw.into_iter().filter(|(t, _)| seen.insert(*t)).collect();
            scored.sort_by(|a, b| b.1.total_cmp(&a.1));
            let out = spread_to_neighbors(&scored, &weights, within(40));
            for w in out.windows(2) {
                prop_assert!(w[0].1 >= w[1].1);
            }
            let mut turns: Vec<u64> = out.iter().map(|&(t, _)| t).collect();
            turns.sort_unstable();
            turns.dedup();
            prop_assert_eq!(turns.len(), out.len(), "each turn once");
            for &(t, s) in &scored {
                let now = out.iter().find(|&&(u, _)| u == t).unwrap().1;
                prop_assert!(now >= s - 1e-12, "a score never drops");
            }
            for &(t, _) in &out {
                let lent = scored.iter().any(|&(u, _)| u == t)
                    || scored.iter().take(LENDERS).any(|&(u, _)| {
                        let d = u.abs_diff(t) as usize;
                        d >= 1 && weights.get(d - 1).is_some_and(|&w| w > 0.0)
                    });
                prop_assert!(lent, "turn {} came from nowhere", t);
            }
            if weights.iter().all(|&w| w == 0.0) {
                prop_assert_eq!(out, scored);
            }
        }

        #[test]
        fn ranking_is_sorted_distinct_and_gated(
            raw in prop::collection::vec((prop::option::of(1usize..200), prop::option::of(1usize..200), prop::option::of(-1.0f64..1.0), 0.0f64..1.0), 0..60)
        ) {
            let cands: Vec<Candidate> = raw.iter().map(|&(l, v, s, w)| c(l, v, s, w)).collect();
            let config = RankingConfig::default();
            let out = rank(&cands, &config, Fusion::Ranks, |_, _| false);
            for w in out.windows(2) {
                prop_assert!(w[0].score >= w[1].score);
            }
            let mut seen: Vec<usize> = out.iter().map(|r| r.index).collect();
            seen.sort_unstable();
            seen.dedup();
            prop_assert_eq!(seen.len(), out.len());
            for r in &out {
                let cand = &cands[r.index];
                prop_assert!((r.score - rrf(cand, config.rrf_k) * cand.weight).abs() < 1e-12);
                if cand.lexical_rank.is_none() {
                    prop_assert!(cand.similarity.unwrap() >= config.min_similarity);
                }
            }
            // Fusion is monotone: a better rank never lowers the fused score.
            if let Some(first) = cands.first()
                && let Some(l) = first.lexical_rank.filter(|&l| l > 1)
            {
                let better = Candidate { lexical_rank: Some(l - 1), ..*first };
                prop_assert!(rrf(&better, config.rrf_k) > rrf(first, config.rrf_k));
            }
        }
    }
}
