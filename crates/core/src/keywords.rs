//! Keyword bags: the lexical fingerprint of a prompt or an episode.
//!
//! Keywords are lower-cased alphanumeric words of three or more characters that are not
//! stopwords, with a light plural strip. Bags hold 64-bit hashes so that comparing two prompts
//! allocates nothing per word; [`keyword_list`] gives the readable words for summaries.

use xxhash_rust::xxh3::xxh3_64;

/// A set of keyword hashes, sorted and de-duplicated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeywordBag(Vec<u64>);

impl KeywordBag {
    pub fn from_text(text: &str) -> Self {
        let mut hashes = Vec::new();
        for_each_keyword(text, |word| hashes.push(xxh3_64(word.as_bytes())));
        hashes.sort_unstable();
        hashes.dedup();
        Self(hashes)
    }

    pub fn len(&self) -> usize {
        self.0.len()
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

    fn intersection_len(&self, other: &KeywordBag) -> usize {
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

/// Jaccard similarity `|a ∩ b| / |a ∪ b|`; two empty bags count as identical (1.0).
pub fn jaccard(a: &KeywordBag, b: &KeywordBag) -> f64 {
    let inter = a.intersection_len(b);
    let union = a.len() + b.len() - inter;
    if union == 0 { 1.0 } else { inter as f64 / union as f64 }
}

/// The keywords of `text`, normalized, in order of first appearance.
pub fn keyword_list(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for_each_keyword(text, |word| {
        if !out.iter().any(|w| w == word) {
            out.push(word.to_owned());
        }
    });
    out
}

/// Calls `f` with every normalized keyword of `text`, duplicates included.
pub(crate) fn for_each_keyword(text: &str, mut f: impl FnMut(&str)) {
    let mut word = String::with_capacity(32);
    let mut stem = String::with_capacity(32);
    let mut emit = |word: &mut String| {
        if word.chars().count() >= 3
            && !word.bytes().all(|b| b.is_ascii_digit())
            && !is_stopword(word)
        {
            singular(word, &mut stem);
            f(&stem);
        }
        word.clear();
    };
    for ch in text.chars() {
        if ch.is_alphanumeric() {
            if ch.is_ascii() {
                word.push(ch.to_ascii_lowercase());
            } else {
                word.extend(ch.to_lowercase());
            }
        } else if !word.is_empty() {
            emit(&mut word);
        }
    }
    if !word.is_empty() {
        emit(&mut word);
    }
}

/// Whitespace-separated words, as a person would count them ("5,6" is one word).
pub(crate) fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// A light English plural strip: "varieties" → "variety", "tomatoes" → "tomato",
/// "boxes" → "box", "pots" → "pot"; "class", "status", "analysis" stay.
fn singular(word: &str, out: &mut String) {
    out.clear();
    let n = word.len();
    let stem = if n > 4 && word.ends_with("ies") {
        out.push_str(&word[..n - 3]);
        out.push('y');
        return;
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
        word
    };
    out.push_str(stem);
}

/// Whether `word` (lower-case) is an English function word or chat filler.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// English function words and chat filler; sorted for binary search.
const STOPWORDS: &[&str] = &[
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "and",
    "any",
    "are",
    "aren",
    "around",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "can",
    "cannot",
    "could",
    "couldn",
    "did",
    "didn",
    "does",
    "doesn",
    "doing",
    "don",
    "down",
    "during",
    "each",
    "either",
    "else",
    "even",
    "ever",
    "every",
    "few",
    "for",
    "from",
    "further",
    "get",
    "gets",
    "getting",
    "got",
    "had",
    "hadn",
    "has",
    "hasn",
    "have",
    "haven",
    "having",
    "her",
    "here",
    "hers",
    "herself",
    "hey",
    "him",
    "himself",
    "his",
    "how",
    "into",
    "isn",
    "its",
    "itself",
    "just",
    "let",
    "like",
    "lot",
    "made",
    "make",
    "many",
    "may",
    "might",
    "mine",
    "more",
    "most",
    "much",
    "must",
    "myself",
    "need",
    "neither",
    "nor",
    "not",
    "now",
    "off",
    "okay",
    "once",
    "one",
    "only",
    "other",
    "ought",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "please",
    "really",
    "said",
    "same",
    "say",
    "see",
    "shall",
    "she",
    "should",
    "shouldn",
    "since",
    "some",
    "something",
    "still",
    "such",
    "sure",
    "than",
    "thank",
    "thanks",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "think",
    "this",
    "those",
    "though",
    "through",
    "too",
    "under",
    "until",
    "upon",
    "very",
    "want",
    "was",
    "wasn",
    "way",
    "well",
    "were",
    "weren",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "within",
    "without",
    "won",
    "would",
    "wouldn",
    "yeah",
    "yes",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]), "STOPWORDS must stay sorted");
    }

    #[test]
    fn keywords_are_normalized_content_words() {
        assert_eq!(
            keyword_list("Please add the cargo test failures to the workspace CLAUDE.md, tests!"),
            ["add", "cargo", "test", "failure", "workspace", "claude"]
        );
        assert!(keyword_list("5,6").is_empty());
        assert_eq!(keyword_list("Größe über Straße"), ["größe", "über", "straße"]);
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
            let mut merged = KeywordBag::from_text(&a);
            merged.merge(&KeywordBag::from_text(&b));
            prop_assert_eq!(merged, KeywordBag::from_text(&format!("{a} {b}")));
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
