//! What an agent reads before its next turn, in one block under one budget: the long-term
//! lines that bear on the moment, what came earlier in this conversation told short (its
//! episodes' titles and summaries), and its newest messages verbatim. Pure: the engine reads
//! the parts; this splits the budget, fits each part and renders the block.

use serde::{Deserialize, Serialize};

use crate::{Episode, Message, TokenCounter, recall::block::push_part};

/// How a next-turn block shares its budget (`[next_turn]`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NextTurnConfig {
    /// The share for the conversation's newest messages, verbatim.
    pub recent_share: f64,
    /// The share for what came before them, told short.
    pub summary_share: f64,
    // The long-term lines take the rest, and whatever the other two leave unused.
}

impl Default for NextTurnConfig {
    fn default() -> Self {
        Self { recent_share: 0.4, summary_share: 0.2 }
    }
}

impl NextTurnConfig {
    /// Why these shares cannot work, if they cannot.
    pub fn check(&self) -> Result<(), String> {
        let share = |name: &str, value: f64| {
            if (0.0..=1.0).contains(&value) {
                Ok(())
            } else {
                Err(format!("{name} must be between 0 and 1, not {value}"))
            }
        };
        share("recent_share", self.recent_share)?;
        share("summary_share", self.summary_share)?;
        if self.recent_share + self.summary_share > 1.0 {
            return Err(format!(
                "recent_share and summary_share may not add up to more than 1 (they make {})",
                self.recent_share + self.summary_share
            ));
        }
        Ok(())
    }
}

/// The headings of the three parts.
pub const MEMORY_HEADING: &str = "# From memory\n";
pub const SUMMARY_HEADING: &str = "# Earlier in this conversation\n";
pub const RECENT_HEADING: &str = "# The newest messages\n";

/// The tokens each part may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shares {
    pub recent: usize,
    pub summary: usize,
    /// Before what the other two leave (`Shares::memory_with`).
    pub memory: usize,
}

impl Shares {
    /// `budget` shared by `config`, the headings' cost set aside first.
    pub fn of(budget: usize, config: &NextTurnConfig, counter: &TokenCounter) -> Self {
        let headings = [MEMORY_HEADING, SUMMARY_HEADING, RECENT_HEADING]
            .iter()
            .map(|h| counter.count(h) as usize + 1)
            .sum::<usize>();
        let left = budget.saturating_sub(headings) as f64;
        let recent = (left * config.recent_share).floor() as usize;
        let summary = (left * config.summary_share).floor() as usize;
        let memory = (left as usize).saturating_sub(recent + summary);
        Self { recent, summary, memory }
    }

    /// The memory's share with what the recent part and the summary left unused.
    pub fn memory_with(&self, recent_used: usize, summary_used: usize) -> usize {
        self.memory
            + self.recent.saturating_sub(recent_used)
            + self.summary.saturating_sub(summary_used)
    }
}

/// One message as the recent part holds it: its author and its whole text.
pub fn verbatim(m: &Message) -> String {
    format!("{}: {}\n", m.author(), m.content.trim_end())
}

/// The newest messages that fit in `budget` tokens whole, oldest first: from the newest back,
/// stopping at the first that does not fit (the part stays one unbroken stretch).
pub fn recent_fitting<'a>(
    newest_first: &[&'a Message],
    budget: usize,
    counter: &TokenCounter,
) -> (Vec<&'a Message>, usize) {
    let mut taken: Vec<&Message> = Vec::new();
    let mut used = 0;
    for m in newest_first {
        let cost = counter.count(&verbatim(m)) as usize;
        if used + cost > budget {
            break;
        }
        used += cost;
        taken.push(m);
    }
    taken.reverse();
    (taken, used)
}

/// An episode told in one line: when, its title, and its summary unless `short`.
fn told(e: &Episode, short: bool) -> String {
    let when = e.start.to_datetime().format("%Y-%m-%d %H:%M");
    let summary = e.summary.trim();
    if short || summary.is_empty() || summary == e.title.trim() {
        format!("- {when} · {}\n", e.title.trim())
    } else {
        format!("- {when} · {}: {summary}\n", e.title.trim())
    }
}

/// Whether `summary` repeats one of `lines` (an extractive summary is made of its episode's
/// lines): the first words of a line are enough to tell.
fn repeats(summary: &str, lines: &[&str]) -> bool {
    lines.iter().any(|line| {
        let start: String = line.chars().take(60).collect();
        let start = start.trim_end_matches('…').trim();
        !start.is_empty() && summary.contains(start)
    })
}

/// The earlier part told short in `budget` tokens: `episodes` (oldest first) one line each,
/// the newest with their summaries, older ones by title when the summaries no longer fit, the
/// oldest left out (and counted) when not even their titles do. An episode whose summary
/// repeats one of `quoted` (lines the block quotes elsewhere) is told by its title. The text,
/// the episodes told, and its tokens.
pub fn summary_fitting<'a>(
    episodes: &[&'a Episode],
    budget: usize,
    quoted: &[&str],
    counter: &TokenCounter,
) -> (String, Vec<&'a Episode>, usize) {
    let mut lines: Vec<(String, &Episode)> = Vec::new();
    let mut used = 0;
    let mut short = false;
    for e in episodes.iter().rev() {
        let mut line = told(e, short || repeats(&e.summary, quoted));
        let mut cost = counter.count(&line) as usize;
        if used + cost > budget && !short {
            short = true;
            line = told(e, true);
            cost = counter.count(&line) as usize;
        }
        if used + cost > budget {
            break;
        }
        used += cost;
        lines.push((line, e));
    }
    lines.reverse();
    let left_out = episodes.len() - lines.len();
    let mut text = String::new();
    if left_out > 0 {
        let note = format!("- ({left_out} earlier episodes)\n");
        let cost = counter.count(&note) as usize;
        if used + cost <= budget {
            used += cost;
            text.push_str(&note);
        }
    }
    for (line, _) in &lines {
        text.push_str(line);
    }
    let told_episodes = lines.into_iter().map(|(_, e)| e).collect();
    (text, told_episodes, used)
}

/// The lines a context block quotes (`> author: text`), as their text.
pub fn quoted_lines(block: &str) -> Vec<&str> {
    block
        .lines()
        .filter_map(|line| line.strip_prefix("> "))
        .map(|line| line.split_once(": ").map_or(line, |(_, text)| text))
        .collect()
}

/// The block: each part that holds anything under its heading, the long-term lines first and
/// the newest messages last (nearest the turn they come before).
pub fn render_next_turn(memory: &str, summary: &str, recent: &[&Message]) -> String {
    let mut text = String::new();
    push_part(&mut text, MEMORY_HEADING, memory.trim_end());
    push_part(&mut text, SUMMARY_HEADING, summary.trim_end());
    if !recent.is_empty() {
        text.push_str(RECENT_HEADING);
        for m in recent {
            text.push_str(&verbatim(m));
        }
    }
    text.truncate(text.trim_end().len());
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Timestamp;

    fn message(seq: u64, text: &str) -> Message {
        let said = crate::recall::context::tests::message(text);
        Message { seq, speaker: Some("Ana".into()), ..said }
    }

    #[test]
    fn shares_never_exceed_the_budget_and_must_add_up() {
        let counter = TokenCounter::estimate();
        let shares = Shares::of(1000, &NextTurnConfig::default(), &counter);
        let headings: usize = [MEMORY_HEADING, SUMMARY_HEADING, RECENT_HEADING]
            .iter()
            .map(|h| counter.count(h) as usize + 1)
            .sum();
        assert_eq!(shares.recent + shares.summary + shares.memory + headings, 1000);
        assert!(shares.recent > shares.summary && shares.memory > shares.summary);
        assert_eq!(shares.memory_with(shares.recent, 0), shares.memory + shares.summary);
        assert_eq!(Shares::of(5, &NextTurnConfig::default(), &counter).memory, 0);
        let too_much = NextTurnConfig { recent_share: 0.7, summary_share: 0.5 };
        assert!(too_much.check().unwrap_err().contains("more than 1"));
        assert!(NextTurnConfig { recent_share: -0.1, ..Default::default() }.check().is_err());
    }

    #[test]
    fn the_recent_part_is_the_newest_stretch_that_fits_whole() {
        let counter = TokenCounter::estimate();
        let said = [message(1, "first"), message(2, &"long ".repeat(50)), message(3, "third")];
        let newest_first: Vec<&Message> = said.iter().rev().collect();
        let (taken, used) = recent_fitting(&newest_first, 20, &counter);
        assert_eq!(taken.iter().map(|m| m.seq).collect::<Vec<_>>(), [3], "stops at the long one");
        assert_eq!(used, counter.count("Ana: third\n") as usize);
        let (all, _) = recent_fitting(&newest_first, 1000, &counter);
        assert_eq!(all.iter().map(|m| m.seq).collect::<Vec<_>>(), [1, 2, 3]);
        assert!(render_next_turn("", "", &all).contains(&said[1].content.trim_end().to_owned()));
    }

    #[test]
    fn older_episodes_shrink_to_their_titles_then_leave() {
        let counter = TokenCounter::estimate();
        let episode = |i: i64, title: &str| Episode {
            title: title.into(),
            summary: format!("{title}, told at some length with many words of what was said"),
            start: Timestamp(i * 3_600_000),
            ..crate::recall::context::tests::episode(i as u64)
        };
        let all: Vec<Episode> = (0..6).map(|i| episode(i, &format!("Topic number {i}"))).collect();
        let refs: Vec<&Episode> = all.iter().collect();
        let (whole, told, used) = summary_fitting(&refs, 1000, &[], &counter);
        assert_eq!((told.len(), whole.lines().count()), (6, 6));
        assert!(whole.contains("Topic number 0, told at some length"));
        assert!(used <= 1000 && used == counter.count(&whole) as usize);
        let (tight, told, used) = summary_fitting(&refs, 60, &[], &counter);
        assert!(used <= 60, "{used}: {tight}");
        assert!(tight.contains("Topic number 5, told"), "the newest keeps its summary: {tight}");
        assert!(!tight.contains("Topic number 0, told"), "{tight}");
        assert!(told.len() < 6 && tight.starts_with("- ("), "the oldest are counted: {tight}");
        // A summary repeating a line quoted elsewhere is told by its title.
        let block =
            "## 2026-01-01 00:00\n> Ana: Topic number 5, told at some length with many words\n";
        assert_eq!(quoted_lines(block), ["Topic number 5, told at some length with many words"]);
        let (text, ..) = summary_fitting(&refs, 1000, &quoted_lines(block), &counter);
        assert!(
            text.contains("· Topic number 5\n") && text.contains("Topic number 4, told"),
            "{text}"
        );
    }

    #[test]
    fn an_empty_part_has_no_heading() {
        let said = [message(1, "hello")];
        let refs: Vec<&Message> = said.iter().collect();
        assert_eq!(render_next_turn("", "", &refs), "# The newest messages\nAna: hello");
        let both = render_next_turn("## 2026-01-01 00:00\n> Ana: old\n", "- x\n", &[]);
        assert_eq!(
            both,
            "# From memory\n## 2026-01-01 00:00\n> Ana: old\n\n# Earlier in this conversation\n- x"
        );
    }
}
