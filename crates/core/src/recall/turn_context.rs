//! A context block built from the best single turns: as many as fit in a token budget,
//! each under its episode's heading, so the budget goes to the lines that answer rather
//! than to whole episodes around them.

use std::collections::HashMap;

use crate::{
    Episode, EpisodeId, Message, TokenCounter,
    recall::block::{quote, quoted_whole, turn_heading},
};

/// One recalled turn and its episode.
#[derive(Debug, Clone, Copy)]
pub struct TurnItem<'a> {
    pub episode: &'a Episode,
    pub message: &'a Message,
}

/// A context block of turns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnContext {
    pub text: String,
    /// Tokens of `text`.
    pub tokens: usize,
    /// Which of the turns it holds (their indexes, best first).
    pub quoted: Vec<usize>,
    /// The episodes it quotes, in the order they appear in it.
    pub episodes: Vec<EpisodeId>,
}

/// Takes turns best first while they fit in `budget` tokens (a turn longer than what is left
/// gives its place to the next ones that fit: one long reply must not crowd out ten short
/// lines), then renders each episode once, in the order its best turn came, with its turns in
/// conversation order under the time the episode began.
pub fn render_turns(turns: &[TurnItem<'_>], budget: usize, counter: &TokenCounter) -> TurnContext {
    let mut quoted: Vec<usize> = Vec::new();
    let mut estimate = 0;
    let mut headed: Vec<&EpisodeId> = Vec::new();
    let mixed = mixed(turns);
    for (i, turn) in turns.iter().enumerate() {
        // Once the block is nearly full most candidates cannot fit: their stored counts say so
        // without counting them again, which took most of a recall's time.
        if surely_too_long(turn.message, budget - estimate) {
            continue;
        }
        let mut cost = counter.count(&quote(turn.message)) as usize;
        if !headed.contains(&&turn.episode.id) {
            cost += counter.count(&turn_heading(turn.episode, mixed)) as usize + 1;
        }
        if estimate + cost > budget {
            continue;
        }
        if !headed.contains(&&turn.episode.id) {
            headed.push(&turn.episode.id);
        }
        estimate += cost;
        quoted.push(i);
    }
    // Pieces counted apart can merge into fewer tokens or split into more: the whole text
    // decides, dropping the last turn until it fits.
    loop {
        let chosen: Vec<TurnItem<'_>> = quoted.iter().map(|&i| turns[i]).collect();
        let block = render(&chosen);
        let tokens = counter.count(&block.text) as usize;
        if tokens <= budget || quoted.is_empty() {
            return TurnContext { tokens, quoted, ..block };
        }
        quoted.pop();
    }
}

/// Whether quoting `m` surely costs more than `left` tokens, from the count its message was
/// stored with: a whole line costs at least four fifths of that (spaces and line breaks
/// folded), and a line cut short is never judged so.
fn surely_too_long(m: &Message, left: usize) -> bool {
    m.tokens as usize * 4 / 5 > left && quoted_whole(m)
}

/// Whether the turns come from more than one conversation.
fn mixed(turns: &[TurnItem<'_>]) -> bool {
    turns.windows(2).any(|w| w[0].episode.conversation != w[1].episode.conversation)
}

fn render(turns: &[TurnItem<'_>]) -> TurnContext {
    let mut order: Vec<&Episode> = Vec::new();
    let mut lines: HashMap<&EpisodeId, Vec<&Message>> = HashMap::new();
    for turn in turns {
        let e = turn.episode;
        if !lines.contains_key(&e.id) {
            order.push(e);
        }
        lines.entry(&e.id).or_default().push(turn.message);
    }
    let mut text = String::new();
    let mixed = mixed(turns);
    for e in &order {
        text.push_str(&turn_heading(e, mixed));
        let mine = lines.get_mut(&e.id).expect("every episode has its turns");
        mine.sort_by_key(|m| m.seq);
        mine.dedup_by_key(|m| m.seq);
        for m in mine.iter() {
            text.push_str(&quote(m));
        }
        text.push('\n');
    }
    TurnContext {
        text,
        tokens: 0,
        quoted: (0..turns.len()).collect(),
        episodes: order.iter().map(|e| e.id.clone()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::context::tests::{episode, message};

    fn at(mut m: Message, seq: u64) -> Message {
        m.seq = seq;
        m
    }

    #[test]
    fn turns_are_grouped_under_their_episode_in_conversation_order() {
        let (one, two) = (episode(1), episode(2));
        let m = [
            at(message("the tomatoes need water"), 3),
            at(message("the roses are blooming"), 9),
            at(message("I water the tomatoes every morning"), 1),
        ];
        let turns = [
            TurnItem { episode: &one, message: &m[0] },
            TurnItem { episode: &two, message: &m[1] },
            TurnItem { episode: &one, message: &m[2] },
        ];
        let counter = TokenCounter::cl100k();
        let out = render_turns(&turns, 10_000, &counter);
        insta::assert_snapshot!(out.text);
        assert_eq!(out.quoted, [0, 1, 2]);
        assert_eq!(out.episodes, [one.id.clone(), two.id.clone()]);
        assert_eq!(out.tokens, counter.count(&out.text) as usize);
        let every = out.tokens;
        let fewer = render_turns(&turns, every - 1, &counter);
        assert!(fewer.quoted.len() < 3 && fewer.tokens < every);
        assert!(render_turns(&turns, 3, &counter).quoted.is_empty());
    }

    #[test]
    fn a_turn_too_long_for_what_is_left_gives_its_place_to_shorter_ones() {
        let e = episode(1);
        let long = at(message(&"a very long reply about tomatoes ".repeat(40)), 1);
        let short =
            [at(message("water them at dawn"), 2), at(message("mulch keeps them moist"), 3)];
        let turns = [
            TurnItem { episode: &e, message: &short[0] },
            TurnItem { episode: &e, message: &long },
            TurnItem { episode: &e, message: &short[1] },
        ];
        let out = render_turns(&turns, 60, &TokenCounter::cl100k());
        assert_eq!(out.quoted, [0, 2], "{}", out.text);
        assert!(out.text.contains("mulch") && !out.text.contains("very long"));
    }

    #[test]
    fn turns_of_several_conversations_say_which() {
        let one = episode(1);
        let mut other = episode(2);
        other.conversation.conversation = "garden-club".into();
        let m = [message("the tomatoes need water"), message("the roses are blooming")];
        let counter = TokenCounter::cl100k();
        let mine = [TurnItem { episode: &one, message: &m[0] }];
        assert_eq!(
            render_turns(&mine, 1_000, &counter).text.lines().next(),
            Some("## 2026-01-01 00:00")
        );
        let both = [mine[0], TurnItem { episode: &other, message: &m[1] }];
        let text = render_turns(&both, 1_000, &counter).text;
        assert!(text.contains("## 2026-01-01 00:00 · c\n"), "{text}");
        assert!(text.contains("## 2026-01-01 00:00 · garden-club\n"), "{text}");
    }

    #[test]
    fn stored_counts_only_pass_over_turns_that_cannot_fit() {
        let e = episode(1);
        let mut m: Vec<Message> = (1..=4)
            .map(|i| at(message(&format!("line {i} about the tomatoes and the roses")), i))
            .collect();
        let counter = TokenCounter::cl100k();
        let all = |m: &[Message]| -> Vec<usize> {
            let turns: Vec<TurnItem<'_>> =
                m.iter().map(|m| TurnItem { episode: &e, message: m }).collect();
            let out = render_turns(&turns, 40, &counter);
            assert!(out.tokens <= 40 && out.tokens == counter.count(&out.text) as usize);
            out.quoted
        };
        let honest = all(&m);
        assert!(!honest.is_empty() && honest.len() < 4, "{honest:?}");
        // With the counts ingest stores, no turn that would fit is left out.
        let one_more: Vec<TurnItem<'_>> =
            m[..=honest.len()].iter().map(|m| TurnItem { episode: &e, message: m }).collect();
        assert!(counter.count(&render(&one_more).text) > 40);
        // Stored counts that undersell pass over nothing: the exact counts choose as before.
        for m in &mut m {
            m.tokens = 0;
        }
        assert_eq!(all(&m), honest);
        // Counts that oversell pass over turns that would have fit (ingest never stores such).
        for m in &mut m {
            m.tokens = 30;
        }
        assert!(all(&m).len() < honest.len());
    }

    proptest::proptest! {
        // Counting tokens is slow in debug builds.
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        #[test]
        fn the_block_never_exceeds_its_budget_and_keeps_the_best_first(
            picks in proptest::collection::vec((0usize..4, 0usize..6), 0..12),
            budget in 0usize..400,
        ) {
            let episodes: Vec<Episode> = (1..=4).map(episode).collect();
            let messages: Vec<Message> = (0..6)
                .map(|i| at(message(&format!("line {i} about {}", "words ".repeat(i * 3))), i as u64 + 1))
                .collect();
            let turns: Vec<TurnItem<'_>> = picks
                .iter()
                .map(|&(e, m)| TurnItem { episode: &episodes[e], message: &messages[m] })
                .collect();
            let counter = TokenCounter::cl100k();
            let out = render_turns(&turns, budget, &counter);
            proptest::prop_assert!(out.tokens <= budget || out.quoted.is_empty());
            proptest::prop_assert_eq!(out.tokens, counter.count(&out.text) as usize);
            proptest::prop_assert!(out.quoted.windows(2).all(|w| w[0] < w[1]), "best first");
            // The best turn is quoted whenever it fits alone.
            if let Some(first) = turns.first() {
                let alone = render_turns(std::slice::from_ref(first), budget, &counter);
                proptest::prop_assert!(alone.quoted.is_empty() || out.quoted.first() == Some(&0));
            }
        }
    }
}
