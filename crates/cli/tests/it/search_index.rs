//! The search index saved beside the database: made by the first recall, opened (not built
//! again) by the next, caught up with what other processes stored, rebuilt by itself when
//! damaged or killed half-way, and by `reindex` on demand.

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::{
    common,
    serve::{FAST_WORKER, Server, message},
};

fn epimem(db: &Path, args: &[&str]) -> Vec<Value> {
    common::json_lines(&common::epimem(db, args))
}

/// The hits of a recall without a budget.
fn hits_of(db: &Path, args: &[&str]) -> Vec<Value> {
    common::listed(&common::epimem(db, args), "hits")
}

/// `n` conversations of a few sessions each, about topics that differ by a word or two.
fn chats(n: usize) -> String {
    let topics =
        ["garden tomatoes", "ferry timetable", "tax return", "piano lessons", "bike repair"];
    let mut lines = Vec::new();
    for c in 0..n {
        for (day, topic) in topics.iter().enumerate() {
            for i in 0..4 {
                let role = if i % 2 == 0 { "user" } else { "assistant" };
                let content = format!("note {i} on the {topic} of chat {c}, day {day}");
                lines.push(
                    serde_json::json!({
                        "conversation": format!("c{c}"), "role": role, "content": content,
                        "timestamp": format!("2026-03-{:02}T10:{:02}:00Z", day + 1, i),
                    })
                    .to_string(),
                );
            }
        }
    }
    lines.join("\n")
}

fn ingest(db: &Path, text: &str) {
    let file = db.with_extension("jsonl");
    std::fs::write(&file, text).unwrap();
    epimem(db, &["ingest", file.to_str().unwrap(), "--flush", "--json"]);
}

/// The episodes recalled, best first, with their scores.
fn recalled(db: &Path, query: &str) -> Vec<(String, f64)> {
    hits_of(db, &["recall", query, "--json", "--limit", "8"])
        .iter()
        .map(|h| (h["id"].to_string(), h["score"].as_f64().unwrap()))
        .collect()
}

/// The same episodes in the same order with the same scores, but for a hair: without a
/// conversation, memory strength is judged at the wall clock, which moves between runs, so
/// comparing digits would fail whenever a score sits on a rounding edge.
#[track_caller]
fn assert_same(got: &[(String, f64)], want: &[(String, f64)], what: &str) {
    let ids = |hits: &[(String, f64)]| hits.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(got), ids(want), "{what}");
    for ((id, a), (_, b)) in got.iter().zip(want) {
        assert!((a - b).abs() < 1e-4, "{what}: {id} scored {a}, expected {b}");
    }
}

fn state_file(db: &Path) -> PathBuf {
    let folder = db.with_file_name("e.db.search");
    let tenant =
        std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().path()).find(|p| p.is_dir());
    tenant.expect("a tenant's folder").join("state.bin")
}

#[test]
fn the_first_recall_saves_the_index_and_the_next_opens_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    ingest(&db, &chats(3));
    let first = recalled(&db, "ferry timetable");
    assert!(!first.is_empty());
    let state = state_file(&db);
    let saved = std::fs::metadata(&state).unwrap().modified().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert_same(&recalled(&db, "ferry timetable"), &first, "opened again");
    assert_eq!(
        std::fs::metadata(&state).unwrap().modified().unwrap(),
        saved,
        "nothing changed, so nothing was built or written again"
    );
    // Another process stores more: the next recall catches up from where the index stopped.
    let more = r#"{"conversation": "late", "role": "user", "content": "the zeppelin hangar opens in May", "timestamp": "2026-04-01T09:00:00Z"}"#;
    ingest(&db, more);
    let hits = hits_of(&db, &["recall", "zeppelin hangar", "--json"]);
    assert_eq!(hits[0]["conversation"], "late", "{hits:?}");
}

#[test]
fn a_damaged_index_is_rebuilt_with_the_same_answers() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    ingest(&db, &chats(3));
    let before = recalled(&db, "piano lessons day 3");
    std::fs::write(state_file(&db), b"damaged").unwrap();
    // The command says why it builds the index again, not only that it is slow.
    let out = common::epimem(&db, &["recall", "piano lessons day 3", "--json"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("building the search index of tenant default again"), "{said}");
    assert!(said.contains("the saved one could not be used ("), "{said}");
    assert_same(&recalled(&db, "piano lessons day 3"), &before, "state damaged");
    let again = common::epimem(&db, &["recall", "piano lessons day 3", "--json"]);
    assert_eq!(String::from_utf8_lossy(&again.stderr), "", "opened as saved: nothing to say");
    std::fs::remove_dir_all(db.with_file_name("e.db.search")).unwrap();
    assert_same(&recalled(&db, "piano lessons day 3"), &before, "index removed");
}

#[test]
fn reindex_builds_the_index_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    ingest(&db, &chats(3));
    let before = recalled(&db, "bike repair");
    let out = epimem(&db, &["reindex", "--json"]);
    assert_eq!(out[0]["episodes"], epimem(&db, &["stats", "--json"])[0]["episodes"]);
    assert!(out[0]["changes"].as_u64().unwrap() > 0);
    assert_same(&recalled(&db, "bike repair"), &before, "reindexed");
    let help = common::epimem(&db, &["reindex", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("catches up"));
}

#[test]
fn a_build_killed_half_way_is_repaired_by_the_next_recall() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    ingest(&db, &chats(150));
    let expected = recalled(&db, "tax return of chat 77");
    let mut killed = 0;
    for attempt in 0..6u64 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_epimem"))
            .arg("--db")
            .arg(&db)
            .args(["reindex", "--json"])
            .env("EPIMEM_EMBEDDER", "hash")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // At a different moment each time: while reading, indexing or saving.
        let at = Instant::now() + Duration::from_millis(40 + attempt * 60);
        while Instant::now() < at && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(2));
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            killed += 1;
        }
        child.wait().unwrap();
        let what = format!("after attempt {attempt}");
        assert_same(&recalled(&db, "tax return of chat 77"), &expected, &what);
    }
    assert!(killed > 0, "every reindex finished before it could be killed");
}

/// The change log's table moved out of the way and back, behind the server's back.
fn rename_table(db: &Path, from: &str, to: &str) {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute_batch(&format!("ALTER TABLE {from} RENAME TO {to}")).unwrap();
}

#[test]
fn a_server_says_why_its_index_cannot_open_and_opens_it_once_it_can() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    ingest(&db, &chats(3));
    recalled(&db, "ferry timetable");
    std::fs::remove_file(state_file(&db)).unwrap();
    rename_table(&db, "episode_changes", "episode_changes_away");
    let (server, log) = Server::start_logging(&db, "");
    let mut said = Vec::new();
    let mut wait_for = |what: &str| common::line_with(&log, what, &mut said);
    // Ready is a word; not ready is an error like any other, with its code.
    let readyz = || match server.send("GET", "/readyz", None) {
        (200, Value::String(text)) => (200, text),
        (status, error) if error["error"]["code"] == "unavailable" => {
            (status, error["error"]["message"].as_str().unwrap().to_owned())
        }
        other => panic!("{other:?}"),
    };
    // Told at once, not when the server stops, and on /readyz for whoever watches it.
    let failed = wait_for("could not be opened");
    assert!(failed.contains("no such table: episode_changes") && failed.contains("trying again"));
    let (status, body) = readyz();
    assert_eq!(status, 503);
    assert!(body.contains("could not be opened") && body.contains("no such table"), "{body}");
    rename_table(&db, "episode_changes_away", "episode_changes");
    let rebuilding = wait_for("building the search index of tenant default again");
    assert!(rebuilding.contains("without their state"), "{rebuilding}");
    wait_for("is ready");
    assert_eq!(readyz(), (200, "ready".to_owned()));
}

/// Waits until the server's search index is open.
fn ready(server: &Server) {
    let started = Instant::now();
    while server.send("GET", "/readyz", None).0 != 200 {
        assert!(started.elapsed() < Duration::from_secs(30), "the index never opened");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The topics of [`burst`].
const BURST: [&str; 3] = ["kayak rental", "violin strings", "roof gutters"];

/// Three conversations stored and closed one after another: each flush closes an episode and
/// commits the index.
fn burst(server: &Server) {
    for (i, topic) in BURST.iter().enumerate() {
        let conversation = format!("burst{i}");
        let said = format!("we need to sort out the {topic} this week");
        let messages = json!([message(&conversation, "1", "user", &said, "2026-04-01T10:00:00Z")]);
        assert_eq!(server.post("/v1/messages", &messages).0, 200);
        let flushed = server.send("POST", &format!("/v1/conversations/{conversation}/flush"), None);
        assert_eq!(flushed.0, 200, "{:?}", flushed.1);
    }
}

/// A server that took a [`burst`] of writes, killed with SIGKILL right after it (with
/// `quiet`, once it saved its state after the burst), and the server started next on its
/// database, ready without building its index again; what that one logged.
fn killed_after_a_burst(quiet: bool) -> (tempfile::TempDir, Server, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    ingest(&db, &chats(2));
    recalled(&db, "ferry timetable");
    let (mut server, first_log) = Server::start_logging(&db, FAST_WORKER);
    ready(&server);
    burst(&server);
    // Quiet: the worker's refresh (every second) finds no update for a second, and saves.
    let burst_over = std::time::SystemTime::now();
    let saved_since = || {
        let modified = std::fs::metadata(state_file(&db)).unwrap().modified().unwrap();
        modified >= burst_over
    };
    let started = Instant::now();
    while quiet && !saved_since() {
        assert!(started.elapsed() < Duration::from_secs(20), "not saved once quiet");
        std::thread::sleep(Duration::from_millis(50));
    }
    server.kill();
    let first: Vec<String> = first_log.try_iter().collect();
    let (server, log) = Server::start_logging(&db, FAST_WORKER);
    ready(&server);
    let said: Vec<String> = log.try_iter().collect();
    assert!(!said.iter().any(|l| l.contains("building the search index")), "{said:?} {first:?}");
    (dir, server, said)
}

/// A server saves its index once a burst of writes is over, not at each write: killed after a
/// quiet moment, the next server opens the index as saved, with nothing to catch up.
#[test]
fn a_server_killed_after_a_quiet_moment_opens_its_index_as_saved() {
    let (_dir, server, said) = killed_after_a_burst(true);
    assert!(!said.iter().any(|l| l.contains("catching up")), "{said:?}");
    let (_, found) = server.post("/v1/recall", &json!({"query": "roof gutters"}));
    assert!(found["hits"][0]["title"].as_str().unwrap().contains("gutters"), "{found}");
}

/// Killed in a burst of writes, before the save that follows it (the state is saved after the
/// burst's first commit only), a server leaves its BM25 indexes ahead of its saved state: the
/// next server takes them back to the state and catches up with the changes since, instead of
/// building the index again.
#[test]
fn a_server_killed_in_a_burst_catches_up_from_its_saved_state() {
    let (_dir, server, said) = killed_after_a_burst(false);
    assert!(said.iter().any(|l| l.contains("catching up")), "{said:?}");
    for topic in BURST {
        let (_, found) = server.post("/v1/recall", &json!({"query": topic}));
        let title = found["hits"][0]["title"].as_str().unwrap_or_default().to_owned();
        let last = topic.split(' ').next_back().unwrap();
        assert!(title.contains(last), "{topic}: {found}");
    }
}

/// `bench recall` with the vectors searched by groups times the recalls again with every
/// vector scanned, unless told not to.
#[test]
fn bench_recall_compares_with_the_exact_scan_unless_told_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bench.db");
    let bench = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_epimem"))
            .args(["bench", "recall", "--episodes", "300", "--queries", "20"])
            .args(["--approximate-from", "0", "--db"])
            .arg(&db)
            .args(extra)
            .env("EPIMEM_EMBEDDER", "hash")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let compared = bench(&[]);
    assert!(compared.contains("the same with every vector scanned"), "{compared}");
    assert!(compared.contains("shared with the exact scan"), "{compared}");
    let alone = bench(&["--no-exact"]);
    assert!(alone.contains("vectors searched by groups"), "{alone}");
    assert!(!alone.contains("every vector scanned:"), "{alone}");
    assert!(!alone.contains("shared with the exact scan"), "{alone}");
}

/// The largest file of the saved index whose name ends with `suffix`.
fn largest(db: &Path, suffix: &str) -> PathBuf {
    let tenant = state_file(db).parent().unwrap().to_path_buf();
    let mut found: Vec<PathBuf> = ["", "episodes", "messages"]
        .iter()
        .flat_map(|part| std::fs::read_dir(tenant.join(part)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(suffix))
        .collect();
    found.sort_by_key(|p| std::fs::metadata(p).unwrap().len());
    found.pop().unwrap_or_else(|| panic!("no {suffix} file in {}", tenant.display()))
}

/// Overwrites the middle third of `file` in place (its length kept, as a stray write or a bad
/// sector would leave it; a process that maps it sees the new bytes at once).
fn scribble(file: &Path) {
    use std::io::{Seek, SeekFrom, Write};
    let len = std::fs::metadata(file).unwrap().len();
    let mut out = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    out.seek(SeekFrom::Start(len / 3)).unwrap();
    out.write_all(&vec![0xAB; (len / 3).max(1) as usize]).unwrap();
    out.sync_all().unwrap();
}

#[test]
fn scribbled_postings_or_vectors_are_found_on_open_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    ingest(&db, &chats(3));
    let before = recalled(&db, "piano lessons day 3");
    for (suffix, reason) in [(".idx", "fail their checksums"), (".bin", "fails its checksum")] {
        let file = if suffix == ".bin" { largest(&db, "bin") } else { largest(&db, suffix) };
        let file = if suffix == ".bin" {
            let name = file.file_name().unwrap().to_str().unwrap().to_owned();
            assert!(name.starts_with("vectors-"), "{name}");
            file
        } else {
            file
        };
        scribble(&file);
        let out = common::epimem(&db, &["recall", "piano lessons day 3", "--json", "--limit", "8"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("building the search index of tenant default again"), "{said}");
        assert!(said.contains(reason), "{suffix}: {said}");
        assert_same(&recalled(&db, "piano lessons day 3"), &before, suffix);
    }
}

/// A server on the saved index of `db` (chats, recalled once so that the index is saved and
/// the server maps it), with `config`; its log; a recall's query and the context it answered.
fn serving_chats(db: &Path, config: &str) -> (Server, mpsc::Receiver<String>, Value, Value) {
    ingest(db, &chats(3));
    recalled(db, "ferry timetable");
    let (server, log) = Server::start_logging(db, config);
    let query = json!({"query": "note 2 on the piano lessons of chat 1, day 3", "budget": 120});
    let (status, first) = server.post("/v1/recall", &query);
    assert_eq!(status, 200, "{first}");
    assert!(first["context"].as_str().unwrap().contains("piano lessons of chat 1"), "{first}");
    (server, log, query, first["context"].clone())
}

/// Recalls `query` until it is answered three times: every answer is `expected` or a refusal
/// while the index is rebuilt, never 500 and never another answer.
fn answered_rightly_or_refused(server: &Server, query: &Value, expected: &Value) {
    let mut answered = 0;
    let started = Instant::now();
    while answered < 3 {
        assert!(started.elapsed() < Duration::from_secs(60), "answered {answered} times");
        let (status, found) = server.post("/v1/recall", query);
        match status {
            200 => {
                assert_eq!(&found["context"], expected, "rebuilt from the database");
                answered += 1;
            }
            503 => assert_eq!(found["error"]["code"], "unavailable", "{found}"),
            _ => panic!("{status}: {found}"),
        }
    }
}

#[test]
fn postings_scribbled_under_a_running_server_are_rebuilt_never_answered_from() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let (server, log, query, expected) = serving_chats(&db, "");
    for suffix in [".idx", ".term", ".pos"] {
        scribble(&largest(&db, suffix));
    }
    answered_rightly_or_refused(&server, &query, &expected);
    drop(server);
    let said: Vec<String> = log.try_iter().collect();
    assert!(said.iter().any(|l| l.contains("found damaged: a read failed")), "{said:?}");
}

#[test]
fn vectors_scribbled_under_a_running_server_are_caught_by_its_checks() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let (server, log, query, expected) = serving_chats(&db, "[search]\ncheck_minutes = 0.01\n");
    scribble(&largest(&db, "bin"));
    // Searches read the changed vectors without noticing; the server's check does.
    let mut said = Vec::new();
    let line = common::line_with(&log, "found damaged", &mut said);
    assert!(line.contains("fails its checksum"), "{line}");
    answered_rightly_or_refused(&server, &query, &expected);
}
