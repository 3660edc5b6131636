//! Connections that only read, one per concurrent reader: a recall or a listing never waits
//! behind a write (in WAL mode a reader sees the last commit while the writer works).

use std::{
    path::{Path, PathBuf},
    sync::{Mutex, PoisonError},
};

use epimem_store::StoreError;
use rusqlite::{Connection, OpenFlags};

use crate::{BUSY_TIMEOUT, map_err, plan_once};

/// Idle connections kept for the next reads; more are opened when more read at once, and
/// closed again past this many.
const KEEP_IDLE: usize = 8;

#[derive(Debug)]
pub(crate) struct Readers {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl Readers {
    pub(crate) fn new(path: &Path) -> Self {
        Self { path: path.to_path_buf(), idle: Mutex::default() }
    }

    /// Runs `f` in a read transaction (one snapshot for all its statements) on an idle
    /// connection, or a new one.
    pub(crate) fn read<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let taken = self.idle.lock().unwrap_or_else(PoisonError::into_inner).pop();
        let mut conn = match taken {
            Some(conn) => conn,
            None => self.open()?,
        };
        let out = {
            let tx = conn.transaction().map_err(map_err)?;
            f(&tx)
        };
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < KEEP_IDLE {
            idle.push(conn);
        }
        out
    }

    fn open(&self) -> Result<Connection, StoreError> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| {
            StoreError::Unavailable(format!("cannot open {} to read: {e}", self.path.display()))
        })?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(map_err)?;
        plan_once(&conn).map_err(map_err)?;
        conn.execute_batch("PRAGMA cache_size = -16384; PRAGMA mmap_size = 1073741824;")
            .map_err(map_err)?;
        Ok(conn)
    }
}
