//! The extractive summarizer: a title and a short summary made of the episode's own most
//! salient sentences, with no model. Deterministic: equal input, equal output.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::{
    Message, Role,
    telling::Stopwords,
    telling::filler::{is_filler, is_interjection},
    telling::key_phrases::key_phrases,
    telling::keywords::for_each_keyword_with,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SummaryConfig {
    pub max_title_words: usize,
    pub max_summary_words: usize,
    pub max_keywords: usize,
}

impl Default for SummaryConfig {
    fn default() -> Self {
        Self { max_title_words: 12, max_summary_words: 30, max_keywords: 8 }
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
    /// The sentence without its opening interjections ("Oh, well, ...").
    text: &'a str,
    /// Whether interjections went.
    cut: bool,
    words: usize,
    score: f64,
    /// Its distinct content words, normalized.
    content: Vec<String>,
}

/// A sentence with fewer content words than this says nothing alone ("Thanks, Nate!", "Wow,
/// it looks great!"): it is told only when the episode holds nothing else.
const MIN_CONTENT_WORDS: usize = 2;

/// Summarizes `messages` (in conversation order).
///
/// Keywords are the most frequent content words. The title names what the episode is about
/// with its key phrases ("Sintra train: Viva Viagem card, Pena Palace"), never a cut sentence,
/// never filler or the speakers' names for each other. The summary is its most central whole
/// sentences (authors named) that fit the word limit, in conversation order: a sentence is
/// central when the other messages use its content words, so a sentence of praise or chat
/// ("Wow, it looks great!") says nothing and one stating the subject says much. The opening
/// prompt states the episode's intent and counts double. Tool output counts for the keywords
/// only, unless the episode holds nothing else.
pub fn summarize(messages: &[Message], config: &SummaryConfig) -> Summary {
    // A message's language is read once, and its sentences are read in it.
    let stopwords: Vec<Stopwords> = messages.iter().map(|m| Stopwords::of(&m.content)).collect();
    let keywords = frequent_keywords(messages, &stopwords, config.max_keywords);

    let opening = messages.iter().position(|m| m.role == Role::User);
    // Tool output (paths, commands, logs) is how an agent worked, not what the work was about:
    // the title and the summary are told from what was asked and answered, when anything was.
    let only_tools = messages.iter().all(|m| m.role == Role::Tool);
    let told = |m: &Message| only_tools || m.role != Role::Tool;
    let speakers = speaker_names(messages);
    let weight = |i: usize| if Some(i) == opening { 2.0 } else { 1.0 };

    let mut sentences: Vec<Sentence<'_>> = Vec::new();
    for (index, (m, &stop)) in
        messages.iter().zip(&stopwords).enumerate().filter(|(_, (m, _))| told(m))
    {
        for sentence in split_sentences(&m.content) {
            let text = without_interjections(sentence);
            if text.is_empty() {
                continue;
            }
            let mut content: Vec<String> = Vec::new();
            for_each_keyword_with(text, stop, |w, _| {
                let names_nothing = is_filler(w) || speakers.iter().any(|s| s == w);
                if !names_nothing && !content.iter().any(|c| c == w) {
                    content.push(w.to_owned());
                }
            });
            let words = text.split_whitespace().count();
            sentences.push(Sentence {
                message: index,
                author: m.author(),
                text,
                cut: text.len() < sentence.len(),
                words,
                score: 0.0,
                content,
            });
        }
    }
    score_by_centrality(&mut sentences, weight);

    let mut by_score: Vec<usize> = (0..sentences.len()).collect();
    by_score.sort_by(|&a, &b| sentences[b].score.total_cmp(&sentences[a].score).then(a.cmp(&b)));

    let title = phrase_title(messages, told, weight, &speakers, config.max_title_words)
        .or_else(|| {
            // Nothing but filler ("ok", "thanks"): the shortest whole sentence with a content
            // word, if it fits.
            sentences
                .iter()
                .filter(|s| s.words <= config.max_title_words && !s.content.is_empty())
                .min_by_key(|s| (s.words, s.message))
                .map(|s| title_case(s.text.trim_end_matches(['.', '!', '?', ',', ';', ':'])))
        })
        .unwrap_or_else(|| "Untitled episode".to_owned());

    let summary = pick_summary(&sentences, &by_score, config.max_summary_words);
    Summary { title, summary, keywords }
}

/// The `max` most frequent keywords of `messages`, the first used first on a tie.
fn frequent_keywords(messages: &[Message], stopwords: &[Stopwords], max: usize) -> Vec<String> {
    // Keyword hash → (count, first appearance, the word).
    let mut freq: HashMap<u64, (usize, usize, String)> = HashMap::new();
    let mut order = 0;
    for (m, &stop) in messages.iter().zip(stopwords) {
        for_each_keyword_with(&m.content, stop, |w, hash| {
            freq.entry(hash).or_insert_with(|| (0, order, w.to_owned())).0 += 1;
            order += 1;
        });
    }
    let mut ranked: Vec<&(usize, usize, String)> = freq.values().collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked.iter().take(max).map(|k| k.2.clone()).collect()
}

/// Scores each sentence by what the other messages (weighted by `weight` of their index)
/// share of its content words, over the log of its length. The words of a sentence that no
/// other message uses tell only of itself; a sentence of fewer than [`MIN_CONTENT_WORDS`]
/// scores 0.
fn score_by_centrality(sentences: &mut [Sentence<'_>], weight: impl Fn(usize) -> f64) {
    let mut used_by: HashMap<&str, f64> = HashMap::new();
    let mut seen: HashSet<(usize, &str)> = HashSet::new();
    for s in sentences.iter() {
        for w in &s.content {
            if seen.insert((s.message, w.as_str())) {
                *used_by.entry(w.as_str()).or_default() += weight(s.message);
            }
        }
    }
    let scores: Vec<f64> = sentences
        .iter()
        .map(|s| {
            if s.content.len() < MIN_CONTENT_WORDS {
                return 0.0;
            }
            let own = weight(s.message);
            let shared: f64 = s.content.iter().map(|w| used_by[w.as_str()] - own).sum();
            own * (1.0 + shared) / (1.0 + (s.words as f64).ln())
        })
        .collect();
    for (s, score) in sentences.iter_mut().zip(scores) {
        s.score = score;
    }
}

/// The speakers' names as keywords: said to each other ("Thanks, Nate!") they name nothing.
fn speaker_names(messages: &[Message]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for speaker in messages.iter().filter_map(|m| m.speaker.as_deref()) {
        for_each_keyword_with(speaker, Stopwords::ENGLISH, |w, _| {
            if !names.iter().any(|n| n == w) {
                names.push(w.to_owned());
            }
        });
    }
    names
}

/// `text` without the interjections it opens with: "Oh, well, that works." is "that works.".
fn without_interjections(text: &str) -> &str {
    let mut rest = text.trim_start();
    loop {
        let end = rest.find(|c: char| !c.is_alphanumeric() && c != '\'').unwrap_or(rest.len());
        let (word, after) = rest.split_at(end);
        let opens = is_interjection(word);
        match after.strip_prefix([',', '!']) {
            Some(after) if opens => rest = after.trim_start(),
            _ => return rest,
        }
    }
}

/// "Head phrase: second, third", as many phrases as fit in `max_words`; each message's words
/// count by its `weight` (the opening prompt states the episode's intent).
fn phrase_title(
    messages: &[Message],
    told: impl Fn(&Message) -> bool,
    weight: impl Fn(usize) -> f64,
    speakers: &[String],
    max_words: usize,
) -> Option<String> {
    let (texts, weights): (Vec<&str>, Vec<f64>) = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| told(m))
        .map(|(i, m)| (m.content.as_str(), weight(i)))
        .unzip();
    let phrases = key_phrases(&texts, &weights, speakers, 3);
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
        title.push_str(&lowercase_if_written_so(&p.text, &texts));
        words += more;
    }
    Some(title)
}

/// `phrase` with its first letter in lower case if the texts write its first word so
/// somewhere: it was capitalized as a sentence's start ("Spreading", not "Lisbon").
fn lowercase_if_written_so(phrase: &str, texts: &[&str]) -> String {
    let first = phrase.split_whitespace().next().unwrap_or("");
    let lower = first.to_lowercase();
    let written_lower = lower != first
        && texts.iter().any(|t| {
            t.split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-').any(|w| w == lower)
        });
    match written_lower {
        true => format!("{lower}{}", &phrase[first.len()..]),
        false => phrase.to_owned(),
    }
}

/// The best sentences that fit `max_words` (an author's name counts as a word), in
/// conversation order; a sentence that repeats the words of one already chosen is left out.
/// The best of a second author is taken second, so that a question comes with its answer.
fn pick_summary(sentences: &[Sentence<'_>], by_score: &[usize], max_words: usize) -> String {
    // The best sentence, then the best of another author that fits beside it (a question
    // comes with its answer), then the rest by score.
    let mut order: Vec<usize> = by_score.to_vec();
    if let Some(best) = by_score.first().map(|&i| &sentences[i]) {
        let reply = by_score.iter().position(|&i| {
            let s = &sentences[i];
            s.author != best.author && s.score > 0.0 && best.words + s.words + 2 <= max_words
        });
        if let Some(reply) = reply {
            let reply = order.remove(reply);
            order.insert(1, reply);
        }
    }
    let mut chosen: Vec<usize> = Vec::new();
    let mut used = 0;
    for &i in &order {
        let s = &sentences[i];
        let cost = s.words + 1; // the author's name
        let repeats = !s.content.is_empty()
            && s.content.iter().all(|w| chosen.iter().any(|&c| sentences[c].content.contains(w)));
        if used + cost <= max_words && !repeats && (s.score > 0.0 || chosen.is_empty()) {
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
    let mut previous: Option<&Sentence<'_>> = None;
    for &i in &chosen {
        let s = &sentences[i];
        if let Some(p) = previous {
            // Two messages run together read as one sentence without a stop between them.
            if p.message != s.message && !p.text.ends_with(['.', '!', '?', ':', ';']) {
                out.push('.');
            }
            out.push(' ');
        }
        // Consecutive sentences of one author name them once.
        if previous.is_none_or(|p| p.author != s.author) {
            out.push_str(s.author);
            out.push_str(": ");
        }
        // A sentence whose interjections went starts with a capital, as it did.
        out.push_str(&if s.cut { title_case(s.text) } else { s.text.to_owned() });
        previous = Some(s);
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
