//! Key phrases: the runs of content words that say what a stretch of conversation is about,
//! ranked by how central their words are to it. An episode's title is made of them.
//!
//! A phrase is a run of up to [`MAX_PHRASE_WORDS`] content words between stopwords and
//! punctuation ("Sintra day trip", "Viva Viagem card"). A word is central when many of the
//! episode's messages use it; a phrase scores the centrality of its words, so a phrase of
//! recurring words beats a phrase of incidental ones, and a longer phrase of central words
//! beats a shorter one.

use std::collections::{HashMap, HashSet};

use crate::{
    telling::Stopwords, telling::filler::is_generic, telling::keywords::for_each_keyword_with,
};

/// Longer runs are cut: a title names things, it does not retell sentences.
pub(crate) const MAX_PHRASE_WORDS: usize = 3;

/// A phrase as first written, and what it scored.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyPhrase {
    pub text: String,
    /// The phrase's normalized keywords (the same normalization as keyword search).
    pub words: Vec<String>,
    pub score: f64,
}

/// The key phrases of `texts` (the episode's messages in order; `weights` counts each one, so
/// a user's prompt can weigh more than an answer), best first, no two sharing a word. Words in
/// `leave_out` (normalized: the speakers' names, said to each other) end a phrase; a phrase
/// of generic words alone ("long time") names nothing.
pub fn key_phrases(
    texts: &[&str],
    weights: &[f64],
    leave_out: &[String],
    limit: usize,
) -> Vec<KeyPhrase> {
    // In how many messages (weighted) each normalized word appears.
    let stopwords: Vec<Stopwords> = texts.iter().map(|t| Stopwords::of(t)).collect();
    let mut centrality: HashMap<String, f64> = HashMap::new();
    for ((text, weight), &stop) in texts.iter().zip(weights).zip(&stopwords) {
        let mut seen: HashSet<String> = HashSet::new();
        for_each_keyword_with(text, stop, |word, _| {
            if seen.insert(word.to_owned()) {
                *centrality.entry(word.to_owned()).or_default() += weight;
            }
        });
    }
    // Each distinct phrase (by its normalized words) once, at its first spelling, in order of
    // appearance. Every start in a run offers the phrase from there, so "Sintra day trip"
    // offers "day trip" and "trip" too.
    let mut leave_out: HashSet<String> = leave_out.iter().cloned().collect();
    leave_out.extend(verbs(texts, &stopwords));
    let mut seen: HashSet<Vec<String>> = HashSet::new();
    let mut phrases: Vec<KeyPhrase> = Vec::new();
    for (text, &stop) in texts.iter().zip(&stopwords) {
        for run in runs(text, stop, &leave_out) {
            for start in 0..run.len() {
                let run = &run[start..(start + MAX_PHRASE_WORDS).min(run.len())];
                let words: Vec<String> = run.iter().map(|w| w.1.clone()).collect();
                if !seen.insert(words.clone()) || run.iter().all(|w| is_generic(w.0)) {
                    continue;
                }
                // The centrality of its words together, divided by the square root of their
                // number, so that a word of little centrality added to a phrase does not pay.
                let score =
                    words.iter().map(|w| centrality.get(w).copied().unwrap_or(0.0)).sum::<f64>()
                        / (words.len() as f64).sqrt();
                let text = run.iter().map(|w| w.0).collect::<Vec<_>>().join(" ");
                phrases.push(KeyPhrase { text, words, score });
            }
        }
    }
    // Best first; a stable sort keeps the earlier phrase first on a tie.
    phrases.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut chosen: Vec<KeyPhrase> = Vec::new();
    for p in phrases {
        if chosen.len() == limit {
            break;
        }
        if chosen.iter().all(|c| c.words.iter().all(|w| !p.words.contains(w))) {
            chosen.push(p);
        }
    }
    chosen
}

/// Words that open an object: the word before one acts on it ("poach the eggs", "fixed my
/// test"), a verb.
const OBJECTS: &[&str] = &[
    "a", "an", "her", "him", "his", "it", "its", "me", "my", "our", "the", "their", "them", "us",
    "your",
];

/// The words of English `texts` used as verbs somewhere: written in lower case right before an
/// object ("poach the eggs"). They name no thing, so they end a phrase ("eggs poach" is no
/// subject); without a part of speech, this is what tells a verb.
fn verbs(texts: &[&str], stopwords: &[Stopwords]) -> HashSet<String> {
    let mut verbs = HashSet::new();
    for (text, stop) in texts.iter().zip(stopwords).filter(|(_, s)| s.is_english()) {
        let tokens: Vec<&str> = text.split_whitespace().collect();
        for pair in tokens.windows(2) {
            let (word, next) = (pair[0], pair[1].trim_matches(|c: char| !c.is_alphanumeric()));
            let plain = word.chars().all(|c| c.is_lowercase() || c == '-' || c == '\'');
            if !plain || !OBJECTS.contains(&next) {
                continue;
            }
            verbs.extend(content_word(word, *stop));
        }
    }
    verbs
}

/// The runs of content words in `text`: each word as written and normalized. Stopwords,
/// numbers and punctuation other than inner hyphens, apostrophes and underscores end a run.
fn runs<'t>(
    text: &'t str,
    stopwords: Stopwords,
    leave_out: &HashSet<String>,
) -> Vec<Vec<(&'t str, String)>> {
    let mut out = Vec::new();
    let mut run: Vec<(&str, String)> = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let start = rest.find(|c: char| c.is_alphanumeric()).unwrap_or(rest.len());
        let gap = &rest[..start];
        if gap.chars().any(|c| !c.is_whitespace()) && !run.is_empty() {
            out.push(std::mem::take(&mut run));
        }
        rest = &rest[start..];
        let len = word_len(rest);
        if len == 0 {
            break;
        }
        let word = &rest[..len];
        rest = &rest[len..];
        match content_word(word, stopwords).filter(|w| !leave_out.contains(w)) {
            Some(normalized) => run.push((word, normalized)),
            None if !run.is_empty() => out.push(std::mem::take(&mut run)),
            None => {}
        }
    }
    if !run.is_empty() {
        out.push(run);
    }
    out
}

/// The byte length of the word at the start of `text`: letters and digits, with single
/// hyphens, apostrophes, dots and underscores inside ("test_refund_webhook", "don't").
fn word_len(text: &str) -> usize {
    let mut end = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let joins = matches!(c, '-' | '\'' | '’' | '_' | '.')
            && end > 0
            && chars.peek().is_some_and(|&(_, n)| n.is_alphanumeric());
        if c.is_alphanumeric() || joins {
            end = i + c.len_utf8();
        } else {
            break;
        }
    }
    end
}

/// The word's keyword form if it is a content word of a text with `stopwords`; acronyms of two
/// capitals count ("CI").
fn content_word(word: &str, stopwords: Stopwords) -> Option<String> {
    if word.len() == 2 && word.chars().all(|c| c.is_ascii_uppercase()) {
        return Some(word.to_ascii_lowercase());
    }
    // Stopwords give no keyword below.
    if crate::telling::filler::is_filler(word) {
        return None;
    }
    let mut found = Vec::new();
    for_each_keyword_with(word, stopwords, |k, _| found.push(k.to_owned()));
    // A word that splits ("test_refund_webhook") keeps its whole lowercase form.
    match found.len() {
        0 => None,
        1 => found.pop(),
        _ => Some(word.to_lowercase()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_stop_at_stopwords_and_punctuation() {
        let words = |t: &str| -> Vec<Vec<String>> {
            runs(t, Stopwords::of(t), &HashSet::new())
                .into_iter()
                .map(|r| r.into_iter().map(|w| w.0.to_owned()).collect())
                .collect()
        };
        assert_eq!(
            words("Is there a Lisbon travel card for trams, and the Sintra train?"),
            [vec!["Lisbon", "travel", "card"], vec!["trams"], vec!["Sintra", "train"]]
        );
        assert_eq!(words("It's test_refund_webhook again."), [vec!["test_refund_webhook"]]);
        assert_eq!(words("our CI pipeline"), [vec!["CI", "pipeline"]]);
    }

    #[test]
    fn central_phrases_win_and_share_no_word() {
        let texts = [
            "Back to the Lisbon trip: do we need tickets for Pena Palace in Sintra?",
            "Yes, book Pena Palace online; take the early train to Sintra.",
            "And is there a Lisbon travel card for trams and the Sintra train?",
            "The Viva Viagem card covers trams and the Sintra train.",
            "We'll get the Viva Viagem card then.",
        ];
        let phrases = key_phrases(&texts, &[1.0; 5], &[], 3);
        let texts: Vec<&str> = phrases.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts[0], "Sintra train", "{phrases:?}");
        assert!(texts.contains(&"Viva Viagem card"), "{phrases:?}");
        for (i, a) in phrases.iter().enumerate() {
            for b in &phrases[i + 1..] {
                assert!(a.words.iter().all(|w| !b.words.contains(w)), "{phrases:?}");
            }
        }
    }

    #[test]
    fn a_word_used_as_a_verb_names_nothing() {
        let texts = [
            "How long should the eggs poach in the shakshuka sauce?",
            "poach the eggs for six minutes",
        ];
        let phrases = key_phrases(&texts, &[1.0; 2], &[], 3);
        assert!(phrases.iter().all(|p| !p.words.contains(&"poach".to_owned())), "{phrases:?}");
        assert_eq!(phrases[0].text, "eggs", "{phrases:?}");
        // A name before an article is not a verb, nor is a word before "this" ("garden this
        // spring").
        let texts = ["Sintra the town", "my garden this spring", "the garden beds"];
        let phrases = key_phrases(&texts, &[1.0; 3], &[], 3);
        assert!(phrases.iter().any(|p| p.text == "Sintra"), "{phrases:?}");
        assert!(phrases.iter().any(|p| p.words.contains(&"garden".to_owned())), "{phrases:?}");
    }

    #[test]
    fn speakers_names_and_generic_words_alone_name_nothing() {
        let texts = ["Thanks, Nate! Long time no see.", "Long time, Joanna! The script is done."];
        let phrases = key_phrases(&texts, &[1.0; 2], &["nate".into(), "joanna".into()], 3);
        let texts: Vec<&str> = phrases.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts, ["script"]);
    }

    #[test]
    fn nothing_to_say_gives_nothing() {
        assert!(key_phrases(&["ok", "yes, it is"], &[1.0, 1.0], &[], 3).is_empty());
        assert!(key_phrases(&[], &[], &[], 3).is_empty());
    }
}
