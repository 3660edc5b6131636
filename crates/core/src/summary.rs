//! The extractive summarizer: a title and a short summary made of the episode's own most
//! salient sentences, with no model. Deterministic: equal input, equal output.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::{Message, Role, Stopwords, key_phrases::key_phrases, keywords::for_each_keyword_with};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SummaryConfig {
    pub max_title_words: usize,
    pub max_summary_words: usize,
    pub max_keywords: usize,
}

impl Default for SummaryConfig {
    fn default() -> Self {
        Self { max_title_words: 12, max_summary_words: 50, max_keywords: 8 }
    }
}

/// What a summarizer says about an episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub title: String,
    pub summary: String,
    pub keywords: Vec<String>,
}

struct Sentence<'a> {
    message: usize,
    author: &'a str,
    text: &'a str,
    words: usize,
    score: f64,
}

/// Summarizes `messages` (in conversation order).
///
/// Keywords are the most frequent content words. The title names what the episode is about
/// with its key phrases ("Sintra train: Viva Viagem card, Pena Palace"), never a cut sentence.
/// Sentences score by the summed frequency of their keywords over their length; the summary
/// is the best whole sentences (authors named) that fit the word limit, in conversation order.
/// Tool output counts for the keywords only, unless the episode holds nothing else.
pub fn summarize(messages: &[Message], config: &SummaryConfig) -> Summary {
    // Keyword hash → (count, first appearance, the word).
    let mut freq: HashMap<u64, (usize, usize, String)> = HashMap::new();
    let mut order = 0;
    // A message's language is read once, and its sentences are read in it.
    let stopwords: Vec<Stopwords> = messages.iter().map(|m| Stopwords::of(&m.content)).collect();
    for (m, &stop) in messages.iter().zip(&stopwords) {
        for_each_keyword_with(&m.content, stop, |w, hash| {
            freq.entry(hash).or_insert_with(|| (0, order, w.to_owned())).0 += 1;
            order += 1;
        });
    }
    let mut ranked: Vec<&(usize, usize, String)> = freq.values().collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let keywords: Vec<String> =
        ranked.iter().take(config.max_keywords).map(|k| k.2.clone()).collect();

    // The opening prompt states the episode's intent: its sentences weigh more.
    let opening = messages.iter().position(|m| m.role == Role::User);
    // Tool output (paths, commands, logs) is how an agent worked, not what the work was about:
    // the title and the summary are told from what was asked and answered, when anything was.
    let only_tools = messages.iter().all(|m| m.role == Role::Tool);
    let told = |m: &Message| only_tools || m.role != Role::Tool;
    let mut sentences: Vec<Sentence<'_>> = Vec::new();
    for (index, (m, &stop)) in messages.iter().zip(&stopwords).enumerate() {
        if !told(m) {
            continue;
        }
        for text in split_sentences(&m.content) {
            let mut score = 0.0;
            let mut seen: Vec<u64> = Vec::new();
            for_each_keyword_with(text, stop, |_, hash| {
                if !seen.contains(&hash) {
                    score += freq.get(&hash).map_or(0.0, |f| f.0 as f64);
                    seen.push(hash);
                }
            });
            let words = text.split_whitespace().count();
            let boost = if Some(index) == opening { 1.5 } else { 1.0 };
            let score = boost * score / (1.0 + (words as f64).ln());
            sentences.push(Sentence { message: index, author: m.author(), text, words, score });
        }
    }

    let mut by_score: Vec<usize> = (0..sentences.len()).collect();
    by_score.sort_by(|&a, &b| sentences[b].score.total_cmp(&sentences[a].score).then(a.cmp(&b)));

    let title = phrase_title(messages, told, opening, config.max_title_words)
        .or_else(|| {
            // Nothing but filler ("ok", "thanks"): the shortest whole sentence, if it fits.
            sentences
                .iter()
                .filter(|s| s.words <= config.max_title_words)
                .min_by_key(|s| (s.words, s.message))
                .map(|s| title_case(s.text.trim_end_matches(['.', '!', '?', ',', ';', ':'])))
        })
        .unwrap_or_else(|| "Untitled episode".to_owned());

    let summary = pick_summary(&sentences, &by_score, config.max_summary_words);
    Summary { title, summary, keywords }
}

/// "Head phrase: second, third", as many phrases as fit in `max_words`. The opening prompt
/// states the episode's intent, so its words count double; answers count once.
fn phrase_title(
    messages: &[Message],
    told: impl Fn(&Message) -> bool,
    opening: Option<usize>,
    max_words: usize,
) -> Option<String> {
    let (texts, weights): (Vec<&str>, Vec<f64>) = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| told(m))
        .map(|(i, m)| (m.content.as_str(), if Some(i) == opening { 2.0 } else { 1.0 }))
        .unzip();
    let phrases = key_phrases(&texts, &weights, 3);
    let head = phrases.first()?;
    let mut title = title_case(&head.text);
    let mut words = title.split_whitespace().count();
    if words > max_words {
        return None;
    }
    for (i, p) in phrases.iter().enumerate().skip(1) {
        let more = p.text.split_whitespace().count();
        if words + more > max_words {
            break;
        }
        title.push_str(if i == 1 { ": " } else { ", " });
        title.push_str(&p.text);
        words += more;
    }
    Some(title)
}

fn pick_summary(sentences: &[Sentence<'_>], by_score: &[usize], max_words: usize) -> String {
    let mut chosen: Vec<usize> = Vec::new();
    let mut used = 0;
    for &i in by_score {
        let s = &sentences[i];
        let cost = s.words + 1; // the author's name
        if used + cost <= max_words {
            chosen.push(i);
            used += cost;
        }
    }
    if chosen.is_empty() {
        return by_score.first().map_or_else(String::new, |&i| {
            let s = &sentences[i];
            format!("{}: {}", s.author, truncate_words(s.text, max_words.saturating_sub(1)))
        });
    }
    chosen.sort_unstable();
    let mut out = String::new();
    let mut previous = None;
    for &i in &chosen {
        let s = &sentences[i];
        if !out.is_empty() {
            out.push(' ');
        }
        // Consecutive sentences of one message name their author once.
        if previous != Some(s.message) {
            out.push_str(s.author);
            out.push_str(": ");
        }
        out.push_str(s.text);
        previous = Some(s.message);
    }
    out
}

/// Sentences of `text`: split after `.`, `!`, `?` followed by whitespace, and at line breaks.
pub(crate) fn split_sentences(text: &str) -> impl Iterator<Item = &str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            if matches!(b, b'.' | b'!' | b'?')
                && bytes.get(i + 1).is_some_and(u8::is_ascii_whitespace)
            {
                out.push(&line[start..=i]);
                start = i + 1;
            }
        }
        out.push(&line[start..]);
    }
    out.into_iter().map(str::trim).filter(|s| !s.is_empty())
}

/// The first `max` words of `text`, with "…" if that cut it.
fn truncate_words(text: &str, max: usize) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() <= max {
        return words.join(" ");
    }
    let t = words[..max].join(" ");
    format!("{}…", t.trim_end_matches(['.', '!', '?', ',', ';', ':']))
}

fn title_case(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Timestamp;

    fn msg(role: Role, speaker: Option<&str>, content: &str) -> Message {
        Message {
            seq: 1,
            key: String::new(),
            role,
            speaker: speaker.map(str::to_owned),
            content: content.to_owned(),
            timestamp: Timestamp(0),
            metadata: serde_json::Value::Null,
            tokens: 1,
        }
    }

    fn sample() -> Vec<Message> {
        vec![
            msg(
                Role::User,
                Some("Caroline"),
                "I want to plant tomatoes in my garden this spring. Which tomato varieties grow well in pots?",
            ),
            msg(
                Role::Assistant,
                None,
                "Cherry tomatoes and patio tomato varieties grow well in pots. Give them six hours of sun!",
            ),
            msg(
                Role::User,
                Some("Caroline"),
                "Great, I will buy cherry tomato seedlings and a big pot.",
            ),
        ]
    }

    #[test]
    fn summary_snapshot() {
        insta::assert_json_snapshot!(summarize(&sample(), &SummaryConfig::default()));
    }

    /// A work session between a developer and a coding assistant, tool output included.
    fn coding_session() -> Vec<Message> {
        vec![
            msg(
                Role::User,
                Some("dev"),
                "The parser panics on empty config files. Can you fix the TOML loader?",
            ),
            msg(Role::Assistant, None, "I'll read src/config.rs first."),
            msg(
                Role::Tool,
                None,
                "thread 'main' panicked at src/config.rs:42: called `Option::unwrap()` on a `None` value",
            ),
            msg(
                Role::Assistant,
                None,
                "The TOML loader unwraps the first table. An empty config file has none, so it panics. I'll return the default config instead.",
            ),
            msg(Role::User, Some("dev"), "Good. Add a test for the empty config file too."),
            msg(
                Role::Assistant,
                None,
                "Added a test: an empty config file loads the default config. All 48 tests pass.",
            ),
        ]
    }

    #[test]
    fn coding_session_snapshot() {
        insta::assert_json_snapshot!(summarize(&coding_session(), &SummaryConfig::default()));
    }

    #[test]
    fn tool_output_names_nothing_unless_it_is_all_there_is() {
        let session = vec![
            msg(
                Role::User,
                Some("dev"),
                "The timeline groups episodes by UTC day, so an evening chat in Tokyo lands on \
                 the next day. Can the day boundary follow the user's timezone?",
            ),
            msg(Role::Tool, None, "Read crates/core/src/timeline.rs"),
            msg(Role::Assistant, None, "Days are cut at UTC midnight in day_of."),
            msg(Role::User, Some("dev"), "Add a utc_offset_minutes setting to the config."),
            msg(
                Role::Tool,
                None,
                "Edit crates/core/src/timeline.rs\nEdit crates/cli/src/config.rs",
            ),
            msg(Role::Tool, None, "$ cargo nextest run -p epimem-core timeline\n18 tests passed"),
        ];
        let s = summarize(&session, &SummaryConfig::default());
        for tooling in ["Edit", "crates", "Read", "nextest"] {
            assert!(!s.title.contains(tooling), "{}", s.title);
            assert!(!s.summary.contains(tooling), "{}", s.summary);
        }
        assert!(s.title.contains("UTC day"), "{}", s.title);
        // Its words still find the episode.
        assert!(s.keywords.iter().any(|k| k == "src"), "{:?}", s.keywords);
        // Output alone is told from itself.
        let only = summarize(&session[4..5], &SummaryConfig::default());
        assert!(only.title.to_lowercase().contains("timeline.rs"), "{}", only.title);
    }

    /// Chats in German and in French: their function words name nothing.
    fn other_languages() -> [Vec<Message>; 2] {
        let german = vec![
            msg(
                Role::User,
                Some("Jonas"),
                "Ich plane eine Wanderung im Schwarzwald im Oktober. Welche Route ist gut für Anfänger?",
            ),
            msg(
                Role::Assistant,
                None,
                "Die Etappe des Westwegs von Hausach nach Schonach ist gut machbar, etwa 20 Kilometer.",
            ),
            msg(Role::User, Some("Jonas"), "Wie komme ich mit dem Zug nach Hausach?"),
            msg(Role::Assistant, None, "Mit der Schwarzwaldbahn von Offenburg, etwa 40 Minuten."),
        ];
        let french = vec![
            msg(
                Role::User,
                Some("Camille"),
                "Je cherche une recette de tarte aux pommes pour ce soir, avec une pâte brisée.",
            ),
            msg(
                Role::Assistant,
                None,
                "Pour la pâte brisée, il vous faut 250 g de farine et 125 g de beurre froid.",
            ),
            msg(
                Role::User,
                Some("Camille"),
                "Et combien de pommes pour une tarte de six personnes ?",
            ),
        ];
        [german, french]
    }

    #[test]
    fn titles_in_other_languages_snapshot() {
        let summaries = other_languages().map(|m| summarize(&m, &SummaryConfig::default()));
        let function_words = ["ich", "eine", "im", "mit", "dem", "nach", "je", "une", "pour", "de"];
        for s in &summaries {
            for word in s.title.split(|c: char| !c.is_alphanumeric()) {
                assert!(!function_words.contains(&word.to_lowercase().as_str()), "{}", s.title);
            }
            assert!(s.keywords.iter().all(|k| !function_words.contains(&k.as_str())), "{s:?}");
        }
        insta::assert_json_snapshot!(summaries);
    }

    #[test]
    fn a_title_is_never_a_cut_sentence() {
        for messages in [sample(), coding_session()] {
            let title = summarize(&messages, &SummaryConfig::default()).title;
            let cut = messages.iter().any(|m| {
                let lower = m.content.to_lowercase();
                lower.starts_with(&title.to_lowercase()) && lower.len() > title.len() + 1
            });
            assert!(!cut, "{title:?} is the start of a message");
        }
    }

    #[test]
    fn respects_word_limits_and_is_deterministic() {
        let config = SummaryConfig { max_title_words: 4, max_summary_words: 20, max_keywords: 3 };
        let a = summarize(&sample(), &config);
        assert_eq!(a, summarize(&sample(), &config));
        assert!(a.title.split_whitespace().count() <= 4, "{}", a.title);
        assert!(a.summary.split_whitespace().count() <= 20, "{}", a.summary);
        assert_eq!(a.keywords.len(), 3);
        assert_eq!(a.keywords[0], "tomato");
    }

    #[test]
    fn a_long_single_sentence_is_truncated_not_dropped() {
        let long = "word ".repeat(80);
        let s = summarize(&[msg(Role::User, None, &long)], &SummaryConfig::default());
        assert!(s.summary.ends_with('…'));
        assert!(s.summary.split_whitespace().count() <= 50);
    }

    #[test]
    fn empty_episode_gets_a_placeholder_title() {
        let s = summarize(&[msg(Role::Tool, None, "   ")], &SummaryConfig::default());
        assert_eq!(s.title, "Untitled episode");
        assert_eq!(s.summary, "");
    }
}
