//! Asking memory: recall, the next turn's block, and a project's memory for coding agents.

use crate::engine::{NextTurnQuery, RecallQuery};
use epimem_core::{
    ConversationKey, Scope,
    recall::{NextTurnConfig, RelevanceConfig},
};

use crate::{
    Memory, MemoryError, limit, time, user,
    wire::{
        DEFAULT_NEXT_TURN_BUDGET, EpisodeOut, FactOut, NameReadOut, NextTurnIn, NextTurnOut,
        ProjectMemoryIn, RecallIn, RecallOut,
    },
};

impl Memory {
    /// The episodes that best answer a query (without a budget), or a block of its best lines
    /// or episodes within the budget, with the facts that bear on it.
    pub fn recall(&self, tenant: &str, request: RecallIn) -> Result<RecallOut, MemoryError> {
        let span = crate::traces::memory("search_memory", "recall", tenant);
        span.record("gen_ai.memory.query.text", request.query.as_str());
        crate::traces::within(span, |span| {
            let engine = &*self.engine;
            if request.query.trim().is_empty() {
                return Err(MemoryError::bad_input("query: must not be empty"));
            }
            if request.budget == Some(0) {
                return Err(MemoryError::bad_input("budget: must be at least 1 token"));
            }
            if request.episodes && request.budget.is_none() {
                return Err(MemoryError::bad_input("episodes: needs a budget"));
            }
            let mut scope = Scope {
                since: time(request.since.as_deref(), "since")?,
                until: time(request.until.as_deref(), "until")?,
                user: user(request.user.clone())?,
                agent: request.project.clone(),
                ..Scope::tenant(tenant).with_conversation(request.conversation.clone())
            };
            if let Some(within) = &request.within {
                if scope.since.is_some() || scope.until.is_some() {
                    return Err(MemoryError::bad_input(
                        "within: give a period or since/until, not both",
                    ));
                }
                scope = engine.scope_within(scope, within)?;
            }
            if (request.fill || request.min_relevance.is_some()) && request.budget.is_none() {
                return Err(MemoryError::bad_input("fill, min_relevance: need a budget"));
            }
            let relevance = match (request.fill, request.min_relevance) {
                (true, _) => Some(RelevanceConfig::FILL),
                (false, Some(p)) if (0.0..=1.0).contains(&p) => {
                    let defaults = engine.config().relevance;
                    Some(RelevanceConfig { speak: p, take: defaults.take.min(p), ..defaults })
                }
                (false, Some(p)) => {
                    return Err(MemoryError::bad_input(format!(
                        "min_relevance: {p} is not from 0 to 1"
                    )));
                }
                (false, None) => None,
            };
            let asked_in = request.asked_in.map(|c| (ConversationKey::new(tenant, c), 1));
            let query = RecallQuery {
                relevance,
                asked_in,
                ..RecallQuery::new(scope, request.query, limit(request.limit, 5)?)
            };
            // Read once: every answer searches the names as read and says how it read them.
            let query = engine.read_names(&query)?;
            let mut out: RecallOut = match request.budget {
                Some(budget) if request.episodes => {
                    engine.recall_episode_context(&query, budget)?.into()
                }
                Some(budget) => engine.recall_context(&query, budget)?.into(),
                None => RecallOut {
                    hits: engine.recall(&query)?.iter().map(EpisodeOut::from).collect(),
                    ..RecallOut::default()
                },
            };
            let read = query.names_read.iter().flatten();
            out.names_read = read.map(NameReadOut::from).collect();
            out.facts = engine.recall_facts(&query)?.iter().map(FactOut::from).collect();
            // A fact that bears on the query is something remembered.
            if !out.facts.is_empty() {
                out.nothing_relevant = out.nothing_relevant.map(|_| false);
            }
            let lines = out.turns.as_ref().map_or(0, Vec::len);
            span.record(
                "gen_ai.memory.record.count",
                (out.hits.len() + lines + out.facts.len()) as i64,
            );
            Ok(out)
        })
    }

    /// Everything an agent reads before its next turn in `conversation`, under one budget: the
    /// long-term lines that bear on the moment, what came earlier told short, and the newest
    /// messages verbatim.
    pub fn next_turn(
        &self,
        tenant: &str,
        conversation: &str,
        request: NextTurnIn,
    ) -> Result<NextTurnOut, MemoryError> {
        let span = crate::traces::memory("search_memory", "next_turn", tenant);
        span.record("gen_ai.conversation.id", conversation);
        crate::traces::within(span, |_| {
            let budget = request.budget.unwrap_or(DEFAULT_NEXT_TURN_BUDGET);
            if budget == 0 {
                return Err(MemoryError::bad_input("budget: must be at least 1 token"));
            }
            let defaults = self.engine.config().next_turn;
            let shares = NextTurnConfig {
                recent_share: request.recent_share.unwrap_or(defaults.recent_share),
                summary_share: request.summary_share.unwrap_or(defaults.summary_share),
            };
            shares.check().map_err(MemoryError::bad_input)?;
            let query = NextTurnQuery {
                conversation: ConversationKey::new(tenant, conversation),
                query: request.query.filter(|q| !q.trim().is_empty()),
                budget,
                shares: Some(shares),
                relevance: None,
            };
            Ok(self.engine.next_turn(&query)?.into())
        })
    }

    /// What a coding agent should know of a project: given a prompt, the earlier work that
    /// bears on it; else its recent work, recurring failures and older sessions. Empty when
    /// nothing does.
    pub fn project_memory(
        &self,
        tenant: &str,
        request: &ProjectMemoryIn,
    ) -> Result<String, MemoryError> {
        let span = crate::traces::memory("search_memory", "project_memory", tenant);
        crate::traces::within(span, |_| {
            if request.project.trim().is_empty() {
                return Err(MemoryError::bad_input("project: must not be empty"));
            }
            if let Some(expected) = &request.tenant
                && expected != tenant
            {
                return Err(MemoryError::conflict(format!(
                    "tenant: the caller stores its sessions in {expected:?}, but this request works \
                 in {tenant:?} (its API key's, or the server's configured tenant)"
                )));
            }
            let session = request.session.as_deref().unwrap_or("");
            Ok(match &request.prompt {
                Some(prompt) => {
                    self.engine.prompt_context(tenant, &request.project, session, prompt)?
                }
                None => self.engine.start_context(tenant, &request.project)?,
            })
        })
    }
}
