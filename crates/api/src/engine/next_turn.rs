//! The next-turn use case: everything an agent reads before it answers in a conversation, in
//! one call and under one budget (`epimem_core::recall::render_next_turn` fits and renders it).

use epimem_core::{
    ConversationKey, Episode, EpisodeId, Message, Role, Scope,
    recall::{
        EARLIER_MESSAGES, NextTurnConfig, RelevanceConfig, Shares, conversation_query,
        quoted_lines, recent_fitting, render_next_turn, summary_fitting,
    },
};

use crate::engine::{Engine, EngineError, RecallQuery, RecalledContext};

/// What an agent asks before its next turn.
#[derive(Debug, Clone, PartialEq)]
pub struct NextTurnQuery {
    pub conversation: ConversationKey,
    /// What to look up in long-term memory; when absent, the newest message a person wrote
    /// (a statement with the words the conversation kept coming back to).
    pub query: Option<String>,
    /// Tokens the whole block may take.
    pub budget: usize,
    /// How the budget is shared; the engine's (`[next_turn]`) when absent.
    pub shares: Option<NextTurnConfig>,
    /// How the long-term lines are judged; the engine's (`[relevance]`) when absent.
    pub relevance: Option<RelevanceConfig>,
}

/// The block for the next turn, and each of its parts.
#[derive(Debug, Clone, PartialEq)]
pub struct NextTurn {
    /// The block as an agent puts it in its prompt.
    pub text: String,
    /// Tokens of `text`, never more than `budget`.
    pub tokens: usize,
    pub budget: usize,
    /// The conversation's newest messages, verbatim, oldest first.
    pub recent: Vec<Message>,
    pub recent_tokens: usize,
    pub recent_share: usize,
    /// What came before them, told short (episodes' titles and summaries), and the episodes
    /// it tells.
    pub summary: String,
    pub summary_episodes: Vec<EpisodeId>,
    pub summary_tokens: usize,
    pub summary_share: usize,
    /// The long-term lines that bear on `memory_query` (of any conversation of the tenant,
    /// none of the recent part): empty, and `memory.relevant` false, when nothing does.
    pub memory: RecalledContext,
    pub memory_query: Option<String>,
    pub memory_share: usize,
}

/// Messages of the conversation's newest episodes read for the recent part at once.
const EPISODES_AT_ONCE: usize = 4;

impl Engine {
    /// The block an agent reads before its next turn in `query.conversation`: the long-term
    /// lines that bear on the moment, what came earlier told short, and the newest messages
    /// verbatim, each within its share of one budget, no line in two parts.
    pub(crate) fn next_turn(&self, query: &NextTurnQuery) -> Result<NextTurn, EngineError> {
        let config = query.shares.unwrap_or(self.config.next_turn);
        config.check().map_err(|why| EngineError::Invalid(format!("next-turn shares: {why}")))?;
        let key = &query.conversation;
        if self.store.queue(key)?.is_none() {
            return Err(EngineError::NotFound(format!(
                "conversation {:?} of tenant {:?}",
                key.conversation, key.tenant
            )));
        }
        let shares = Shares::of(query.budget, &config, &self.tokens);
        let scope = Scope::tenant(&key.tenant).with_conversation(Some(key.conversation.clone()));
        let mut episodes = self.store.episodes(&scope, None, None)?;
        episodes.sort_by_key(|e| (e.first_seq, e.start));
        let newest_first = self.newest_messages(&scope, &episodes, shares.recent)?;
        let newest_refs: Vec<&Message> = newest_first.iter().collect();
        let (recent, recent_tokens) = recent_fitting(&newest_refs, shares.recent, &self.tokens);
        let first_recent = recent.first().map_or(u64::MAX, |m| m.seq);
        // The episodes wholly before the recent part are told of (one reaching into it would
        // repeat its lines).
        let earlier: Vec<&Episode> =
            episodes.iter().filter(|e| e.last_seq < first_recent).collect();
        let (_, _, summary_tokens) = summary_fitting(&earlier, shares.summary, &[], &self.tokens);
        let memory_query = query.query.clone().or_else(|| next_turn_query(&newest_first));
        let memory_share = shares.memory_with(recent_tokens, summary_tokens);
        let memory = match &memory_query {
            Some(text) if !text.trim().is_empty() => {
                let recall = RecallQuery {
                    relevance: query.relevance,
                    asked_in: Some((key.clone(), first_recent)),
                    ..RecallQuery::new(Scope::tenant(&key.tenant), text.as_str(), 5)
                };
                self.recall_context(&recall, memory_share)?
            }
            _ => RecalledContext {
                text: String::new(),
                tokens: 0,
                relevant: false,
                episodes: Vec::new(),
                turns: Vec::new(),
            },
        };
        // Told again in what the summary took: an episode whose summary repeats a line the
        // memory quotes is told by its title.
        let quoted = quoted_lines(&memory.text);
        let (summary, told, summary_tokens) =
            summary_fitting(&earlier, summary_tokens, &quoted, &self.tokens);
        let mut recent = recent;
        let mut text = render_next_turn(&memory.text, &summary, &recent);
        let mut tokens = self.tokens.count(&text) as usize;
        // Parts counted apart can merge into more tokens: the oldest recent lines give way.
        while tokens > query.budget && !recent.is_empty() {
            recent.remove(0);
            text = render_next_turn(&memory.text, &summary, &recent);
            tokens = self.tokens.count(&text) as usize;
        }
        if tokens > query.budget {
            return Err(EngineError::Invalid(format!(
                "a budget of {} tokens is too small for the next-turn block",
                query.budget
            )));
        }
        Ok(NextTurn {
            text,
            tokens,
            budget: query.budget,
            recent_tokens: recent
                .iter()
                .map(|m| self.tokens.count(&epimem_core::recall::verbatim(m)) as usize)
                .sum(),
            recent: recent.into_iter().cloned().collect(),
            recent_share: shares.recent,
            summary,
            summary_episodes: told.iter().map(|e| e.id.clone()).collect(),
            summary_tokens,
            summary_share: shares.summary,
            memory,
            memory_query,
            memory_share,
        })
    }

    /// The conversation's messages, newest first, until surely more than `budget` tokens: its
    /// open tail, then its episodes' messages from the newest episode back.
    fn newest_messages(
        &self,
        scope: &Scope,
        episodes: &[Episode],
        budget: usize,
    ) -> Result<Vec<Message>, EngineError> {
        // Each message costs at least two tokens verbatim.
        let reach = (budget / 2 + 1).min(crate::engine::tail::TAIL_LINES);
        let mut newest: Vec<Message> =
            self.store.pending_messages(scope, reach)?.into_iter().map(|(_, m)| m).collect();
        newest.sort_by_key(|m| std::cmp::Reverse(m.seq));
        let mut tokens: usize = newest.iter().map(|m| m.tokens as usize).sum();
        let mut older = episodes.iter().rev();
        while tokens <= budget {
            let ids: Vec<EpisodeId> =
                older.by_ref().take(EPISODES_AT_ONCE).map(|e| e.id.clone()).collect();
            if ids.is_empty() {
                break;
            }
            let mut read = self.store.episode_details(scope, &ids)?;
            read.sort_by_key(|d| std::cmp::Reverse(d.episode.first_seq));
            for detail in read {
                for m in detail.messages.into_iter().rev() {
                    tokens += m.tokens as usize;
                    newest.push(m);
                }
            }
        }
        Ok(newest)
    }
}

/// What the next turn recalls with: the newest message a person wrote (else the newest of
/// all), as `conversation_query` reads it with the messages before it (a statement takes the
/// words the conversation kept coming back to).
fn next_turn_query(newest_first: &[Message]) -> Option<String> {
    let at = newest_first.iter().position(|m| m.role == Role::User).unwrap_or(0);
    let last = newest_first.get(at)?;
    let earlier: Vec<&str> = newest_first[at + 1..]
        .iter()
        .take(EARLIER_MESSAGES)
        .rev()
        .map(|m| m.content.as_str())
        .collect();
    Some(conversation_query(&last.content, &earlier))
}
