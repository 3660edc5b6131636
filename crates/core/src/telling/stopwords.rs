//! Stopwords: function words and chat filler, which say nothing of a subject.
//!
//! English's are always left out (our own list, with chat filler such as "okay" and
//! "thanks"). A text written in another language also leaves out that language's (NLTK's
//! lists, from the `stop-words` crate): "ich", "mit" and "nach" name nothing in German, and
//! kept as keywords they would make every German line look like every other. A text's
//! language is the one whose function words it uses most, English on a tie: they are a
//! language's most frequent words, so a sentence of a few words already shows them.

use std::{
    collections::{HashMap, HashSet},
    hash::BuildHasherDefault,
    sync::LazyLock,
};

use xxhash_rust::xxh3::xxh3_64;

use crate::telling::keywords::PreHashed;

/// The languages besides English whose stopwords are known: NLTK's lists, by ISO 639-1 code
/// (Chinese and Japanese are cut into pairs of characters instead, see `cjk.rs`). The more
/// widely written first: a text that two lists fit alike (Spanish and Catalan share "de" and
/// "por") is read as the first.
const LANGUAGES: [&str; 30] = [
    "es", "fr", "de", "pt", "it", "ru", "tr", "id", "nl", "ar", "el", "he", "hu", "ro", "sv", "da",
    "no", "fi", "ca", "eu", "sq", "sl", "az", "kk", "uz", "tg", "be", "bn", "ne", "ta",
];

/// A text is read as another language only when at least this many distinct words of it are
/// that language's function words and not English's (and more than its English function
/// words): one word is too little to tell, since a name such as "Dan" or a word of chat such
/// as "ya" is a function word somewhere.
const MIN_FOREIGN_WORDS: u32 = 2;

/// The stopwords that apply to one text: English's, and those of its language if that is
/// another one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopwords {
    /// Index into [`LANGUAGES`]; `None`: English.
    language: Option<u8>,
}

impl Stopwords {
    /// English's alone.
    pub const ENGLISH: Self = Self { language: None };

    /// The stopwords of `text`'s language, read from the function words it uses. A word that
    /// is a function word in English too ("on", "me", "so") tells nothing against English,
    /// and another language counts each of its words once ("see ya, catch ya later").
    pub fn of(text: &str) -> Self {
        let tables = tables();
        let mut english = 0u32;
        let mut foreign = [0u32; LANGUAGES.len()];
        let mut seen: Vec<u64> = Vec::new();
        let mut word = String::with_capacity(32);
        let mut chars = 0usize;
        let mut count = |word: &mut String, chars: &mut usize| {
            // Single letters are as often code or a list's labels as words.
            if *chars >= 2 {
                let hash = xxh3_64(word.as_bytes());
                if tables.english_common.contains(&hash) {
                    english += 1;
                } else if let Some(&languages) = tables.foreign.get(&hash)
                    && !seen.contains(&hash)
                {
                    seen.push(hash);
                    for (l, hits) in foreign.iter_mut().enumerate() {
                        *hits += (languages >> l) & 1;
                    }
                }
            }
            word.clear();
            *chars = 0;
        };
        for ch in text.chars() {
            if ch.is_alphanumeric() {
                word.extend(ch.to_lowercase());
                chars += 1;
            } else if !word.is_empty() {
                count(&mut word, &mut chars);
            }
        }
        if !word.is_empty() {
            count(&mut word, &mut chars);
        }
        // The first of the most used on a tie: a stable choice.
        let (best, hits) = foreign
            .iter()
            .enumerate()
            .fold((0, 0), |best, (l, &hits)| if hits > best.1 { (l, hits) } else { best });
        if hits >= MIN_FOREIGN_WORDS && hits > english {
            Self { language: Some(best as u8) }
        } else {
            Self::ENGLISH
        }
    }

    /// Whether `word` (lower-case) is a stopword here.
    pub fn contains(&self, word: &str) -> bool {
        self.contains_hash(xxh3_64(word.as_bytes()))
    }

    /// [`Stopwords::contains`] of a word's xxh3 hash: keywords are hashed anyway, and
    /// comparing hashes is far cheaper than comparing strings on the hot path of segmentation.
    pub(crate) fn contains_hash(&self, hash: u64) -> bool {
        let tables = tables();
        tables.english.contains(&hash)
            || self.language.is_some_and(|l| {
                tables.foreign.get(&hash).is_some_and(|languages| languages >> l & 1 == 1)
            })
    }

    /// The language's ISO 639-1 code.
    #[cfg(test)]
    fn language(&self) -> &'static str {
        self.language.map_or("en", |l| LANGUAGES[usize::from(l)])
    }

    pub fn is_english(&self) -> bool {
        self.language.is_none()
    }
}

/// Whether `word` (lower-case) is an English function word or chat filler.
pub fn is_stopword(word: &str) -> bool {
    Stopwords::ENGLISH.contains(word)
}

type HashSet64 = HashSet<u64, BuildHasherDefault<PreHashed>>;

struct Tables {
    /// What English text leaves out: [`STOPWORDS`].
    english: HashSet64,
    /// What counts as English when a text's language is read: [`STOPWORDS`] and NLTK's list.
    english_common: HashSet64,
    /// Each other language's function words: bit `l` set for `LANGUAGES[l]`.
    foreign: HashMap<u64, u32, BuildHasherDefault<PreHashed>>,
}

fn tables() -> &'static Tables {
    static TABLES: LazyLock<Tables> = LazyLock::new(|| {
        let hash = |w: &&str| xxh3_64(w.as_bytes());
        let english: HashSet64 = STOPWORDS.iter().map(hash).collect();
        let mut english_common = english.clone();
        english_common.extend(stop_words::get("en").iter().map(hash));
        let mut foreign: HashMap<u64, u32, BuildHasherDefault<PreHashed>> = HashMap::default();
        for (l, code) in LANGUAGES.iter().enumerate() {
            for word in stop_words::get(code) {
                *foreign.entry(xxh3_64(word.to_lowercase().as_bytes())).or_default() |= 1 << l;
            }
        }
        Tables { english, english_common, foreign }
    });
    &TABLES
}

/// English function words and chat filler (kept sorted, to read and to spot duplicates).
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
    use super::*;

    #[test]
    fn the_list_is_sorted_and_distinct() {
        assert!(
            STOPWORDS.windows(2).all(|w| w[0] < w[1]),
            "STOPWORDS must stay sorted and distinct"
        );
    }

    #[test]
    fn every_language_has_its_list() {
        for code in LANGUAGES {
            assert!(stop_words::lookup(code).is_some_and(|w| w.len() > 20), "{code}");
        }
    }

    #[test]
    fn a_text_is_read_in_the_language_whose_function_words_it_uses() {
        let language = |text: &str| Stopwords::of(text).language();
        assert_eq!(language("Wie komme ich mit dem Zug nach Hausach?"), "de");
        assert_eq!(language("Je voudrais réserver une table pour ce soir."), "fr");
        assert_eq!(language("¿Dónde está la estación de tren más cercana?"), "es");
        assert_eq!(language("Как мне добраться до вокзала?"), "ru");
        assert_eq!(language("The test fails since the merge, can you look into it?"), "en");
        // One foreign function word is not enough: names and loanwords are everywhere.
        assert_eq!(language("Ask Dan about the Zug release"), "en");
        assert_eq!(language("die Hard, con air"), "en");
        assert_eq!(language("See ya, Calvin! Stay awesome. Catch ya later."), "en");
        assert_eq!(language("Take care! Keep pushing on. Talk soon."), "en");
        assert_eq!(language(""), "en");
        assert_eq!(language("数据库连接失败"), "en");
    }

    #[test]
    fn a_language_leaves_out_its_own_function_words_and_english_ones() {
        let german = Stopwords::of("Ich plane eine Wanderung im Schwarzwald mit dem Zug.");
        assert!(german.contains("ich") && german.contains("eine") && german.contains("the"));
        assert!(!german.contains("wanderung") && !german.contains("schwarzwald"));
        let english = Stopwords::of("I will die on this hill, and the war is over.");
        assert!(english.contains("the") && !english.contains("die") && !english.contains("war"));
        assert!(is_stopword("the") && !is_stopword("ich"));
    }
}
