//! The open tail: messages stored and not yet closed into an episode, which no index holds.
//! Recall reads them from the store and hands them to the index with the query; the index
//! scores their words as it scores its own lines, and this puts them among its candidates,
//! each conversation's tail as an episode of its own (`EpisodeId::open_tail`), so that ranking
//! and rendering treat them as any line.

use std::collections::HashMap;

use epimem_core::{
    ConversationKey, EpisodeId, FsrsState, Role, Timestamp,
    recall::{
        KeptEpisode, LexicalMatch, LineSignals, TurnFeatures, TurnKey, TurnTable, VectorMatch,
    },
    telling::standing_instructions,
};

/// A message of a conversation's open tail.
#[derive(Debug, Clone, Copy)]
pub struct TailLine<'a> {
    pub conversation: &'a ConversationKey,
    pub seq: u64,
    pub role: Role,
    /// Its speaker, else its role.
    pub author: &'a str,
    pub content: &'a str,
    pub at: Timestamp,
    /// Of its author and content, the same for the same two: what an index keeps its words
    /// by (`TailWords`).
    pub fingerprint: u64,
    /// Its vector, from the embedder the index is kept for.
    pub vector: Option<&'a [f32]>,
}

/// Puts `tail` among `table`'s candidates: a line is a lexical candidate when its BM25 in
/// `scores` (as the index scores its own lines) is among the best, and a vector candidate
/// when its cosine to `query` is at least the weakest vector candidate's (or there is none);
/// the ranks of every candidate are taken again over the whole list. Lines of the tail
/// within `reach` of a candidate are its neighbours; the tail lends to no episode and borrows
/// from none.
pub fn add_tail(
    table: &mut TurnTable,
    tail: &[TailLine<'_>],
    scores: &TailScores,
    query: Option<&[f32]>,
    (limit, reach): (usize, usize),
) {
    if tail.is_empty() {
        return;
    }
    let (lexical, lengths) = (&scores.lexical, &scores.lengths);
    // Each conversation's tail is one episode of the table.
    let mut episode_of: HashMap<&ConversationKey, u32> = HashMap::new();
    for line in tail {
        let next = table.episodes.len() as u32;
        let e = *episode_of.entry(line.conversation).or_insert_with(|| {
            table.episodes.push(KeptEpisode {
                id: EpisodeId::open_tail(line.conversation),
                start: line.at,
                end: line.at,
                fsrs: FsrsState::default(),
            });
            table.adjacent.push(Vec::new());
            next
        });
        let episode = &mut table.episodes[e as usize];
        episode.start = episode.start.min(line.at);
        episode.end = episode.end.max(line.at);
    }
    // Each line's episode, found once (a key hashed at every use took much of a recall).
    let line_episode: Vec<u32> = tail.iter().map(|l| episode_of[l.conversation]).collect();
    let key = |i: usize| TurnKey { episode: line_episode[i], seq: tail[i].seq };
    let similarity = |i: usize| {
        let (q, v) = (query?, tail[i].vector?);
        Some(q.iter().zip(v).map(|(a, b)| a * b).sum::<f32>() as f64)
    };
    let weakest = table
        .turns
        .iter()
        .filter(|t| t.vector.is_some_and(|v| v.rank.is_some()))
        .map(|t| t.vector.map_or(f64::MAX, |v| v.similarity))
        .fold(f64::MAX, f64::min);
    // A tail line matched by words is a candidate as an index's line is: among the best
    // `limit`, above the weakest the index brought when it brought as many.
    let index_words: Vec<f64> =
        table.turns.iter().filter_map(|t| t.lexical.map(|l| l.score)).collect();
    let words_floor = match index_words.len() >= limit {
        true => index_words.iter().copied().fold(f64::MAX, f64::min),
        false => 0.0,
    };
    let mut by_words: Vec<usize> =
        (0..tail.len()).filter(|&i| lexical[i].is_some_and(|s| s >= words_floor)).collect();
    let score = |i: usize| lexical[i].unwrap_or(0.0);
    by_words.sort_by(|&a, &b| score(b).total_cmp(&score(a)).then(a.cmp(&b)));
    by_words.truncate(limit);
    let by_words: std::collections::HashSet<usize> = by_words.into_iter().collect();
    let mut candidates: Vec<usize> = Vec::new();
    for (i, score) in lexical.iter().enumerate() {
        let similarity = similarity(i);
        let by_vector = similarity.filter(|&s| weakest == f64::MAX || s >= weakest);
        let words = score.filter(|_| by_words.contains(&i));
        if words.is_none() && by_vector.is_none() {
            continue;
        }
        candidates.push(i);
        table.turns.push(TurnFeatures {
            turn: key(i),
            lexical: words.map(|score| LexicalMatch { rank: 0, score, length: lengths[i] }),
            vector: similarity
                .map(|similarity| VectorMatch { rank: by_vector.map(|_| 0), similarity }),
            words: None,
        });
    }
    rerank(&mut table.turns);
    add_context(table, &candidates, lexical, &key, &similarity);
    // Neighbours within each conversation's tail.
    let at: std::collections::HashSet<TurnKey> = (0..tail.len()).map(key).collect();
    let mut in_table: std::collections::HashSet<TurnKey> = std::collections::HashSet::new();
    for &i in &candidates {
        let turn = key(i);
        in_table.insert(turn);
        for d in 1..=reach as i64 {
            for offset in [-d, d] {
                let Some(seq) = turn.seq.checked_add_signed(offset) else { continue };
                let near = TurnKey { seq, ..turn };
                if at.contains(&near) {
                    table.neighbors.insert((turn, offset), near);
                    in_table.insert(near);
                }
            }
        }
    }
    add_lines(table, tail, &scores.named, &key, &in_table);
}

/// BM25's parameters as both indexes score lines (tantivy's `K1` and `B`).
pub const BM25_K1: f64 = 1.2;
pub const BM25_B: f64 = 0.75;

/// What an index tells of its own lines, for scoring lines it does not hold.
#[derive(Debug, Clone, Default)]
pub struct HeldWords {
    /// Lines the index holds, and their words in all.
    pub lines: u64,
    pub tokens: u64,
    /// How many of its lines hold each word asked about (as its analyzer makes words).
    pub held: HashMap<String, u64>,
}

/// One tail line's words as the index's analyzer makes them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LineWords {
    pub counts: HashMap<String, u64>,
    pub length: u64,
}

/// Tail lines' words as an index analyzed them, kept by what they were made from: a tail is
/// searched by every recall until it closes, and analyzing two thousand lines took most of
/// such a recall's time.
#[derive(Debug, Default)]
pub struct TailWords(std::sync::Mutex<HashMap<u64, std::sync::Arc<LineWords>>>);

/// Lines' words kept at most (then all are dropped, and what is searched next is kept again).
const KEPT_LINES: usize = 20_000;

impl TailWords {
    /// The words of each of `lines`, analyzed by `analyze` (given the lines not yet kept, it
    /// returns their words in order) only when not kept already.
    pub fn of<E>(
        &self,
        lines: &[TailLine<'_>],
        analyze: impl FnOnce(&[&TailLine<'_>]) -> Result<Vec<LineWords>, E>,
    ) -> Result<Vec<std::sync::Arc<LineWords>>, E> {
        let missing: Vec<&TailLine<'_>> = {
            let kept = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            lines.iter().filter(|l| !kept.contains_key(&l.fingerprint)).collect()
        };
        let mut found: HashMap<u64, std::sync::Arc<LineWords>> = HashMap::new();
        if !missing.is_empty() {
            let analyzed = analyze(&missing)?;
            let mut kept = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if kept.len() + analyzed.len() > KEPT_LINES {
                kept.clear();
            }
            for (line, words) in missing.iter().zip(analyzed) {
                let words = std::sync::Arc::new(words);
                kept.insert(line.fingerprint, words.clone());
                found.insert(line.fingerprint, words);
            }
        }
        let kept = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(lines
            .iter()
            .map(|l| found.get(&l.fingerprint).or_else(|| kept.get(&l.fingerprint)).cloned())
            .map(Option::unwrap_or_default)
            .collect())
    }
}

/// The tail's lines scored by BM25 for the query, and the ceiling a line's score is read
/// against (`TurnTable::lexical_ceiling`).
#[derive(Debug, Clone, PartialEq)]
pub struct TailScores {
    pub lexical: Vec<Option<f64>>,
    pub ceiling: f64,
    /// Whether each line's author is one the query names.
    pub named: Vec<bool>,
    /// Each line's length in words, as BM25 counts them.
    pub lengths: Vec<u32>,
}

/// Scores `lines` for `query_words` as the index scores its own lines, and the ceiling a
/// line's score is read against (over `ceiling_words`, the weighed query, with `name_score`
/// for each of `ceiling_names`; a named author's line gets it too).
///
/// A word's rarity is taken over the index's lines and the tail's together (a memory whose
/// every message is still in the tail has no other statistics), and a tail line's word score
/// is then put on the index's own scale (times the index's ceiling over the joint one), so
/// that its share of the ceiling is what it would be among the index's lines. With nothing
/// indexed, the joint ceiling is the scale.
pub fn score_tail(
    index: &HeldWords,
    query_words: &[String],
    ceiling_words: &[String],
    ceiling_names: usize,
    lines: &[&LineWords],
    named: &[bool],
    name_score: f64,
) -> TailScores {
    let idf = |documents: f64, held: u64| {
        let held = held.max(1) as f64;
        (1.0 + (documents - held + 0.5) / (held + 0.5)).ln()
    };
    let in_index = |word: &str| index.held.get(word).copied().unwrap_or(0);
    let in_tail = |word: &str| lines.iter().filter(|l| l.counts.contains_key(word)).count() as u64;
    let documents = (index.lines + lines.len() as u64) as f64;
    let joint = |word: &str| idf(documents, in_index(word) + in_tail(word));
    let own = |word: &str| idf(index.lines as f64, in_index(word));
    let joint_ceiling: f64 = ceiling_words.iter().map(|w| joint(w) * (BM25_K1 + 1.0)).sum();
    let (scale, words_ceiling) = match index.lines {
        0 => (1.0, joint_ceiling),
        _ => {
            let own_ceiling: f64 = ceiling_words.iter().map(|w| own(w) * (BM25_K1 + 1.0)).sum();
            let scale = if joint_ceiling > 0.0 { own_ceiling / joint_ceiling } else { 1.0 };
            (scale, own_ceiling)
        }
    };
    let tokens = index.tokens + lines.iter().map(|l| l.length).sum::<u64>();
    let mean_length = (tokens as f64 / documents.max(1.0)).max(1.0);
    let weights: Vec<(&str, f64)> = query_words.iter().map(|w| (w.as_str(), joint(w))).collect();
    let lexical = lines
        .iter()
        .zip(named)
        .map(|(line, &named)| {
            let norm = BM25_K1 * (1.0 - BM25_B + BM25_B * line.length as f64 / mean_length);
            let words: f64 = weights
                .iter()
                .filter_map(|&(word, idf)| {
                    let tf = *line.counts.get(word)? as f64;
                    Some(idf * tf * (BM25_K1 + 1.0) / (tf + norm))
                })
                .sum();
            let score = words * scale + if named { name_score } else { 0.0 };
            (score > 0.0).then_some(score)
        })
        .collect();
    let ceiling = words_ceiling + name_score * ceiling_names as f64;
    let lengths = lines.iter().map(|l| u32::try_from(l.length).unwrap_or(u32::MAX)).collect();
    TailScores { lexical, ceiling, named: named.to_vec(), lengths }
}

/// The proper nouns of `query` (`epimem_core::recall::proper_nouns`) that no line of `tail` holds: the
/// ones an index asks itself about.
pub fn proper_nouns_beyond(query: &str, tail: &[TailLine<'_>]) -> Vec<String> {
    let held = |word: &str| {
        tail.iter().any(|line| {
            [line.author, line.content].iter().any(|text| {
                text.split(|c: char| !c.is_alphanumeric()).any(|w| w.eq_ignore_ascii_case(word))
            })
        })
    };
    epimem_core::recall::proper_nouns(query).into_iter().filter(|w| !held(w)).collect()
}

/// Ranks by BM25 and by cosine taken again over every candidate, index's and tail's alike.
fn rerank(turns: &mut [TurnFeatures]) {
    let mut by_words: Vec<usize> =
        (0..turns.len()).filter(|&i| turns[i].lexical.is_some()).collect();
    let score = |t: &TurnFeatures| t.lexical.map_or(0.0, |l| l.score);
    by_words.sort_by(|&a, &b| score(&turns[b]).total_cmp(&score(&turns[a])).then(a.cmp(&b)));
    for (rank, &i) in by_words.iter().enumerate() {
        if let Some(l) = &mut turns[i].lexical {
            l.rank = rank + 1;
        }
    }
    let mut by_vector: Vec<usize> =
        (0..turns.len()).filter(|&i| turns[i].vector.is_some_and(|v| v.rank.is_some())).collect();
    let similarity = |t: &TurnFeatures| t.vector.map_or(0.0, |v| v.similarity);
    by_vector
        .sort_by(|&a, &b| similarity(&turns[b]).total_cmp(&similarity(&turns[a])).then(a.cmp(&b)));
    for (rank, &i) in by_vector.iter().enumerate() {
        if let Some(v) = &mut turns[i].vector {
            v.rank = Some(rank + 1);
        }
    }
}

/// Each tail's standing as an episode for the query: its best line's BM25 and cosine.
fn add_context(
    table: &mut TurnTable,
    candidates: &[usize],
    lexical: &[Option<f64>],
    key: &dyn Fn(usize) -> TurnKey,
    similarity: &dyn Fn(usize) -> Option<f64>,
) {
    let mut best: HashMap<u32, (Option<f64>, Option<f64>)> = HashMap::new();
    for &i in candidates {
        let e = key(i).episode;
        let higher = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let entry = best.entry(e).or_default();
        *entry = (higher(entry.0, lexical[i]), higher(entry.1, similarity(i)));
    }
    for (e, (words, meaning)) in best {
        if let Some(score) = words {
            table.context_lexical.push((e, score));
        }
        if let Some(similarity) = meaning {
            table.context_vector.push((e, similarity));
        }
    }
    table.context_lexical.sort_by(|a, b| b.1.total_cmp(&a.1));
    table.context_vector.sort_by(|a, b| b.1.total_cmp(&a.1));
}

/// What is known of each tail line of the table (`in_table`) besides its words, as an index
/// keeps it of its own.
fn add_lines(
    table: &mut TurnTable,
    tail: &[TailLine<'_>],
    named: &[bool],
    key: &dyn Fn(usize) -> TurnKey,
    in_table: &std::collections::HashSet<TurnKey>,
) {
    let mut by_episode: HashMap<u32, Vec<usize>> = HashMap::new();
    for i in 0..tail.len() {
        by_episode.entry(key(i).episode).or_default().push(i);
    }
    by_episode.retain(|_, lines| lines.iter().any(|&i| in_table.contains(&key(i))));
    for indexes in by_episode.values_mut() {
        indexes.sort_by_key(|&i| tail[i].seq);
        let lines: Vec<&TailLine<'_>> = indexes.iter().map(|&i| &tail[i]).collect();
        let in_work = lines.iter().any(|l| l.role == Role::Tool);
        let rules = standing_instructions(lines.iter().map(|l| (l.role, l.content)));
        for ((line, &i), instructs) in lines.iter().zip(indexes.iter()).zip(rules) {
            if !in_table.contains(&key(i)) {
                continue;
            }
            let signals = LineSignals {
                by_named_author: named[i],
                asks: line.content.trim_end().ends_with('?'),
                by_machine: line.role != Role::User,
                in_work,
                instructs,
            };
            table.lines.insert(key(i), signals);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> LineWords {
        let mut counts: HashMap<String, u64> = HashMap::new();
        for word in text.split(' ') {
            *counts.entry(word.into()).or_default() += 1;
        }
        LineWords { length: text.split(' ').count() as u64, counts }
    }

    #[test]
    fn a_tail_alone_is_scored_against_its_own_statistics() {
        let query: Vec<String> = ["locker", "code", "gym"].map(String::from).to_vec();
        let lines =
            [words("locker code is 4471"), words("gym opens at six"), words("dinner at eight")];
        let lines: Vec<&LineWords> = lines.iter().collect();
        let named = [false, false, true];
        let alone = score_tail(&HeldWords::default(), &query, &query, 0, &lines, &named, 8.0);
        let (two, one) = (alone.lexical[0].unwrap(), alone.lexical[1].unwrap());
        assert!(alone.ceiling > two, "{alone:?}");
        // Every word as rare as the others: two words score twice one.
        assert!((1.9..2.1).contains(&(two / one)), "{alone:?}");
        assert_eq!(alone.lexical[2], Some(8.0), "only its author is named");
        // The same words common in the index weigh less, read on the index's scale.
        let held = HashMap::from([("locker".to_owned(), 90), ("code".to_owned(), 90)]);
        let index = HeldWords { lines: 100, tokens: 800, held };
        let common = score_tail(&index, &query, &query, 0, &lines, &named, 8.0);
        assert!(common.lexical[0].unwrap() / common.ceiling < 0.2, "{common:?}");
        let own = |w: u64| (1.0 + (100.0 - w as f64 + 0.5) / (w as f64 + 0.5)).ln() * 2.2;
        assert!((common.ceiling - (2.0 * own(90) + own(1))).abs() < 1e-9, "{common:?}");
    }

    #[test]
    fn a_lines_words_are_analyzed_once() {
        let conversation = ConversationKey::new("t", "c");
        let line = |fingerprint: u64, content: &'static str| TailLine {
            conversation: &conversation,
            seq: fingerprint,
            role: Role::User,
            author: "Ana",
            content,
            at: Timestamp(0),
            fingerprint,
            vector: None,
        };
        let kept = TailWords::default();
        let mut asked = Vec::new();
        let mut analyze = |lines: &[&TailLine<'_>]| -> Result<Vec<LineWords>, ()> {
            asked.push(lines.len());
            Ok(lines.iter().map(|l| words(l.content)).collect())
        };
        let first = kept.of(&[line(1, "locker code"), line(2, "gym")], &mut analyze).unwrap();
        let again = kept.of(&[line(2, "gym"), line(3, "dinner")], &mut analyze).unwrap();
        assert_eq!(asked, [2, 1], "only the new line is analyzed again");
        assert_eq!((first[1].length, again[0].length, again[1].length), (1, 1, 1));
        assert_eq!(first[0].counts["locker"], 1);
    }

    #[test]
    fn tail_lines_join_the_candidates_and_take_their_rank() {
        let conversation = ConversationKey::new("t", "c");
        let mut table = TurnTable {
            episodes: vec![KeptEpisode {
                id: EpisodeId("ep_1".into()),
                start: Timestamp(0),
                end: Timestamp(0),
                fsrs: FsrsState::default(),
            }],
            adjacent: vec![Vec::new()],
            turns: vec![TurnFeatures {
                turn: TurnKey { episode: 0, seq: 1 },
                lexical: Some(LexicalMatch { rank: 1, score: 2.0, length: 4 }),
                vector: Some(VectorMatch { rank: Some(1), similarity: 0.5 }),
                words: None,
            }],
            ..TurnTable::default()
        };
        let (v1, v2) = ([1.0f32, 0.0], [0.0f32, 1.0]);
        let tail = [
            TailLine {
                conversation: &conversation,
                seq: 7,
                role: Role::User,
                author: "Ana",
                content: "the zeppelin lands at noon",
                at: Timestamp(60_000),
                fingerprint: 7,
                vector: Some(&v1),
            },
            TailLine {
                conversation: &conversation,
                seq: 8,
                role: Role::Assistant,
                author: "assistant",
                content: "noted?",
                at: Timestamp(120_000),
                fingerprint: 8,
                vector: Some(&v2),
            },
        ];
        add_tail(
            &mut table,
            &tail,
            &TailScores {
                lexical: vec![Some(3.0), None],
                ceiling: 4.0,
                named: vec![true, false],
                lengths: vec![3, 2],
            },
            Some(&[1.0, 0.0]),
            (10, 1),
        );
        assert_eq!(table.episodes[1].id, EpisodeId::open_tail(&conversation));
        assert_eq!(
            (table.episodes[1].start, table.episodes[1].end),
            (Timestamp(60_000), Timestamp(120_000))
        );
        let tail_turn = TurnKey { episode: 1, seq: 7 };
        let found = table.turns.iter().find(|t| t.turn == tail_turn).unwrap();
        assert_eq!(found.lexical.map(|l| l.rank), Some(1), "its BM25 beats the index's line");
        assert_eq!(found.vector.and_then(|v| v.rank), Some(1));
        assert_eq!(table.turns[0].lexical.map(|l| l.rank), Some(2));
        assert!(!table.turns.iter().any(|t| t.turn.seq == 8), "the second matches in nothing");
        assert_eq!(table.neighbors[&(tail_turn, 1)], TurnKey { episode: 1, seq: 8 });
        assert!(table.lines[&tail_turn].by_named_author);
        let reply = table.lines[&TurnKey { episode: 1, seq: 8 }];
        assert!(reply.asks && reply.by_machine);
        assert_eq!(table.context_lexical[0], (1, 3.0));
    }
}
