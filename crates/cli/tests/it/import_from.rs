//! `epimem import --from`: other tools' exports (fixtures written in their real formats),
//! imported, recalled, imported again with nothing added; broken records told by line; a
//! killed import run again stores everything once.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::{Duration, Instant},
};

use serde_json::Value;

use crate::common::{epimem, epimem_command, json_lines};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../import/fixtures").join(name)
}

/// `import --from FROM FILE --json` and any more arguments: its report.
fn import(db: &Path, from: &str, file: &Path, more: &[&str]) -> Value {
    let mut args = vec!["import", "--from", from, file.to_str().unwrap(), "--json"];
    args.extend_from_slice(more);
    json_lines(&epimem(db, &args)).remove(0)
}

fn block(db: &Path, query: &str, user: &str) -> String {
    let out = epimem(db, &["recall", query, "--budget", "300", "--user", user, "--json"]);
    json_lines(&out).remove(0)["context"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn each_export_is_imported_recalled_and_imported_again_with_nothing_added() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("epimem.db");

    let chatgpt = import(&db, "chatgpt", &fixture("chatgpt.json"), &["--user", "maya"]);
    assert_eq!(
        (chatgpt["messages"].as_u64(), chatgpt["conversations"].as_u64()),
        (Some(8), Some(2))
    );
    assert_eq!(chatgpt["abandoned_branches_left_out"], 2);
    assert_eq!(chatgpt["attachments_named"], 2);
    assert!(chatgpt["episodes_closed"].as_u64().unwrap() >= 2);
    let told = block(&db, "vegetarian restaurant in Porto", "maya");
    assert!(told.contains("Da Terra is a vegetarian buffet"), "{told}");
    assert!(!told.contains("Ao Lado"), "the abandoned branch is not imported: {told}");

    let claude = import(&db, "claude", &fixture("claude.json"), &["--user", "maya"]);
    assert_eq!(claude["messages"], 6);
    let told = block(&db, "when does my passport expire", "maya");
    assert!(told.contains("passport expires in March 2025"), "{told}");

    let mem0 = import(&db, "mem0", &fixture("mem0.json"), &[]);
    assert_eq!((mem0["messages"].as_u64(), mem0["facts"].as_u64()), (Some(4), Some(4)));
    let facts = json_lines(&epimem(&db, &["facts", "--user", "alice", "--json"])).remove(0);
    let texts: Vec<&str> =
        facts["facts"].as_array().unwrap().iter().map(|f| f["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["Prefers window seats on flights", "Is allergic to peanuts"]);
    assert!(block(&db, "peanut allergy", "alice").contains("Is allergic to peanuts"));
    assert!(block(&db, "peanut allergy", "bob").is_empty(), "another person's memory");

    // Every import again: nothing added.
    for (from, file, user) in [
        ("chatgpt", "chatgpt.json", "maya"),
        ("claude", "claude.json", "maya"),
        ("mem0", "mem0.json", ""),
    ] {
        let more: Vec<&str> = if user.is_empty() { vec![] } else { vec!["--user", user] };
        let again = import(&db, from, &fixture(file), &more);
        assert_eq!(
            (again["messages"].as_u64(), again["facts"].as_u64()),
            (Some(0), Some(0)),
            "{from}"
        );
        assert!(again["already_held"].as_u64().unwrap() > 0, "{from}");
    }
    let stats = json_lines(&epimem(&db, &["stats", "--json"])).remove(0);
    assert_eq!(stats["messages"], 18);
}

#[test]
fn broken_records_are_told_by_line_and_the_rest_imported() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("epimem.db");
    let file = fixture("chatgpt-broken.json");
    let out = epimem(&db, &["import", "--from", "chatgpt", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "some records were skipped");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for told in [
        "line 12 (record 2)",
        "missing field `mapping`",
        "line 17 (record 3)",
        "line 18 (record 4)",
        "gone",
    ] {
        assert!(stderr.contains(told), "{told} in {stderr}");
    }
    let stats = json_lines(&epimem(&db, &["stats", "--json"])).remove(0);
    assert_eq!(stats["messages"], 2, "the two good records are in");

    // A file that is no export at all changes nothing.
    let wrong = dir.path().join("wrong.json");
    std::fs::write(&wrong, r#"{"conversations": []}"#).unwrap();
    let out = epimem(&db, &["import", "--from", "claude", wrong.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected a JSON array"));
}

#[test]
fn a_dry_run_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("epimem.db");
    let report = import(&db, "claude", &fixture("claude.json"), &["--dry-run"]);
    assert_eq!(report["messages"], 6);
    let stats = json_lines(&epimem(&db, &["stats", "--json"])).remove(0);
    assert_eq!(stats["messages"], 0);
}

fn stored(db: &Path) -> u64 {
    let Ok(conn) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return 0;
    };
    conn.query_row("SELECT coalesce(sum(last_seq), 0) FROM conversations", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_or(0, |n| n as u64)
}

#[test]
fn a_killed_import_run_again_stores_everything_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("epimem.db");
    let (conversations, each) = (1_500, 20);
    let file = dir.path().join("conversations.json");
    std::fs::write(&file, epimem_import::sample::chatgpt_export(conversations, each)).unwrap();
    let mut child = epimem_command(&db)
        .args(["import", "--from", "chatgpt", file.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(child.try_wait().unwrap().is_none(), "the import ended before it could be killed");
        if stored(&db) > 3_000 {
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
            break;
        }
        assert!(Instant::now() < deadline, "the import stored nothing in two minutes");
        std::thread::sleep(Duration::from_millis(5));
    }
    let killed_at = stored(&db);
    assert!(killed_at < (conversations * each) as u64, "killed midway: {killed_at}");
    let report = import(&db, "chatgpt", &file, &[]);
    assert_eq!(
        report["already_held"].as_u64().unwrap() + report["messages"].as_u64().unwrap(),
        30_000
    );
    assert_eq!(stored(&db), 30_000, "everything in, nothing twice");
}
