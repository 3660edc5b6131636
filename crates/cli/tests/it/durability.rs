//! Crash safety and concurrency of `epimem ingest` and `epimem serve`, on real processes and a
//! real database.
//!
//! The invariant: every message ingested is in exactly one episode or still pending, never
//! lost, never in two episodes, never stored twice.

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use rusqlite::{Connection, OpenFlags};

const TOPICS: &[&str] = &[
    "planning the trip to lisbon hotel tram castle museum booking",
    "the payments pipeline test is flaky timeout webhook mock server",
    "cooking shakshuka tomato pepper egg feta lunch recipe",
    "tomato seedlings on the balcony need light soil water pots",
];

/// A JSONL file of `n` messages over `conversations` conversations; ids are prefixed with
/// `prefix` when given, else the lines are keyed by position.
fn write_file(
    dir: &Path,
    name: &str,
    n: usize,
    conversations: usize,
    prefix: Option<&str>,
) -> PathBuf {
    let mut out = String::new();
    for i in 0..n {
        let c = i % conversations;
        let turn = i / conversations;
        let topic = TOPICS[(turn / 12 + c) % TOPICS.len()];
        let role = if turn.is_multiple_of(2) { "user" } else { "assistant" };
        let minute = turn as i64 * 2 + if turn % 50 == 49 { 90 } else { 0 };
        let ts = 1_767_225_600 + minute * 60 + (turn as i64 / 50) * 5400;
        let time = chrono_like(ts);
        let id = prefix.map(|p| format!(",\"id\":\"{p}{i}\"")).unwrap_or_default();
        out.push_str(&format!(
            "{{\"conversation\":\"c{c}\",\"role\":\"{role}\",\"speaker\":\"S{c}\",\"content\":\"turn {turn}: {topic}\",\"timestamp\":\"{time}\"{id}}}\n"
        ));
    }
    let path = dir.join(name);
    std::fs::write(&path, out).unwrap();
    path
}

/// RFC 3339 for a Unix time, without pulling a date crate into the tests.
fn chrono_like(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

fn epimem(db: &Path, config: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_epimem"));
    cmd.arg("--db").arg(db).arg("--config").arg(config).args(args);
    cmd.env_remove("EPIMEM_TENANT").env_remove("EPIMEM_EMBEDDER").stdin(Stdio::null());
    cmd
}

/// Leases short enough that a killed worker's job is taken over within the test, and the
/// model-free embedder, so semantic segmentation runs without downloaded models.
fn config(dir: &Path) -> PathBuf {
    let path = dir.join("config.toml");
    std::fs::write(&path, "embedder = \"hash\"\n[jobs]\nlease_seconds = 1\n").unwrap();
    path
}

fn run_ok(mut cmd: Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{:?} failed: {}\n{}",
        cmd,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Checks the invariant; returns (messages, pending).
pub(crate) fn check_invariant(db: &Path) -> (u64, u64) {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut convs = conn.prepare("SELECT id, last_seq, watermark FROM conversations").unwrap();
    let convs: Vec<(i64, i64, i64)> = convs
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let (mut messages, mut pending) = (0, 0);
    for (id, last_seq, watermark) in convs {
        let (count, max, distinct_keys): (i64, i64, i64) = conn
            .query_row(
                "SELECT count(*), coalesce(max(seq), 0), count(DISTINCT key) FROM messages WHERE conversation_id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(
            (count, max, distinct_keys),
            (last_seq, last_seq, last_seq),
            "conversation {id}: sequence gap or duplicate"
        );
        let mut stmt = conn
            .prepare("SELECT first_seq, last_seq FROM episodes WHERE conversation_id = ?1 ORDER BY first_seq")
            .unwrap();
        let mut next = 1;
        for row in stmt.query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))).unwrap()
        {
            let (first, last) = row.unwrap();
            assert_eq!(
                first, next,
                "conversation {id}: episodes must tile (gap or overlap at {first})"
            );
            assert!(last >= first);
            next = last + 1;
        }
        assert_eq!(next - 1, watermark, "conversation {id}: episodes end at the watermark");
        // The search index is rebuilt from these rows: every message of every episode.
        let (covered, sizes): (i64, i64) = conn
            .query_row(
                "SELECT (SELECT count(*) FROM messages m JOIN episodes e
                             ON e.conversation_id = m.conversation_id
                            AND m.seq BETWEEN e.first_seq AND e.last_seq
                          WHERE e.conversation_id = ?1),
                        (SELECT coalesce(sum(last_seq - first_seq + 1), 0) FROM episodes
                          WHERE conversation_id = ?1)",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(covered, sizes, "every message of every episode is stored");
        messages += last_seq as u64;
        pending += (last_seq - watermark) as u64;
    }
    (messages, pending)
}

fn count_messages(db: &Path) -> u64 {
    let Ok(conn) = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY) else {
        return 0;
    };
    conn.query_row("SELECT coalesce(sum(last_seq), 0) FROM conversations", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_or(0, |n| n as u64)
}

/// Waits until the database holds more than `at_least` messages, then SIGKILLs the child.
fn kill_when(child: &mut Child, db: &Path, at_least: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return false; // finished before we could kill it
        }
        if count_messages(db) > at_least {
            child.kill().unwrap(); // SIGKILL on Unix
            child.wait().unwrap();
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("ingest made no progress in two minutes");
}

#[test]
fn sigkill_mid_ingest_loses_and_duplicates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (db, config) = (dir.path().join("epimem.db"), config(dir.path()));
    let n = 60_000;
    let file = write_file(dir.path(), "big.jsonl", n, 8, None);
    let mut kills = 0;
    for round in 1..=3u64 {
        let mut child = epimem(&db, &config, &["ingest", file.to_str().unwrap(), "--batch", "500"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let already = count_messages(&db);
        if kill_when(&mut child, &db, already + round * 3_000) {
            kills += 1;
        }
        let (messages, _) = check_invariant(&db);
        assert!(messages <= n as u64);
    }
    assert!(kills >= 1, "no run was killed mid-file: make the file bigger");
    // Leases of the killed workers run out; the re-run finishes the file and flushes.
    std::thread::sleep(Duration::from_millis(1_100));
    run_ok(epimem(&db, &config, &["ingest", file.to_str().unwrap(), "--flush"]));
    assert_eq!(check_invariant(&db), (n as u64, 0));
    // And once more: nothing is added twice.
    run_ok(epimem(&db, &config, &["ingest", file.to_str().unwrap(), "--flush"]));
    assert_eq!(check_invariant(&db), (n as u64, 0));
}

#[test]
fn two_processes_ingesting_at_once_keep_the_invariant() {
    let dir = tempfile::tempdir().unwrap();
    let (db, config) = (dir.path().join("epimem.db"), config(dir.path()));
    let n = 6_000;
    // Two different files into the same conversations, and one of them twice.
    let a = write_file(dir.path(), "a.jsonl", n, 4, Some("a"));
    let b = write_file(dir.path(), "b.jsonl", n, 4, Some("b"));
    let spawn = |file: &Path| {
        epimem(&db, &config, &["ingest", file.to_str().unwrap(), "--flush", "--batch", "200"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children = [spawn(&a), spawn(&b), spawn(&a)];
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    // A last flush picks up anything a concurrent fence held back.
    run_ok(epimem(&db, &config, &["flush"]));
    assert_eq!(check_invariant(&db), (2 * n as u64, 0));
}

#[test]
fn a_bad_line_is_named_and_what_came_before_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (db, config) = (dir.path().join("epimem.db"), config(dir.path()));
    let good = r#"{"conversation":"c","role":"user","content":"hello there"}"#;
    let bad = r#"{"conversation":"c","role":"wizard","content":"abracadabra"}"#;
    let file = dir.path().join("bad.jsonl");
    std::fs::write(&file, format!("{good}\n{good}\n\n{bad}\n{good}\n")).unwrap();
    let out = epimem(&db, &config, &["ingest", file.to_str().unwrap()]).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.jsonl:4:") && stderr.contains("wizard"), "{stderr}");
    assert!(stderr.contains("(2 messages before this line were ingested;"), "{stderr}");
    assert_eq!(check_invariant(&db), (2, 2));
    // Skipping goes on past it, reports it, and exits with a distinct code.
    let out = epimem(&db, &config, &["ingest", file.to_str().unwrap(), "--skip-invalid", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((report["inserted"].as_u64(), report["duplicates"].as_u64()), (Some(1), Some(2)));
    assert_eq!(report["skipped_lines"], 1);
    assert_eq!(check_invariant(&db), (3, 3));
}

/// Every message the server acknowledged survives a SIGKILL under load, once, and closes into
/// exactly one episode after the restart's flush.
#[test]
fn sigkill_of_serve_mid_load_loses_no_acknowledged_message() {
    use std::sync::{Arc, Mutex};

    use crate::serve::{FAST_WORKER, Server};

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    // Short leases: a job the killed worker had claimed is taken over a second later.
    let config = format!("{FAST_WORKER}[jobs]\nlease_seconds = 1\n");
    let mut server = Server::start(&db, &config);
    let acknowledged: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let writer = {
        let (base, acknowledged) = (server.base.clone(), acknowledged.clone());
        std::thread::spawn(move || {
            let agent =
                ureq::Agent::config_builder().http_status_as_error(false).build().new_agent();
            for batch in 0.. {
                let sent: Vec<(String, String)> =
                    (0..20).map(|j| (format!("c{}", j % 4), format!("{batch}-{j}"))).collect();
                let body: Vec<serde_json::Value> = sent
                    .iter()
                    .map(|(conversation, id)| {
                        let topic = TOPICS[id.len() % TOPICS.len()];
                        serde_json::json!({"conversation": conversation, "id": id,
                                           "role": "user", "content": format!("{topic} {id}")})
                    })
                    .collect();
                let response = agent
                    .post(&format!("{base}/v1/messages"))
                    .content_type("application/json")
                    .send(serde_json::Value::Array(body).to_string());
                match response {
                    Ok(r) if r.status().as_u16() == 200 => {
                        acknowledged.lock().unwrap().extend(sent)
                    }
                    Ok(r) => panic!("batch {batch} refused: {}", r.status()),
                    // The server is gone.
                    Err(_) => return,
                }
            }
        })
    };
    let started = Instant::now();
    while acknowledged.lock().unwrap().len() < 2000 && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    server.kill();
    writer.join().unwrap();
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(acknowledged.len() >= 2000, "only {} acknowledged", acknowledged.len());

    // A segmentation the killed server had claimed stays fenced until its lease runs out;
    // then the new server's worker takes it over, and the flushes close the rest.
    let server = Server::start(&db, &config);
    let started = Instant::now();
    loop {
        let mut pending = 0;
        for c in 0..4 {
            let (status, _) = server.send("POST", &format!("/v1/conversations/c{c}/flush"), None);
            assert_eq!(status, 200);
            let (_, state) = server.send("GET", &format!("/v1/conversations/c{c}"), None);
            pending += state["pending"].as_u64().unwrap();
        }
        if pending == 0 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{pending} still pending");
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(server);
    let (_, pending) = check_invariant(&db);
    assert_eq!(pending, 0, "everything closed into episodes");
    let conn = Connection::open_with_flags(&db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut stored = conn
        .prepare(
            "SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id
              WHERE c.external_id = ?1 AND m.key = 'id:' || ?2",
        )
        .unwrap();
    for (conversation, id) in &acknowledged {
        let n: i64 = stored.query_row([conversation, id], |r| r.get(0)).unwrap();
        assert_eq!(n, 1, "acknowledged message {conversation}/{id} stored {n} times");
    }
}
