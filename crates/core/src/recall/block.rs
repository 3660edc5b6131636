//! Writing a block an agent reads: its headings, its quoted lines, and its sections fitted to
//! a budget. Recall's blocks (`context.rs`, `turn_context.rs`), next-turn's and the coding
//! hooks' (`work/context.rs`) are written with these, so a heading or a quote reads the same
//! wherever it appears; how much of what goes in stays each block's own rule.

use crate::{Episode, Message, Timestamp};

/// Longest quoted line, in words.
const MAX_LINE_WORDS: usize = 60;

/// `## title (when)`, a line: a whole episode's heading.
pub(crate) fn episode_heading(e: &Episode) -> String {
    let (start, end) = (e.start.to_datetime(), e.end.to_datetime());
    let when = if start.date_naive() == end.date_naive() {
        format!("{} {}–{}", start.format("%Y-%m-%d"), start.format("%H:%M"), end.format("%H:%M"))
    } else {
        format!("{} – {}", start.format("%Y-%m-%d %H:%M"), end.format("%Y-%m-%d %H:%M"))
    };
    format!("## {} ({when})\n", e.title)
}

/// `## 2023-05-08 13:56`: when the episode began, and in which conversation if the block
/// quotes several. Its (extractive) title would only repeat words of the lines below it.
pub(crate) fn turn_heading(e: &Episode, with_conversation: bool) -> String {
    let when = minute(e.start);
    if e.id.is_open_tail() {
        // Messages not yet closed into an episode: said how new they are.
        format!("## {when} · {} · not yet an episode\n", e.conversation.conversation)
    } else if with_conversation {
        format!("## {when} · {}\n", e.conversation.conversation)
    } else {
        format!("## {when}\n")
    }
}

/// Whether `quote` shows the whole message (a long one is cut short).
pub(crate) fn quoted_whole(m: &Message) -> bool {
    m.content.split_whitespace().nth(MAX_LINE_WORDS).is_none()
}

/// A message quoted on one line, a long one cut short.
pub(crate) fn quote(m: &Message) -> String {
    let words: Vec<&str> = m.content.split_whitespace().collect();
    let line = if words.len() > MAX_LINE_WORDS {
        format!("{}…", words[..MAX_LINE_WORDS].join(" "))
    } else {
        words.join(" ")
    };
    format!("> {}: {line}\n", m.author())
}

/// A part of a block under its heading, followed by a blank line; nothing when `body` is empty.
pub(crate) fn push_part(text: &mut String, heading: &str, body: &str) {
    if !body.is_empty() {
        text.push_str(heading);
        text.push_str(body);
        text.push_str("\n\n");
    }
}

/// `head`, then each section's heading and as many of its lines as fit within `budget`
/// tokens (headings counted, lines whole, a section with no line that fits left out whole);
/// empty when no line fits. Also how many lines of each section were shown.
pub(crate) fn fit_sections(
    head: &str,
    sections: Vec<(Option<&str>, Vec<String>)>,
    budget: usize,
    tokens: &dyn Fn(&str) -> usize,
) -> (String, Vec<usize>) {
    let mut used = tokens(head);
    let mut out: Vec<String> = Vec::new();
    let mut shown = vec![0; sections.len()];
    for (section, (heading, lines)) in sections.into_iter().enumerate() {
        let mut heading = heading.map(|h| (h, tokens(h) + 1));
        for line in lines {
            let cost = tokens(&line) + 1;
            let heading_cost = heading.map_or(0, |(_, c)| c);
            if used + heading_cost + cost > budget {
                break;
            }
            if let Some((h, c)) = heading.take() {
                out.push(h.to_owned());
                used += c;
            }
            used += cost;
            out.push(line);
            shown[section] += 1;
        }
    }
    let text = if out.is_empty() { String::new() } else { format!("{head}\n{}", out.join("\n")) };
    (text, shown)
}

/// `2023-05-08 13:56`.
pub(crate) fn minute(at: Timestamp) -> String {
    at.to_datetime().format("%Y-%m-%d %H:%M").to_string()
}

/// `2023-05-08`.
pub(crate) fn day(at: Timestamp) -> String {
    at.to_datetime().format("%Y-%m-%d").to_string()
}
