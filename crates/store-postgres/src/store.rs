//! The storage port on PostgreSQL: each operation one transaction (see `connection.rs`).

use epimem_core::{
    ConversationKey, Episode, EpisodeId, FsrsState, Job, JobId, LlmStage, LlmUsage, Message,
    NewMessage, QueueSnapshot, Scope, TimelineNode, Timestamp, TocLevel, TocNode, Trigger,
};
use epimem_store::{
    ApiKey, ConsolidationBatch, ConsolidationCommit, ConversationExport, EpisodeChange,
    EpisodeCursor, EpisodeDetail, EpisodeEdit, EpisodeVersion, IndexedMessage, JobStatus, JobsOf,
    PendingReview, PushOutcome, ReviewedMemory, SegmentationBatch, SegmentationCommit, Stats,
    Store, StoreError, StoredFact,
};

use crate::{
    PostgresStore, changes, edits, episodes, facts, forget, ingest, jobs, keys, llm_usage, reviews,
    segmentation, stats, timeline, transfer, vectors,
};

/// Episodes whose rows one query reads.
const INDEXED_PER_QUERY: usize = 500;

impl Store for PostgresStore {
    fn out_of_space(&self) -> Option<String> {
        self.space.get()
    }

    fn pending_messages(
        &self,
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<(ConversationKey, Message)>, StoreError> {
        self.read(|tx| ingest::pending_messages(tx, scope, limit))
    }

    fn push_messages(&self, messages: &[NewMessage]) -> Result<Vec<PushOutcome>, StoreError> {
        if messages.is_empty() {
            return Ok(Vec::new());
        }
        self.write(|tx| ingest::push(tx, messages))
    }

    fn queue(&self, conversation: &ConversationKey) -> Result<Option<QueueSnapshot>, StoreError> {
        self.read(|tx| ingest::queue(tx, conversation))
    }

    fn pending_queues(
        &self,
        tenant: Option<&str>,
    ) -> Result<Vec<(ConversationKey, QueueSnapshot)>, StoreError> {
        self.read(|tx| ingest::pending_queues(tx, tenant))
    }

    fn open_segmentation(
        &self,
        conversation: &ConversationKey,
        trigger: Trigger,
        now: Timestamp,
        fence_ttl_ms: i64,
    ) -> Result<Option<JobId>, StoreError> {
        self.write(|tx| segmentation::open(tx, conversation, trigger, now, fence_ttl_ms))
    }

    fn segmentation_batch(
        &self,
        conversation: &ConversationKey,
        upto_seq: u64,
        context: usize,
    ) -> Result<SegmentationBatch, StoreError> {
        self.read(|tx| segmentation::batch(tx, conversation, upto_seq, context))
    }

    fn commit_segmentation(&self, commit: &SegmentationCommit) -> Result<(), StoreError> {
        self.write(|tx| segmentation::commit(tx, commit))
    }

    fn abandon_job(
        &self,
        job: JobId,
        conversation: Option<&ConversationKey>,
        error: &str,
        retry_at: Option<Timestamp>,
    ) -> Result<(), StoreError> {
        self.write(|tx| jobs::abandon(tx, job, conversation, error, retry_at))
    }

    fn renew_lease(&self, job: JobId, worker: &str, until: Timestamp) -> Result<bool, StoreError> {
        self.write(|tx| jobs::renew(tx, job, worker, until))
    }

    fn jobs(
        &self,
        tenant: &str,
        conversation: Option<&str>,
        now: Timestamp,
        limit: usize,
    ) -> Result<Vec<JobStatus>, StoreError> {
        self.read(|tx| jobs::list(tx, tenant, conversation, now, limit))
    }

    fn claim_job_of(
        &self,
        worker: &str,
        now: Timestamp,
        lease_ms: i64,
        of: JobsOf<'_>,
    ) -> Result<Option<Job>, StoreError> {
        self.write(|tx| jobs::claim(tx, worker, now, lease_ms, of))
    }

    fn episodes(
        &self,
        scope: &Scope,
        after: Option<&EpisodeCursor>,
        limit: Option<usize>,
    ) -> Result<Vec<Episode>, StoreError> {
        self.read(|tx| episodes::list(tx, scope, after, limit))
    }

    fn episode_details(
        &self,
        scope: &Scope,
        ids: &[EpisodeId],
    ) -> Result<Vec<EpisodeDetail>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.read(|tx| episodes::details(tx, scope, ids))
    }

    fn message_vectors(
        &self,
        conversation: &ConversationKey,
        from: u64,
        to: u64,
        fingerprint: &str,
    ) -> Result<Vec<(u64, Vec<f32>)>, StoreError> {
        self.read(|tx| vectors::message_vectors(tx, conversation, from, to, fingerprint))
    }

    fn put_message_vectors(
        &self,
        conversation: &ConversationKey,
        fingerprint: &str,
        vectors: &[(u64, Vec<f32>)],
    ) -> Result<(), StoreError> {
        if vectors.is_empty() {
            return Ok(());
        }
        self.write(|tx| vectors::put_message_vectors(tx, conversation, fingerprint, vectors))
    }

    fn indexed_messages_of(
        &self,
        tenant: &str,
        ids: &[EpisodeId],
        fingerprint: Option<&str>,
    ) -> Result<Vec<IndexedMessage>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        // A few hundred episodes a query: the statement's generic plan is made for a handful
        // and turned seconds-long for the thousands a search index's catch-up asks for.
        self.read(|tx| {
            let mut rows = Vec::new();
            for chunk in ids.chunks(INDEXED_PER_QUERY) {
                rows.extend(episodes::indexed_messages(tx, tenant, chunk, fingerprint)?);
            }
            Ok(rows)
        })
    }

    fn change_generation(&self, tenant: &str) -> Result<u64, StoreError> {
        self.read(|tx| changes::generation(tx, tenant))
    }

    fn episode_changes(
        &self,
        tenant: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<EpisodeChange>, StoreError> {
        self.read(|tx| changes::since(tx, tenant, after, limit))
    }

    fn episodes_by_id(&self, scope: &Scope, ids: &[EpisodeId]) -> Result<Vec<Episode>, StoreError> {
        self.read(|tx| episodes::by_id(tx, scope, ids))
    }

    fn record_pending_review(
        &self,
        conversation: &ConversationKey,
        review: &PendingReview,
    ) -> Result<(), StoreError> {
        self.write(|tx| reviews::record(tx, conversation, review))
    }

    fn reviews_of_job(&self, job: JobId) -> Result<Vec<PendingReview>, StoreError> {
        self.read(|tx| reviews::of_job(tx, job))
    }

    fn finish_review(
        &self,
        job: JobId,
        tenant: &str,
        reviewed: &[ReviewedMemory],
    ) -> Result<usize, StoreError> {
        self.write(|tx| reviews::finish(tx, job, tenant, reviewed))
    }

    fn take_pending_reviews(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Vec<PendingReview>, StoreError> {
        self.write(|tx| reviews::take(tx, conversation))
    }

    fn edit_episode(
        &self,
        scope: &Scope,
        id: &EpisodeId,
        edit: &EpisodeEdit,
    ) -> Result<Option<Episode>, StoreError> {
        if !self.write(|tx| edits::edit(tx, scope, id, edit))? {
            return Ok(None);
        }
        Ok(self.episodes_by_id(scope, std::slice::from_ref(id))?.into_iter().next())
    }

    fn episode_versions(
        &self,
        scope: &Scope,
        id: &EpisodeId,
    ) -> Result<Vec<EpisodeVersion>, StoreError> {
        self.read(|tx| edits::versions(tx, scope, id))
    }

    fn episode_reviews(&self, scope: &Scope, id: &EpisodeId) -> Result<Vec<FsrsState>, StoreError> {
        self.read(|tx| edits::reviews(tx, scope, id))
    }

    fn delete_episode(&self, scope: &Scope, id: &EpisodeId) -> Result<bool, StoreError> {
        self.write(|tx| forget::episode(tx, scope, id))
    }

    fn delete_conversation(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Option<Vec<EpisodeId>>, StoreError> {
        self.write(|tx| forget::conversation(tx, conversation))
    }

    fn delete_tenant(&self, tenant: &str) -> Result<Vec<EpisodeId>, StoreError> {
        self.write(|tx| forget::tenant(tx, tenant))
    }

    fn delete_user(&self, tenant: &str, user: &str) -> Result<Vec<EpisodeId>, StoreError> {
        self.write(|tx| forget::user(tx, tenant, user))
    }

    fn consolidation_batch(
        &self,
        conversation: &ConversationKey,
        upto_seq: u64,
        max_episodes: usize,
        max_facts: usize,
        fingerprint: Option<&str>,
    ) -> Result<ConsolidationBatch, StoreError> {
        self.read(|tx| {
            facts::batch(tx, conversation, upto_seq, max_episodes, max_facts, fingerprint)
        })
    }

    fn commit_consolidation(&self, commit: &ConsolidationCommit) -> Result<(), StoreError> {
        self.write(|tx| facts::commit(tx, commit))
    }

    fn facts(
        &self,
        scope: &Scope,
        with_invalid: bool,
        limit: Option<usize>,
        fingerprint: Option<&str>,
    ) -> Result<Vec<StoredFact>, StoreError> {
        self.read(|tx| facts::list(tx, scope, with_invalid, limit, fingerprint))
    }

    fn compact(&self) -> Result<(), StoreError> {
        self.compact_tables()
    }

    fn conversations(&self, tenant: &str) -> Result<Vec<ConversationKey>, StoreError> {
        self.read(|tx| transfer::conversations(tx, tenant))
    }

    fn export_conversation(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Option<ConversationExport>, StoreError> {
        self.read(|tx| transfer::export(tx, conversation))
    }

    fn import_conversation(&self, export: &ConversationExport) -> Result<(), StoreError> {
        self.write(|tx| transfer::import(tx, export))
    }

    fn timeline_export(&self, tenant: &str) -> Result<Vec<TimelineNode>, StoreError> {
        self.read(|tx| transfer::timeline(tx, tenant))
    }

    fn import_timeline(&self, tenant: &str, nodes: &[TimelineNode]) -> Result<(), StoreError> {
        self.write(|tx| transfer::import_timeline(tx, tenant, nodes))
    }

    fn tenants(&self) -> Result<Vec<String>, StoreError> {
        self.read(timeline::tenants)
    }

    fn timeline_nodes(&self, tenant: &str, level: TocLevel) -> Result<Vec<TocNode>, StoreError> {
        self.read(|tx| timeline::written(tx, tenant, level))
    }

    fn timeline_checkpoint(&self, tenant: &str) -> Result<u64, StoreError> {
        self.read(|tx| timeline::checkpoint(tx, tenant))
    }

    fn mark_timeline(
        &self,
        tenant: &str,
        nodes: &[TocNode],
        through_change: u64,
    ) -> Result<(), StoreError> {
        self.write(|tx| timeline::mark(tx, tenant, nodes, through_change))
    }

    fn marked_timeline_nodes(&self, tenant: &str) -> Result<Vec<TocNode>, StoreError> {
        self.read(|tx| timeline::marked(tx, tenant))
    }

    fn put_timeline_node(&self, tenant: &str, node: &TimelineNode) -> Result<u32, StoreError> {
        self.write(|tx| timeline::put(tx, tenant, node))
    }

    fn timeline_node(
        &self,
        tenant: &str,
        id: &TocNode,
        version: Option<u32>,
    ) -> Result<Option<TimelineNode>, StoreError> {
        self.read(|tx| timeline::get(tx, tenant, id, version))
    }

    fn record_llm_usage(
        &self,
        tenant: &str,
        stage: LlmStage,
        usage: &LlmUsage,
    ) -> Result<(), StoreError> {
        self.write(|tx| llm_usage::record(tx, tenant, stage, usage))
    }

    fn llm_usage(&self, tenant: Option<&str>) -> Result<Vec<(LlmStage, LlmUsage)>, StoreError> {
        self.read(|tx| llm_usage::totals(tx, tenant))
    }

    fn stats(&self, tenant: Option<&str>) -> Result<Stats, StoreError> {
        self.read(|tx| stats::stats(tx, tenant))
    }

    fn create_api_key(
        &self,
        tenant: &str,
        name: &str,
        hash: &str,
        at: Timestamp,
    ) -> Result<ApiKey, StoreError> {
        self.write(|tx| keys::create(tx, tenant, name, hash, at))
    }

    fn api_keys(&self, tenant: Option<&str>) -> Result<Vec<ApiKey>, StoreError> {
        self.read(|tx| keys::list(tx, tenant))
    }

    fn revoke_api_key(&self, id: u64, at: Timestamp) -> Result<bool, StoreError> {
        self.write(|tx| keys::revoke(tx, id, at))
    }

    fn tenant_of_api_key(&self, hash: &str) -> Result<Option<String>, StoreError> {
        self.read(|tx| keys::tenant_of(tx, hash))
    }
}
