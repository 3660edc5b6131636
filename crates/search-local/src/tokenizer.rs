//! Words for BM25: runs of letters and digits, as tantivy's simple tokenizer cuts them, except
//! that Chinese and Japanese, written without spaces, are cut into overlapping pairs of
//! characters (`epimem_core::telling::for_each_bigram`), so a query of a few characters finds them.

use epimem_core::telling::{for_each_bigram, is_cjk};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

#[derive(Debug, Clone, Default)]
pub(crate) struct WordTokenizer {
    tokens: Vec<Token>,
}

pub(crate) struct WordStream<'a> {
    tokens: &'a mut [Token],
    next: usize,
}

impl Tokenizer for WordTokenizer {
    type TokenStream<'a> = WordStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordStream<'a> {
        self.tokens.clear();
        let tokens = &mut self.tokens;
        let mut push = |from: usize, to: usize, text: &str| {
            let position = tokens.len();
            tokens.push(Token {
                offset_from: from,
                offset_to: to,
                position,
                text: text.to_owned(),
                position_length: 1,
            });
        };
        let mut word: Option<usize> = None;
        let mut run: Vec<char> = Vec::new();
        let mut run_from = 0;
        for (at, c) in text.char_indices().chain([(text.len(), ' ')]) {
            let cjk = is_cjk(c);
            if let Some(from) = word.filter(|_| cjk || !c.is_alphanumeric()) {
                push(from, at, &text[from..at]);
                word = None;
            }
            if !cjk && !run.is_empty() {
                for_each_bigram(&run, |pair| push(run_from, at, pair));
                run.clear();
            }
            if cjk {
                if run.is_empty() {
                    run_from = at;
                }
                run.push(c);
            } else if c.is_alphanumeric() && word.is_none() {
                word = Some(at);
            }
        }
        WordStream { tokens: &mut self.tokens, next: 0 }
    }
}

impl TokenStream for WordStream<'_> {
    fn advance(&mut self) -> bool {
        let more = self.next < self.tokens.len();
        self.next += usize::from(more);
        more
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let mut tokenizer = WordTokenizer::default();
        let mut stream = tokenizer.token_stream(text);
        let mut out = Vec::new();
        while let Some(t) = stream.next() {
            out.push(t.text.clone());
        }
        out
    }

    #[test]
    fn latin_words_as_before_and_cjk_in_pairs() {
        assert_eq!(words("Hello, tax-payer 42!"), ["Hello", "tax", "payer", "42"]);
        assert_eq!(words("数据库 error"), ["数据", "据库", "error"]);
        assert_eq!(words("用Postgres连接"), ["用", "Postgres", "连接"]);
        assert_eq!(
            words("東京タワーに行った"),
            ["東京", "京タ", "タワ", "ワー", "ーに", "に行", "行っ", "った"]
        );
        assert_eq!(words("한국어 텍스트"), ["한국어", "텍스트"], "Korean has spaces");
        assert!(words(" ,. ").is_empty());
    }
}
