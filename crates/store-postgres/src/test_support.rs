//! For the tests of any crate that need a PostgreSQL server (feature `test-support`).
//!
//! `scripts/test.sh` starts one (`scripts/postgres.sh`) and names it in `EPIMEM_TEST_POSTGRES`.
//! Without it a test skips, unless `EPIMEM_REQUIRE_POSTGRES` is set (CI), which makes its
//! absence a failure. Each [`TestDatabase`] is a schema of its own on that server, dropped
//! when it goes, so tests run side by side without seeing each other.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::PostgresStore;

/// A fresh, empty schema on the test server, dropped on drop.
#[derive(Debug)]
pub struct TestDatabase {
    server: String,
    schema: String,
    /// The URL that reaches this schema (pass it to `--db` or [`PostgresStore::connect`]).
    pub url: String,
}

/// A fresh schema on the test server, or `None` (the test skips) when there is none.
pub fn test_database() -> Option<TestDatabase> {
    let Some(server) = std::env::var("EPIMEM_TEST_POSTGRES").ok().filter(|u| !u.is_empty()) else {
        assert!(
            std::env::var_os("EPIMEM_REQUIRE_POSTGRES").is_none(),
            "EPIMEM_REQUIRE_POSTGRES is set but EPIMEM_TEST_POSTGRES names no server"
        );
        eprintln!("skipping: no PostgreSQL (run the tests with scripts/test.sh)");
        return None;
    };
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let schema =
        format!("test_{}_{}_{nanos}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    admin(&server).batch_execute(&format!("CREATE SCHEMA {schema}")).expect("create a schema");
    let separator = if server.contains('?') { '&' } else { '?' };
    // `public` after it: where the `vector` extension's type and operators are.
    let url = format!("{server}{separator}options=-c%20search_path%3D{schema}%2Cpublic");
    Some(TestDatabase { server, schema, url })
}

impl TestDatabase {
    /// The schema's name.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// The server's URL (its `epimem` database, not this schema).
    pub fn server(&self) -> &str {
        &self.server
    }

    /// A store on this schema.
    pub fn store(&self) -> PostgresStore {
        PostgresStore::connect(&self.url).expect("connect to the test database")
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // Best effort: a schema left behind by a crashed test only takes space.
        if let Ok(mut client) = postgres::Client::connect(&self.server, postgres::NoTls) {
            let _ = client.batch_execute(&format!("DROP SCHEMA {} CASCADE", self.schema));
        }
    }
}

fn admin(server: &str) -> postgres::Client {
    postgres::Client::connect(server, postgres::NoTls)
        .unwrap_or_else(|e| panic!("cannot reach the test PostgreSQL at {server}: {e}"))
}
