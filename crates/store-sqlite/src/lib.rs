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
mod readers;
mod reviews;
mod rows;
mod schema;
mod segmentation;
mod timeline;
mod transfer;
mod usage;
mod vectors;

use std::{path::Path, sync::Mutex, time::Duration};

use epimem_store::StoreError;
use rusqlite::{Connection, OpenFlags, TransactionBehavior};

/// How long a write waits for another process's lock before it fails as unavailable.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// A [`Store`](epimem_store::Store) in one SQLite file.
#[derive(Debug)]
pub struct SqliteStore {
    /// Connections that read the file beside the writer; `None` in memory. Declared first so
    /// they close first: the last connection to close checkpoints the write-ahead log and
    /// removes it, which a read-only one cannot.
    readers: Option<readers::Readers>,
    /// The one connection that writes (and reads, for a database in memory).
    conn: Mutex<Connection>,
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

    /// Runs `f` on the writer's connection (a span for the store method it serves).
    pub(crate) fn with_conn<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        F: FnOnce(&mut Connection) -> Result<T, StoreError>,
    {
        let _span = epimem_store::trace::span::<F>("sqlite").entered();
        self.locked(f)
    }

    fn locked<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn.lock().map_err(|_| {
            StoreError::Internal("a previous operation panicked holding the connection".into())
        })?;
        f(&mut conn)
    }

    /// Runs `f` in a read transaction, beside the writer when the database is a file.
    fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        F: FnOnce(&Connection) -> Result<T, StoreError>,
    {
        let _span = epimem_store::trace::span::<F>("sqlite").entered();
        match &self.readers {
            Some(readers) => readers.read(f),
            None => self.locked(|conn| {
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
    fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        F: FnOnce(&rusqlite::Transaction<'_>) -> Result<T, StoreError>,
    {
        let _span = epimem_store::trace::span::<F>("sqlite").entered();
        let written = self.locked(|conn| {
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
