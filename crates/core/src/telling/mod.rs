//! Telling an episode in words: its title and summary, key phrases and keywords, the words
//! that tell nothing (stopwords, filler), standing instructions, and CJK text.

pub(crate) mod cjk;
pub(crate) mod filler;
pub(crate) mod key_phrases;
pub(crate) mod keywords;
pub(crate) mod standing;
pub(crate) mod stopwords;
pub(crate) mod summary;

pub use cjk::{for_each_bigram, is_cjk};
pub use key_phrases::{KeyPhrase, key_phrases};
pub use keywords::{KeywordBag, jaccard, keyword_list};
pub use standing::{rule_sentences, standing_instructions, states_standing_instruction};
pub use stopwords::{Stopwords, is_stopword};
pub use summary::{Summary, SummaryConfig, summarize};
