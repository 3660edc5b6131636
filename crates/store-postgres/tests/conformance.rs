//! The storage conformance suite, on PostgreSQL (a schema of its own per case).

use epimem_store_postgres::{PostgresStore, test_support};

/// A store on a fresh schema that is dropped after the store.
struct Fresh(PostgresStore, #[allow(dead_code)] test_support::TestDatabase);

impl std::ops::Deref for Fresh {
    type Target = PostgresStore;
    fn deref(&self) -> &PostgresStore {
        &self.0
    }
}

fn make() -> Option<Fresh> {
    let database = test_support::test_database()?;
    Some(Fresh(database.store(), database))
}

// Each case returns early (skips) when there is no PostgreSQL to run on.
epimem_store::conformance_tests!(match make() {
    Some(fresh) => fresh,
    None => return,
});
