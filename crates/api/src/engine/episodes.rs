//! Episodes and their state read back for the doors: lists, details, corrections, reviews,
//! versions, queues, jobs and counts.

use epimem_core::{ConversationKey, Episode, EpisodeId, FsrsState, Scope, Timestamp};
use epimem_store::{EpisodeCursor, EpisodeDetail, EpisodeEdit, EpisodeVersion, JobStatus, Stats};

use crate::engine::{Engine, EngineError};

impl Engine {
    /// Episodes in `scope`, newest first, at most `limit`.
    pub(crate) fn episodes(
        &self,
        scope: &Scope,
        limit: Option<usize>,
    ) -> Result<Vec<Episode>, EngineError> {
        Ok(self.store.episodes(scope, None, limit)?)
    }

    /// A page of [`Engine::episodes`]: at most `limit` after `after`.
    pub(crate) fn episodes_after(
        &self,
        scope: &Scope,
        after: Option<&EpisodeCursor>,
        limit: usize,
    ) -> Result<Vec<Episode>, EngineError> {
        Ok(self.store.episodes(scope, after, Some(limit))?)
    }

    pub(crate) fn episode(
        &self,
        scope: &Scope,
        id: &EpisodeId,
    ) -> Result<EpisodeDetail, EngineError> {
        self.store.episode(scope, id)?.ok_or_else(|| EngineError::NotFound(format!("episode {id}")))
    }

    /// Gives an episode a new title or summary (or both), keeping the old as a version; the
    /// search indexes take the new words (at once in this process's, from the change log in
    /// every other's). Bad input (nothing to change, an empty title) is refused.
    pub(crate) fn edit_episode(
        &self,
        scope: &Scope,
        id: &EpisodeId,
        title: Option<String>,
        summary: Option<String>,
    ) -> Result<Episode, EngineError> {
        let edit = EpisodeEdit { title, summary, at: self.clock.now() };
        let edited = self.store.edit_episode(scope, id, &edit)?;
        let edited = edited.ok_or_else(|| EngineError::NotFound(format!("episode {id}")))?;
        self.index_after_write(&scope.tenant)?;
        Ok(edited)
    }

    /// An episode's memory strength now, and its forgetting curve from its last review to 30
    /// days past when it is due (or past now, if that is later), at `points` moments.
    pub(crate) fn memory_curve(
        &self,
        state: &FsrsState,
        points: usize,
    ) -> (f64, Vec<(Timestamp, f64)>) {
        const MONTH_MS: i64 = 30 * 86_400_000;
        let now = self.clock.now();
        let until = state.due.unwrap_or(now).max(now).plus_millis(MONTH_MS);
        let curve = self.memory.retrievability_curve(state, now, until, points);
        (self.memory.retrievability(state, now), curve)
    }

    /// The memory states an episode's reviews left it with, oldest first.
    pub(crate) fn episode_reviews(
        &self,
        scope: &Scope,
        id: &EpisodeId,
    ) -> Result<Vec<FsrsState>, EngineError> {
        Ok(self.store.episode_reviews(scope, id)?)
    }

    /// An episode's earlier titles and summaries, oldest first.
    pub(crate) fn episode_versions(
        &self,
        scope: &Scope,
        id: &EpisodeId,
    ) -> Result<Vec<EpisodeVersion>, EngineError> {
        Ok(self.store.episode_versions(scope, id)?)
    }

    /// Where a conversation's queue stands (its newest message, its watermark), or `None` if
    /// it has no message.
    /// The conversations of `tenant`, in the order they were first seen.
    pub(crate) fn conversations(&self, tenant: &str) -> Result<Vec<ConversationKey>, EngineError> {
        Ok(self.store.conversations(tenant)?)
    }

    /// A conversation's messages, oldest first: the newest `limit` before seq `before`, each
    /// with the episode it closed into. `None` if there is no such conversation.
    pub(crate) fn conversation_messages(
        &self,
        conversation: &ConversationKey,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Option<Vec<epimem_store::HeldMessage>>, EngineError> {
        Ok(self.store.conversation_messages(conversation, before, limit)?)
    }

    pub(crate) fn queue(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Option<epimem_core::QueueSnapshot>, EngineError> {
        Ok(self.store.queue(conversation)?)
    }

    /// The tenant's jobs (of one conversation, when given) that are queued, running, waiting
    /// to be retried or parked, oldest first, at most `limit`.
    pub(crate) fn jobs(
        &self,
        tenant: &str,
        conversation: Option<&str>,
        limit: usize,
    ) -> Result<Vec<JobStatus>, EngineError> {
        let jobs = self.store.jobs(tenant, conversation, self.clock.now(), limit)?;
        Ok(self.with_kept_failures(jobs))
    }

    pub(crate) fn stats(&self, tenant: Option<&str>) -> Result<Stats, EngineError> {
        Ok(self.store.stats(tenant)?)
    }

    /// What language model calls cost so far, per stage (of `tenant`, or of all).
    pub(crate) fn llm_usage(
        &self,
        tenant: Option<&str>,
    ) -> Result<Vec<(epimem_core::LlmStage, epimem_core::LlmUsage)>, EngineError> {
        Ok(self.store.llm_usage(tenant)?)
    }
}
