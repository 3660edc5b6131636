//! What the evaluation harness and the benchmarks measure that no front door offers.
//!
//! The doors (`Memory`) ask for a recall, a block, a timeline, in the wire's terms. A
//! measurement also needs the engine's own values and the steps under them: episodes ranked
//! with their scores, messages ranked, blocks for several budgets from one ranking, the
//! query's vector, each of the two ways a prompt's earlier work is chosen, the timeline's
//! nodes as stored. They are reached through [`Engine::measure`] (`Memory::measure`), so that
//! what the engine offers a door and what it shows a harness stay apart.

use epimem_core::{
    EpisodeId, Scope,
    recall::{QueryEvidence, RenderedContext},
};

use epimem_core::{Episode, TimelineNode, TocNode};

use crate::engine::{Engine, EngineError, MessageHit, RecallHit, RecallQuery, RecalledContext};

/// The engine as a harness measures it ([`Engine::measure`]).
#[derive(Clone, Copy)]
pub struct Measure<'e> {
    engine: &'e Engine,
}

impl std::fmt::Debug for Measure<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Measure").finish_non_exhaustive()
    }
}

impl Engine {
    /// The steps under the use cases, for measuring them.
    pub fn measure(&self) -> Measure<'_> {
        Measure { engine: self }
    }
}

impl Measure<'_> {
    /// Episode-level recall, as a door's recall makes it (a review is recorded).
    pub fn recall(&self, query: &RecallQuery) -> Result<Vec<RecallHit>, EngineError> {
        self.engine.recall(query)
    }

    /// The block of lines that bear on the query, within `budget` tokens.
    pub fn recall_context(
        &self,
        query: &RecallQuery,
        budget: usize,
    ) -> Result<RecalledContext, EngineError> {
        self.engine.recall_context(query, budget)
    }

    /// Episodes in `scope`, newest first, at most `limit`.
    pub fn episodes(
        &self,
        scope: &Scope,
        limit: Option<usize>,
    ) -> Result<Vec<Episode>, EngineError> {
        self.engine.episodes(scope, limit)
    }

    /// The tenant's timeline: its top nodes as stored.
    pub fn timeline_top(&self, tenant: &str) -> Result<Vec<TimelineNode>, EngineError> {
        self.engine.timeline_top(tenant)
    }

    /// One node of the tenant's timeline as stored, if written.
    pub fn timeline_node(
        &self,
        tenant: &str,
        node: &TocNode,
    ) -> Result<Option<TimelineNode>, EngineError> {
        self.engine.timeline_node(tenant, node, None)
    }

    /// Turn-level recall: single messages of closed episodes and of the open tail, found by
    /// BM25, vectors and soft word matching, ranked by `rank_turns` (their scores fused,
    /// weighted by how well their episode answers and by a date the query names, lent to the
    /// turns around them, weighed by who wrote them). Best first.
    pub fn recall_messages(&self, query: &RecallQuery) -> Result<Vec<MessageHit>, EngineError> {
        self.engine.rank_messages(query).map(|ranked| ranked.hits)
    }

    /// [`Measure::recall_messages`], with what the index told of the query as a whole (what
    /// relevance is judged against).
    pub fn recall_messages_judged(
        &self,
        query: &RecallQuery,
    ) -> Result<(Vec<MessageHit>, QueryEvidence), EngineError> {
        self.engine.rank_messages(query).map(|ranked| (ranked.hits, ranked.evidence))
    }

    /// The context block for each of `budgets`, from one ranking.
    pub fn recall_contexts(
        &self,
        query: &RecallQuery,
        budgets: &[usize],
    ) -> Result<Vec<RecalledContext>, EngineError> {
        self.engine.recall_contexts(query, budgets)
    }

    /// `hits` rendered as an episode-level block of at most `budget` tokens.
    pub fn render_context(
        &self,
        scope: &Scope,
        query: &str,
        hits: &[RecallHit],
        budget: usize,
    ) -> Result<RenderedContext, EngineError> {
        self.engine.render_context(scope, query, hits, budget)
    }

    /// The query's embedding: given, or made now, once the tenant's index is caught up (it
    /// knows the names to strip); `None` without an embedder. A harness asking one query
    /// several ways embeds it once and passes it in `RecallQuery::vector`.
    pub fn embed_query(&self, query: &RecallQuery) -> Result<Option<Vec<f32>>, EngineError> {
        let engine = self.engine;
        if engine.embedder.is_some() && query.vector.is_none() {
            engine.index_for_recall(&query.scope.tenant)?;
        }
        engine.embed_synced(query)
    }

    /// The fingerprint of the embedder, if there is one.
    pub fn embedder_fingerprint(&self) -> Option<&str> {
        self.engine.embedder.as_deref().map(|e| e.fingerprint())
    }

    /// Whether another process holds the tenant's saved search index.
    pub fn index_held_elsewhere(&self, tenant: &str) -> Result<bool, EngineError> {
        Ok(self.engine.index.search.held_elsewhere(tenant)?)
    }

    /// The episodes a prompt is told of, chosen as this engine chooses them.
    /// What a new session of `project` starts with, and the episodes it tells of whole.
    pub fn start_block(
        &self,
        tenant: &str,
        project: &str,
    ) -> Result<(String, Vec<EpisodeId>), EngineError> {
        self.engine.start_block(tenant, project)
    }

    /// The block a prompt is given when it tells of `episodes` (of `project`).
    pub fn prompt_block(
        &self,
        tenant: &str,
        project: &str,
        episodes: &[EpisodeId],
    ) -> Result<String, EngineError> {
        self.engine.prompt_block(tenant, project, episodes)
    }

    /// Tokens of `text`, as the engine counts them for a block.
    /// Jobs of `tenant` a worker will still run (all but the parked), however many.
    pub fn jobs_left(&self, tenant: &str) -> Result<usize, EngineError> {
        let jobs = self.engine.jobs(tenant, None, usize::MAX)?;
        Ok(jobs.iter().filter(|j| j.state != epimem_store::JobState::Parked).count())
    }

    pub fn tokens(&self, text: &str) -> usize {
        self.engine.tokens.count(text) as usize
    }

    pub fn prompt_episodes(
        &self,
        tenant: &str,
        project: &str,
        current: &str,
        prompt: &str,
    ) -> Result<Vec<EpisodeId>, EngineError> {
        self.engine.prompt_episodes(tenant, project, current, prompt)
    }

    /// The episodes a prompt is told of, chosen by shared keywords (a hook's way).
    pub fn prompt_episodes_by_words(
        &self,
        tenant: &str,
        project: &str,
        current: &str,
        prompt: &str,
    ) -> Result<Vec<EpisodeId>, EngineError> {
        self.engine.prompt_episodes_by_words(tenant, project, current, prompt)
    }

    /// The episodes a prompt is told of, chosen by recall (a server's way).
    pub fn prompt_episodes_recalled(
        &self,
        tenant: &str,
        project: &str,
        current: &str,
        prompt: &str,
    ) -> Result<Vec<EpisodeId>, EngineError> {
        self.engine.prompt_episodes_recalled(tenant, project, current, prompt)
    }
}
