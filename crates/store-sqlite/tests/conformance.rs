//! The storage conformance suite, on a file-backed SQLite database.

use epimem_store_sqlite::SqliteStore;

/// A store in a temporary directory that lives as long as the store.
struct Fresh(SqliteStore, #[allow(dead_code)] tempfile::TempDir);

impl std::ops::Deref for Fresh {
    type Target = SqliteStore;
    fn deref(&self) -> &SqliteStore {
        &self.0
    }
}

fn make() -> Fresh {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(&dir.path().join("epimem.db")).expect("open");
    Fresh(store, dir)
}

epimem_store::conformance_tests!(make());

mod in_memory {
    epimem_store::conformance_tests!(Box::new(
        epimem_store_sqlite::SqliteStore::open_in_memory().unwrap()
    ));
}
