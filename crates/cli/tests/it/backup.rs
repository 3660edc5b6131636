//! `epimem backup` while servers take messages (ours, and `bench serve`'s load), and `epimem
//! restore`: every message acknowledged before the backup began is in the restored database,
//! which comes with the search index of the copy, serves and recalls them.

use std::{
    path::Path,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use serde_json::json;

use crate::{
    common::{epimem, json_lines},
    serve::Server,
};

const FAST: &str = "[server]\ntick_seconds = 0.2\n";

/// The ids stored in `db` (read from its file, as a person with sqlite3 would).
fn ids_in(db: &Path) -> std::collections::HashSet<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut rows = conn.prepare("SELECT key FROM messages").unwrap();
    rows.query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|k| k.unwrap().trim_start_matches("id:").to_owned())
        .collect()
}

#[test]
fn a_backup_under_load_holds_everything_acknowledged_before_it_and_serves() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let server = Arc::new(Server::start(&db, FAST));
    let acknowledged = Arc::new(Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let (server, acknowledged, stop) = (server.clone(), acknowledged.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let ids: Vec<String> = (0..20).map(|i| format!("w{w}-{n}-{i}")).collect();
                    let batch: Vec<_> = ids
                        .iter()
                        .map(|id| json!({"conversation": format!("c{w}-{}", n / 10), "role": "user",
                            "id": id, "content": format!("The greenhouse note number {id} about tomatoes")}))
                        .collect();
                    if let Some((200, _)) = server.try_post("/v1/messages", &json!(batch)) {
                        acknowledged.lock().unwrap().extend(ids);
                    }
                    n += 1;
                }
            })
        })
        .collect();
    // `bench serve` loads the same database through a server of its own meanwhile; its three
    // seconds of load are under way when the backup is taken.
    let bench = crate::common::epimem_command(&db)
        .args(["bench", "serve", "--db", db.to_str().unwrap(), "--seconds", "3", "--batch", "20"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1_500));
    while acknowledged.lock().unwrap().len() < 2_000 {
        std::thread::sleep(Duration::from_millis(20));
    }
    let before: Vec<String> = acknowledged.lock().unwrap().clone();
    let backup = dir.path().join("backup.db");
    let out = epimem(&db, &["backup", backup.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The load goes on a moment after the copy, then stops.
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.join().unwrap();
    }
    let benched = bench.wait_with_output().unwrap();
    assert!(benched.status.success(), "{}", String::from_utf8_lossy(&benched.stderr));
    let written = acknowledged.lock().unwrap().len();
    assert!(written > before.len(), "the server kept writing while the backup was taken");
    drop(server);

    // Beside the copy, the search index built from it; it comes along with a restore.
    let held = |folder: &str| {
        std::fs::read_dir(dir.path().join(folder)).is_ok_and(|mut d| d.next().is_some())
    };
    assert!(held("backup.db.search"), "the backup's index");
    assert!(!dir.path().join("backup.db-wal").exists(), "the backup is one file and its index");
    let restored = dir.path().join("restored.db");
    let out = epimem(&restored, &["restore", backup.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("search index came with it"));
    assert!(held("restored.db.search"), "the restored index");
    let held = ids_in(&restored);
    let missing: Vec<&String> = before.iter().filter(|id| !held.contains(*id)).collect();
    assert!(
        missing.is_empty(),
        "{} acknowledged before the backup are missing: {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );

    // The restored database serves, and recalls what it holds.
    let server = Server::start(&restored, FAST);
    let (status, found) = server.send(
        "POST",
        "/v1/recall",
        Some(&json!({"query": "greenhouse tomatoes", "budget": 200}).to_string()),
    );
    assert_eq!(status, 200, "{found}");
    assert!(found["context"].as_str().unwrap_or_default().contains("greenhouse note"), "{found}");

    // A backup never writes over a file, and a restore over a database only when told.
    let again = epimem(&db, &["backup", backup.to_str().unwrap()]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("never writes over"));
    drop(server);
    let over = epimem(&restored, &["restore", backup.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&over.stderr).contains("--replace"));
    let replaced = json_lines(&epimem(&restored, &["stats", "--json"])).remove(0);
    assert!(replaced["messages"].as_u64().unwrap() >= before.len() as u64);
}

#[test]
fn a_file_that_is_not_a_database_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    crate::common::ingest_lines(
        &db,
        "{\"conversation\": \"c\", \"role\": \"user\", \"content\": \"kept\"}\n",
    );
    let bogus = dir.path().join("bogus.db");
    std::fs::write(&bogus, "not a database at all, just text").unwrap();
    let out = epimem(&db, &["restore", bogus.to_str().unwrap(), "--replace"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a database epimem opens"));
    let stats = json_lines(&epimem(&db, &["stats", "--json"])).remove(0);
    assert_eq!(stats["messages"], 1, "the database is as it was");
}
