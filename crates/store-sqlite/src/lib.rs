//! The embedded SQLite backend: one file, WAL, versioned migrations.
//!
//! This is the only crate that knows SQL for SQLite. Writes take the database lock up front
//! (`BEGIN IMMEDIATE`) so concurrent processes queue on the busy timeout instead of failing
//! halfway through a transaction.

mod changes;
mod edits;
mod episodes;
mod facts;
mod forget;
mod ingest;
mod jobs;
mod keys;
mod llm_usage;
mod readers;
mod reviews;
mod rows;
mod schema;
mod segmentation;
mod stats;
mod timeline;
mod transfer;
mod vectors;

use std::{path::Path, sync::Mutex, time::Duration};

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
use rusqlite::{Connection, OpenFlags, TransactionBehavior};

/// How long a write waits for another process's lock before it fails as unavailable.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// A [`Store`] in one SQLite file.
#[derive(Debug)]
pub struct SqliteStore {
    /// The one connection that writes (and reads, for a database in memory).
    conn: Mutex<Connection>,
    /// Connections that read the file beside it; `None` in memory.
    readers: Option<readers::Readers>,
    /// Whether writes fail for lack of space.
    space: epimem_store::SpaceWatch,
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_waiting(path, BUSY_TIMEOUT)
    }

    /// [`SqliteStore::open`], waiting at most `busy` for another process's lock (opening and
    /// every write): a caller that must answer at once (a coding agent's hook) gives up early.
    pub fn open_waiting(path: &Path, busy: Duration) -> Result<Self, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                StoreError::Unavailable(format!("cannot create {}: {e}", dir.display()))
            })?;
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| StoreError::Unavailable(format!("cannot open {}: {e}", path.display())))?;
        let mut store = Self::init(conn, busy)?;
        store.readers = Some(readers::Readers::new(path));
        Ok(store)
    }

    /// A private in-memory database, for tests.
    pub fn open_in_memory() -> Result<Self, StoreError> {
        Self::init(Connection::open_in_memory().map_err(map_err)?, BUSY_TIMEOUT)
    }

    fn init(mut conn: Connection, busy: Duration) -> Result<Self, StoreError> {
        conn.busy_timeout(busy).map_err(map_err)?;
        // Switching to WAL takes the database lock without waiting on the busy timeout, so
        // processes opening a new database at once retry it (within the same time).
        let started = std::time::Instant::now();
        loop {
            match Self::prepare(&mut conn) {
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::DatabaseBusy && started.elapsed() < busy =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => break other.map_err(map_err)?,
            }
        }
        schema::migrate(&mut conn)?;
        Ok(Self { conn: Mutex::new(conn), readers: None, space: Default::default() })
    }

    fn prepare(conn: &mut Connection) -> rusqlite::Result<()> {
        // journal_mode answers with a row, so it is read rather than executed.
        let _mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        // A larger page cache and memory-mapped reads keep index rebuilds off read() calls;
        // secure_delete zeroes what deletes free, so forgotten text leaves the file.
        plan_once(conn)?;
        conn.execute_batch(
            "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;
             PRAGMA cache_size = -65536; PRAGMA mmap_size = 1073741824;
             PRAGMA secure_delete = ON;",
        )
    }

    pub(crate) fn with_conn<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn.lock().map_err(|_| {
            StoreError::Internal("a previous operation panicked holding the connection".into())
        })?;
        f(&mut conn)
    }

    /// Runs `f` in a read transaction, beside the writer when the database is a file.
    fn read<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        match &self.readers {
            Some(readers) => readers.read(f),
            None => self.with_conn(|conn| {
                let tx = conn.transaction().map_err(map_err)?;
                f(&tx)
            }),
        }
    }

    /// Runs a forgetting write `f`; when `forgot` says it removed something, checkpoints so the
    /// text leaves the write-ahead log too.
    fn forget<T>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, StoreError>,
        forgot: impl FnOnce(&T) -> bool,
    ) -> Result<T, StoreError> {
        let out = self.write(f)?;
        if forgot(&out) {
            self.with_conn(|conn| forget::checkpoint(conn))?;
        }
        Ok(out)
    }

    /// Runs `f` in a write transaction, committed only if `f` succeeds.
    fn write<T>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let written = self.with_conn(|conn| {
            let before = conn.total_changes();
            let tx =
                conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(map_err)?;
            let out = f(&tx)?;
            tx.commit().map_err(map_err)?;
            Ok((out, conn.total_changes() > before))
        });
        self.space.note(&written);
        written.map(|(out, _)| out)
    }
}

/// Maps SQLite failures onto the storage error kinds.
pub(crate) fn map_err(e: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode;
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            StoreError::Unavailable(e.to_string())
        }
        Some(ErrorCode::DiskFull) => StoreError::Full(e.to_string()),
        Some(
            ErrorCode::CannotOpen
            | ErrorCode::ReadOnly
            | ErrorCode::SystemIoFailure
            | ErrorCode::PermissionDenied,
        ) => StoreError::Unavailable(e.to_string()),
        Some(ErrorCode::ConstraintViolation) => StoreError::Conflict(e.to_string()),
        _ => StoreError::Internal(e.to_string()),
    }
}

/// Plans each cached statement once, whatever is bound to it. Without this, a statement
/// whose filters read `?N IS NULL OR column = ?N` is planned anew every time a value is bound
/// (SQLite would look for a better plan for the value), which was most of a recall's time;
/// our plans do not depend on the values.
pub(crate) fn plan_once(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true).map(drop)
}

impl Store for SqliteStore {
    fn out_of_space(&self) -> Option<String> {
        self.space.get()
    }

    fn push_messages(&self, messages: &[NewMessage]) -> Result<Vec<PushOutcome>, StoreError> {
        if messages.is_empty() {
            return Ok(Vec::new());
        }
        self.write(|tx| ingest::push(tx, messages))
    }

    fn queue(&self, conversation: &ConversationKey) -> Result<Option<QueueSnapshot>, StoreError> {
        self.read(|conn| ingest::queue(conn, conversation))
    }

    fn pending_queues(
        &self,
        tenant: Option<&str>,
    ) -> Result<Vec<(ConversationKey, QueueSnapshot)>, StoreError> {
        self.read(|conn| ingest::pending_queues(conn, tenant))
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

    fn pending_messages(
        &self,
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<(ConversationKey, Message)>, StoreError> {
        self.read(|conn| ingest::pending_messages(conn, scope, limit))
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
        self.read(|conn| jobs::list(conn, tenant, conversation, now, limit))
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
        self.read(|conn| episodes::list(conn, scope, after, limit))
    }

    fn episode_details(
        &self,
        scope: &Scope,
        ids: &[EpisodeId],
    ) -> Result<Vec<EpisodeDetail>, StoreError> {
        self.read(|tx| {
            let mut found = Vec::with_capacity(ids.len());
            for id in ids {
                found.extend(episodes::detail(tx, scope, id)?);
            }
            Ok(found)
        })
    }

    fn message_vectors(
        &self,
        conversation: &ConversationKey,
        from: u64,
        to: u64,
        fingerprint: &str,
    ) -> Result<Vec<(u64, Vec<f32>)>, StoreError> {
        self.read(|conn| vectors::message_vectors(conn, conversation, from, to, fingerprint))
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
        self.read(|conn| episodes::indexed_messages(conn, tenant, ids, fingerprint))
    }

    fn change_generation(&self, tenant: &str) -> Result<u64, StoreError> {
        self.read(|conn| changes::generation(conn, tenant))
    }

    fn episode_changes(
        &self,
        tenant: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<EpisodeChange>, StoreError> {
        self.read(|conn| changes::since(conn, tenant, after, limit))
    }

    fn episodes_by_id(&self, scope: &Scope, ids: &[EpisodeId]) -> Result<Vec<Episode>, StoreError> {
        self.read(|conn| episodes::by_id(conn, scope, ids))
    }

    fn record_pending_review(
        &self,
        conversation: &ConversationKey,
        review: &PendingReview,
    ) -> Result<(), StoreError> {
        self.write(|tx| reviews::record(tx, conversation, review))
    }

    fn reviews_of_job(&self, job: JobId) -> Result<Vec<PendingReview>, StoreError> {
        self.read(|conn| reviews::of_job(conn, job))
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
        // The old text is kept as a version, and the freed bytes are zeroed (secure_delete).
        if !self.forget(|tx| edits::edit(tx, scope, id, edit), |&found| found)? {
            return Ok(None);
        }
        Ok(self.episodes_by_id(scope, std::slice::from_ref(id))?.into_iter().next())
    }

    fn episode_versions(
        &self,
        scope: &Scope,
        id: &EpisodeId,
    ) -> Result<Vec<EpisodeVersion>, StoreError> {
        self.read(|conn| edits::versions(conn, scope, id))
    }

    fn episode_reviews(&self, scope: &Scope, id: &EpisodeId) -> Result<Vec<FsrsState>, StoreError> {
        self.read(|conn| edits::reviews(conn, scope, id))
    }

    fn delete_episode(&self, scope: &Scope, id: &EpisodeId) -> Result<bool, StoreError> {
        self.forget(|tx| forget::episode(tx, scope, id), |&found| found)
    }

    fn delete_conversation(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Option<Vec<EpisodeId>>, StoreError> {
        self.forget(|tx| forget::conversation(tx, conversation), Option::is_some)
    }

    fn delete_tenant(&self, tenant: &str) -> Result<Vec<EpisodeId>, StoreError> {
        self.forget(|tx| forget::tenant(tx, tenant), |_| true)
    }

    fn delete_user(&self, tenant: &str, user: &str) -> Result<Vec<EpisodeId>, StoreError> {
        self.forget(|tx| forget::user(tx, tenant, user), |_| true)
    }

    fn consolidation_batch(
        &self,
        conversation: &ConversationKey,
        upto_seq: u64,
        max_episodes: usize,
        max_facts: usize,
        fingerprint: Option<&str>,
    ) -> Result<ConsolidationBatch, StoreError> {
        self.read(|conn| {
            facts::batch(conn, conversation, upto_seq, max_episodes, max_facts, fingerprint)
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
        self.read(|conn| facts::list(conn, scope, with_invalid, limit, fingerprint))
    }

    fn compact(&self) -> Result<(), StoreError> {
        self.with_conn(|conn| {
            conn.execute_batch("VACUUM").map_err(map_err)?;
            forget::checkpoint(conn).map(drop)
        })
    }

    fn conversations(&self, tenant: &str) -> Result<Vec<ConversationKey>, StoreError> {
        self.read(|conn| transfer::conversations(conn, tenant))
    }

    fn export_conversation(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Option<ConversationExport>, StoreError> {
        self.read(|conn| transfer::export(conn, conversation))
    }

    fn import_conversation(&self, export: &ConversationExport) -> Result<(), StoreError> {
        self.write(|tx| transfer::import(tx, export))
    }

    fn timeline_export(&self, tenant: &str) -> Result<Vec<TimelineNode>, StoreError> {
        self.read(|conn| transfer::timeline(conn, tenant))
    }

    fn import_timeline(&self, tenant: &str, nodes: &[TimelineNode]) -> Result<(), StoreError> {
        self.write(|tx| transfer::import_timeline(tx, tenant, nodes))
    }

    fn tenants(&self) -> Result<Vec<String>, StoreError> {
        self.read(timeline::tenants)
    }

    fn timeline_nodes(&self, tenant: &str, level: TocLevel) -> Result<Vec<TocNode>, StoreError> {
        self.read(|conn| timeline::written(conn, tenant, level))
    }

    fn timeline_checkpoint(&self, tenant: &str) -> Result<u64, StoreError> {
        self.read(|conn| timeline::checkpoint(conn, tenant))
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
        self.read(|conn| timeline::marked(conn, tenant))
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
        self.read(|conn| timeline::get(conn, tenant, id, version))
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
        self.read(|conn| llm_usage::totals(conn, tenant))
    }

    fn stats(&self, tenant: Option<&str>) -> Result<Stats, StoreError> {
        self.read(|conn| stats::stats(conn, tenant))
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
        self.read(|conn| keys::list(conn, tenant))
    }

    fn revoke_api_key(&self, id: u64, at: Timestamp) -> Result<bool, StoreError> {
        self.write(|tx| keys::revoke(tx, id, at))
    }

    fn tenant_of_api_key(&self, hash: &str) -> Result<Option<String>, StoreError> {
        self.read(|conn| keys::tenant_of(conn, hash))
    }
}
