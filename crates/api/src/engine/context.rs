//! Turning recall hits into a context block an agent can read, under a token budget.

use std::collections::{HashMap, HashSet};

use epimem_core::{
    ConversationKey, EpisodeId, Message, Scope,
    recall::{
        ContextItem, Judgement, LineEvidence, QueryEvidence, RenderedContext, TurnItem, judge,
        render_context, render_turns,
    },
    telling::{KeywordBag, jaccard},
};
use epimem_store::EpisodeDetail;

use crate::engine::{Engine, EngineError, MessageHit, RecallHit, RecallQuery};

/// A context block of the turns that best answer a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecalledContext {
    pub text: String,
    /// Tokens of `text`.
    pub tokens: usize,
    /// False when nothing remembered bears on the query: the block is then empty (which is
    /// not an error, and not the same as a memory that holds nothing).
    pub relevant: bool,
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
    /// False when nothing remembered bears on the query (as judged of its lines): the block
    /// is then empty.
    pub relevant: bool,
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

impl Engine {
    /// The turns that best answer `query` (turn-level recall), as many as fit in `budget`
    /// tokens, grouped by episode under the time it began. A recall in one conversation is
    /// recorded as a pending review of the episodes quoted.
    pub(crate) fn recall_context(
        &self,
        query: &RecallQuery,
        budget: usize,
    ) -> Result<RecalledContext, EngineError> {
        Ok(self.recall_contexts(query, &[budget])?.pop().expect("one block per budget"))
    }

    /// `recall_context` for several budgets at once, from one ranking and one read of the
    /// episodes quoted; one block per budget, in order. The pending review records the
    /// episodes of the largest block.
    pub(crate) fn recall_contexts(
        &self,
        query: &RecallQuery,
        budgets: &[usize],
    ) -> Result<Vec<RecalledContext>, EngineError> {
        let largest = budgets.iter().copied().max().unwrap_or(0);
        let limit = self.config.ranking.turn_candidates.max(query.limit);
        let ranked = self.rank_messages(&RecallQuery { limit, ..query.clone() })?;
        let (mut hits, at) = (ranked.hits, ranked.moment);
        let judged = self.judged(query, &hits, &ranked.evidence);
        let mut rank = 0;
        hits.retain(|_| {
            rank += 1;
            judged.takes(rank - 1)
        });
        // Episodes are read from the store until the turns gathered surely overfill the
        // largest budget; later turns of the episodes read still come along, since a block
        // skips a turn that does not fit and takes a shorter one after it (under a heading it
        // already has, a line costs little).
        let mut details: HashMap<EpisodeId, EpisodeDetail> = HashMap::new();
        // Episodes a store read found missing: forgotten by another process since indexed.
        let mut missing: HashSet<EpisodeId> = HashSet::new();
        // (episode, index of the message in its detail), best first.
        let mut chosen: Vec<(EpisodeId, usize)> = Vec::new();
        let mut estimate = 0;
        // The episodes whose turns are gathered (`details` may hold more, read ahead).
        let mut admitted: HashSet<EpisodeId> = HashSet::new();
        for (at_hit, hit) in hits.iter().enumerate() {
            if !admitted.contains(&hit.episode) {
                if estimate > largest {
                    continue;
                }
                if let Some(conversation) = hit.episode.open_tail_of()
                    && !details.contains_key(&hit.episode)
                    && !missing.contains(&hit.episode)
                {
                    // An open tail is quoted as the store holds it now: a line closed or
                    // forgotten since the ranking read the tail is not quoted from it.
                    let key = ConversationKey::new(query.scope.tenant.clone(), conversation);
                    let now = self.tail_now(&query.scope, &key)?;
                    match crate::engine::tail::tail_episode(key, now) {
                        Some((episode, messages)) => {
                            let detail = EpisodeDetail { episode, context: Vec::new(), messages };
                            details.insert(hit.episode.clone(), detail);
                        }
                        None => {
                            missing.insert(hit.episode.clone());
                        }
                    }
                }
                if !details.contains_key(&hit.episode) && !missing.contains(&hit.episode) {
                    // The next few unread episodes in one read: each read is a snapshot, and
                    // under writes each snapshot starts from a cold page cache.
                    let next = unread(&hits[at_hit..], &details, &missing);
                    let read = self.store.episode_details(&query.scope, &next)?;
                    missing.extend(next);
                    for detail in read {
                        missing.remove(&detail.episode.id);
                        details.insert(detail.episode.id.clone(), detail);
                    }
                }
                if missing.contains(&hit.episode) {
                    continue;
                }
                admitted.insert(hit.episode.clone());
                estimate += HEADING_TOKENS;
            }
            let detail = &details[&hit.episode];
            let held = query.asked_in.as_ref().is_some_and(|(conversation, from)| {
                detail.episode.conversation == *conversation && hit.seq >= *from
            });
            if held {
                continue;
            }
            let messages = &detail.messages;
            if let Some(i) = messages.iter().position(|m| m.seq == hit.seq) {
                estimate += (messages[i].tokens as usize).min(LONG_LINE_TOKENS) + QUOTE_TOKENS;
                chosen.push((hit.episode.clone(), i));
            }
        }
        // A line closed into an episode while the recall ran is in both: quoted once, from
        // its episode.
        let closed: Vec<&epimem_core::Episode> = details
            .values()
            .map(|d| &d.episode)
            .filter(|e| !e.id.is_open_tail() && admitted.contains(&e.id))
            .collect();
        chosen.retain(|(id, i)| {
            let detail = &details[id];
            let seq = detail.messages[*i].seq;
            !id.is_open_tail()
                || !closed.iter().any(|e| {
                    e.conversation == detail.episode.conversation
                        && (e.first_seq..=e.last_seq).contains(&seq)
                })
        });
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
                    // A block holds a line, or is empty and says nothing bears.
                    relevant: judged != Judgement::Nothing && !block.quoted.is_empty(),
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
            // What was just said is no memory to review yet.
            let quoted: Vec<&epimem_core::Episode> = widest
                .episodes
                .iter()
                .filter(|id| !id.is_open_tail())
                .map(|id| &details[id].episode)
                .collect();
            self.record_review_of(query, &quoted, at)?;
        }
        Ok(blocks)
    }

    /// How the query's rule (the engine's, unless it brings its own) judges `hits`.
    fn judged(
        &self,
        query: &RecallQuery,
        hits: &[MessageHit],
        query_evidence: &QueryEvidence,
    ) -> Judgement {
        let rule = query.relevance.unwrap_or(self.config.relevance);
        let mut episodes: HashMap<&EpisodeId, u32> = HashMap::new();
        let lines: Vec<LineEvidence> = hits
            .iter()
            .map(|h| LineEvidence {
                score: h.score,
                episode: {
                    let next = episodes.len() as u32;
                    *episodes.entry(&h.episode).or_insert(next)
                },
                lexical: h.lexical,
                length: h.length,
                similarity: h.similarity,
            })
            .collect();
        judge(&lines, query_evidence, &rule)
    }

    /// Whether anything remembered bears on `query`, as its lines are judged (always, for a
    /// query that fills its block).
    fn bears_on(&self, query: &RecallQuery) -> Result<bool, EngineError> {
        let rule = query.relevance.unwrap_or(self.config.relevance);
        if !rule.judge {
            return Ok(true);
        }
        let limit = self.config.ranking.turn_candidates.max(query.limit);
        let ranked = self.rank_messages(&RecallQuery { limit, ..query.clone() })?;
        Ok(self.judged(query, &ranked.hits, &ranked.evidence) != Judgement::Nothing)
    }

    /// The episodes that best answer `query`, as many as fit in `budget` tokens, each as its
    /// title, when, summary and the lines that matched. A recall in one conversation is
    /// recorded as a pending review of the episodes shown.
    pub(crate) fn recall_episode_context(
        &self,
        query: &RecallQuery,
        budget: usize,
    ) -> Result<EpisodeContext, EngineError> {
        // Names read once for the rankings below.
        let query = &self.read_names(query)?;
        if !self.bears_on(query)? {
            return Ok(EpisodeContext {
                text: String::new(),
                tokens: 0,
                relevant: false,
                hits: Vec::new(),
            });
        }
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
                let (text, tokens) = (context.text, context.tokens);
                return Ok(EpisodeContext { text, tokens, relevant: true, hits });
            }
            limit = (limit * 4).min(MAX_EPISODES);
        }
    }

    /// Renders `hits` (best first) as a context block of at most `budget` tokens: title, when,
    /// summary, and the raw lines that matched `query` best.
    pub(crate) fn render_context(
        &self,
        scope: &Scope,
        query: &str,
        hits: &[RecallHit],
        budget: usize,
    ) -> Result<RenderedContext, EngineError> {
        let query_bag = KeywordBag::from_text(query);
        let ids: Vec<EpisodeId> = hits.iter().map(|h| h.episode.id.clone()).collect();
        let mut read: HashMap<EpisodeId, EpisodeDetail> = self
            .store
            .episode_details(scope, &ids)?
            .into_iter()
            .map(|d| (d.episode.id.clone(), d))
            .collect();
        let details: Vec<Option<EpisodeDetail>> = ids.iter().map(|id| read.remove(id)).collect();
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

/// Episodes read from the store at once while gathering turns.
const READ_AT_ONCE: usize = 8;

/// The first [`READ_AT_ONCE`] distinct episodes of `hits` not yet read or found missing.
fn unread(
    hits: &[MessageHit],
    read: &HashMap<EpisodeId, EpisodeDetail>,
    missing: &HashSet<EpisodeId>,
) -> Vec<EpisodeId> {
    let mut next: Vec<EpisodeId> = Vec::with_capacity(READ_AT_ONCE);
    for hit in hits {
        if next.len() == READ_AT_ONCE {
            break;
        }
        let id = &hit.episode;
        if !id.is_open_tail()
            && !read.contains_key(id)
            && !missing.contains(id)
            && !next.contains(id)
        {
            next.push(id.clone());
        }
    }
    next
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
