//! epimem's use cases over any [`Store`]: ingest messages, segment them into episodes,
//! recall episodes. The engine owns the order of operations; the pure decisions come from
//! `epimem-core`, the durable state from the store.

mod clock;
mod config;
mod consolidation;
mod context;
mod crash;
mod error;
mod forget;
mod index_repair;
mod indexing;
mod keys;
mod measure;
mod model_segmentation;
mod next_turn;
mod process;
mod recall;
mod retell;
mod review;
mod segmentation;
mod tail;
mod timeline;
mod wakeup;
mod work;

use epimem_core::{
    ConversationKey, Episode, EpisodeId, FsrsState, NewMessage, Role, Scope, Timestamp,
    TokenCounter, evaluate_trigger, fsrs::MemoryStrength,
};
use epimem_embed::Embedder;
use epimem_llm::ChatModel;
use epimem_search::Search;
use epimem_store::{
    EpisodeCursor, EpisodeDetail, EpisodeEdit, EpisodeVersion, JobStatus, JobsOf, PushOutcome,
    PushedMessage, Stats, Store,
};

pub use clock::{Clock, FixedClock, SystemClock};
pub use config::{ConsolidationConfig, EngineConfig, JobsConfig, TimelineConfig};
pub use consolidation::FactHit;
pub use context::{EpisodeContext, RecalledContext};
pub use crash::{CRASH_POINTS, CrashAt};
pub use error::EngineError;
pub use indexing::{Freshness, IndexTask, RepairLog};
pub use measure::Measure;
pub use next_turn::{NextTurn, NextTurnQuery};
pub use process::process_name;
pub use recall::{MessageHit, RecallHit, RecallQuery};
pub use retell::RetellReport;
pub use segmentation::RunReport;
pub use tail::TAIL_REFRESH;
pub use timeline::RollupReport;
pub use work::{Patterns, WorkContextConfig, project_scope};

/// A message as a caller hands it in.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageInput {
    pub conversation: ConversationKey,
    pub user: Option<String>,
    pub agent: Option<String>,
    /// Idempotency key, unique within the conversation.
    pub key: String,
    pub role: Role,
    pub speaker: Option<String>,
    pub content: String,
    /// Conversation time; the clock's `now` when absent.
    pub timestamp: Option<Timestamp>,
    pub metadata: serde_json::Value,
}

impl MessageInput {
    /// Whether the message is within what a message may be (`epimem_core::message_limits`);
    /// every door's messages are checked again when they are stored.
    pub fn check(&self) -> Result<(), epimem_core::MessageProblem> {
        epimem_core::check_message(epimem_core::MessageFields {
            key: &self.key,
            conversation: &self.conversation.conversation,
            user: self.user.as_deref(),
            speaker: self.speaker.as_deref(),
            agent: self.agent.as_deref(),
            content: &self.content,
            metadata: &self.metadata,
            timestamp: self.timestamp,
        })
    }
}

/// What one call to [`Engine::ingest`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IngestReport {
    /// Messages stored (duplicates by key are not).
    pub inserted: u64,
    /// Messages skipped because their conversation already held their key (with the same
    /// role and text).
    pub duplicates: u64,
    /// Messages not stored because their key already holds a different message: the first
    /// write wins (`PushedMessage::conflict` says which).
    pub conflicts: u64,
    pub segmentation: RunReport,
    /// Where each message of the call is, in the order given: its sequence number and whether
    /// it was new.
    pub messages: Vec<PushedMessage>,
}

impl IngestReport {
    /// Adds `other`'s counts (the messages' places stay those of this call).
    pub fn add(&mut self, other: IngestReport) {
        self.inserted += other.inserted;
        self.duplicates += other.duplicates;
        self.conflicts += other.conflicts;
        self.segmentation.add(other.segmentation);
    }
}

/// The engine: a store, a configuration and a clock.
pub struct Engine {
    store: std::sync::Arc<dyn Store>,
    config: EngineConfig,
    clock: Box<dyn Clock>,
    tokens: TokenCounter,
    worker: String,
    embedder: Option<Box<dyn Embedder>>,
    /// Cuts and titles episodes when configured; the LLM-free segmenters stand in without it
    /// and whenever it fails.
    chat: Option<std::sync::Arc<dyn ChatModel>>,
    memory: MemoryStrength,
    search: Box<dyn Search>,
    freshness: Freshness,
    /// How long a recall waits for its tenant's index to be built before it is refused.
    build_wait: std::time::Duration,
    /// Beside the process holding a saved index: how large a copy must be before waiting for
    /// the holder's save is worth it, and for how long.
    holder_save: indexing::HolderSave,
    /// The tenants whose index is kept current in the background mode (recalled from once).
    kept_current: std::sync::Mutex<std::collections::HashSet<String>>,
    /// Each tenant's locks: one held while its index is built or caught up, one while a batch
    /// is read from the store and applied to it, or a forget takes episodes out of both.
    syncing: indexing::SyncLocks,
    /// Set when [`Engine::enqueue`] left jobs for the worker.
    jobs_queued: wakeup::Wakeup,
    /// Told when a tenant's index is rebuilt while serving (a search found it damaged).
    repair_log: Option<indexing::RepairLog>,
    /// How often the owner's refresh checks the indexes' files (none: never after open).
    verify_every: Option<std::time::Duration>,
    next_verify: std::sync::Mutex<Option<std::time::Instant>>,
    /// The open tail of each tenant this process recalls in.
    tail_cache: tail::TailCache,
    /// Where to crash, in a fault-injection test.
    crash: crash::Crash,
    /// Jobs that failed here and whose failure the store could not take yet (a full disk),
    /// with why it could not.
    unrecorded: std::sync::Mutex<
        std::collections::HashMap<epimem_core::JobId, (segmentation::Failure, String)>,
    >,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("worker", &self.worker).finish_non_exhaustive()
    }
}

impl Engine {
    /// `search` is the index recall asks (kept current from the store's change log);
    /// `worker` names this process in job leases (say, `host:pid`).
    pub fn new(
        store: std::sync::Arc<dyn Store>,
        search: Box<dyn Search>,
        config: EngineConfig,
        clock: Box<dyn Clock>,
        worker: String,
    ) -> Self {
        let memory = MemoryStrength::new(config.memory.clone());
        let tail_cache = tail::TailCache::for_lines(config.ranking.open_tail_lines);
        Self {
            store,
            config,
            clock,
            tokens: TokenCounter::cl100k(),
            worker,
            embedder: None,
            chat: None,
            memory,
            search,
            freshness: Freshness::default(),
            build_wait: indexing::BUILD_WAIT,
            holder_save: indexing::HolderSave::default(),
            kept_current: Default::default(),
            syncing: Default::default(),
            jobs_queued: Default::default(),
            repair_log: None,
            verify_every: None,
            next_verify: Default::default(),
            tail_cache,
            crash: Default::default(),
            unrecorded: Default::default(),
        }
    }

    /// Checks the files of every index it keeps current every `every` (the owner's refresh:
    /// a server, a worker), besides when each is opened: a file changed behind a running
    /// process's back is then caught and the index built again.
    #[must_use]
    pub fn with_index_checks(mut self, every: std::time::Duration) -> Self {
        self.verify_every = Some(every);
        self
    }

    /// Aborts the process at the point `at` names, in a build with crash points
    /// ([`CRASH_POINTS`]: fault-injection tests); in any other, does nothing.
    #[must_use]
    pub fn with_crash_at(mut self, at: CrashAt) -> Self {
        self.crash = crash::Crash::at(at);
        self
    }

    /// Tells `log` (tenant, task, done, total) how a rebuild goes when a search finds a
    /// tenant's index damaged and the engine builds it again from the store, before it
    /// answers.
    #[must_use]
    pub fn with_repair_log(mut self, log: indexing::RepairLog) -> Self {
        self.repair_log = Some(log);
        self
    }

    /// When recall catches a tenant's search index up (before every recall by default).
    #[must_use]
    pub fn with_freshness(mut self, freshness: Freshness) -> Self {
        self.freshness = freshness;
        self
    }

    /// How long a recall waits for a build of its tenant's index under way (2 s by default)
    /// before it is refused as unavailable; zero refuses at once.
    #[must_use]
    pub fn with_build_wait(mut self, wait: std::time::Duration) -> Self {
        self.build_wait = wait;
        self
    }

    /// Beside a process that holds the saved search index but has saved none this process can
    /// read (it is building it), a build of a copy of `from_changes` changes or more first
    /// waits up to `wait` for the holder to save, and reads what it saved instead (by default
    /// from 100,000 changes, up to 25 s).
    #[must_use]
    pub fn with_holder_save_wait(mut self, from_changes: u64, wait: std::time::Duration) -> Self {
        self.holder_save = indexing::HolderSave { from_changes, wait };
        self
    }

    /// Counts tokens with `tokens` instead of cl100k_base's tables (whose first use costs
    /// tens of milliseconds): [`TokenCounter::estimate`] for a process that must answer at once.
    #[must_use]
    pub fn with_token_counter(mut self, tokens: TokenCounter) -> Self {
        self.tokens = tokens;
        self
    }

    /// Embeds messages for semantic segmentation (without one, only the lexical and time
    /// signals are used).
    pub fn with_embedder(mut self, embedder: Box<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// Cuts episodes with a language model (its title, summary and surprise too), falling back
    /// to the LLM-free segmenters for a batch whenever the model fails.
    pub fn with_chat_model(mut self, chat: std::sync::Arc<dyn ChatModel>) -> Self {
        self.chat = Some(chat);
        self
    }

    pub fn store(&self) -> &dyn Store {
        &*self.store
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    pub fn tokens(&self) -> &TokenCounter {
        &self.tokens
    }

    /// Stores `messages` durably, then segments every conversation whose queue triggers
    /// (count or age, judged in conversation time), and runs the queued jobs.
    pub fn ingest(&self, messages: Vec<MessageInput>) -> Result<IngestReport, EngineError> {
        let mut report = self.store_messages(messages)?;
        report.segmentation = self.run_jobs()?;
        Ok(report)
    }

    /// Stores `messages` durably and queues segmentation for every conversation whose queue
    /// triggers, for this process's worker ([`Engine::wait_for_jobs`]) or any other to run:
    /// the caller does not wait for it (a server's request).
    pub fn enqueue(&self, messages: Vec<MessageInput>) -> Result<IngestReport, EngineError> {
        let report = self.store_messages(messages)?;
        self.jobs_queued.wake();
        Ok(report)
    }

    /// Waits until [`Engine::enqueue`] left jobs, or `timeout` passes; true if it did.
    pub fn wait_for_jobs(&self, timeout: std::time::Duration) -> bool {
        self.jobs_queued.wait(timeout)
    }

    /// Stores `messages` and queues segmentation where a trigger fires.
    fn store_messages(&self, messages: Vec<MessageInput>) -> Result<IngestReport, EngineError> {
        let now = self.clock.now();
        let mut batch = Vec::with_capacity(messages.len());
        for (index, m) in messages.into_iter().enumerate() {
            if m.conversation.tenant.trim().is_empty() {
                return Err(EngineError::Invalid("tenant must not be empty".into()));
            }
            if m.conversation.conversation.trim().is_empty() {
                return Err(EngineError::Invalid("conversation must not be empty".into()));
            }
            // Limits first: a message too long to keep is not worth counting the tokens of.
            m.check().map_err(|problem| EngineError::InvalidMessage { index, problem })?;
            let tokens = self.tokens.count(&m.content);
            batch.push(NewMessage {
                conversation: m.conversation,
                user: m.user,
                agent: m.agent,
                key: m.key,
                role: m.role,
                speaker: m.speaker,
                content: m.content,
                timestamp: m.timestamp.unwrap_or(now),
                metadata: m.metadata,
                tokens,
            });
        }
        let received = batch.len() as u64;
        self.crash.point("push.before");
        let outcomes = self.store.push_messages(&batch)?;
        self.crash.point("push.after");
        self.tail_cache.stored(&batch, &outcomes);
        let inserted: u64 = outcomes.iter().map(|o| o.inserted).sum();
        self.open_triggered(&outcomes)?;
        let mut messages: Vec<PushedMessage> =
            outcomes.iter().flat_map(|o| o.messages.iter().copied()).collect();
        messages.sort_unstable_by_key(|m| m.index);
        let conflicts = messages.iter().filter(|m| m.conflict).count() as u64;
        Ok(IngestReport {
            inserted,
            duplicates: received - inserted - conflicts,
            conflicts,
            segmentation: RunReport::default(),
            messages,
        })
    }

    /// Fences and enqueues segmentation for each pushed conversation whose queue triggers.
    /// The batch is pinned to the queue as the push left it.
    fn open_triggered(&self, outcomes: &[PushOutcome]) -> Result<(), EngineError> {
        for o in outcomes {
            let Some(conversation_now) = o.queue.newest else { continue };
            if let Some(trigger) =
                evaluate_trigger(&o.queue, conversation_now, &self.config.triggers, false)
            {
                self.open(&o.conversation, trigger)?;
            }
        }
        Ok(())
    }

    /// Closes everything pending (in one conversation, or all of the tenant's), as at the end
    /// of a session or an import.
    pub fn flush(&self, scope: &Scope) -> Result<RunReport, EngineError> {
        let mut report = RunReport::default();
        // Only the jobs of what it closes: others' (a backlog after a burst, another tenant's)
        // are the workers', and would hold the caller up for as long as they take.
        let own = jobs_of(scope);
        // A job queued before the flush (a full window) holds the fence and is pinned to
        // where it was queued: once it is done, what came after is still pending, so the
        // flush opens again (a few times at most: each round waits for other workers).
        for _ in 0..4 {
            if self.queue_flush(scope)? == 0 {
                break;
            }
            report.add(self.run_jobs_of(own)?);
            report.add(self.wait_for_others(scope)?);
        }
        self.index_after_write(&scope.tenant)?;
        Ok(report)
    }

    /// Queues the segmentation of everything pending in `scope` without running it (a hook
    /// hands the work to a worker and returns). Returns how many conversations have messages
    /// pending; one whose fence another job holds is not queued again (see [`Engine::flush`]).
    pub fn queue_flush(&self, scope: &Scope) -> Result<usize, EngineError> {
        let queues = match &scope.conversation {
            Some(c) => {
                let key = ConversationKey::new(scope.tenant.clone(), c.clone());
                self.store.queue(&key)?.map(|q| (key, q)).into_iter().collect()
            }
            None => self.store.pending_queues(Some(&scope.tenant))?,
        };
        let mut pending = 0;
        for (key, queue) in queues {
            if let Some(trigger) =
                evaluate_trigger(&queue, self.clock.now(), &self.config.triggers, true)
            {
                self.open(&key, trigger)?;
                pending += 1;
            }
        }
        Ok(pending)
    }

    /// Waits while another worker of this process or another runs a job of `scope` (a flush
    /// must not return before what it closes is closed), running what becomes claimable, for
    /// a little over one lease: a worker that died renewed its lease before the flush began,
    /// so by then the job is claimable and this flush runs it.
    fn wait_for_others(&self, scope: &Scope) -> Result<RunReport, EngineError> {
        use epimem_store::JobState;
        let lease = std::time::Duration::from_secs(self.config.jobs.lease_seconds.max(1) as u64);
        let deadline = std::time::Instant::now() + lease + std::time::Duration::from_millis(500);
        let mut report = RunReport::default();
        loop {
            let jobs = self.jobs(&scope.tenant, scope.conversation.as_deref(), 1000)?;
            self.release_leases_of_the_gone(&jobs)?;
            if !jobs.iter().any(|j| matches!(j.state, JobState::Queued | JobState::Running))
                || std::time::Instant::now() >= deadline
            {
                return Ok(report);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
            report.add(self.run_jobs_of(jobs_of(scope))?);
        }
    }

    /// Ends the leases of running jobs whose worker is a process of this machine that is gone
    /// (killed, crashed), so they are claimable now rather than when their lease runs out. A
    /// lease is ended only while that worker still holds it.
    fn release_leases_of_the_gone(
        &self,
        jobs: &[epimem_store::JobStatus],
    ) -> Result<(), EngineError> {
        let ended = self.clock.now().plus_millis(-1);
        for job in jobs {
            if let (epimem_store::JobState::Running, Some(worker)) = (job.state, &job.worker)
                && *worker != self.worker
                && process::is_gone(worker)
            {
                self.store.renew_lease(job.id, worker, ended)?;
            }
        }
        Ok(())
    }

    /// The scheduler's heartbeat: segments conversations that fell silent or waited too long
    /// (judged against the clock), and runs queued jobs, including those whose worker died.
    pub fn tick(&self) -> Result<RunReport, EngineError> {
        let now = self.clock.now();
        self.record_kept_failures()?;
        for tenant in self.store.tenants()? {
            self.release_leases_of_the_gone(&self.jobs(&tenant, None, 1000)?)?;
        }
        for (key, queue) in self.store.pending_queues(None)? {
            if let Some(trigger) = evaluate_trigger(&queue, now, &self.config.triggers, false) {
                self.open(&key, trigger)?;
            }
        }
        let mut report = self.run_jobs()?;
        // Every tenant's timeline, whatever one of them meets; the first failure is told.
        let mut failure = None;
        for tenant in self.store.tenants()? {
            match self.roll_up_timeline(&tenant) {
                Ok(rollup) => {
                    report.timeline_written += rollup.written as u64;
                    if let Some((node, e)) = rollup.failed.into_iter().next() {
                        failure.get_or_insert(EngineError::Timeline(format!(
                            "tenant {tenant:?}: {node} was not written: {e}"
                        )));
                    }
                }
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(report),
        }
    }

    /// Episodes in `scope`, newest first, at most `limit`.
    pub fn episodes(
        &self,
        scope: &Scope,
        limit: Option<usize>,
    ) -> Result<Vec<Episode>, EngineError> {
        Ok(self.store.episodes(scope, None, limit)?)
    }

    /// A page of [`Engine::episodes`]: at most `limit` after `after`.
    pub fn episodes_after(
        &self,
        scope: &Scope,
        after: Option<&EpisodeCursor>,
        limit: usize,
    ) -> Result<Vec<Episode>, EngineError> {
        Ok(self.store.episodes(scope, after, Some(limit))?)
    }

    pub fn episode(&self, scope: &Scope, id: &EpisodeId) -> Result<EpisodeDetail, EngineError> {
        self.store.episode(scope, id)?.ok_or_else(|| EngineError::NotFound(format!("episode {id}")))
    }

    /// Gives an episode a new title or summary (or both), keeping the old as a version; the
    /// search indexes take the new words (at once in this process's, from the change log in
    /// every other's). Bad input (nothing to change, an empty title) is refused.
    pub fn edit_episode(
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
    pub fn memory_curve(&self, state: &FsrsState, points: usize) -> (f64, Vec<(Timestamp, f64)>) {
        const MONTH_MS: i64 = 30 * 86_400_000;
        let now = self.clock.now();
        let until = state.due.unwrap_or(now).max(now).plus_millis(MONTH_MS);
        let curve = self.memory.retrievability_curve(state, now, until, points);
        (self.memory.retrievability(state, now), curve)
    }

    /// The memory states an episode's reviews left it with, oldest first.
    pub fn episode_reviews(
        &self,
        scope: &Scope,
        id: &EpisodeId,
    ) -> Result<Vec<FsrsState>, EngineError> {
        Ok(self.store.episode_reviews(scope, id)?)
    }

    /// An episode's earlier titles and summaries, oldest first.
    pub fn episode_versions(
        &self,
        scope: &Scope,
        id: &EpisodeId,
    ) -> Result<Vec<EpisodeVersion>, EngineError> {
        Ok(self.store.episode_versions(scope, id)?)
    }

    /// Where a conversation's queue stands (its newest message, its watermark), or `None` if
    /// it has no message.
    pub fn queue(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Option<epimem_core::QueueSnapshot>, EngineError> {
        Ok(self.store.queue(conversation)?)
    }

    /// The tenant's jobs (of one conversation, when given) that are queued, running, waiting
    /// to be retried or parked, oldest first, at most `limit`.
    pub fn jobs(
        &self,
        tenant: &str,
        conversation: Option<&str>,
        limit: usize,
    ) -> Result<Vec<JobStatus>, EngineError> {
        let jobs = self.store.jobs(tenant, conversation, self.clock.now(), limit)?;
        Ok(self.with_kept_failures(jobs))
    }

    pub fn stats(&self, tenant: Option<&str>) -> Result<Stats, EngineError> {
        Ok(self.store.stats(tenant)?)
    }

    /// What language model calls cost so far, per stage (of `tenant`, or of all).
    pub fn llm_usage(
        &self,
        tenant: Option<&str>,
    ) -> Result<Vec<(epimem_core::LlmStage, epimem_core::LlmUsage)>, EngineError> {
        Ok(self.store.llm_usage(tenant)?)
    }
}

/// The jobs of what `scope` holds: its tenant's, of its conversation if it names one.
fn jobs_of(scope: &Scope) -> JobsOf<'_> {
    JobsOf::Tenant { tenant: &scope.tenant, conversation: scope.conversation.as_deref() }
}
