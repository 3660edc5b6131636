//! Messages in: stored durably, their queues triggered, closed on a flush or a tick, and
//! the jobs that cut them run.

use epimem_core::{ConversationKey, NewMessage, Role, Scope, Timestamp, evaluate_trigger};
use epimem_store::{JobsOf, PushOutcome, PushedMessage};

use crate::engine::{Engine, EngineError, RunReport, process};

/// A message as a program hands it to the engine: its time may be left to the clock, and its
/// tokens are not counted yet. Every door makes one from its own input (the API's `MessageIn`,
/// a hook's event, a line of `epimem ingest`); the engine makes the store's `NewMessage` of
/// it.
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

impl Engine {
    /// Stores `messages` durably, then segments every conversation whose queue triggers
    /// (count or age, judged in conversation time), and runs the queued jobs.
    pub(crate) fn ingest(&self, messages: Vec<MessageInput>) -> Result<IngestReport, EngineError> {
        let mut report = self.store_messages(messages)?;
        report.segmentation = self.run_jobs()?;
        Ok(report)
    }

    /// Stores `messages` durably and queues segmentation for every conversation whose queue
    /// triggers, for this process's worker ([`Engine::wait_for_jobs`]) or any other to run:
    /// the caller does not wait for it (a server's request).
    pub(crate) fn enqueue(&self, messages: Vec<MessageInput>) -> Result<IngestReport, EngineError> {
        let report = self.store_messages(messages)?;
        self.runner.jobs_queued.wake();
        Ok(report)
    }

    /// Waits until [`Engine::enqueue`] left jobs, or `timeout` passes; true if it did.
    pub(crate) fn wait_for_jobs(&self, timeout: std::time::Duration) -> bool {
        self.runner.jobs_queued.wait(timeout)
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
    pub(crate) fn flush(&self, scope: &Scope) -> Result<RunReport, EngineError> {
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
    pub(crate) fn queue_flush(&self, scope: &Scope) -> Result<usize, EngineError> {
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
                && *worker != self.runner.worker
                && process::is_gone(worker)
            {
                self.store.renew_lease(job.id, worker, ended)?;
            }
        }
        Ok(())
    }

    /// The scheduler's heartbeat: segments conversations that fell silent or waited too long
    /// (judged against the clock), and runs queued jobs, including those whose worker died.
    pub(crate) fn tick(&self) -> Result<RunReport, EngineError> {
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
}

/// The jobs of what `scope` holds: its tenant's, of its conversation if it names one.
fn jobs_of(scope: &Scope) -> JobsOf<'_> {
    JobsOf::Tenant { tenant: &scope.tenant, conversation: scope.conversation.as_deref() }
}
