//! Ranking from a search index's raw features: the one place where retrievers' scores, an
//! episode's context, a date, memory strength, neighbours and who wrote a line become one
//! score per candidate, each part kept so a hit can say why it ranks where it does. Pure.

use std::collections::HashMap;

use crate::recall::{
    Candidate, EpisodeCandidates, EpisodeSignals, LineSignals, RankingConfig, TurnKey, TurnTable,
    context_with_neighbors, episode_factor, fuse, line_factor, rank, spread_to_neighbors,
};

/// What the caller knows of an episode that its index does not: whether it is from a date the
/// query names, and its memory strength as a recall factor (`Memory::recall_weight`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpisodeState {
    pub dated: bool,
    pub strength: f64,
}

/// A ranked episode of episode recall, with its score parts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpisodeScore {
    /// The candidate's index in [`EpisodeCandidates::candidates`].
    pub index: usize,
    /// The retrievers' scores fused.
    pub fused: f64,
    /// `fused` times the date and memory-strength factors.
    pub score: f64,
}

/// A ranked turn, with its score parts: `score = (fused · episode_factor + lent) · line_factor`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TurnScore {
    pub turn: TurnKey,
    /// Its cosine similarity to the query, when it was a vector candidate.
    pub similarity: Option<f64>,
    /// Its BM25 score, when it was a lexical candidate.
    pub lexical: Option<f64>,
    /// Its length in words as BM25 counted them, when it was a lexical candidate.
    pub length: Option<u32>,
    /// Its soft word matching score, when it had one.
    pub words: Option<f64>,
    /// Its retrievers' scores fused (0 for a turn that was only a neighbour).
    pub fused: f64,
    /// What its episode adds: context, a named date, memory strength (`episode_factor`).
    pub episode_factor: f64,
    /// What the best turns around it lent it.
    pub lent: f64,
    /// Who wrote it and how (`line_factor`).
    pub line_factor: f64,
    pub score: f64,
}

/// Episode recall: the candidates fused, weighted by date and memory strength (`states`, one
/// per candidate), gated and with duplicates (same title and summary) collapsed; best first.
pub fn rank_episodes(
    found: &EpisodeCandidates,
    states: &[EpisodeState],
    config: &RankingConfig,
) -> Vec<EpisodeScore> {
    let candidates: Vec<Candidate> = found
        .candidates
        .iter()
        .zip(states)
        .map(|(c, s)| Candidate {
            lexical_rank: c.lexical.map(|l| l.rank),
            vector_rank: c.vector.and_then(|v| v.rank),
            word_rank: None,
            lexical_score: c.lexical.map(|l| l.score),
            similarity: c.vector.map(|v| v.similarity),
            word_score: None,
            weight: s.strength * if s.dated { 1.0 + config.date_boost } else { 1.0 },
        })
        .collect();
    // Near-duplicates: the same story told twice (say, one conversation imported under two
    // names) has the same title and summary; the better-ranked copy stays.
    let same = |a: usize, b: usize| found.candidates[a].story == found.candidates[b].story;
    rank(&candidates, config, config.episode_fusion, same)
        .into_iter()
        .map(|r| EpisodeScore { index: r.index, fused: r.fused, score: r.score })
        .collect()
}

/// Turn-level recall: each candidate's retrievers fused, weighted by its episode (how well the
/// episode or the one beside it answers, a named date, memory strength), the best lending to
/// the turns around them, then weighed by who wrote each line; best first. `states` holds one
/// entry per episode of the table.
pub fn rank_turns(
    table: &TurnTable,
    states: &[EpisodeState],
    config: &RankingConfig,
) -> Vec<TurnScore> {
    let mut candidates: Vec<Candidate> = table
        .turns
        .iter()
        .map(|t| Candidate {
            lexical_rank: t.lexical.map(|l| l.rank),
            vector_rank: t.vector.and_then(|v| v.rank),
            word_rank: None,
            lexical_score: t.lexical.map(|l| l.score),
            similarity: t.vector.map(|v| v.similarity),
            word_score: t.words,
            weight: 1.0,
        })
        .collect();
    let mut by_words: Vec<(usize, f64)> =
        table.turns.iter().enumerate().filter_map(|(i, t)| Some((i, t.words?))).collect();
    by_words.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    for (rank, (i, _)) in by_words.into_iter().enumerate() {
        candidates[i].word_rank = Some(rank + 1);
    }

    let context = episode_context(&table.context_lexical, &table.context_vector, config);
    let context_of = |e: u32| context.get(&e).copied().unwrap_or(0.0);
    // Many candidate turns share an episode: weigh each episode once.
    let mut factors: HashMap<u32, f64> = HashMap::new();
    for (c, t) in candidates.iter_mut().zip(&table.turns) {
        let e = t.turn.episode;
        c.weight = *factors.entry(e).or_insert_with(|| {
            let adjacent = table.adjacent.get(e as usize).into_iter().flatten();
            let state = states[e as usize];
            let signals = EpisodeSignals {
                context: context_with_neighbors(
                    context_of(e),
                    adjacent.map(|&n| context_of(n)),
                    config,
                ),
                dated: state.dated,
                strength: state.strength,
            };
            episode_factor(&signals, config)
        });
    }
    let ranked = rank(&candidates, config, config.turn_fusion, |_, _| false);
    let scored: Vec<(TurnKey, f64)> =
        ranked.iter().map(|r| (table.turns[r.index].turn, r.score)).collect();
    let own: HashMap<TurnKey, (usize, f64)> =
        ranked.iter().map(|r| (table.turns[r.index].turn, (r.index, r.fused))).collect();
    let neighbor = |turn: TurnKey, offset: i64| table.neighbors.get(&(turn, offset)).copied();
    let spread = spread_to_neighbors(&scored, &config.neighbor_weights, neighbor);
    let mut out: Vec<TurnScore> = spread
        .into_iter()
        .map(|(turn, spread)| {
            let (fused, factor, c) = match own.get(&turn) {
                Some(&(i, fused)) => (fused, candidates[i].weight, Some(&candidates[i])),
                None => (0.0, factors.get(&turn.episode).copied().unwrap_or(1.0), None),
            };
            let lines = table.lines.get(&turn).copied().unwrap_or(LineSignals::default());
            let line_factor = line_factor(&lines, config);
            let lent = spread - fused * factor;
            let length = own.get(&turn).and_then(|&(i, _)| table.turns[i].lexical);
            TurnScore {
                turn,
                similarity: c.and_then(|c| c.similarity),
                lexical: c.and_then(|c| c.lexical_score),
                length: length.map(|l| l.length),
                words: c.and_then(|c| c.word_score),
                fused,
                episode_factor: factor,
                lent,
                line_factor,
                score: spread * line_factor,
            }
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out
}

/// How well each episode answers the query as a whole: its lexical and vector scores (or
/// ranks) fused as turns are, scaled so the best is 1.
pub fn episode_context(
    lexical: &[(u32, f64)],
    vector: &[(u32, f64)],
    config: &RankingConfig,
) -> HashMap<u32, f64> {
    let mut episodes: Vec<u32> = Vec::new();
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut at: HashMap<u32, usize> = HashMap::new();
    let mut index_of = |e: u32, candidates: &mut Vec<Candidate>| {
        *at.entry(e).or_insert_with(|| {
            episodes.push(e);
            candidates.push(Candidate {
                lexical_rank: None,
                vector_rank: None,
                word_rank: None,
                lexical_score: None,
                similarity: None,
                word_score: None,
                weight: 1.0,
            });
            candidates.len() - 1
        })
    };
    for (i, &(e, score)) in lexical.iter().enumerate() {
        let c = index_of(e, &mut candidates);
        candidates[c].lexical_rank.get_or_insert(i + 1);
        candidates[c].lexical_score.get_or_insert(score);
    }
    for (i, &(e, similarity)) in vector.iter().enumerate() {
        let c = index_of(e, &mut candidates);
        candidates[c].vector_rank.get_or_insert(i + 1);
        candidates[c].similarity.get_or_insert(similarity);
    }
    let [lexical_weight, vector_weight, _] = config.score_weights;
    let fused =
        fuse(&candidates, config.turn_fusion, config.rrf_k, [lexical_weight, vector_weight, 0.0]);
    let mut fused: HashMap<u32, f64> = episodes.into_iter().zip(fused).collect();
    let best = fused.values().copied().fold(0.0, f64::max);
    if best > 0.0 {
        fused.values_mut().for_each(|v| *v /= best);
    }
    fused
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::recall::{
        EpisodeFeatures, Fusion, KeptEpisode, LexicalMatch, Profile, TurnFeatures, VectorMatch,
    };

    #[test]
    fn episode_context_is_fused_and_scaled_to_the_best() {
        let lexical = [(7, 2.0), (3, 1.8)];
        let vector = [(3, 0.9), (5, 0.8), (7, 0.1)];
        for fusion in [Fusion::Ranks, Fusion::Scores] {
            let config = RankingConfig { turn_fusion: fusion, ..Default::default() };
            let context = episode_context(&lexical, &vector, &config);
            // Episode 3 is near the top of both lists, so it is the best.
            assert_eq!(context[&3], 1.0, "{fusion:?}");
            assert!(context.values().all(|&c| (0.0..=1.0).contains(&c)), "{fusion:?}");
            assert!(episode_context(&[], &[], &config).is_empty());
        }
        // Ranks forget that episode 7 is barely similar; scores remember.
        let by = |fusion| {
            let config = RankingConfig { turn_fusion: fusion, ..Default::default() };
            episode_context(&lexical, &vector, &config)
        };
        let (ranks, scores) = (by(Fusion::Ranks), by(Fusion::Scores));
        assert!(ranks[&7] > ranks[&5], "{ranks:?}");
        assert!(scores[&7] / scores[&3] < ranks[&7] / ranks[&3], "{scores:?} {ranks:?}");
    }

    #[test]
    fn the_same_story_told_twice_is_recalled_once_at_its_better_rank() {
        let candidate = |id: &str, story: u64, rank: usize| EpisodeFeatures {
            episode: KeptEpisode {
                id: crate::EpisodeId(id.into()),
                start: crate::Timestamp(0),
                end: crate::Timestamp(0),
                fsrs: crate::FsrsState::default(),
            },
            story,
            lexical: lexical(rank, 1.0 / rank as f64),
            vector: None,
            best_seq: None,
        };
        let lisbon = crate::recall::story_fingerprint("Lisbon trip", "Where to stay in Lisbon.");
        let found = EpisodeCandidates {
            searched_words: true,
            candidates: vec![
                candidate("imported-as-a", lisbon, 1),
                candidate(
                    "sintra",
                    crate::recall::story_fingerprint("Lisbon trip", "Sintra by train."),
                    2,
                ),
                candidate("imported-as-b", lisbon, 3),
            ],
        };
        let states = [EpisodeState { dated: false, strength: 1.0 }; 3];
        let ranked = rank_episodes(&found, &states, &RankingConfig::default());
        let order: Vec<usize> = ranked.iter().map(|r| r.index).collect();
        assert_eq!(order, [0, 1], "the copy ranked lower goes; one title alone is no copy");
    }

    fn turn(episode: u32, seq: u64) -> TurnKey {
        TurnKey { episode, seq }
    }

    fn lexical(rank: usize, score: f64) -> Option<LexicalMatch> {
        Some(LexicalMatch { rank, score, length: 10 })
    }

    /// Two episodes of three turns each; turn (0, 2) matches by words, (1, 5) by vector.
    fn table() -> TurnTable {
        let features = |t, lexical, vector: Option<(usize, f64)>| TurnFeatures {
            turn: t,
            lexical,
            vector: vector.map(|(rank, similarity)| VectorMatch { rank: Some(rank), similarity }),
            words: None,
        };
        let mut table = TurnTable {
            searched_words: true,
            episodes: Vec::new(), // ranking never reads the episodes themselves
            adjacent: vec![vec![1], vec![0]],
            context_lexical: vec![(0, 3.0)],
            context_vector: vec![(1, 0.6), (0, 0.2)],
            turns: vec![
                features(turn(0, 2), lexical(1, 4.0), Some((2, 0.3))),
                features(turn(1, 5), None, Some((1, 0.7))),
            ],
            ..TurnTable::default()
        };
        for (t, d, n) in [(turn(0, 2), 1, turn(0, 3)), (turn(0, 2), -1, turn(0, 1))] {
            table.neighbors.insert((t, d), n);
        }
        table.neighbors.insert((turn(1, 5), -1), turn(1, 4));
        table
    }

    const PLAIN: [EpisodeState; 2] = [
        EpisodeState { dated: false, strength: 1.0 },
        EpisodeState { dated: false, strength: 1.0 },
    ];

    #[test]
    fn score_parts_add_up_and_neighbours_borrow() {
        let config = RankingConfig::for_profile(Profile::Dialogue);
        let out = rank_turns(&table(), &PLAIN, &config);
        for s in &out {
            let again = (s.fused * s.episode_factor + s.lent) * s.line_factor;
            assert!((again - s.score).abs() < 1e-12, "{s:?}");
        }
        assert_eq!(out[0].turn, turn(0, 2), "{out:?}");
        let next = out.iter().find(|s| s.turn == turn(0, 3)).expect("a neighbour joins");
        assert_eq!(next.fused, 0.0);
        assert!((next.lent - config.neighbor_weights[0] * out[0].score).abs() < 1e-12);
        assert!(out.windows(2).all(|w| w[0].score >= w[1].score));
        // By default nothing is lent: only candidates rank.
        let plain = rank_turns(&table(), &PLAIN, &RankingConfig::default());
        assert!(plain.iter().all(|s| s.lent == 0.0 && s.fused > 0.0), "{plain:?}");
    }

    #[test]
    fn each_signal_moves_its_turn() {
        let config = RankingConfig::for_profile(Profile::Dialogue);
        let score = |table: &TurnTable, states: &[EpisodeState], t: TurnKey| {
            rank_turns(table, states, &config).iter().find(|s| s.turn == t).unwrap().score
        };
        let base = table();
        let plain = score(&base, &PLAIN, turn(1, 5));
        let dated = [PLAIN[0], EpisodeState { dated: true, strength: 1.0 }];
        assert!(score(&base, &dated, turn(1, 5)) > plain, "a named date raises");
        let faded = [PLAIN[0], EpisodeState { dated: false, strength: 0.8 }];
        assert!(score(&base, &faded, turn(1, 5)) < plain, "a faded memory sinks");
        let mut asks = table();
        asks.lines.insert(turn(1, 5), LineSignals { asks: true, ..LineSignals::default() });
        assert!(score(&asks, &PLAIN, turn(1, 5)) < plain, "a question sinks");
        let mut named = table();
        named.lines.insert(turn(1, 5), LineSignals { by_named_author: true, ..Default::default() });
        assert!(score(&named, &PLAIN, turn(1, 5)) > plain, "the named person's line rises");
        let mut lonely = table();
        lonely.adjacent = vec![vec![], vec![]];
        lonely.context_vector = vec![(0, 0.2)];
        assert!(score(&lonely, &PLAIN, turn(1, 5)) < plain, "no context, less weight");
    }

    proptest! {
        #[test]
        fn word_ranks_follow_word_scores(words in prop::collection::vec(prop::option::of(0.01f64..1.0), 1..20)) {
            let mut table = TurnTable { adjacent: vec![vec![]], ..TurnTable::default() };
            // Every candidate came from a retriever; here all alike, so only words tell them apart.
            let alike = Some(VectorMatch { rank: None, similarity: 0.5 });
            table.turns = words.iter().enumerate().map(|(i, &w)| TurnFeatures {
                turn: turn(0, i as u64 + 1), lexical: None, vector: alike, words: w,
            }).collect();
            let config = RankingConfig { turn_fusion: Fusion::Ranks, neighbor_weights: vec![], ..Default::default() };
            let out = rank_turns(&table, &PLAIN[..1], &config);
            prop_assert_eq!(out.len(), words.len());
            // The turns with a word score first, in the order of that score.
            let scores: Vec<f64> = out.iter().map(|s| words[s.turn.seq as usize - 1].unwrap_or(0.0)).collect();
            prop_assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{:?}", scores);
        }
    }
}
