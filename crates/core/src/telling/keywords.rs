//! Keyword bags: the lexical fingerprint of a prompt or an episode.
//!
//! Keywords are lower-cased alphanumeric words of three or more characters that are not
//! stopwords of the text's language (`stopwords.rs`), with a light plural strip in English;
//! text in Chinese or Japanese gives pairs of
//! characters (`cjk.rs`). Bags hold 64-bit hashes so that comparing two prompts
//! allocates nothing per word; [`keyword_list`] gives the readable words for summaries.

use std::{
    collections::HashSet,
    hash::{BuildHasherDefault, Hasher},
};

use xxhash_rust::xxh3::xxh3_64;

use crate::telling::Stopwords;

/// A set of keyword hashes, sorted and de-duplicated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeywordBag(Vec<u64>);

impl KeywordBag {
    pub fn from_text(text: &str) -> Self {
        let mut hashes = Vec::new();
        for_each_keyword(text, |_, hash| hashes.push(hash));
        hashes.sort_unstable();
        hashes.dedup();
        Self(hashes)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The keyword hashes, sorted.
    pub fn hashes(&self) -> &[u64] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds every keyword of `other` to this bag.
    pub fn merge(&mut self, other: &KeywordBag) {
        if other.0.is_empty() {
            return;
        }
        let mut merged = Vec::with_capacity(self.0.len() + other.0.len());
        let (mut i, mut j) = (0, 0);
        while i < self.0.len() && j < other.0.len() {
            let (a, b) = (self.0[i], other.0[j]);
            merged.push(a.min(b));
            i += usize::from(a <= b);
            j += usize::from(b <= a);
        }
        merged.extend_from_slice(&self.0[i..]);
        merged.extend_from_slice(&other.0[j..]);
        self.0 = merged;
    }

    pub(crate) fn intersection_len(&self, other: &KeywordBag) -> usize {
        let (mut i, mut j, mut n) = (0, 0, 0);
        while i < self.0.len() && j < other.0.len() {
            let (a, b) = (self.0[i], other.0[j]);
            n += usize::from(a == b);
            i += usize::from(a <= b);
            j += usize::from(b <= a);
        }
        n
    }
}

/// The growing vocabulary of an episode: a hash set, so adding a message costs its own words,
/// not the size of the episode.
#[derive(Debug, Default)]
pub(crate) struct GrowingBag(HashSet<u64, BuildHasherDefault<PreHashed>>);

impl GrowingBag {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn add_text(&mut self, text: &str) {
        for_each_keyword(text, |_, hash| {
            self.0.insert(hash);
        });
    }

    pub(crate) fn add(&mut self, bag: &KeywordBag) {
        self.0.extend(bag.0.iter().copied());
    }

    pub(crate) fn reset_to(&mut self, bag: &KeywordBag) {
        self.0.clear();
        self.add(bag);
    }

    /// The share of `bag`'s keywords this set or `more` holds (0 for an empty `bag`).
    pub(crate) fn containment_with(&self, more: &GrowingBag, bag: &KeywordBag) -> f64 {
        let inter = bag.0.iter().filter(|h| self.0.contains(h) || more.0.contains(h)).count();
        if bag.is_empty() { 0.0 } else { inter as f64 / bag.len() as f64 }
    }

    /// Jaccard similarity of `bag` and this set (see [`jaccard`]).
    pub(crate) fn jaccard(&self, bag: &KeywordBag) -> f64 {
        let inter = bag.0.iter().filter(|h| self.0.contains(h)).count();
        let union = self.0.len() + bag.len() - inter;
        if union == 0 { 1.0 } else { inter as f64 / union as f64 }
    }
}

/// A hasher for keys that already are well-mixed 64-bit hashes.
#[derive(Debug, Default)]
pub(crate) struct PreHashed(u64);

impl Hasher for PreHashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Jaccard similarity `|a ∩ b| / |a ∪ b|`; two empty bags count as identical (1.0).
pub fn jaccard(a: &KeywordBag, b: &KeywordBag) -> f64 {
    let inter = a.intersection_len(b);
    let union = a.len() + b.len() - inter;
    if union == 0 { 1.0 } else { inter as f64 / union as f64 }
}

/// The keywords of `text`, normalized, in order of first appearance.
pub fn keyword_list(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for_each_keyword(text, |word, _| {
        if !out.iter().any(|w| w == word) {
            out.push(word.to_owned());
        }
    });
    out
}

/// Calls `f` with every normalized keyword of `text` and its hash, duplicates included.
pub(crate) fn for_each_keyword(text: &str, f: impl FnMut(&str, u64)) {
    for_each_keyword_with(text, Stopwords::of(text), f);
}

/// [`for_each_keyword`] with the stopwords of the text `text` belongs to (a word alone does not
/// tell its language).
pub(crate) fn for_each_keyword_with(
    text: &str,
    stopwords: Stopwords,
    mut f: impl FnMut(&str, u64),
) {
    let mut word = String::with_capacity(32);
    let mut chars = 0usize;
    let mut stem = String::with_capacity(32);
    let mut run: Vec<char> = Vec::new();
    let mut emit = |word: &mut String, chars: usize, f: &mut dyn FnMut(&str, u64)| {
        if chars >= 3 && !word.bytes().all(|b| b.is_ascii_digit()) {
            let raw = xxh3_64(word.as_bytes());
            if !stopwords.contains_hash(raw) {
                let plural = if stopwords.is_english() { singular(word, &mut stem) } else { None };
                match plural {
                    Some(s) => f(s, xxh3_64(s.as_bytes())),
                    None => f(word, raw),
                }
            }
        }
        word.clear();
    };
    let emit_run = |run: &mut Vec<char>, f: &mut dyn FnMut(&str, u64)| {
        crate::telling::for_each_bigram(run, |pair| f(pair, xxh3_64(pair.as_bytes())));
        run.clear();
    };
    for ch in text.chars() {
        if crate::telling::is_cjk(ch) {
            if !word.is_empty() {
                emit(&mut word, chars, &mut f);
                chars = 0;
            }
            run.push(ch);
            continue;
        }
        if !run.is_empty() {
            emit_run(&mut run, &mut f);
        }
        if ch.is_alphanumeric() {
            if ch.is_ascii() {
                word.push(ch.to_ascii_lowercase());
            } else {
                word.extend(ch.to_lowercase());
            }
            chars += 1;
        } else if !word.is_empty() {
            emit(&mut word, chars, &mut f);
            chars = 0;
        }
    }
    if !word.is_empty() {
        emit(&mut word, chars, &mut f);
    }
    if !run.is_empty() {
        emit_run(&mut run, &mut f);
    }
}

/// Whitespace-separated words, as a person would count them ("5,6" is one word); in Chinese
/// and Japanese, which put no spaces between words, each character counts.
pub(crate) fn word_count(text: &str) -> usize {
    text.split_whitespace()
        .map(|w| w.chars().filter(|&c| crate::telling::is_cjk(c)).count().max(1))
        .sum()
}

/// A light English plural strip: "varieties" → "variety", "tomatoes" → "tomato",
/// "boxes" → "box", "pots" → "pot"; "class", "status", "analysis" stay (`None`: unchanged).
fn singular<'a>(word: &str, out: &'a mut String) -> Option<&'a str> {
    if !word.ends_with('s') {
        return None;
    }
    let n = word.len();
    let stem = if n > 4 && word.ends_with("ies") {
        out.clear();
        out.push_str(&word[..n - 3]);
        out.push('y');
        return Some(out);
    } else if n > 4
        && ["oes", "ses", "xes", "zes", "ches", "shes"].iter().any(|s| word.ends_with(s))
        && !word.ends_with("sses")
    {
        &word[..n - 2]
    } else if n > 3
        && word.ends_with('s')
        && !["ss", "us", "is", "ses"].iter().any(|s| word.ends_with(s))
    {
        &word[..n - 1]
    } else {
        return None;
    };
    out.clear();
    out.push_str(stem);
    Some(out)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn chinese_and_japanese_give_pairs_and_count_by_character() {
        let keywords = keyword_list("数据库连接失败 with the pool");
        assert!(keywords.contains(&"数据".to_owned()) && keywords.contains(&"失败".to_owned()));
        assert!(keywords.contains(&"pool".to_owned()), "{keywords:?}");
        assert_eq!(word_count("帮我看看这个错误"), 8);
        assert_eq!(word_count("ok 好的"), 3);
        assert_eq!(word_count("fix the CI"), 3);
        assert!(!KeywordBag::from_text("東京タワー").is_empty());
    }

    #[test]
    fn keywords_are_normalized_content_words() {
        assert_eq!(
            keyword_list("Please add the cargo test failures to the workspace CLAUDE.md, tests!"),
            ["add", "cargo", "test", "failure", "workspace", "claude"]
        );
        assert!(keyword_list("5,6").is_empty());
        assert_eq!(keyword_list("Größe über Straße"), ["größe", "über", "straße"]);
        // German leaves out its function words, and keeps its plurals as written.
        assert_eq!(
            keyword_list("Ich plane eine Wanderung mit dem Zug, über zwei Pass"),
            ["plane", "wanderung", "zug", "zwei", "pass"]
        );
        assert_eq!(
            keyword_list("varieties tomatoes boxes pots class status analysis does"),
            ["variety", "tomato", "box", "pot", "class", "status", "analysis"]
        );
    }

    #[test]
    fn jaccard_of_examples() {
        let a = KeywordBag::from_text("fix the auth bug");
        let b = KeywordBag::from_text("fix the build bug");
        // {fix, auth, bug} vs {fix, build, bug}: 2 shared of 4.
        assert!((jaccard(&a, &b) - 0.5).abs() < 1e-12);
        assert_eq!(jaccard(&KeywordBag::default(), &KeywordBag::default()), 1.0);
        assert_eq!(jaccard(&a, &KeywordBag::default()), 0.0);
    }

    proptest! {
        #[test]
        fn merge_is_set_union(a in "[a-z ]{0,60}", b in "[a-z ]{0,60}") {
            let (x, y) = (KeywordBag::from_text(&a), KeywordBag::from_text(&b));
            let mut merged = x.clone();
            merged.merge(&y);
            let mut union: Vec<u64> = x.hashes().iter().chain(y.hashes()).copied().collect();
            union.sort_unstable();
            union.dedup();
            prop_assert_eq!(merged.hashes(), &union[..]);
        }

        #[test]
        fn growing_bag_agrees_with_sorted_bags(a in "[a-z ]{0,60}", b in "[a-z ]{0,60}", c in "[a-z ]{0,60}") {
            let mut growing = GrowingBag::default();
            growing.add_text(&a);
            growing.add(&KeywordBag::from_text(&b));
            let mut sorted = KeywordBag::from_text(&a);
            sorted.merge(&KeywordBag::from_text(&b));
            let probe = KeywordBag::from_text(&c);
            prop_assert_eq!(growing.jaccard(&probe), jaccard(&probe, &sorted));
        }

        #[test]
        fn jaccard_is_symmetric_and_bounded(a in "[a-z ]{0,60}", b in "[a-z ]{0,60}") {
            let (x, y) = (KeywordBag::from_text(&a), KeywordBag::from_text(&b));
            let s = jaccard(&x, &y);
            prop_assert!((0.0..=1.0).contains(&s));
            prop_assert_eq!(s, jaccard(&y, &x));
            prop_assert_eq!(jaccard(&x, &x), 1.0);
        }
    }
}
