//! Which earlier episodes a prompt is told of when recall, not only shared keywords, can
//! choose them: a process that holds the search index and an embedder (the server, MCP).

/// A recalled episode of the project, as the prompt context weighs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PromptHit {
    /// Cosine similarity of the prompt to the episode's best-matching message.
    pub similarity: Option<f64>,
    /// Its rank among the episodes BM25 found for the prompt (1 is the best).
    pub lexical_rank: Option<usize>,
}

/// The most episodes a prompt is told of.
pub const PROMPT_EPISODES: usize = 3;

/// The hits (recall's order, the prompt's own session already left out) a prompt is told of:
/// those BM25 ranks within the first `word_rank` of these hits and whose best message is at
/// least `min_similarity` alike the prompt, at most [`PROMPT_EPISODES`], in recall's order.
///
/// Words and meaning must agree: a hit that only one of them finds is as often work on
/// another subject as the work asked about, and telling an agent of unrelated work costs
/// more than telling it nothing. Ranks are counted among the hits given, so an episode of the
/// prompt's own session that BM25 ranked first does not push the next one out.
pub fn prompt_recalled(hits: &[PromptHit], min_similarity: f64, word_rank: usize) -> Vec<usize> {
    let mut by_words: Vec<(usize, usize)> =
        hits.iter().enumerate().filter_map(|(i, h)| h.lexical_rank.map(|rank| (rank, i))).collect();
    by_words.sort_unstable();
    let within: Vec<usize> = by_words.iter().take(word_rank).map(|&(_, i)| i).collect();
    (0..hits.len())
        .filter(|i| within.contains(i))
        .filter(|&i| hits[i].similarity.is_some_and(|s| s >= min_similarity))
        .take(PROMPT_EPISODES)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(similarity: f64, lexical_rank: usize) -> PromptHit {
        PromptHit { similarity: Some(similarity), lexical_rank: Some(lexical_rank) }
    }

    #[test]
    fn words_and_meaning_must_agree() {
        let hits = [hit(0.62, 1), hit(0.70, 5), hit(0.40, 2)];
        assert_eq!(prompt_recalled(&hits, 0.45, 1), [0]);
        // The second is close in meaning but words rank it fifth; the third ranks second by
        // words but is not close enough.
        assert_eq!(prompt_recalled(&hits, 0.45, 2), [0]);
        assert_eq!(prompt_recalled(&hits, 0.45, 3), [0, 1]);
        assert!(prompt_recalled(&hits, 0.65, 1).is_empty());
        let unmeant = [PromptHit { similarity: None, lexical_rank: Some(1) }];
        assert!(prompt_recalled(&unmeant, 0.0, 1).is_empty(), "no vector, no meaning");
        let unworded = [PromptHit { similarity: Some(0.9), lexical_rank: None }];
        assert!(prompt_recalled(&unworded, 0.45, 3).is_empty(), "no shared word");
    }

    #[test]
    fn ranks_count_among_the_hits_given() {
        // The episode BM25 ranked first was the prompt's own session's, left out before.
        let hits = [hit(0.50, 4), hit(0.55, 2), hit(0.60, 9)];
        assert_eq!(prompt_recalled(&hits, 0.45, 1), [1]);
        assert_eq!(prompt_recalled(&hits, 0.45, 2), [0, 1]);
    }

    #[test]
    fn at_most_three_in_recalls_order() {
        let hits: Vec<PromptHit> = (1..=6).map(|r| hit(0.8, 7 - r)).collect();
        assert_eq!(prompt_recalled(&hits, 0.45, 6), [0, 1, 2]);
        assert!(prompt_recalled(&[], 0.45, 1).is_empty());
    }
}
