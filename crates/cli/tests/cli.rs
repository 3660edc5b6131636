//! The command line as a user drives it, on the sample conversation.

use std::{path::Path, process::Command};

use serde_json::Value;

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/sample-conversation.jsonl");

fn epimem(db: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_epimem"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("EPIMEM_TENANT")
        .env_remove("EPIMEM_CONFIG")
        // The model-free embedder: these tests must not depend on downloaded models.
        .env("EPIMEM_EMBEDDER", "hash")
        .output()
        .unwrap()
}

fn json_lines(out: &std::process::Output) -> Vec<Value> {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn ingested() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let report =
        json_lines(&epimem(&dir.path().join("e.db"), &["ingest", SAMPLE, "--flush", "--json"]));
    assert_eq!(report[0]["inserted"], 38);
    assert_eq!(report[0]["pending"], 0);
    dir
}

#[test]
fn sample_conversation_episodes() {
    let dir = ingested();
    let episodes = json_lines(&epimem(&dir.path().join("e.db"), &["episodes", "--json"]));
    insta::assert_json_snapshot!(episodes);
}

#[test]
fn recall_ranks_the_right_episode_first() {
    let dir = ingested();
    let db = dir.path().join("e.db");
    let hits =
        json_lines(&epimem(&db, &["recall", "flaky webhook test", "--limit", "2", "--json"]));
    assert!(!hits.is_empty() && hits.len() <= 2);
    assert!(hits[0]["title"].as_str().unwrap().contains("CI pipeline"), "{}", hits[0]);
    assert_eq!(hits[0]["lexical_rank"], 1);
    assert!(hits[0]["score"].as_f64().unwrap() > 0.0);
    let shakshuka = json_lines(&epimem(
        &db,
        &["recall", "shakshuka", "--json", "--conversation", "maya-assistant"],
    ));
    assert_eq!(shakshuka.len(), 1);
    let elsewhere =
        json_lines(&epimem(&db, &["recall", "shakshuka", "--json", "--tenant", "someone-else"]));
    assert!(elsewhere.is_empty());
}

#[test]
fn show_returns_messages_and_names_unknown_ids() {
    let dir = ingested();
    let db = dir.path().join("e.db");
    let first = &json_lines(&epimem(&db, &["episodes", "--json", "--limit", "1"]))[0];
    let id = first["id"].as_str().unwrap();
    let detail = &json_lines(&epimem(&db, &["show", id, "--json"]))[0];
    let messages = detail["messages"].as_array().unwrap();
    assert_eq!(messages.len() as u64, first["message_count"].as_u64().unwrap());
    assert_eq!(messages[0]["speaker"], "Maya");
    let out = epimem(&db, &["show", "ep_missing"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not found: episode ep_missing"));
}

#[test]
fn stats_and_demo() {
    let dir = ingested();
    let db = dir.path().join("e.db");
    let stats = &json_lines(&epimem(&db, &["stats", "--json"]))[0];
    assert_eq!(
        (stats["messages"].as_u64(), stats["pending_messages"].as_u64()),
        (Some(38), Some(0))
    );
    assert_eq!(
        stats["episodes"].as_u64(),
        Some(json_lines(&epimem(&db, &["episodes", "--json"])).len() as u64)
    );
    let demo = Command::new(env!("CARGO_BIN_EXE_epimem"))
        .arg("demo")
        .env_remove("EPIMEM_DB")
        .env("EPIMEM_EMBEDDER", "hash")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&demo.stdout);
    assert!(
        demo.status.success() && text.contains("Episodes:") && text.contains("CI pipeline"),
        "{text}"
    );
}
