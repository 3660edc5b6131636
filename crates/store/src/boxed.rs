//! A boxed store is a store: a program that picks its backend at run time (a path or a
//! `postgres://` URL) holds a `Box<dyn Store>` and hands it to the engine like any other.

use epimem_core::{
    ConversationKey, Episode, EpisodeId, Job, JobId, LlmStage, LlmUsage, Message, NewMessage,
    QueueSnapshot, Scope, TimelineNode, Timestamp, TocLevel, TocNode, Trigger,
};

use crate::{
    ApiKey, ConsolidationBatch, ConsolidationCommit, ConversationExport, EpisodeChange,
    EpisodeCursor, EpisodeDetail, IndexedMessage, JobStatus, JobsOf, PendingReview, PushOutcome,
    ReviewedMemory, SegmentationBatch, SegmentationCommit, Stats, Store, StoreError, StoredFact,
};

impl<S: Store + ?Sized> Store for Box<S> {
    fn push_messages(&self, messages: &[NewMessage]) -> Result<Vec<PushOutcome>, StoreError> {
        (**self).push_messages(messages)
    }

    fn out_of_space(&self) -> Option<String> {
        (**self).out_of_space()
    }

    fn pending_messages(
        &self,
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<(ConversationKey, Message)>, StoreError> {
        (**self).pending_messages(scope, limit)
    }

    fn queue(&self, conversation: &ConversationKey) -> Result<Option<QueueSnapshot>, StoreError> {
        (**self).queue(conversation)
    }

    fn pending_queues(
        &self,
        tenant: Option<&str>,
    ) -> Result<Vec<(ConversationKey, QueueSnapshot)>, StoreError> {
        (**self).pending_queues(tenant)
    }

    fn open_segmentation(
        &self,
        conversation: &ConversationKey,
        trigger: Trigger,
        now: Timestamp,
        fence_ttl_ms: i64,
    ) -> Result<Option<JobId>, StoreError> {
        (**self).open_segmentation(conversation, trigger, now, fence_ttl_ms)
    }

    fn segmentation_batch(
        &self,
        conversation: &ConversationKey,
        upto_seq: u64,
        context: usize,
    ) -> Result<SegmentationBatch, StoreError> {
        (**self).segmentation_batch(conversation, upto_seq, context)
    }

    fn commit_segmentation(&self, commit: &SegmentationCommit) -> Result<(), StoreError> {
        (**self).commit_segmentation(commit)
    }

    fn abandon_job(
        &self,
        job: JobId,
        conversation: Option<&ConversationKey>,
        error: &str,
        retry_at: Option<Timestamp>,
    ) -> Result<(), StoreError> {
        (**self).abandon_job(job, conversation, error, retry_at)
    }

    fn renew_lease(&self, job: JobId, worker: &str, until: Timestamp) -> Result<bool, StoreError> {
        (**self).renew_lease(job, worker, until)
    }

    fn jobs(
        &self,
        tenant: &str,
        conversation: Option<&str>,
        now: Timestamp,
        limit: usize,
    ) -> Result<Vec<JobStatus>, StoreError> {
        (**self).jobs(tenant, conversation, now, limit)
    }

    fn claim_job_of(
        &self,
        worker: &str,
        now: Timestamp,
        lease_ms: i64,
        of: JobsOf<'_>,
    ) -> Result<Option<Job>, StoreError> {
        (**self).claim_job_of(worker, now, lease_ms, of)
    }

    fn episodes(
        &self,
        scope: &Scope,
        after: Option<&EpisodeCursor>,
        limit: Option<usize>,
    ) -> Result<Vec<Episode>, StoreError> {
        (**self).episodes(scope, after, limit)
    }

    fn episode(&self, scope: &Scope, id: &EpisodeId) -> Result<Option<EpisodeDetail>, StoreError> {
        (**self).episode(scope, id)
    }

    fn episode_details(
        &self,
        scope: &Scope,
        ids: &[EpisodeId],
    ) -> Result<Vec<EpisodeDetail>, StoreError> {
        (**self).episode_details(scope, ids)
    }

    fn message_vectors(
        &self,
        conversation: &ConversationKey,
        from: u64,
        to: u64,
        fingerprint: &str,
    ) -> Result<Vec<(u64, Vec<f32>)>, StoreError> {
        (**self).message_vectors(conversation, from, to, fingerprint)
    }

    fn put_message_vectors(
        &self,
        conversation: &ConversationKey,
        fingerprint: &str,
        vectors: &[(u64, Vec<f32>)],
    ) -> Result<(), StoreError> {
        (**self).put_message_vectors(conversation, fingerprint, vectors)
    }

    fn indexed_messages_of(
        &self,
        tenant: &str,
        ids: &[EpisodeId],
        fingerprint: Option<&str>,
    ) -> Result<Vec<IndexedMessage>, StoreError> {
        (**self).indexed_messages_of(tenant, ids, fingerprint)
    }

    fn change_generation(&self, tenant: &str) -> Result<u64, StoreError> {
        (**self).change_generation(tenant)
    }

    fn episode_changes(
        &self,
        tenant: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<EpisodeChange>, StoreError> {
        (**self).episode_changes(tenant, after, limit)
    }

    fn episodes_by_id(&self, scope: &Scope, ids: &[EpisodeId]) -> Result<Vec<Episode>, StoreError> {
        (**self).episodes_by_id(scope, ids)
    }

    fn record_pending_review(
        &self,
        conversation: &ConversationKey,
        review: &PendingReview,
    ) -> Result<(), StoreError> {
        (**self).record_pending_review(conversation, review)
    }

    fn reviews_of_job(&self, job: JobId) -> Result<Vec<PendingReview>, StoreError> {
        (**self).reviews_of_job(job)
    }

    fn finish_review(
        &self,
        job: JobId,
        tenant: &str,
        reviewed: &[ReviewedMemory],
    ) -> Result<usize, StoreError> {
        (**self).finish_review(job, tenant, reviewed)
    }

    fn take_pending_reviews(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Vec<PendingReview>, StoreError> {
        (**self).take_pending_reviews(conversation)
    }

    fn edit_episode(
        &self,
        scope: &Scope,
        id: &EpisodeId,
        edit: &crate::EpisodeEdit,
    ) -> Result<Option<Episode>, StoreError> {
        (**self).edit_episode(scope, id, edit)
    }
    fn episode_versions(
        &self,
        scope: &Scope,
        id: &EpisodeId,
    ) -> Result<Vec<crate::EpisodeVersion>, StoreError> {
        (**self).episode_versions(scope, id)
    }
    fn episode_reviews(
        &self,
        scope: &Scope,
        id: &EpisodeId,
    ) -> Result<Vec<epimem_core::FsrsState>, StoreError> {
        (**self).episode_reviews(scope, id)
    }
    fn delete_episode(&self, scope: &Scope, id: &EpisodeId) -> Result<bool, StoreError> {
        (**self).delete_episode(scope, id)
    }

    fn delete_conversation(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Option<Vec<EpisodeId>>, StoreError> {
        (**self).delete_conversation(conversation)
    }

    fn delete_tenant(&self, tenant: &str) -> Result<Vec<EpisodeId>, StoreError> {
        (**self).delete_tenant(tenant)
    }

    fn consolidation_batch(
        &self,
        conversation: &ConversationKey,
        upto_seq: u64,
        max_episodes: usize,
        max_facts: usize,
        fingerprint: Option<&str>,
    ) -> Result<ConsolidationBatch, StoreError> {
        (**self).consolidation_batch(conversation, upto_seq, max_episodes, max_facts, fingerprint)
    }

    fn commit_consolidation(&self, commit: &ConsolidationCommit) -> Result<(), StoreError> {
        (**self).commit_consolidation(commit)
    }

    fn facts(
        &self,
        scope: &Scope,
        with_invalid: bool,
        limit: Option<usize>,
        fingerprint: Option<&str>,
    ) -> Result<Vec<StoredFact>, StoreError> {
        (**self).facts(scope, with_invalid, limit, fingerprint)
    }

    fn tenants(&self) -> Result<Vec<String>, StoreError> {
        (**self).tenants()
    }

    fn timeline_nodes(&self, tenant: &str, level: TocLevel) -> Result<Vec<TocNode>, StoreError> {
        (**self).timeline_nodes(tenant, level)
    }

    fn timeline_checkpoint(&self, tenant: &str) -> Result<u64, StoreError> {
        (**self).timeline_checkpoint(tenant)
    }

    fn mark_timeline(
        &self,
        tenant: &str,
        nodes: &[TocNode],
        through_change: u64,
    ) -> Result<(), StoreError> {
        (**self).mark_timeline(tenant, nodes, through_change)
    }

    fn marked_timeline_nodes(&self, tenant: &str) -> Result<Vec<TocNode>, StoreError> {
        (**self).marked_timeline_nodes(tenant)
    }

    fn put_timeline_node(&self, tenant: &str, node: &TimelineNode) -> Result<u32, StoreError> {
        (**self).put_timeline_node(tenant, node)
    }

    fn timeline_node(
        &self,
        tenant: &str,
        id: &TocNode,
        version: Option<u32>,
    ) -> Result<Option<TimelineNode>, StoreError> {
        (**self).timeline_node(tenant, id, version)
    }

    fn record_llm_usage(
        &self,
        tenant: &str,
        stage: LlmStage,
        usage: &LlmUsage,
    ) -> Result<(), StoreError> {
        (**self).record_llm_usage(tenant, stage, usage)
    }

    fn llm_usage(&self, tenant: Option<&str>) -> Result<Vec<(LlmStage, LlmUsage)>, StoreError> {
        (**self).llm_usage(tenant)
    }

    fn stats(&self, tenant: Option<&str>) -> Result<Stats, StoreError> {
        (**self).stats(tenant)
    }

    fn create_api_key(
        &self,
        tenant: &str,
        name: &str,
        hash: &str,
        at: Timestamp,
    ) -> Result<ApiKey, StoreError> {
        (**self).create_api_key(tenant, name, hash, at)
    }

    fn api_keys(&self, tenant: Option<&str>) -> Result<Vec<ApiKey>, StoreError> {
        (**self).api_keys(tenant)
    }

    fn revoke_api_key(&self, id: u64, at: Timestamp) -> Result<bool, StoreError> {
        (**self).revoke_api_key(id, at)
    }

    fn tenant_of_api_key(&self, hash: &str) -> Result<Option<String>, StoreError> {
        (**self).tenant_of_api_key(hash)
    }

    fn compact(&self) -> Result<(), StoreError> {
        (**self).compact()
    }

    fn conversations(&self, tenant: &str) -> Result<Vec<ConversationKey>, StoreError> {
        (**self).conversations(tenant)
    }

    fn export_conversation(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Option<ConversationExport>, StoreError> {
        (**self).export_conversation(conversation)
    }

    fn import_conversation(&self, export: &ConversationExport) -> Result<(), StoreError> {
        (**self).import_conversation(export)
    }

    fn timeline_export(&self, tenant: &str) -> Result<Vec<TimelineNode>, StoreError> {
        (**self).timeline_export(tenant)
    }

    fn import_timeline(&self, tenant: &str, nodes: &[TimelineNode]) -> Result<(), StoreError> {
        (**self).import_timeline(tenant, nodes)
    }
}
