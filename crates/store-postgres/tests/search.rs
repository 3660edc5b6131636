//! The search conformance suite on PostgreSQL (full-text search and pgvector), each case in a
//! schema of its own on the test server.

use epimem_core::RankingConfig;
use epimem_store_postgres::{
    PostgresSearch,
    test_support::{TestDatabase, test_database},
};

/// A search index in a fresh schema; the schema goes when it does.
struct Fixture {
    search: PostgresSearch,
    _database: TestDatabase,
}

impl std::ops::Deref for Fixture {
    type Target = PostgresSearch;
    fn deref(&self) -> &PostgresSearch {
        &self.search
    }
}

fn fixture() -> Option<Fixture> {
    let database = test_database()?;
    let search = database.store().search(&RankingConfig::default()).expect("search tables");
    Some(Fixture { search, _database: database })
}

epimem_search::conformance_tests!(match fixture() {
    Some(fixture) => fixture,
    None => return,
});
