//! The use cases of the processes around the requests: storing messages in bulk, closing and
//! running what is due, keeping the search indexes and open tails current, telling episodes
//! again, rolling up the timeline, a coding project's earlier work for the hooks, and what a
//! server needs to know about keys and space. They take and answer the engine's own values:
//! their callers are programs, not wire protocols.

use crate::engine::{
    IndexTask, IngestReport, MessageInput, Patterns, RetellReport, RollupReport, RunReport,
};
use epimem_core::{LlmStage, LlmUsage, QueueSnapshot, Scope};
use epimem_store::Stats;

use crate::{Memory, MemoryError};

impl Memory {
    /// Stores `messages` and runs the segmentation jobs they queue (a bulk import's step).
    pub fn ingest(&self, messages: Vec<MessageInput>) -> Result<IngestReport, MemoryError> {
        Ok(self.engine.ingest(messages)?)
    }

    /// Stores `messages` and wakes a worker for what they queue, without running it.
    pub fn enqueue(&self, messages: Vec<MessageInput>) -> Result<IngestReport, MemoryError> {
        Ok(self.engine.enqueue(messages)?)
    }

    /// Closes what `scope` holds pending into episodes now.
    pub fn flush_now(&self, scope: &Scope) -> Result<RunReport, MemoryError> {
        Ok(self.engine.flush(scope)?)
    }

    /// Queues the closing of what `scope` holds pending for a worker; how many queues.
    pub fn queue_flush(&self, scope: &Scope) -> Result<usize, MemoryError> {
        Ok(self.engine.queue_flush(scope)?)
    }

    /// The queue of one conversation, if it has one.
    pub fn queue(
        &self,
        conversation: &epimem_core::ConversationKey,
    ) -> Result<Option<QueueSnapshot>, MemoryError> {
        Ok(self.engine.store().queue(conversation)?)
    }

    /// Closes the conversations that fell silent, takes over jobs whose worker died, and runs
    /// what is queued (`epimem tick`, the worker's beat).
    pub fn tick(&self) -> Result<RunReport, MemoryError> {
        Ok(self.engine.tick()?)
    }

    /// Runs the queued jobs.
    pub fn run_jobs(&self) -> Result<RunReport, MemoryError> {
        Ok(self.engine.run_jobs()?)
    }

    /// Waits until a request queues a job or `timeout` passes; whether one was queued.
    pub fn wait_for_jobs(&self, timeout: std::time::Duration) -> bool {
        self.engine.wait_for_jobs(timeout)
    }

    /// Catches the search indexes up with what other processes wrote.
    pub fn refresh_indexes(&self) -> Result<(), MemoryError> {
        Ok(self.engine.refresh_indexes()?)
    }

    /// Reads again the open tails recall keeps that are getting old.
    pub fn refresh_tails(&self) -> Result<(), MemoryError> {
        Ok(self.engine.refresh_tails()?)
    }

    /// Brings `tenant`'s search index up to date, telling `progress` what it does.
    pub fn load_search_index(
        &self,
        tenant: &str,
        progress: &mut dyn FnMut(&IndexTask, u64, u64),
    ) -> Result<(), MemoryError> {
        Ok(self.engine.load_search_index(tenant, progress)?)
    }

    /// Builds `tenant`'s search index again from the store.
    pub fn reindex(
        &self,
        tenant: &str,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(), MemoryError> {
        Ok(self.engine.reindex(tenant, progress)?)
    }

    /// Vectors the search index holds, over every tenant it has loaded.
    pub fn indexed_vectors(&self) -> usize {
        self.engine.indexed_vectors()
    }

    /// Tells again, under today's rules, what earlier versions told of `tenant`'s episodes.
    pub fn retell(
        &self,
        tenant: &str,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<RetellReport, MemoryError> {
        Ok(self.engine.retell(tenant, progress)?)
    }

    /// Rolls `tenant`'s timeline up: the periods that changed are told again.
    pub fn roll_up_timeline(&self, tenant: &str) -> Result<RollupReport, MemoryError> {
        Ok(self.engine.roll_up_timeline(tenant)?)
    }

    /// Recurring intents and repeated failures across the sessions of `project`.
    pub fn patterns(
        &self,
        tenant: &str,
        project: &str,
        episodes: usize,
    ) -> Result<Patterns, MemoryError> {
        Ok(self.engine.patterns(tenant, project, episodes)?)
    }

    /// What a coding session starting in `project` is handed of its earlier work.
    pub fn start_context(&self, tenant: &str, project: &str) -> Result<String, MemoryError> {
        Ok(self.engine.start_context(tenant, project)?)
    }

    /// The earlier work of `project` a `prompt` sent in session `current` bears on, chosen by
    /// its words (a hook has no time to load an embedder).
    pub fn prompt_context(
        &self,
        tenant: &str,
        project: &str,
        current: &str,
        prompt: &str,
    ) -> Result<String, MemoryError> {
        Ok(self.engine.prompt_context(tenant, project, current, prompt)?)
    }

    /// Whether any API key is live (a server then asks every request for one).
    pub fn api_keys_exist(&self) -> Result<bool, MemoryError> {
        Ok(self.engine.api_keys_exist()?)
    }

    /// The tenant a live API key works in.
    pub fn tenant_of_api_key(&self, key: &str) -> Result<Option<String>, MemoryError> {
        Ok(self.engine.tenant_of_api_key(key)?)
    }

    /// Counts over one tenant or all of them, for operators (metrics, `reindex`).
    pub fn counts(&self, tenant: Option<&str>) -> Result<Stats, MemoryError> {
        Ok(self.engine.stats(tenant)?)
    }

    /// The language model's calls and tokens, by stage.
    pub fn llm_usage(
        &self,
        tenant: Option<&str>,
    ) -> Result<Vec<(LlmStage, LlmUsage)>, MemoryError> {
        Ok(self.engine.llm_usage(tenant)?)
    }

    /// Why the store refuses writes for want of space, if it does.
    pub fn out_of_space(&self) -> Option<String> {
        self.engine.store().out_of_space()
    }

    /// The steps under the use cases, for the evaluation harness and the benchmarks.
    pub fn measure(&self) -> crate::engine::Measure<'_> {
        self.engine.measure()
    }

    /// Loads the token counter now rather than at the first recall.
    pub fn prepare_tokens(&self) {
        self.engine.tokens().prepare();
    }
}
