//! The PostgreSQL backend: one store shared by many servers and workers.
//!
//! This is the only crate that knows SQL for PostgreSQL. It keeps the same rows as the SQLite
//! backend, in the same shapes, and passes the same conformance suite; what differs is how
//! writers meet: they run at `SERIALIZABLE` and are run again when PostgreSQL aborts one
//! (`connection.rs`), jobs are claimed with `FOR UPDATE SKIP LOCKED`, and the change log is
//! numbered per tenant through a counter row each appending transaction holds until it commits.

mod changes;
mod connection;
mod edits;
mod episodes;
mod facts;
mod forget;
mod ingest;
mod jobs;
mod keys;
mod reviews;
mod rows;
mod schema;
mod search;
mod segmentation;
mod timeline;
mod tls;
mod transfer;
mod usage;
mod vectors;

#[cfg(feature = "test-support")]
pub mod test_support;

use std::time::Duration;

use epimem_store::StoreError;

pub use search::PostgresSearch;

use connection::{Access, Failure, Manager, Tx};

/// The tables whose rows hold text or vectors of messages, episodes or facts.
const TEXT_TABLES: [&str; 10] = [
    "messages",
    "episodes",
    "episode_versions",
    "episode_reviews",
    "message_vectors",
    "pending_reviews",
    "facts",
    "fact_sources",
    "timeline_nodes",
    "jobs",
];

/// How many connections one process keeps open at most.
const POOL_SIZE: u32 = 16;

/// How long an operation waits for a free connection (or for the server to answer a new one).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// A [`epimem_store::Store`] in a PostgreSQL database.
#[derive(Debug)]
pub struct PostgresStore {
    pool: r2d2::Pool<Manager>,
    /// Whether writes fail for lack of space on the server.
    space: epimem_store::SpaceWatch,
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user@host:port/db`, with `?options=-c
    /// search_path=…` for a schema of its own) and brings its schema up to date.
    pub fn connect(url: &str) -> Result<Self, StoreError> {
        let (mut config, tls) = tls::parse_url(url)
            .map_err(|e| StoreError::Invalid(format!("{}: {e}", redacted(url))))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("epimem");
        let manager = Manager { config, tls };
        // One connection first: a refused certificate, password or database is said at once,
        // with its cause, instead of after the pool's timeout.
        r2d2::ManageConnection::connect(&manager).map_err(|e| {
            let cause = causes(&e);
            let hint = if cause.contains("certificate") {
                " (a server whose certificate comes from a CA of its own needs \
                 sslrootcert=/path/to/ca.pem in the URL)"
            } else {
                ""
            };
            StoreError::Unavailable(format!("cannot connect to {}: {cause}{hint}", redacted(url)))
        })?;
        let pool = r2d2::Pool::builder()
            .max_size(POOL_SIZE)
            .min_idle(Some(1))
            .connection_timeout(CONNECT_TIMEOUT)
            // The pool's own log would print every failed attempt; the error says it once.
            .error_handler(Box::new(r2d2::NopErrorHandler))
            .build(manager)
            .map_err(|e| {
                StoreError::Unavailable(format!("cannot connect to {}: {e}", redacted(url)))
            })?;
        let store = Self { pool, space: Default::default() };
        store.write(schema::migrate)?;
        Ok(store)
    }

    /// The schema version of the database and the newest this build knows.
    pub fn schema_version(&self) -> Result<(u64, u64), StoreError> {
        let current = self.read(|tx| {
            Ok(tx.query_one("SELECT version FROM epimem_schema", &[])?.get::<_, i64>(0))
        })?;
        Ok((current.max(0) as u64, schema::newest() as u64))
    }

    /// Rewrites every table that holds text (its indexes and TOAST with it), so that deleted
    /// rows' bytes leave the table files, then turns the write-ahead log over: a checkpoint,
    /// a switch to a new segment and another checkpoint leave every segment written before
    /// the rewrite unneeded, and the server removes them (deletes them where `wal_recycle`
    /// is off; with it on, as by default, it renames them for reuse and overwrites them
    /// later).
    fn compact_tables(&self) -> Result<(), StoreError> {
        let mut conn = self.connection()?;
        for table in TEXT_TABLES {
            conn.outside_transaction(&format!("VACUUM (FULL) {table}"))?;
        }
        // The search tables, if search lives in this database.
        for table in search::TEXT_TABLES {
            let exists = self.read(|tx| {
                let row = tx.query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])?;
                Ok(row.get::<_, bool>(0))
            })?;
            if exists {
                conn.outside_transaction(&format!("VACUUM (FULL) {table}"))?;
            }
        }
        conn.outside_transaction("CHECKPOINT")?;
        match conn.outside_transaction("SELECT pg_switch_wal()") {
            Ok(()) => conn.outside_transaction("CHECKPOINT"),
            // Switching needs a superuser (or a grant): without it the log turns over as the
            // server writes on, and the tables are compacted all the same.
            Err(StoreError::Internal(m)) if m.contains("permission denied") => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn connection(&self) -> Result<r2d2::PooledConnection<Manager>, StoreError> {
        self.pool.get().map_err(|e| StoreError::Unavailable(format!("PostgreSQL: {e}")))
    }

    /// Runs `f` in a read-only transaction: one snapshot.
    fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        F: FnMut(&mut Tx<'_>) -> Result<T, Failure>,
    {
        let _span = epimem_store::trace::span::<F>("postgresql").entered();
        connection::run(&mut *self.connection()?, Access::Read, f)
    }

    /// Runs `f` in a serializable write transaction, again if a conflict aborts it.
    fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        F: FnMut(&mut Tx<'_>) -> Result<T, Failure>,
    {
        let _span = epimem_store::trace::span::<F>("postgresql").entered();
        // A write that went through says the server has space again (one that changed
        // nothing may not have needed any, which is close enough for a readiness check).
        let written =
            connection::run(&mut *self.connection()?, Access::Write, f).map(|t| (t, true));
        self.space.note(&written);
        written.map(|(out, _)| out)
    }
}

/// `url` without its password, for messages.
fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            match credentials.find(':') {
                Some(colon) => {
                    format!("{}{}:***{}", &url[..scheme + 3], &credentials[..colon], &url[at..])
                }
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// An error and its causes, as one line ("error performing TLS handshake: invalid peer
/// certificate: UnknownIssuer").
fn causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_stay_out_of_messages() {
        assert_eq!(redacted("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(redacted("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redacted("host=h user=u"), "host=h user=u");
        let err = PostgresStore::connect("postgres://u:secret@[bad/db").unwrap_err();
        assert!(!err.to_string().contains("secret"), "{err}");
    }
}
