//! Connections, their pool, and transactions that retry when PostgreSQL says to.
//!
//! Every write runs at `SERIALIZABLE`: the store's operations were written as a sequence of
//! reads and writes that must appear to run alone (as they do on SQLite, which has one
//! writer), and PostgreSQL aborts a transaction that would break that instead of blocking it.
//! Such a transaction is run again from the start, after a short pause that grows with each
//! attempt. Reads run at `REPEATABLE READ`, read only: one snapshot, never aborted.

use std::{collections::HashMap, time::Duration};

use epimem_store::StoreError;
use postgres::{IsolationLevel, NoTls, Row, Statement, error::SqlState, types::ToSql};

/// How many times a transaction aborted by a conflict is run again before the caller is told.
const MAX_ATTEMPTS: u32 = 60;

/// A connection with the statements it has prepared (each is prepared once per connection).
pub(crate) struct Connection {
    client: postgres::Client,
    statements: HashMap<String, Statement>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").field("statements", &self.statements.len()).finish()
    }
}

/// Opens connections for the pool.
#[derive(Debug)]
pub(crate) struct Manager {
    pub(crate) config: postgres::Config,
    pub(crate) tls: crate::tls::Tls,
}

impl r2d2::ManageConnection for Manager {
    type Connection = Connection;
    type Error = postgres::Error;

    fn connect(&self) -> Result<Connection, postgres::Error> {
        let client = match &self.tls {
            crate::tls::Tls::Plain => self.config.connect(NoTls)?,
            crate::tls::Tls::Rustls(tls) => self.config.connect(tls.clone())?,
        };
        Ok(Connection { client, statements: HashMap::new() })
    }

    fn is_valid(&self, conn: &mut Connection) -> Result<(), postgres::Error> {
        conn.client.simple_query("").map(drop)
    }

    fn has_broken(&self, conn: &mut Connection) -> bool {
        conn.client.is_closed()
    }
}

impl Connection {
    /// Runs `sql` on its own, outside any transaction (`VACUUM` refuses to run in one).
    pub(crate) fn outside_transaction(&mut self, sql: &str) -> Result<(), StoreError> {
        self.client.batch_execute(sql).map_err(map_db)
    }
}

/// What a step of a transaction can fail with: the store's own errors, or the database's,
/// which [`run`] may answer by running the transaction again.
#[derive(Debug)]
pub(crate) enum Failure {
    Store(StoreError),
    Db(postgres::Error),
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

impl From<postgres::Error> for Failure {
    fn from(e: postgres::Error) -> Self {
        Self::Db(e)
    }
}

impl Failure {
    /// Whether PostgreSQL aborted the transaction for a conflict with another one.
    fn retryable(&self) -> bool {
        matches!(self, Self::Db(e) if e.code().is_some_and(|c| {
            *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
        }))
    }

    pub(crate) fn into_store(self) -> StoreError {
        match self {
            Self::Store(e) => e,
            Self::Db(e) => map_db(e),
        }
    }
}

/// Maps PostgreSQL failures onto the storage error kinds.
pub(crate) fn map_db(e: postgres::Error) -> StoreError {
    let message = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    };
    let Some(code) = e.code() else {
        // No SQLSTATE: the connection failed or closed.
        return StoreError::Unavailable(format!("PostgreSQL: {message}"));
    };
    if *code == SqlState::DISK_FULL {
        return StoreError::Full(format!("PostgreSQL: {message}"));
    }
    match &code.code()[..2] {
        // Connection exceptions, insufficient resources, operator intervention, and
        // conflicts that outlasted every retry.
        "08" | "53" | "57" | "40" => StoreError::Unavailable(format!("PostgreSQL: {message}")),
        // Integrity constraint violations.
        "23" => StoreError::Conflict(message),
        // Data exceptions: text PostgreSQL cannot hold (a NUL character), a number too large.
        "22" => StoreError::Invalid(message),
        _ => StoreError::Internal(format!("PostgreSQL: {message}")),
    }
}

/// A transaction on a pooled connection, preparing each statement once per connection.
pub(crate) struct Tx<'a> {
    tx: postgres::Transaction<'a>,
    statements: &'a mut HashMap<String, Statement>,
}

/// A parameter list.
pub(crate) type Params<'p> = [&'p (dyn ToSql + Sync)];

impl Tx<'_> {
    fn statement(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let prepared = self.tx.prepare(sql)?;
        self.statements.insert(sql.to_owned(), prepared.clone());
        Ok(prepared)
    }

    pub(crate) fn query(&mut self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>, Failure> {
        let statement = self.statement(sql)?;
        Ok(self.tx.query(&statement, params)?)
    }

    pub(crate) fn query_opt(
        &mut self,
        sql: &str,
        params: &Params<'_>,
    ) -> Result<Option<Row>, Failure> {
        let statement = self.statement(sql)?;
        Ok(self.tx.query_opt(&statement, params)?)
    }

    pub(crate) fn query_one(&mut self, sql: &str, params: &Params<'_>) -> Result<Row, Failure> {
        let statement = self.statement(sql)?;
        Ok(self.tx.query_one(&statement, params)?)
    }

    pub(crate) fn execute(&mut self, sql: &str, params: &Params<'_>) -> Result<u64, Failure> {
        let statement = self.statement(sql)?;
        Ok(self.tx.execute(&statement, params)?)
    }

    /// Runs statements without parameters (a migration).
    pub(crate) fn batch(&mut self, sql: &str) -> Result<(), Failure> {
        Ok(self.tx.batch_execute(sql)?)
    }
}

/// Whether a transaction writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
}

/// Runs `f` in a transaction on `conn`, committed only if `f` succeeds; a write aborted by a
/// conflict with another transaction is run again.
pub(crate) fn run<T>(
    conn: &mut Connection,
    access: Access,
    mut f: impl FnMut(&mut Tx<'_>) -> Result<T, Failure>,
) -> Result<T, StoreError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let outcome: Result<T, Failure> = (|| {
            let builder = conn.client.build_transaction();
            let tx = match access {
                Access::Read => {
                    builder.isolation_level(IsolationLevel::RepeatableRead).read_only(true)
                }
                Access::Write => builder.isolation_level(IsolationLevel::Serializable),
            }
            .start()?;
            let mut tx = Tx { tx, statements: &mut conn.statements };
            let out = f(&mut tx)?;
            tx.tx.commit()?;
            Ok(out)
        })();
        match outcome {
            Err(e) if e.retryable() && attempt < MAX_ATTEMPTS => {
                std::thread::sleep(backoff(attempt));
            }
            other => return other.map_err(Failure::into_store),
        }
    }
}

/// A pause that doubles with each attempt (1 ms up to 64 ms), with jitter so that two
/// transactions that keep colliding drift apart.
fn backoff(attempt: u32) -> Duration {
    let base = 1u64 << attempt.min(6);
    let jitter = u64::from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos()),
    ) % base.max(1);
    Duration::from_millis(base + jitter)
}
