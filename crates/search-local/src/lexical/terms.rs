//! What a tenant's words are worth, read from the term dictionary: the most a line can score
//! for a query (what its share is read against), the open tail's lines scored as the index's
//! own, which words no line holds, and which held words are a slip from one.

use epimem_search::{BM25_K1, HeldWords, LineWords, TailLine, TailScores, score_tail};
use tantivy::{Term, tokenizer::TokenStream as _};

use super::{ANALYZER, Bm25, NAME_SCORE, analyzer};

impl Bm25 {
    /// What a document holding every word of `query` that a search would look for scores at
    /// most (each word's idf times `k1 + 1`, a word no document holds counted as held by one),
    /// with [`NAME_SCORE`] for each author the query names: the scale a line's score is read
    /// against to tell how much of the query it matches.
    pub(crate) fn ceiling(&self, query: &str) -> tantivy::Result<f64> {
        let searcher = self.shared.reader.searcher();
        let (terms, names) = self.query_terms(query, &searcher)?;
        let documents = searcher.num_docs() as f64;
        let mut ceiling = f64::from(NAME_SCORE) * names.len() as f64;
        for term in &terms {
            let held = searcher.doc_freq(&Term::from_field_text(self.fields.body, term))?;
            let held = held.max(1) as f64;
            let idf = (1.0 + (documents - held + 0.5) / (held + 0.5)).ln();
            ceiling += idf * (1.0 + BM25_K1);
        }
        Ok(ceiling)
    }

    /// The open tail's lines scored for `query` as if this index
    /// held them too, and the ceiling over `weighed` (`epimem_search::score_tail`): its
    /// statistics, its analyzer. How the tail, which no index holds, is scored.
    pub(crate) fn score_outside(
        &self,
        query: &str,
        weighed: &str,
        tail: &[TailLine<'_>],
    ) -> tantivy::Result<TailScores> {
        let searcher = self.shared.reader.searcher();
        let (terms, names) = self.query_terms(query, &searcher)?;
        let (ceiling_terms, ceiling_names) = self.query_terms(weighed, &searcher)?;
        let mut index = HeldWords { lines: searcher.num_docs(), ..HeldWords::default() };
        for segment in searcher.segment_readers() {
            index.tokens += segment.inverted_index(self.fields.body)?.total_num_tokens();
        }
        for term in terms.iter().chain(&ceiling_terms) {
            let held = searcher.doc_freq(&Term::from_field_text(self.fields.body, term))?;
            index.held.insert(term.clone(), held);
        }
        let lines = self.tail_words.of(tail, |lines| -> tantivy::Result<Vec<LineWords>> {
            let mut analyzer =
                self.shared.index.tokenizers().get(ANALYZER).unwrap_or_else(analyzer);
            let mut analyzed = Vec::with_capacity(lines.len());
            for line in lines {
                let mut words = LineWords::default();
                let text = format!("{}: {}", line.author, line.content);
                let mut stream = analyzer.token_stream(&text);
                while let Some(token) = stream.next() {
                    words.length += 1;
                    *words.counts.entry(token.text.clone()).or_default() += 1;
                }
                analyzed.push(words);
            }
            Ok(analyzed)
        })?;
        let lines: Vec<&LineWords> = lines.iter().map(AsRef::as_ref).collect();
        let named: Vec<bool> = match names.is_empty() {
            true => vec![false; tail.len()],
            false => {
                let mut of_author: std::collections::HashMap<&str, bool> = Default::default();
                tail.iter()
                    .map(|line| {
                        let author = line.author;
                        *of_author.entry(author).or_insert_with(|| {
                            epimem_core::name_words(author).iter().any(|w| names.contains(w))
                        })
                    })
                    .collect()
            }
        };
        let name_score = f64::from(NAME_SCORE);
        let ceiling_names = ceiling_names.len();
        Ok(score_tail(&index, &terms, &ceiling_terms, ceiling_names, &lines, &named, name_score))
    }

    /// How many of `words` (lower case) no document holds and no author is called.
    pub(crate) fn never_held(&self, words: &[String]) -> tantivy::Result<usize> {
        let searcher = self.shared.reader.searcher();
        let mut analyzer = self.shared.index.tokenizers().get(ANALYZER).unwrap_or_else(analyzer);
        let mut never = 0;
        for word in words {
            if searcher.doc_freq(&Term::from_field_text(self.fields.author, word))? > 0 {
                continue;
            }
            let mut held = false;
            let mut stream = analyzer.token_stream(word);
            while let Some(token) = stream.next() {
                held |=
                    searcher.doc_freq(&Term::from_field_text(self.fields.body, &token.text))? > 0;
            }
            never += usize::from(!held);
        }
        Ok(never)
    }

    /// `word` as this index stores its lines' words (analyzed: its first term).
    pub(crate) fn stored(&self, word: &str) -> String {
        let mut analyzer = self.shared.index.tokenizers().get(ANALYZER).unwrap_or_else(analyzer);
        let mut stream = analyzer.token_stream(word);
        stream.next().map_or_else(|| word.to_owned(), |t| t.text.clone())
    }

    /// The words of its lines a slip or two from `word` (by its length; a transposition is one
    /// slip), as stored (stemmed), with the same first letter, the more common first.
    pub(crate) fn near_terms(&self, word: &str) -> tantivy::Result<Vec<String>> {
        // A slip may have dropped a letter: a word one longer may be meant.
        let slips = epimem_core::recall::slips_allowed(word.chars().count() + 1);
        if slips == 0 {
            return Ok(Vec::new());
        }
        let searcher = self.shared.reader.searcher();
        let mut analyzer = self.shared.index.tokenizers().get(ANALYZER).unwrap_or_else(analyzer);
        let mut stream = analyzer.token_stream(word);
        let Some(stem) = stream.next().map(|t| t.text.clone()) else { return Ok(Vec::new()) };
        let first = stem.chars().next();
        let term = Term::from_field_text(self.fields.body, &stem);
        let fuzzy = tantivy::query::FuzzyTermQuery::new(term, slips as u8, true);
        let mut found: Vec<(u64, String)> = Vec::new();
        for segment in searcher.segment_readers() {
            let terms = segment.inverted_index(self.fields.body)?;
            let mut near = terms.terms().search(fuzzy.automaton()?).into_stream()?;
            while near.advance() {
                let Ok(text) = std::str::from_utf8(near.key()) else { continue };
                if text.chars().next() == first && !found.iter().any(|(_, t)| t == text) {
                    found.push((0, text.to_owned()));
                }
            }
        }
        for (held, text) in &mut found {
            *held = searcher.doc_freq(&Term::from_field_text(self.fields.body, text))?;
        }
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        Ok(found.into_iter().map(|(_, t)| t).collect())
    }
}
