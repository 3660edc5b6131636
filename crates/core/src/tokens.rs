//! Token counting with the cl100k_base encoding, the budget unit of episodes and context.

use std::fmt;

use tiktoken_rs::CoreBPE;

/// Counts tokens. Building one decodes the encoding tables (tens of milliseconds): build it
/// once and share it.
pub struct TokenCounter {
    bpe: CoreBPE,
}

impl fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenCounter(cl100k_base)")
    }
}

impl TokenCounter {
    pub fn cl100k() -> Self {
        // The encoding ships inside tiktoken-rs; failing to parse it is a build defect.
        let bpe = tiktoken_rs::cl100k_base().expect("the embedded cl100k_base tables parse");
        Self { bpe }
    }

    pub fn count(&self, text: &str) -> u32 {
        u32::try_from(self.bpe.encode_ordinary(text).len()).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_cl100k_tokens() {
        let counter = TokenCounter::cl100k();
        assert_eq!(counter.count(""), 0);
        assert_eq!(counter.count("hello world"), 2);
        assert!(counter.count(&"memory ".repeat(100)) >= 100);
    }
}
