//! Databases that earlier versions of epimem wrote open with this one, migrate, and hold what
//! they held. Each fixture (`tests/fixtures/upgrade/<commit>/`) was written by that commit's
//! own binary (`scripts/upgrade-fixture.sh`), with what that binary answered about it: its
//! counts (parked jobs among them), episodes, versions, keys, timeline and facts, and a
//! recall.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
};

use serde_json::Value;

use crate::common::{epimem, json_lines};

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upgrade");
    let mut found: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("memory.db").is_file())
        .collect();
    found.sort();
    found
}

fn said(fixture: &Path, file: &str) -> Option<Value> {
    let text = std::fs::read_to_string(fixture.join(file)).ok()?;
    Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}")))
}

fn now(db: &Path, args: &[&str]) -> Value {
    json_lines(&epimem(db, args)).remove(0)
}

fn schema_version(db: &Path) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap()
}

/// The records a listing printed: one object holding them under `key` (this version), or one
/// a line (earlier ones).
fn listed(text: &str, key: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .flat_map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v.get(key).and_then(Value::as_array).cloned().unwrap_or(vec![v])
        })
        .collect()
}

/// Facts as (id, text), in a set.
fn facts_of(text: &str) -> BTreeSet<(String, String)> {
    listed(text, "facts")
        .iter()
        .map(|f| (f["id"].as_str().unwrap().to_owned(), f["text"].as_str().unwrap().to_owned()))
        .collect()
}

/// Episodes as (id, title), in a set.
fn episodes(text: &str) -> BTreeSet<(String, String)> {
    listed(text, "episodes")
        .iter()
        .map(|e| (e["id"].as_str().unwrap().to_owned(), e["title"].as_str().unwrap().to_owned()))
        .collect()
}

fn opens_and_holds_what_it_held(fixture: &Path) {
    let name = fixture.file_name().unwrap().to_string_lossy().into_owned();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    std::fs::copy(fixture.join("memory.db"), &db).unwrap();
    let written_at = schema_version(&db);

    // Every count the earlier version told is the same now.
    let before = said(fixture, "stats.json").unwrap();
    let stats = now(&db, &["stats", "--json"]);
    for (field, value) in before.as_object().unwrap() {
        if value.is_number() && stats.get(field).is_some() {
            assert_eq!(&stats[field], value, "{name}: stats.{field}");
        }
    }
    assert!(schema_version(&db) >= written_at, "{name}: migrated");
    let today = epimem(&db, &["episodes", "--json", "--limit", "100"]);
    assert_eq!(
        episodes(&String::from_utf8(today.stdout).unwrap()),
        episodes(&std::fs::read_to_string(fixture.join("episodes.json")).unwrap()),
        "{name}: the episodes, by id and title"
    );
    if let Some(shown) = said(fixture, "versions.json") {
        let id = shown["id"].as_str().unwrap();
        let today = now(&db, &["show", id, "--json"]);
        assert_eq!(today["title"], shown["title"], "{name}: the corrected title");
        // The version before the correction is kept (earlier versions did not show it).
        match shown.get("versions").filter(|v| !v.is_null()) {
            Some(then) => assert_eq!(&today["versions"], then, "{name}: its earlier versions"),
            None => {
                assert_eq!(today["versions"].as_array().map(Vec::len), Some(1), "{name}: {today}")
            }
        }
    }
    if let Ok(keys) = std::fs::read_to_string(fixture.join("keys.json")) {
        let named = |text: &str| -> BTreeSet<String> {
            listed(text, "keys").iter().map(|k| format!("{} {}", k["id"], k["name"])).collect()
        };
        let today = epimem(&db, &["keys", "list", "--json"]);
        assert_eq!(
            named(&String::from_utf8(today.stdout).unwrap()),
            named(&keys),
            "{name}: the keys"
        );
    }
    if let Ok(timeline) = std::fs::read_to_string(fixture.join("timeline.json")) {
        let ids = |text: &str| -> BTreeSet<String> {
            listed(text, "nodes").iter().map(|n| n["id"].as_str().unwrap().to_owned()).collect()
        };
        let today = epimem(&db, &["timeline", "--json"]);
        let today = ids(&String::from_utf8(today.stdout).unwrap());
        assert!(today.is_superset(&ids(&timeline)), "{name}: the timeline's nodes");
        assert!(!today.is_empty(), "{name}: a timeline");
    }
    if let Ok(facts) = std::fs::read_to_string(fixture.join("facts.json")) {
        let facts = facts_of(&facts);
        assert!(!facts.is_empty(), "{name}: the fixture holds facts");
        let today = epimem(&db, &["facts", "--json"]);
        assert_eq!(facts_of(&String::from_utf8(today.stdout).unwrap()), facts, "{name}: facts");
    }
    // Recall answers as it did (its index built from the database on the way).
    let asked = ["recall", "Who is vegetarian?", "--budget", "300", "--json"];
    let then = said(fixture, "recall.json").unwrap();
    assert!(then["context"].as_str().unwrap().contains("Ana is vegetarian"), "{name}: {then}");
    let today = now(&db, &asked);
    assert!(
        today["context"].as_str().unwrap_or_default().contains("Ana is vegetarian"),
        "{name}: {today}"
    );
    // The pending conversation closes as any other.
    let flushed = epimem(&db, &["flush"]);
    assert!(flushed.status.success(), "{name}: {}", String::from_utf8_lossy(&flushed.stderr));
    assert_eq!(now(&db, &["stats", "--json"])["pending_messages"], 0, "{name}");
}

#[test]
fn every_earlier_database_opens_and_holds_what_it_held() {
    let found = fixtures();
    assert!(!found.is_empty(), "the upgrade fixtures are missing");
    for fixture in found {
        opens_and_holds_what_it_held(&fixture);
    }
}

#[test]
fn a_database_from_a_newer_version_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    std::fs::copy(fixtures()[0].join("memory.db"), &db).unwrap();
    rusqlite::Connection::open(&db).unwrap().pragma_update(None, "user_version", 999).unwrap();
    let tables = |db: &Path| -> Vec<String> {
        let conn = rusqlite::Connection::open(db).unwrap();
        let mut rows = conn.prepare("SELECT sql FROM sqlite_master ORDER BY name").unwrap();
        rows.query_map([], |r| r.get::<_, Option<String>>(0)).unwrap().flatten().flatten().collect()
    };
    let before = (tables(&db), ids_of(&db));
    let out = epimem(&db, &["stats"]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("newer than this epimem understands"), "{said}");
    assert_eq!(schema_version(&db), 999, "not migrated");
    assert!((tables(&db), ids_of(&db)) == before, "no table and no message changed");
}

fn ids_of(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut rows = conn.prepare("SELECT key || content FROM messages ORDER BY key").unwrap();
    rows.query_map([], |r| r.get(0)).unwrap().flatten().collect()
}

/// The PostgreSQL dumps earlier commits' binaries wrote (`postgres.sql`), loaded into a schema
/// of their own, open with this version and hold what those versions said they held.
#[test]
fn every_earlier_postgres_dump_opens_and_holds_what_it_held() {
    let dumps: Vec<PathBuf> =
        fixtures().into_iter().filter(|f| f.join("postgres.sql").is_file()).collect();
    assert!(!dumps.is_empty(), "no PostgreSQL upgrade fixture");
    for fixture in dumps {
        let Some(db) = epimem_store_postgres::test_support::test_database() else { return };
        let Some(bin) = std::env::var_os("EPIMEM_TEST_POSTGRES_BIN").map(PathBuf::from) else {
            assert!(
                std::env::var_os("EPIMEM_REQUIRE_POSTGRES").is_none(),
                "EPIMEM_TEST_POSTGRES_BIN is not set"
            );
            return;
        };
        let name = fixture.file_name().unwrap().to_string_lossy().into_owned();
        // The dump names its own schema: it is loaded into this test's.
        let dumped = std::fs::read_to_string(fixture.join("postgres.sql")).unwrap();
        let own = format!("fixture_{name}");
        let sql: String = dumped
            .lines()
            .filter(|l| *l != format!("CREATE SCHEMA {own};"))
            .map(|l| l.replace(&own, db.schema()) + "\n")
            .collect();
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), sql).unwrap();
        let loaded = std::process::Command::new(bin.join("psql"))
            .args(["-q", "-v", "ON_ERROR_STOP=1", "-f"])
            .arg(file.path())
            .arg(db.server())
            .output()
            .unwrap();
        assert!(loaded.status.success(), "{name}: {}", String::from_utf8_lossy(&loaded.stderr));

        let run = |args: &[&str]| crate::common::run_on(&db.url, args);
        let then: Value = serde_json::from_str(
            &std::fs::read_to_string(fixture.join("postgres-stats.json")).unwrap(),
        )
        .unwrap();
        let stats: Value = serde_json::from_str(&run(&["stats", "--json"])).unwrap();
        for (field, value) in then.as_object().unwrap() {
            if value.is_number() && stats.get(field).is_some() {
                assert_eq!(&stats[field], value, "{name}: stats.{field}");
            }
        }
        assert_eq!(
            episodes(&run(&["episodes", "--json", "--limit", "100"])),
            episodes(&std::fs::read_to_string(fixture.join("postgres-episodes.json")).unwrap()),
            "{name}: the episodes, by id and title"
        );
        if let Ok(facts) = std::fs::read_to_string(fixture.join("postgres-facts.json")) {
            assert_eq!(facts_of(&run(&["facts", "--json"])), facts_of(&facts), "{name}: facts");
        }
        let found = run(&["recall", "Who is vegetarian?", "--budget", "300"]);
        assert!(found.contains("Ana is vegetarian"), "{name}: {found}");
        run(&["flush"]);
        let stats: Value = serde_json::from_str(&run(&["stats", "--json"])).unwrap();
        assert_eq!(stats["pending_messages"], 0, "{name}");
    }
}
