//! A query's words for PostgreSQL's full-text search, and the names of who spoke.
//!
//! As in the embedded index: a query word that names someone who spoke in the tenant's
//! conversations is not searched as a word (their names are in most of their lines) but
//! selects that person's lines; stopwords are left out unless nothing else is left.

use std::collections::{HashMap, HashSet};

use epimem_core::{name_words, telling::Stopwords};

use crate::connection::{Failure, Tx};

/// The text search configuration: English stemming and stopwords, as the embedded index.
pub(super) const CONFIG: &str = "english";

/// The tenant's authors (lowercased, as stored) by the words a query can name them by.
#[derive(Debug, Default)]
pub(super) struct Names {
    by_word: HashMap<String, Vec<String>>,
}

impl Names {
    pub(super) fn of(tx: &mut Tx<'_>, tenant: &str) -> Result<Self, Failure> {
        let mut by_word: HashMap<String, Vec<String>> = HashMap::new();
        for row in tx.query("SELECT author FROM search_authors WHERE tenant = $1", &[&tenant])? {
            let author: String = row.get(0);
            for word in name_words(&author) {
                by_word.entry(word).or_default().push(author.clone());
            }
        }
        Ok(Self { by_word })
    }

    /// Whether `word` (lower case) is a word of an author's name.
    pub(super) fn names(&self, word: &str) -> bool {
        self.by_word.contains_key(word)
    }

    /// The query without the words that name who spoke (all of it if nothing else is left).
    pub(super) fn without_names(&self, text: &str) -> String {
        let kept: Vec<&str> = text
            .split_whitespace()
            .filter(|word| {
                let bare: String =
                    word.chars().filter(|c| c.is_alphanumeric()).collect::<String>().to_lowercase();
                !self.by_word.contains_key(&bare)
            })
            .collect();
        if kept.iter().any(|w| w.chars().any(char::is_alphanumeric)) {
            kept.join(" ")
        } else {
            text.to_owned()
        }
    }

    /// The authors the query names, each once.
    pub(super) fn named(&self, text: &str) -> Vec<String> {
        let mut named: Vec<String> = words(text)
            .filter_map(|w| self.by_word.get(&w))
            .flatten()
            .cloned()
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        named.sort_unstable();
        named
    }
}

/// A query's words as a `tsquery` source (`a | b | c`) and the authors it names: `None` when
/// it has no word to search for.
pub(super) fn tsquery(text: &str, names: &Names) -> Option<(String, Vec<String>)> {
    let mut content: Vec<String> = Vec::new();
    let mut name_words: Vec<String> = Vec::new();
    let stopwords = Stopwords::of(text);
    for word in words(text) {
        if stopwords.contains(&word) {
            continue;
        }
        let list = if names.by_word.contains_key(&word) { &mut name_words } else { &mut content };
        if !list.contains(&word) {
            list.push(word);
        }
    }
    let named = names.named(text);
    let terms = if !content.is_empty() {
        content
    } else if !name_words.is_empty() {
        name_words
    } else {
        // Only stopwords: search them, rather than nothing.
        let all: Vec<String> = words(text).collect::<HashSet<_>>().into_iter().collect();
        if all.is_empty() {
            return None;
        }
        all
    };
    // Words are letters and digits only, so none can be read as tsquery syntax.
    Some((terms.join(" | "), named))
}

/// The text of an author's line as searched: who said it, then what.
pub(super) fn line_text(author: &str, content: &str) -> String {
    format!("{author}: {content}")
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase)
}

/// What name reading asks of the index, read ahead for a query's words: its speakers' name
/// words, which of the query's words it holds, and its lines' words near each capitalized one
/// it does not (`epimem_search::read_names` decides).
#[derive(Debug, Default)]
pub(super) struct HeldAhead {
    speakers: Vec<String>,
    held: HashSet<String>,
    /// For each capitalized word no line holds: its stem, and the stored words near it.
    near: HashMap<String, (String, Vec<String>)>,
}

impl HeldAhead {
    pub(super) fn of(tx: &mut Tx<'_>, tenant: &str, text: &str) -> Result<Self, Failure> {
        let names = Names::of(tx, tenant)?;
        let capitalized: HashSet<String> =
            epimem_core::recall::proper_nouns(text).into_iter().collect();
        let mut asked: Vec<String> = words(text).filter(|w| w.chars().count() >= 3).collect();
        asked.sort();
        asked.dedup();
        let held = super::bm25::held(tx, super::bm25::Kind::Line, tenant, &asked)?;
        let mut near = HashMap::new();
        for word in asked.iter().filter(|w| capitalized.contains(*w) && !held.contains(*w)) {
            near.insert(word.clone(), near_lexemes(tx, tenant, word)?);
        }
        Ok(Self { speakers: names.by_word.keys().cloned().collect(), held, near })
    }
}

/// `word` as the index stores it, and the lines' stored words a slip or two from that, with
/// its first letter, the more common first.
fn near_lexemes(
    tx: &mut Tx<'_>,
    tenant: &str,
    word: &str,
) -> Result<(String, Vec<String>), Failure> {
    // A slip may have dropped a letter: a name one longer may be meant.
    let slips = epimem_core::recall::slips_allowed(word.chars().count() + 1);
    let stem: Option<String> = tx
        .query(
            &format!(
                "SELECT l FROM unnest(tsvector_to_array(to_tsvector('{CONFIG}', $1))) l LIMIT 1"
            ),
            &[&word],
        )?
        .first()
        .map(|r| r.get(0));
    let Some(stem) = stem else { return Ok((word.to_owned(), Vec::new())) };
    let length = stem.chars().count() as i32;
    let reach = slips as i32;
    let rows = tx.query(
        "SELECT lexeme FROM search_terms WHERE tenant = $1 AND kind = $2 \
         AND left(lexeme, 1) = left($3, 1) AND char_length(lexeme) BETWEEN $4 AND $5 \
         ORDER BY rows DESC, lexeme",
        &[&tenant, &super::bm25::Kind::Line.name(), &stem, &(length - reach), &(length + reach)],
    )?;
    let near = rows
        .iter()
        .map(|r| r.get::<_, String>(0))
        .filter(|lexeme| epimem_core::recall::slips(lexeme, &stem) <= slips)
        .collect();
    Ok((stem, near))
}

impl epimem_search::HeldNames for HeldAhead {
    fn speakers(&self) -> Vec<String> {
        self.speakers.clone()
    }

    fn is_speaker(&self, word: &str) -> bool {
        self.speakers.iter().any(|s| s == word)
    }

    fn holds(&self, word: &str) -> Result<bool, epimem_search::SearchError> {
        Ok(self.held.contains(word))
    }

    fn near(&self, word: &str) -> Result<Vec<String>, epimem_search::SearchError> {
        Ok(self.near.get(word).map(|(_, near)| near.clone()).unwrap_or_default())
    }

    fn stored(&self, word: &str) -> String {
        self.near.get(word).map_or_else(|| word.to_owned(), |(stem, _)| stem.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(authors: &[&str]) -> Names {
        let mut by_word: HashMap<String, Vec<String>> = HashMap::new();
        for author in authors {
            for word in name_words(author) {
                by_word.entry(word).or_default().push(author.to_lowercase());
            }
        }
        Names { by_word }
    }

    #[test]
    fn names_select_lines_instead_of_being_searched() {
        let n = names(&["Ana Silva", "assistant"]);
        let (query, named) = tsquery("What did Ana say about the python error?", &n).unwrap();
        assert_eq!(query, "python | error");
        assert_eq!(named, ["ana silva"]);
        // A role is never a name: "assistant" stays a word.
        let (query, named) = tsquery("the assistant's answer", &n).unwrap();
        assert!(query.contains("assistant"), "{query}");
        assert!(named.is_empty());
        // Only a name left: it is searched.
        assert_eq!(tsquery("Ana?", &n).unwrap().0, "ana");
        assert_eq!(n.without_names("Where did Ana go"), "Where did go");
        assert_eq!(n.without_names("Ana"), "Ana");
        assert!(tsquery("?!", &n).is_none());
    }
}
