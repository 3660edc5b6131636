//! A server or worker and the other processes on its database: what one closes or stores,
//! the other finds without a restart.

use std::{
    path::Path,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::json;

use crate::{
    common,
    serve::{FAST_WORKER, Server, message},
};

#[test]
fn a_standalone_worker_closes_what_another_process_ingested() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let config = dir.path().join("c.toml");
    std::fs::write(&config, FAST_WORKER).unwrap();
    let file = dir.path().join("chat.jsonl");
    let lines = [
        message("c", "1", "user", "Where did I leave the spare keys?", "2026-03-14T09:00:00Z"),
        message("c", "2", "assistant", "In the blue jar by the door.", "2026-03-14T09:00:30Z"),
    ];
    std::fs::write(&file, lines.map(|l| l.to_string()).join("\n")).unwrap();
    let epimem = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_epimem"))
            .args(["--db", db.to_str().unwrap(), "--config", config.to_str().unwrap()])
            .args(args)
            .env("EPIMEM_EMBEDDER", "hash")
            .env_remove("EPIMEM_TENANT")
            .output()
            .unwrap()
    };
    assert!(epimem(&["ingest", file.to_str().unwrap()]).status.success());
    let episodes = || common::listed(&epimem(&["episodes", "--json"]), "episodes");
    assert_eq!(
        episodes(),
        Vec::<serde_json::Value>::new(),
        "nothing closes without a flush or a worker"
    );

    let mut worker = Command::new(env!("CARGO_BIN_EXE_epimem"))
        .args(["--db", db.to_str().unwrap(), "--config", config.to_str().unwrap(), "worker"])
        .env("EPIMEM_EMBEDDER", "hash")
        .env_remove("EPIMEM_TENANT")
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while episodes().is_empty() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let listed = episodes();
    let _ = Command::new("kill").args(["-TERM", &worker.id().to_string()]).status();
    let status = worker.wait().unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["boundary_reason"], "idle", "{listed:?}");
    assert!(status.success(), "{status}");
}

/// `epimem ingest --flush` of one line about a quokka selfie, in a process of its own.
fn quokka_from_another_process(db: &Path) {
    let file = db.with_extension("jsonl");
    let line = json!({"conversation": "island", "role": "user",
                      "content": "we took a quokka selfie on Rottnest island"});
    std::fs::write(&file, format!("{line}\n")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_epimem"))
        .args(["--db", db.to_str().unwrap(), "ingest", file.to_str().unwrap(), "--flush"])
        .env("EPIMEM_EMBEDDER", "hash")
        .env_remove("EPIMEM_TENANT")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Episodes another process closes on the same database become searchable without a restart,
/// within the index refresh (a second here), and a recall never waits for that catch-up.
#[test]
fn episodes_another_process_closes_are_found_within_the_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let server = Server::start(&db, FAST_WORKER);
    let ask = || server.post("/v1/recall", &json!({"query": "quokka selfie", "limit": 5}));
    let (status, found) = ask();
    assert_eq!(status, 200, "{found}");
    assert!(found["hits"].as_array().unwrap().is_empty(), "{found}");

    quokka_from_another_process(&db);

    let closed = Instant::now();
    let found = loop {
        let (_, found) = ask();
        if !found["hits"].as_array().unwrap().is_empty() {
            break found;
        }
        assert!(closed.elapsed() < Duration::from_secs(10), "not found 10 s after it closed");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(found.to_string().contains("Rottnest"), "{found}");
}

/// A recall sent the moment the server is up waits for the index it opens at start, rather
/// than read it before it is opened and answer nothing.
#[test]
fn a_recall_as_the_server_starts_finds_what_the_database_holds() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    quokka_from_another_process(&db);
    // Each start opens the saved index anew; the first request races that opening.
    for _ in 0..3 {
        let server = Server::start(&db, FAST_WORKER);
        let (status, found) = server.post("/v1/recall", &json!({"query": "quokka selfie"}));
        assert_eq!(status, 200, "{found}");
        assert!(found.to_string().contains("Rottnest"), "{found}");
    }
}
