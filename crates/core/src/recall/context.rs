//! Rendering recalled episodes as a compact context block under a token budget.

use crate::{
    Episode, Message, TokenCounter,
    recall::block::{episode_heading, quote},
};

/// One recalled episode with the raw lines worth quoting.
#[derive(Debug, Clone, Copy)]
pub struct ContextItem<'a> {
    pub episode: &'a Episode,
    /// Messages of the episode that matched the query, in conversation order.
    pub lines: &'a [&'a Message],
    /// All of the episode's messages, in order (empty if unknown): a short episode is shown
    /// whole when that takes fewer tokens than its summary and matching lines.
    pub messages: &'a [Message],
}

/// A rendered context block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedContext {
    pub text: String,
    /// How many of the items (a prefix of them) fit.
    pub included: usize,
    /// Tokens of `text`.
    pub tokens: usize,
}

/// Renders items in order, as many as fit in `budget` tokens (the first that does not fit
/// ends the block, so the ranking's order is kept). Each episode is a heading (title and
/// when) followed by its summary and the lines that matched, or by all its lines when
/// that is shorter.
pub fn render_context(
    items: &[ContextItem<'_>],
    budget: usize,
    counter: &TokenCounter,
) -> RenderedContext {
    let mut text = String::new();
    let mut tokens = 0;
    let mut included = 0;
    for item in items {
        let (block, cost) = render_item(item, counter);
        if tokens + cost > budget {
            break;
        }
        text.push_str(&block);
        tokens += cost;
        included += 1;
    }
    RenderedContext { text, included, tokens }
}

fn render_item(item: &ContextItem<'_>, counter: &TokenCounter) -> (String, usize) {
    let heading = episode_heading(item.episode);
    let mut summarized = format!("{heading}{}\n", item.episode.summary);
    push_lines(&mut summarized, item.lines.iter().copied());
    let summarized_cost = counter.count(&summarized) as usize;
    if item.messages.is_empty() {
        return (summarized, summarized_cost);
    }
    let mut whole = heading;
    push_lines(&mut whole, item.messages.iter());
    let whole_cost = counter.count(&whole) as usize;
    if whole_cost <= summarized_cost { (whole, whole_cost) } else { (summarized, summarized_cost) }
}

/// Quotes messages, one line each; ends the block.
fn push_lines<'a>(out: &mut String, messages: impl Iterator<Item = &'a Message>) {
    for m in messages {
        out.push_str(&quote(m));
    }
    out.push('\n');
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{BoundaryReason, ConversationKey, EpisodeId, FsrsState, Role, Timestamp};

    pub(crate) fn episode(n: u64) -> Episode {
        Episode {
            id: EpisodeId(format!("ep_{n}")),
            conversation: ConversationKey::new("t", "c"),
            user: None,
            agent: None,
            first_seq: n,
            last_seq: n,
            context_first_seq: None,
            start: Timestamp(1_767_225_600_000),
            end: Timestamp(1_767_229_200_000),
            title: format!("Episode {n} about the garden"),
            summary: "Caroline planted tomatoes and asked about watering.".into(),
            keywords: vec![],
            surprise: 0.0,
            boundary_reason: BoundaryReason::Flush,
            fsrs: FsrsState::default(),
            told_by: Default::default(),
            told_note: None,
        }
    }

    /// One counter for all: decoding its tables is slow in a debug build.
    static COUNTER: std::sync::LazyLock<TokenCounter> =
        std::sync::LazyLock::new(TokenCounter::cl100k);

    pub(crate) fn message(content: &str) -> Message {
        Message {
            seq: 1,
            key: String::new(),
            role: Role::User,
            speaker: Some("Caroline".into()),
            content: content.into(),
            timestamp: Timestamp(0),
            metadata: serde_json::Value::Null,
            // As ingest stores it.
            tokens: COUNTER.count(content),
        }
    }

    #[test]
    fn rendering_snapshot() {
        let (e, m) = (episode(1), message("I water the tomatoes every morning."));
        let lines = [&m];
        let counter = TokenCounter::cl100k();
        let out = render_context(
            &[ContextItem { episode: &e, lines: &lines, messages: &[] }],
            1000,
            &counter,
        );
        insta::assert_snapshot!(out.text);
        assert_eq!(out.tokens, counter.count(&out.text) as usize);
    }

    #[test]
    fn a_short_episode_is_shown_whole_a_long_one_summarized() {
        let e = episode(1);
        let counter = TokenCounter::cl100k();
        let matched = message("I water the tomatoes every morning.");
        let lines = [&matched];
        let render = |messages: &[Message]| {
            render_context(
                &[ContextItem { episode: &e, lines: &lines, messages }],
                10_000,
                &counter,
            )
            .text
        };
        let short = [message("Tomatoes!"), message("I water the tomatoes every morning.")];
        let text = render(&short);
        assert!(text.contains("> Caroline: Tomatoes!"), "{text}");
        assert!(!text.contains(&e.summary), "the whole episode is shorter than its summary");
        let long: Vec<Message> = (0..30)
            .map(|i| message(&format!("Line {i} about the weather, the soil and the neighbours.")))
            .collect();
        let text = render(&long);
        assert!(text.contains(&e.summary) && !text.contains("Line 7 "), "{text}");
        assert!(text.contains("> Caroline: I water the tomatoes"), "{text}");
    }

    #[test]
    fn stops_at_the_budget() {
        let episodes: Vec<Episode> = (1..=5).map(episode).collect();
        let items: Vec<ContextItem<'_>> = episodes
            .iter()
            .map(|e| ContextItem { episode: e, lines: &[], messages: &[] })
            .collect();
        let counter = TokenCounter::cl100k();
        let one = render_context(&items[..1], 10_000, &counter).tokens;
        let out = render_context(&items, one * 2 + one / 2, &counter);
        assert_eq!(out.included, 2);
        assert!(out.tokens <= one * 2 + one / 2);
        assert_eq!(render_context(&items, 1, &counter).included, 0);
    }
}
