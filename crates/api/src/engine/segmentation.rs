//! Running segmentation jobs: load the fenced batch, plan, summarize, commit atomically.

use epimem_core::{
    ConversationKey, Episode, Job, JobKind, Message, Role, SegmentMessage, ToldBy, Trigger,
    TriggerKind, episode_id,
    llm::ProposedSegment,
    segment::{is_agent_work, overlap_start},
    segment::{plan_proposed, plan_segmentation},
    work::told_extractively,
};
use std::sync::PoisonError;

use epimem_core::JobId;
use epimem_store::{
    JobState, JobStatus, JobsOf, SegmentationBatch, SegmentationCommit, StoreError,
};

use crate::engine::{Engine, EngineError};

/// What a run of the job queue did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunReport {
    pub jobs_run: u64,
    pub episodes_closed: u64,
    pub messages_closed: u64,
    /// Jobs that lost their fence to another worker (nothing was written).
    pub jobs_superseded: u64,
    /// Memories whose strength a review moved.
    pub memories_reviewed: u64,
    /// Facts a consolidation added, confirmed or invalidated.
    pub facts_changed: u64,
    /// Timeline nodes written (by a tick).
    pub timeline_written: u64,
}

impl RunReport {
    pub fn add(&mut self, other: RunReport) {
        self.jobs_run += other.jobs_run;
        self.episodes_closed += other.episodes_closed;
        self.messages_closed += other.messages_closed;
        self.jobs_superseded += other.jobs_superseded;
        self.memories_reviewed += other.memories_reviewed;
        self.facts_changed += other.facts_changed;
        self.timeline_written += other.timeline_written;
    }
}

/// A job's failure, as it is recorded.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    conversation: ConversationKey,
    error: String,
    retry_at: Option<epimem_core::Timestamp>,
}

/// This process as a runner of jobs: its name in leases, the wakeup requests leave for it,
/// and the failures the store could not take yet.
pub(crate) struct Runner {
    /// Names this process in job leases (say, `host:pid`).
    pub(crate) worker: String,
    /// Set when [`Engine::enqueue`] left jobs for the worker.
    pub(crate) jobs_queued: crate::engine::wakeup::Wakeup,
    /// Jobs that failed here and whose failure the store could not take yet (a full disk),
    /// with why it could not.
    pub(crate) unrecorded: std::sync::Mutex<std::collections::HashMap<JobId, (Failure, String)>>,
}

impl Runner {
    pub(crate) fn new(worker: String) -> Self {
        Self { worker, jobs_queued: Default::default(), unrecorded: Default::default() }
    }
}

impl Engine {
    /// Fences `conversation` and enqueues its segmentation, unless another worker holds it.
    pub(crate) fn open(
        &self,
        conversation: &ConversationKey,
        trigger: Trigger,
    ) -> Result<(), EngineError> {
        let ttl = self.config.jobs.fence_ttl_minutes * 60_000;
        self.store.open_segmentation(conversation, trigger, self.clock.now(), ttl)?;
        Ok(())
    }

    /// Claims and runs queued jobs until none is runnable.
    pub(crate) fn run_jobs(&self) -> Result<RunReport, EngineError> {
        self.run_jobs_of(JobsOf::Everyone)
    }

    /// Claims and runs the queued jobs `of` says until none is runnable.
    pub(crate) fn run_jobs_of(&self, of: JobsOf<'_>) -> Result<RunReport, EngineError> {
        let mut report = RunReport::default();
        let lease = self.config.jobs.lease_seconds * 1000;
        while let Some(job) =
            self.store.claim_job_of(&self.runner.worker, self.clock.now(), lease, of)?
        {
            self.crash.point("job.claimed");
            let span = crate::traces::job(&job);
            let done = span.in_scope(|| {
                let done = self.run_job(&job)?;
                // What this process closed is searchable once its job is done, not at the next
                // refresh (a client that sees the episode listed may recall it at once).
                if done.episodes_closed > 0 || done.memories_reviewed > 0 {
                    self.index_after_write(&job.kind.conversation().tenant)?;
                }
                Ok::<_, EngineError>(done)
            });
            match &done {
                Ok(done) => {
                    let records = done.episodes_closed + done.memories_reviewed;
                    span.record("gen_ai.memory.record.count", records as i64);
                }
                Err(e) => {
                    span.record("error.type", e.kind().code());
                    span.record("otel.status_code", "error");
                }
            }
            report.add(done?);
        }
        Ok(report)
    }

    fn run_job(&self, job: &Job) -> Result<RunReport, EngineError> {
        let conversation = job.kind.conversation();
        let result = self.with_lease_renewed(job, || match &job.kind {
            JobKind::Segment { upto_seq, trigger, .. } => {
                Some(self.segment(job, conversation, *upto_seq, *trigger))
            }
            JobKind::Review { following, .. } => Some(self.review(job, conversation, following)),
            JobKind::Consolidate { upto_seq, .. } => {
                Some(self.consolidate(job, conversation, *upto_seq))
            }
            _ => None,
        });
        let Some(result) = result else {
            let error = "this version of epimem cannot run this job";
            self.store.abandon_job(job.id, None, error, None)?;
            return Ok(RunReport::default());
        };
        match result {
            Ok(report) => Ok(report),
            // Another worker took the fence over: our work is void, and nothing was written.
            Err(EngineError::Store(StoreError::Conflict(e))) => {
                self.store.abandon_job(job.id, None, &e, None)?;
                Ok(RunReport { jobs_superseded: 1, ..RunReport::default() })
            }
            Err(e) => {
                let retry_at = (job.attempts < self.config.jobs.max_attempts).then(|| {
                    self.clock.now().plus_millis(self.config.jobs.backoff_ms(job.attempts))
                });
                let failure =
                    Failure { conversation: conversation.clone(), error: e.to_string(), retry_at };
                self.record_failure(job.id, failure)?;
                // A model that failed costs a retry later (or a parked job, with its error),
                // never the run: the messages are stored and cut whatever the model does.
                match e {
                    EngineError::Model(_) => Ok(RunReport::default()),
                    e => Err(e),
                }
            }
        }
    }

    /// Records that job `id` failed. When even that cannot be written (the disk that failed
    /// the job is full), the failure is kept in this process, shown with the job's state
    /// ([`Engine::jobs`]) and recorded by a later tick, once the store takes it.
    fn record_failure(&self, id: JobId, failure: Failure) -> Result<(), EngineError> {
        let recorded = self.store.abandon_job(
            id,
            Some(&failure.conversation),
            &failure.error,
            failure.retry_at,
        );
        let mut unrecorded = self.runner.unrecorded.lock().unwrap_or_else(PoisonError::into_inner);
        match recorded {
            Ok(()) => {
                unrecorded.remove(&id);
                Ok(())
            }
            Err(e) => {
                unrecorded.insert(id, (failure, e.to_string()));
                Err(e.into())
            }
        }
    }

    /// Records the failures [`Engine::record_failure`] could not (a tick's first step).
    pub(crate) fn record_kept_failures(&self) -> Result<(), EngineError> {
        let kept: Vec<(JobId, Failure)> = {
            let unrecorded = self.runner.unrecorded.lock().unwrap_or_else(PoisonError::into_inner);
            unrecorded.iter().map(|(id, (failure, _))| (*id, failure.clone())).collect()
        };
        for (id, failure) in kept {
            self.record_failure(id, failure)?;
        }
        Ok(())
    }

    /// `jobs` with the failures this process could not record yet shown on theirs.
    pub(crate) fn with_kept_failures(&self, mut jobs: Vec<JobStatus>) -> Vec<JobStatus> {
        let unrecorded = self.runner.unrecorded.lock().unwrap_or_else(PoisonError::into_inner);
        for job in &mut jobs {
            if let Some((failure, why)) = unrecorded.get(&job.id) {
                job.state = match failure.retry_at {
                    Some(_) => JobState::Retrying,
                    None => JobState::Parked,
                };
                job.until = failure.retry_at;
                job.last_error =
                    Some(format!("{} (not recorded in the database yet: {why})", failure.error));
            }
        }
        jobs
    }

    /// Runs `work` while a thread beside it renews the job's lease every third of the lease,
    /// so a slow job is not taken over by another worker while this one still runs it.
    fn with_lease_renewed<T>(&self, job: &Job, work: impl FnOnce() -> T) -> T {
        let lease_ms = self.config.jobs.lease_seconds * 1000;
        let every = std::time::Duration::from_millis((lease_ms / 3).max(1) as u64);
        let (done, finished) = std::sync::mpsc::channel::<()>();
        std::thread::scope(|scope| {
            scope.spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    finished.recv_timeout(every)
                {
                    let until = self.clock.now().plus_millis(lease_ms);
                    // A lost lease ends the renewing; the commit then finds the fence gone. A
                    // failed renewal is tried again at the next beat.
                    if let Ok(false) = self.store.renew_lease(job.id, &self.runner.worker, until) {
                        return;
                    }
                }
            });
            let out = work();
            drop(done);
            out
        })
    }

    fn segment(
        &self,
        job: &Job,
        conversation: &ConversationKey,
        upto_seq: u64,
        trigger: TriggerKind,
    ) -> Result<RunReport, EngineError> {
        let policy = &self.config.segmentation;
        let batch =
            self.store.segmentation_batch(conversation, upto_seq, policy.overlap.max_messages)?;
        let vectors = self.message_vectors(conversation, &batch)?;
        let views: Vec<SegmentMessage<'_>> = batch
            .context
            .iter()
            .chain(&batch.pending)
            .enumerate()
            .map(|(i, m)| SegmentMessage {
                embedding: vectors.as_ref().map(|v| v[i].as_slice()),
                ..view(m)
            })
            .collect();
        // Which path cuts and tells, and why, for the episodes' record. An agent's session is
        // cut where its user's intents change (the model still tells each unit's story).
        let agent_work = policy.work.enabled && is_agent_work(&views);
        let (proposed, note) = match &self.chat {
            Some(chat) if !agent_work => {
                match self.model_segments(chat.as_ref(), conversation, &batch.pending)? {
                    Ok(cut) => (Some(cut.segments), cut.repaired),
                    Err(why) => (None, Some(why)),
                }
            }
            _ => (None, None),
        };
        let plan = match &proposed {
            Some(segments) => {
                let cuts: Vec<(usize, f64)> =
                    segments.iter().map(|s| (s.len, s.surprise)).collect();
                plan_proposed(&cuts, trigger, batch.window_doubled)
            }
            None => plan_segmentation(
                &views,
                batch.context.len(),
                trigger,
                batch.window_doubled,
                policy,
            ),
        };
        let episodes: Vec<Episode> = plan
            .close
            .iter()
            .enumerate()
            .map(|(i, segment)| {
                let start = batch.context.len() + segment.range.start;
                let context_first_seq = overlap_start(&views, start, &policy.overlap)
                    .map(|i| all_messages(&batch, i).seq);
                let episode = self.build_episode(
                    conversation,
                    &batch,
                    &batch.pending[segment.range.clone()],
                    context_first_seq,
                    segment,
                    proposed.as_ref().map(|p| &p[i]),
                );
                Episode { told_note: note.clone(), ..episode }
            })
            .collect();
        // Agent work (tools ran) is told as a story: intent, what happened, learned, done.
        let mut episodes = episodes;
        if let Some(chat) = &self.chat {
            for (episode, segment) in episodes.iter_mut().zip(&plan.close) {
                let messages = &batch.pending[segment.range.clone()];
                if messages.len() < 2 || !messages.iter().any(|m| m.role == Role::Tool) {
                    continue;
                }
                match self.tell_story(chat.as_ref(), conversation, messages)? {
                    Ok(story) => {
                        episode.summary = story.narrative();
                        episode.title = story.title;
                        episode.told_by = ToldBy::Llm;
                    }
                    Err(why) => {
                        episode.told_note.get_or_insert(format!("its story: {why}"));
                    }
                }
            }
        }
        let report = RunReport {
            jobs_run: 1,
            episodes_closed: episodes.len() as u64,
            messages_closed: plan.closed_len() as u64,
            ..RunReport::default()
        };
        let commit = SegmentationCommit {
            job: job.id,
            conversation: conversation.clone(),
            episodes,
            window_doubled: plan.window_doubled,
            consolidate: self.consolidation_rule(),
        };
        self.crash.point("segment.before_commit");
        self.store.commit_segmentation(&commit)?;
        self.crash.point("segment.after_commit");
        if let Some(last) = commit.episodes.last() {
            self.tail_cache.closed(&commit.conversation, last.last_seq);
        }
        Ok(report)
    }

    /// Vectors of the batch's context and pending messages, in order: cached ones from the
    /// store, the rest embedded now and cached. `None` without an embedder.
    fn message_vectors(
        &self,
        conversation: &ConversationKey,
        batch: &SegmentationBatch,
    ) -> Result<Option<Vec<Vec<f32>>>, EngineError> {
        let Some(embedder) = &self.embedder else { return Ok(None) };
        let messages: Vec<&Message> = batch.context.iter().chain(&batch.pending).collect();
        let (Some(first), Some(last)) = (messages.first(), messages.last()) else {
            return Ok(Some(Vec::new()));
        };
        let fingerprint = embedder.fingerprint();
        let mut cached: std::collections::HashMap<u64, Vec<f32>> = self
            .store
            .message_vectors(conversation, first.seq, last.seq, fingerprint)?
            .into_iter()
            .collect();
        let missing: Vec<&Message> =
            messages.iter().copied().filter(|m| !cached.contains_key(&m.seq)).collect();
        if !missing.is_empty() {
            let texts: Vec<&str> = missing.iter().map(|m| m.content.as_str()).collect();
            let fresh: Vec<(u64, Vec<f32>)> =
                missing.iter().map(|m| m.seq).zip(embedder.embed(&texts)?).collect();
            self.store.put_message_vectors(conversation, fingerprint, &fresh)?;
            cached.extend(fresh);
        }
        Ok(Some(messages.iter().map(|m| cached.remove(&m.seq).unwrap_or_default()).collect()))
    }

    fn build_episode(
        &self,
        conversation: &ConversationKey,
        batch: &SegmentationBatch,
        messages: &[Message],
        context_first_seq: Option<u64>,
        segment: &epimem_core::segment::ClosedSegment,
        told: Option<&ProposedSegment>,
    ) -> Episode {
        // Agent work is told from its prompts and actions; anything else from its sentences.
        let mut summary = told_extractively(messages, &self.config.summary);
        // The model's telling, where it cut; the keywords stay those of the words used.
        if let Some(told) = told {
            summary.title.clone_from(&told.title);
            summary.summary.clone_from(&told.summary);
        }
        let (first, last) = (&messages[0], &messages[messages.len() - 1]);
        Episode {
            id: episode_id(conversation, first.seq, last.seq),
            conversation: conversation.clone(),
            user: batch.user.clone(),
            agent: batch.agent.clone(),
            first_seq: first.seq,
            last_seq: last.seq,
            context_first_seq,
            start: messages.iter().map(|m| m.timestamp).min().unwrap_or(first.timestamp),
            end: messages.iter().map(|m| m.timestamp).max().unwrap_or(last.timestamp),
            title: summary.title,
            summary: summary.summary,
            keywords: summary.keywords,
            surprise: segment.surprise,
            boundary_reason: segment.reason,
            fsrs: self.memory.initial(segment.surprise, last.timestamp),
            told_by: if told.is_some() { ToldBy::Llm } else { ToldBy::Fallback },
            told_note: None,
        }
    }
}

fn view(m: &Message) -> SegmentMessage<'_> {
    SegmentMessage {
        role: m.role,
        content: &m.content,
        timestamp: m.timestamp,
        tokens: m.tokens,
        embedding: None,
    }
}

fn all_messages(batch: &SegmentationBatch, i: usize) -> &Message {
    batch.context.get(i).unwrap_or_else(|| &batch.pending[i - batch.context.len()])
}

#[cfg(test)]
mod tests {
    use epimem_core::{Role, Timestamp};
    use epimem_search_local::LocalSearch;
    use epimem_store_sqlite::SqliteStore;

    use super::*;
    use crate::engine::{EngineConfig, FixedClock, MessageInput};

    /// A job whose failure the store could not take (its disk was full) shows that failure in
    /// the job list, and a later tick records it.
    #[test]
    fn a_failure_the_store_could_not_take_is_shown_then_recorded() {
        let config = EngineConfig::default();
        let search = Box::new(LocalSearch::in_memory(&config.ranking));
        let clock = Box::new(FixedClock::new(Timestamp(1_767_225_600_000)));
        let store = SqliteStore::open_in_memory().unwrap();
        let engine = Engine::new(std::sync::Arc::new(store), search, config, clock, "w".into());
        let key = ConversationKey::new("t", "c");
        let message = MessageInput {
            conversation: key.clone(),
            user: None,
            agent: None,
            key: "m1".into(),
            role: Role::User,
            speaker: None,
            content: "The deploy failed".into(),
            timestamp: None,
            metadata: serde_json::Value::Null,
        };
        engine.enqueue(vec![message]).unwrap();
        engine.open(&key, Trigger { kind: TriggerKind::Flush, upto_seq: 1 }).unwrap();
        let job =
            engine.store.claim_job(&engine.runner.worker, engine.clock.now(), 60_000).unwrap();
        let job = job.expect("the flush's job");
        let failure = Failure {
            conversation: key.clone(),
            error: "storage full: database or disk is full".into(),
            retry_at: Some(engine.clock.now().plus_millis(5_000)),
        };
        engine.runner.unrecorded.lock().unwrap().insert(job.id, (failure, "disk full".into()));

        let shown = engine.jobs("t", None, 10).unwrap();
        assert_eq!(shown[0].state, JobState::Retrying);
        let error = shown[0].last_error.as_deref().unwrap();
        assert!(error.contains("disk is full") && error.contains("not recorded"), "{error}");
        let stored = engine.store.jobs("t", None, engine.clock.now(), 10).unwrap();
        assert_eq!(stored[0].state, JobState::Running, "the store still has it running");

        engine.record_kept_failures().unwrap();
        assert!(engine.runner.unrecorded.lock().unwrap().is_empty());
        let stored = engine.store.jobs("t", None, engine.clock.now(), 10).unwrap();
        assert_eq!(stored[0].state, JobState::Retrying);
        assert_eq!(stored[0].last_error.as_deref(), Some("storage full: database or disk is full"));
    }
}
