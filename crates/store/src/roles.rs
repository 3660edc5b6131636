//! The storage port by role: each trait is what one part of the engine asks of a store, and
//! each backend writes it once, in the module of the same job. [`Store`] is all of them.

use epimem_core::{
    ConversationKey, Episode, EpisodeId, FsrsState, Job, JobId, LlmStage, LlmUsage, Message,
    NewMessage, QueueSnapshot, Scope, TimelineNode, Timestamp, TocLevel, TocNode, Trigger,
};

use crate::{
    ApiKey, ConsolidationBatch, ConsolidationCommit, ConversationExport, EpisodeChange,
    EpisodeCursor, EpisodeDetail, EpisodeEdit, EpisodeVersion, HeldMessage, IndexedMessage,
    JobStatus, JobsOf, PendingReview, PushOutcome, ReviewedMemory, SegmentationBatch,
    SegmentationCommit, Stats, StoreError, StoredFact, TakeBack,
};

/// Messages in: appended to their conversations, and the queues they wait in.
pub trait Ingest {
    /// Appends messages to their conversations, creating conversations on first sight.
    /// A message whose key its conversation already holds is skipped. Conversation time only
    /// moves forward: a new message dated before the newest its conversation holds is stored
    /// at that newest time, with the time it was given as `given_timestamp` in its metadata.
    /// Returns, per conversation
    /// touched and in order of first appearance, the queue as it stood right after the push:
    /// its pending count pins the batch a trigger may segment.
    fn push_messages(&self, messages: &[NewMessage]) -> Result<Vec<PushOutcome>, StoreError>;

    /// The queue of one conversation, or `None` if it was never seen.
    fn queue(&self, conversation: &ConversationKey) -> Result<Option<QueueSnapshot>, StoreError>;

    /// Every conversation with pending messages (within `tenant`, if given).
    fn pending_queues(
        &self,
        tenant: Option<&str>,
    ) -> Result<Vec<(ConversationKey, QueueSnapshot)>, StoreError>;

    /// The messages of `scope` not yet in an episode (after each conversation's watermark: its
    /// open tail), newest first, at most `limit`, each with its conversation. Recall searches
    /// them beside the episodes, so a message is found as soon as it is stored.
    fn pending_messages(
        &self,
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<(ConversationKey, Message)>, StoreError>;

    /// A conversation's messages, oldest first: the newest `limit` of those before seq `before`
    /// (of all, when `None`), each with the episode it closed into (`None` while it is in the
    /// open tail). `None` if there is no such conversation.
    fn conversation_messages(
        &self,
        conversation: &ConversationKey,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Option<Vec<HeldMessage>>, StoreError>;

    /// Takes back the conversation's newest message, in one transaction, while it is in the
    /// open tail and no segmentation holds it: the message and its vectors are deleted, and
    /// its id may be sent again.
    fn take_back_newest(&self, conversation: &ConversationKey) -> Result<TakeBack, StoreError>;

    /// Why writes fail for lack of space (a full disk), from the last write that did so
    /// until one stores something again; `None` while writes go through.
    fn out_of_space(&self) -> Option<String> {
        None
    }
}

/// A conversation fenced, its pending messages read, and its episodes committed with the
/// watermark they leave.
pub trait Segmentation {
    /// Compare-and-set: unless another live fence holds the conversation, fences it at
    /// `trigger.upto_seq` and enqueues the segmentation job, in one transaction. A fence older
    /// than `fence_ttl_ms` is stale and cleared. Returns the job (whose id is the fence), or
    /// `None` when someone else holds the conversation.
    fn open_segmentation(
        &self,
        conversation: &ConversationKey,
        trigger: Trigger,
        now: Timestamp,
        fence_ttl_ms: i64,
    ) -> Result<Option<JobId>, StoreError>;

    /// The pending messages up to `upto_seq`, and up to `context` messages just before them.
    fn segmentation_batch(
        &self,
        conversation: &ConversationKey,
        upto_seq: u64,
        context: usize,
    ) -> Result<SegmentationBatch, StoreError>;

    /// In one transaction: checks that `commit.job` still holds the fence and that the episodes
    /// tile the queue from the watermark on, stores the episodes (and their searchable text),
    /// advances the watermark, sets the window flag, releases the fence and retires the job.
    /// Fails with a conflict, changing nothing, if the fence was lost.
    fn commit_segmentation(&self, commit: &SegmentationCommit) -> Result<(), StoreError>;
}

/// Leased jobs: claimed, renewed, given up, listed.
pub trait Jobs {
    /// Records that `job` failed with `error`. With `retry_at` it is queued again, claimable
    /// from then on, and keeps its fence; without, it is parked (kept as failed, never run
    /// again) and releases its fence on `conversation` (if it still holds it), so the
    /// messages can be segmented by a later job.
    fn abandon_job(
        &self,
        job: JobId,
        conversation: Option<&ConversationKey>,
        error: &str,
        retry_at: Option<Timestamp>,
    ) -> Result<(), StoreError>;

    /// Extends `worker`'s lease on `job` to `until`, so a slow job is not taken over; false if
    /// the worker no longer holds it (its lease ran out and another claimed it).
    fn renew_lease(&self, job: JobId, worker: &str, until: Timestamp) -> Result<bool, StoreError>;

    /// The tenant's jobs (of one conversation, when given) that are queued, running, waiting
    /// to be retried or parked, oldest first, at most `limit`; `now` tells running from queued.
    fn jobs(
        &self,
        tenant: &str,
        conversation: Option<&str>,
        now: Timestamp,
        limit: usize,
    ) -> Result<Vec<JobStatus>, StoreError>;

    /// Leases the oldest runnable job to `worker` until `now + lease_ms`. A job whose lease ran
    /// out is runnable again (its worker died).
    fn claim_job(
        &self,
        worker: &str,
        now: Timestamp,
        lease_ms: i64,
    ) -> Result<Option<Job>, StoreError> {
        self.claim_job_of(worker, now, lease_ms, JobsOf::Everyone)
    }

    /// [`Store::claim_job`] among the jobs `of` says only.
    fn claim_job_of(
        &self,
        worker: &str,
        now: Timestamp,
        lease_ms: i64,
        of: JobsOf<'_>,
    ) -> Result<Option<Job>, StoreError>;
}

/// What recall remembered it showed, rated later by a review job.
pub trait Reviews {
    /// Records that a recall in `conversation` returned `episodes` for `query` at `at`, for the
    /// review job to take later.
    fn record_pending_review(
        &self,
        conversation: &ConversationKey,
        review: &PendingReview,
    ) -> Result<(), StoreError>;

    /// The recalls held for review job `job` (a segmentation commit that closes episodes
    /// queues one for the conversation's pending reviews and holds them for it, in its
    /// transaction), oldest first.
    fn reviews_of_job(&self, job: JobId) -> Result<Vec<PendingReview>, StoreError>;

    /// Finishes review job `job` of `tenant` in one transaction: each memory in `reviewed`
    /// takes its new state if its last review is still the one it was rated against (a
    /// memory reviewed meanwhile, or forgotten, is left alone), each change logged for the
    /// search indexes; the job and its recalls go. Returns how many memories changed; fails
    /// with a conflict, changing nothing, if the job is gone.
    fn finish_review(
        &self,
        job: JobId,
        tenant: &str,
        reviewed: &[ReviewedMemory],
    ) -> Result<usize, StoreError>;

    /// Takes (reads and clears, atomically) the pending reviews of `conversation` not yet held
    /// for a review job.
    fn take_pending_reviews(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Vec<PendingReview>, StoreError>;
}

/// Episodes read: listed, by id, in detail, and as the lines a search index holds.
pub trait Episodes {
    /// Episodes visible in `scope`, newest first (by start, then id); those after `after`
    /// only, at most `limit`.
    fn episodes(
        &self,
        scope: &Scope,
        after: Option<&EpisodeCursor>,
        limit: Option<usize>,
    ) -> Result<Vec<Episode>, StoreError>;

    /// One episode with its messages, if `scope` may see it.
    fn episode(&self, scope: &Scope, id: &EpisodeId) -> Result<Option<EpisodeDetail>, StoreError> {
        Ok(self.episode_details(scope, std::slice::from_ref(id))?.pop())
    }

    /// The episodes among `ids` that `scope` may see, with their messages, in the order of
    /// `ids`, read in one snapshot (a recall reads its quoted episodes with one read, not one
    /// per episode).
    fn episode_details(
        &self,
        scope: &Scope,
        ids: &[EpisodeId],
    ) -> Result<Vec<EpisodeDetail>, StoreError>;

    /// Every message of the episodes among `ids` that `tenant` still has, episode by episode (in
    /// the order they were closed) and in sequence order, with its text and (when `fingerprint`
    /// is given) its cached vector of that model: the rows a search index is built from.
    fn indexed_messages_of(
        &self,
        tenant: &str,
        ids: &[EpisodeId],
        fingerprint: Option<&str>,
    ) -> Result<Vec<IndexedMessage>, StoreError>;

    /// The episodes among `ids` that `scope` may see (in no particular order).
    fn episodes_by_id(&self, scope: &Scope, ids: &[EpisodeId]) -> Result<Vec<Episode>, StoreError>;
}

/// The message vectors kept beside the messages, by embedder fingerprint.
pub trait Vectors {
    /// Cached vectors of messages `from..=to` made by the embedder `fingerprint`, by sequence
    /// number. Vectors of other fingerprints are never returned.
    fn message_vectors(
        &self,
        conversation: &ConversationKey,
        from: u64,
        to: u64,
        fingerprint: &str,
    ) -> Result<Vec<(u64, Vec<f32>)>, StoreError>;

    /// Caches message vectors made by `fingerprint` (derived state: replaced if present).
    fn put_message_vectors(
        &self,
        conversation: &ConversationKey,
        fingerprint: &str,
        vectors: &[(u64, Vec<f32>)],
    ) -> Result<(), StoreError>;
}

/// The tenant's change log, which search indexes apply in order.
pub trait ChangeLog {
    /// The number of `tenant`'s newest episode change (0 before any). Every commit that closes
    /// or forgets episodes appends to the tenant's change log, in commit order, whichever
    /// process made it; an index that applied every change up to this number is current.
    fn change_generation(&self, tenant: &str) -> Result<u64, StoreError>;

    /// `tenant`'s episode changes numbered after `after`, oldest first, at most `limit`.
    fn episode_changes(
        &self,
        tenant: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<EpisodeChange>, StoreError>;
}

/// A person's corrections of an episode, and what it told before.
pub trait Edits {
    /// Changes an episode's title and summary (each one given), keeping what they said as a
    /// version, and logs the episode as forgotten and closed again so that every search index
    /// takes its new words (and the timeline its day). Returns the episode as it now is, or
    /// `None` if `scope` sees no such episode.
    fn edit_episode(
        &self,
        scope: &Scope,
        id: &EpisodeId,
        edit: &EpisodeEdit,
    ) -> Result<Option<Episode>, StoreError>;

    /// The earlier titles and summaries of an episode, oldest first (empty if it was never
    /// edited, or `scope` sees no such episode). They go when the episode is forgotten.
    fn episode_versions(
        &self,
        scope: &Scope,
        id: &EpisodeId,
    ) -> Result<Vec<EpisodeVersion>, StoreError>;

    /// The memory states an episode took from each review it received, oldest first (empty
    /// if it was never reviewed, or `scope` sees no such episode). They go when it is
    /// forgotten.
    fn episode_reviews(&self, scope: &Scope, id: &EpisodeId) -> Result<Vec<FsrsState>, StoreError>;
}

/// Deletion that leaves the forgotten text in no file.
pub trait Forgetting {
    /// Forgets an episode that `scope` may see, in one transaction: the episode, its messages'
    /// vectors, the facts that came from it and the pending reviews that returned it (their
    /// query may quote it) go, and its messages lose their text (speaker and metadata too) but
    /// keep their place in the conversation, so episodes still tile the queue. Once this returns, the text is in no file the
    /// store writes (unless another process's open read holds an older copy, which goes at
    /// the store's next compaction). Returns whether there was such an episode.
    fn delete_episode(&self, scope: &Scope, id: &EpisodeId) -> Result<bool, StoreError>;

    /// Forgets a conversation whole, in one transaction: its messages, episodes, vectors,
    /// pending reviews and queued jobs, as [`Store::delete_episode`] does for one episode.
    /// Returns the ids of the episodes it had, or `None` if there was no such conversation.
    fn delete_conversation(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Option<Vec<EpisodeId>>, StoreError>;

    /// Forgets every conversation of `tenant`, in one transaction, as
    /// [`Store::delete_conversation`] does for one (its API keys stay: they are not memory).
    /// Returns the ids of the episodes it had.
    fn delete_tenant(&self, tenant: &str) -> Result<Vec<EpisodeId>, StoreError>;

    /// Forgets every conversation of `user` within `tenant`, in one transaction, as
    /// [`Store::delete_conversation`] does for one; the tenant's timeline loses the days that
    /// told their episodes, to be told again from what remains. Returns the ids of the
    /// episodes they had.
    fn delete_user(&self, tenant: &str, user: &str) -> Result<Vec<EpisodeId>, StoreError>;

    /// Rewrites the database's files so that nothing forgotten is left in them, and returns
    /// the space it held. SQLite zeroes what a forget frees as it goes, so this only reclaims
    /// space there; PostgreSQL keeps deleted rows' bytes in its table files until they are
    /// rewritten, which this does (it locks each table while it does: run it when the load
    /// allows). A row that a transaction open elsewhere at that moment may still see is kept
    /// by the rewrite, and goes at the next compact.
    fn compact(&self) -> Result<(), StoreError>;
}

/// Facts distilled from episodes: a consolidation's batch and its commit, and the facts.
pub trait Facts {
    /// What a consolidation of `conversation` reads: its episodes not yet consolidated that end
    /// by `upto_seq` (at most `max_episodes`, oldest first, with their messages), and its valid
    /// facts (at most `max_facts`, newest first; vectors of `fingerprint`).
    fn consolidation_batch(
        &self,
        conversation: &ConversationKey,
        upto_seq: u64,
        max_episodes: usize,
        max_facts: usize,
        fingerprint: Option<&str>,
    ) -> Result<ConsolidationBatch, StoreError>;

    /// Applies one step of a consolidation in one transaction: facts inserted (a fact already
    /// there is left as it is, so a retried step writes nothing twice), confirmed (its sources
    /// grow) or invalidated (from the given time; a fact is never deleted here), the
    /// conversation consolidated through `through_seq`, and the job retired when `finished`.
    /// Changes to facts of other conversations are refused. Fails with a conflict, changing
    /// nothing, if the job is gone. Without a job, the facts are given whole (an import).
    fn commit_consolidation(&self, commit: &ConsolidationCommit) -> Result<(), StoreError>;

    /// Facts `scope` may see (its tenant, its conversation if given), newest first (by when
    /// they became true), only valid ones unless `with_invalid`, at most `limit`; with their
    /// vectors of `fingerprint`.
    fn facts(
        &self,
        scope: &Scope,
        with_invalid: bool,
        limit: Option<usize>,
        fingerprint: Option<&str>,
    ) -> Result<Vec<StoredFact>, StoreError>;
}

/// What moves a memory between stores: conversations and the timeline, out and in.
pub trait Transfer {
    /// The conversations of `tenant`, in the order they were first seen.
    /// Writes a consistent copy of the whole database to the new file `dest` while others go
    /// on writing: all that was committed when the copy began, nothing after. Only a database
    /// that is a file can; a PostgreSQL database is backed up with its own tools (`pg_dump`).
    fn backup_to(&self, dest: &std::path::Path) -> Result<(), StoreError>;

    fn conversations(&self, tenant: &str) -> Result<Vec<ConversationKey>, StoreError>;

    /// Everything stored of a conversation (see [`ConversationExport`]), read in one snapshot;
    /// `None` if there is no such conversation.
    fn export_conversation(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Option<ConversationExport>, StoreError>;

    /// Stores a conversation another store exported, in one transaction: its episodes are
    /// logged as closed for the search indexes (and the timeline); none of its jobs come
    /// along. Fails with a conflict, changing nothing, if the conversation exists, and as
    /// invalid if the export does not hold together ([`ConversationExport::check`]).
    fn import_conversation(&self, export: &ConversationExport) -> Result<(), StoreError>;

    /// Every version of every node of `tenant`'s timeline, by node and version.
    fn timeline_export(&self, tenant: &str) -> Result<Vec<TimelineNode>, StoreError>;

    /// Stores timeline nodes another store exported (a version already here is left as it
    /// is) and records that the timeline has taken in `tenant`'s change log as it stands, so
    /// the episodes just imported do not have their days told again.
    fn import_timeline(&self, tenant: &str, nodes: &[TimelineNode]) -> Result<(), StoreError>;
}

/// The timeline's periods: marked when their episodes change, written when rolled up.
pub trait Timeline {
    /// Every tenant with a conversation, in name order.
    fn tenants(&self) -> Result<Vec<String>, StoreError>;

    /// The nodes of `tenant`'s timeline at `level` that have been written, in time order.
    fn timeline_nodes(&self, tenant: &str, level: TocLevel) -> Result<Vec<TocNode>, StoreError>;

    /// The change of `tenant`'s change log its timeline has taken in (0 before any).
    fn timeline_checkpoint(&self, tenant: &str) -> Result<u64, StoreError>;

    /// In one transaction: marks `nodes` of `tenant`'s timeline as needing a rollup, and
    /// records that its timeline has taken in the change log through `through_change`.
    fn mark_timeline(
        &self,
        tenant: &str,
        nodes: &[TocNode],
        through_change: u64,
    ) -> Result<(), StoreError>;

    /// The nodes of `tenant`'s timeline marked as needing a rollup.
    fn marked_timeline_nodes(&self, tenant: &str) -> Result<Vec<TocNode>, StoreError>;

    /// In one transaction: writes `node` as the newest version of its id in `tenant`'s
    /// timeline, unless the newest already says the same (summary and children), and clears
    /// its mark. Returns the newest version (`node.version` is not read). A node without
    /// children is not written (0); nor is one that names a child gone since it was read (an
    /// episode forgotten or its tenant deleted meanwhile, a period's node removed), whose mark
    /// stays (0): its words would come back. Forgetting an episode removes every version of
    /// the timeline nodes whose words came from it and marks them to be written again.
    fn put_timeline_node(&self, tenant: &str, node: &TimelineNode) -> Result<u32, StoreError>;

    /// A node of `tenant`'s timeline: the newest version, or `version`.
    fn timeline_node(
        &self,
        tenant: &str,
        id: &TocNode,
        version: Option<u32>,
    ) -> Result<Option<TimelineNode>, StoreError>;
}

/// What the store holds, and what language-model calls cost.
pub trait Usage {
    /// Adds what calls to a language model for `tenant` cost to its running totals for `stage`.
    fn record_llm_usage(
        &self,
        tenant: &str,
        stage: LlmStage,
        usage: &LlmUsage,
    ) -> Result<(), StoreError>;

    /// The running totals of language model calls per stage (of `tenant`, if given; all
    /// tenants' summed otherwise), stages never called left out, in stage order.
    fn llm_usage(&self, tenant: Option<&str>) -> Result<Vec<(LlmStage, LlmUsage)>, StoreError>;

    /// Counts (within `tenant`, if given).
    fn stats(&self, tenant: Option<&str>) -> Result<Stats, StoreError>;
}

/// API keys, kept by hash.
pub trait ApiKeys {
    /// Stores an API key for `tenant` by its hash (the key itself is never stored).
    fn create_api_key(
        &self,
        tenant: &str,
        name: &str,
        hash: &str,
        at: Timestamp,
    ) -> Result<ApiKey, StoreError>;

    /// The keys (of `tenant`, if given), revoked ones too, oldest first.
    fn api_keys(&self, tenant: Option<&str>) -> Result<Vec<ApiKey>, StoreError>;

    /// Revokes key `id` at `at`; whether there was such a key not yet revoked.
    fn revoke_api_key(&self, id: u64, at: Timestamp) -> Result<bool, StoreError>;

    /// The tenant of the key whose hash is `hash`, unless it was revoked.
    fn tenant_of_api_key(&self, hash: &str) -> Result<Option<String>, StoreError>;
}

/// Durable state of epimem: every role. Methods are synchronous and safe to call from many
/// threads and processes at once; each is atomic.
///
/// Two clocks appear here. Conversation time lives in the data. `now` arguments are wall-clock
/// time, used only for fences and leases, and are passed in so tests control them.
pub trait Store:
    Ingest
    + Segmentation
    + Jobs
    + Reviews
    + Episodes
    + Vectors
    + ChangeLog
    + Edits
    + Forgetting
    + Facts
    + Transfer
    + Timeline
    + Usage
    + ApiKeys
    + Send
    + Sync
{
}

impl<T> Store for T where
    T: Ingest
        + Segmentation
        + Jobs
        + Reviews
        + Episodes
        + Vectors
        + ChangeLog
        + Edits
        + Forgetting
        + Facts
        + Transfer
        + Timeline
        + Usage
        + ApiKeys
        + Send
        + Sync
{
}
