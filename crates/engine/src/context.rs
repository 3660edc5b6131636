//! Turning recall hits into a context block an agent can read, under a token budget.

use epimem_core::{
    ContextItem, KeywordBag, Message, RenderedContext, Scope, jaccard, render_context,
};
use epimem_store::Store;

use crate::{Engine, EngineError, RecallHit};

/// Raw lines quoted per episode.
const LINES_PER_EPISODE: usize = 2;

impl<S: Store> Engine<S> {
    /// Renders `hits` (best first) as a context block of at most `budget` tokens: title, when,
    /// summary, and the raw lines that matched `query` best.
    pub fn render_context(
        &self,
        scope: &Scope,
        query: &str,
        hits: &[RecallHit],
        budget: usize,
    ) -> Result<RenderedContext, EngineError> {
        let query_bag = KeywordBag::from_text(query);
        let mut details = Vec::with_capacity(hits.len());
        for hit in hits {
            details.push(self.store.episode(scope, &hit.episode.id)?);
        }
        let lines: Vec<Vec<&Message>> = hits
            .iter()
            .zip(&details)
            .map(|(hit, detail)| {
                let Some(detail) = detail else { return Vec::new() };
                matching_lines(&detail.messages, hit.best_seq, &query_bag)
            })
            .collect();
        let items: Vec<ContextItem<'_>> = hits
            .iter()
            .zip(&lines)
            .zip(&details)
            .map(|((hit, lines), detail)| ContextItem {
                episode: &hit.episode,
                lines,
                messages: detail.as_ref().map_or(&[], |d| &d.messages),
            })
            .collect();
        Ok(render_context(&items, budget, &self.tokens))
    }
}

/// The best vector match and the messages sharing most keywords with the query, in order.
fn matching_lines<'a>(
    messages: &'a [Message],
    best_seq: Option<u64>,
    query: &KeywordBag,
) -> Vec<&'a Message> {
    let mut scored: Vec<(f64, &Message)> = messages
        .iter()
        .map(|m| {
            let lexical = jaccard(&KeywordBag::from_text(&m.content), query);
            let bonus = if Some(m.seq) == best_seq { 1.0 } else { 0.0 };
            (lexical + bonus, m)
        })
        .filter(|(s, _)| *s > 0.0)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.seq.cmp(&b.1.seq)));
    let mut chosen: Vec<&Message> =
        scored.into_iter().take(LINES_PER_EPISODE).map(|(_, m)| m).collect();
    chosen.sort_by_key(|m| m.seq);
    chosen
}
