//! Turning recall hits into a context block an agent can read, under a token budget.

use std::collections::HashMap;

use epimem_core::{
    ContextItem, EpisodeId, KeywordBag, Message, RenderedContext, Scope, TurnItem, jaccard,
    render_context, render_turns,
};
use epimem_store::{EpisodeDetail, Store};

use crate::{Engine, EngineError, RecallHit, RecallQuery};

/// A context block of the turns that best answer a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecalledContext {
    pub text: String,
    /// Tokens of `text`.
    pub tokens: usize,
    /// The episodes quoted, in the order they appear.
    pub episodes: Vec<EpisodeId>,
    /// The turns quoted (episode, message seq), best first.
    pub turns: Vec<(EpisodeId, u64)>,
}

/// A context block of whole episodes.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeContext {
    pub text: String,
    /// Tokens of `text`.
    pub tokens: usize,
    /// The episodes shown, best first, and why each came back.
    pub hits: Vec<RecallHit>,
}

/// At least what a heading costs (`## 2023-05-08 13:56`), and a quoted line beyond its
/// words: lower bounds, so turns stop being fetched only once they surely overfill the budget.
const HEADING_TOKENS: usize = 6;
const QUOTE_TOKENS: usize = 2;
/// A quoted line is cut at 60 words, so it costs at least this much of a longer message.
const LONG_LINE_TOKENS: usize = 60;

/// Most episodes an episode context block shows.
const MAX_EPISODES: usize = 1000;

/// Raw lines quoted per episode.
const LINES_PER_EPISODE: usize = 2;

impl<S: Store> Engine<S> {
    /// The turns that best answer `query` (turn-level recall), as many as fit in `budget`
    /// tokens, grouped by episode under the time it began. A recall in one conversation is
    /// recorded as a pending review of the episodes quoted.
    pub fn recall_context(
        &self,
        query: &RecallQuery,
        budget: usize,
    ) -> Result<RecalledContext, EngineError> {
        Ok(self.recall_contexts(query, &[budget])?.pop().expect("one block per budget"))
    }

    /// `recall_context` for several budgets at once, from one ranking and one read of the
    /// episodes quoted; one block per budget, in order. The pending review records the
    /// episodes of the largest block.
    pub fn recall_contexts(
        &self,
        query: &RecallQuery,
        budgets: &[usize],
    ) -> Result<Vec<RecalledContext>, EngineError> {
        let largest = budgets.iter().copied().max().unwrap_or(0);
        let limit = self.config.ranking.turn_candidates.max(query.limit);
        let (hits, at) = self.rank_messages(&RecallQuery { limit, ..query.clone() })?;
        // Episodes are read from the store until the turns gathered surely overfill the
        // largest budget; later turns of the episodes read still come along, since a block
        // skips a turn that does not fit and takes a shorter one after it (under a heading it
        // already has, a line costs little).
        let mut details: HashMap<EpisodeId, EpisodeDetail> = HashMap::new();
        // (episode, index of the message in its detail), best first.
        let mut chosen: Vec<(EpisodeId, usize)> = Vec::new();
        let mut estimate = 0;
        for hit in &hits {
            if !details.contains_key(&hit.episode) {
                if estimate > largest {
                    continue;
                }
                let Some(detail) = self.store.episode(&query.scope, &hit.episode)? else {
                    continue; // forgotten by another process since the index loaded
                };
                details.insert(hit.episode.clone(), detail);
                estimate += HEADING_TOKENS;
            }
            let messages = &details[&hit.episode].messages;
            if let Some(i) = messages.iter().position(|m| m.seq == hit.seq) {
                estimate += (messages[i].tokens as usize).min(LONG_LINE_TOKENS) + QUOTE_TOKENS;
                chosen.push((hit.episode.clone(), i));
            }
        }
        let items: Vec<TurnItem<'_>> = chosen
            .iter()
            .map(|(id, i)| {
                let detail = &details[id];
                TurnItem { episode: &detail.episode, message: &detail.messages[*i] }
            })
            .collect();
        let blocks: Vec<RecalledContext> = budgets
            .iter()
            .map(|&budget| {
                let block = render_turns(&items, budget, &self.tokens);
                RecalledContext {
                    text: block.text,
                    tokens: block.tokens,
                    episodes: block.episodes,
                    turns: block
                        .quoted
                        .iter()
                        .map(|&i| (items[i].episode.id.clone(), items[i].message.seq))
                        .collect(),
                }
            })
            .collect();
        if let Some(widest) = budgets.iter().position(|&b| b == largest).map(|i| &blocks[i]) {
            let quoted: Vec<&epimem_core::Episode> =
                widest.episodes.iter().map(|id| &details[id].episode).collect();
            self.record_review_of(query, &quoted, at)?;
        }
        Ok(blocks)
    }

    /// The episodes that best answer `query`, as many as fit in `budget` tokens, each as its
    /// title, when, summary and the lines that matched. A recall in one conversation is
    /// recorded as a pending review of the episodes shown.
    pub fn recall_episode_context(
        &self,
        query: &RecallQuery,
        budget: usize,
    ) -> Result<EpisodeContext, EngineError> {
        // Ranks more episodes until the budget, not the ranking, is what ends the block.
        let mut limit = query.limit.max(16);
        loop {
            let wide = RecallQuery { limit, ..query.clone() };
            let (hits, at) = self.rank_episodes(&wide)?;
            let context = self.render_context(&query.scope, &query.text, &hits, budget)?;
            if context.included < hits.len() || hits.len() < limit || limit >= MAX_EPISODES {
                let mut hits = hits;
                hits.truncate(context.included);
                self.record_review(query, &hits, at)?;
                return Ok(EpisodeContext { text: context.text, tokens: context.tokens, hits });
            }
            limit = (limit * 4).min(MAX_EPISODES);
        }
    }

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
