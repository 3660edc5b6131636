//! The command line as a user drives it, on the sample conversation.

use std::process::Command;

use serde_json::Value;

use crate::common::{epimem, json_lines, listed};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/sample-conversation.jsonl");

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
    let mut episodes =
        listed(&epimem(&dir.path().join("e.db"), &["episodes", "--json"]), "episodes");
    // Newest first, as the API pages them; the snapshot reads in time order.
    episodes.reverse();
    insta::assert_json_snapshot!(episodes);
}

#[test]
fn recall_ranks_the_right_episode_first() {
    let dir = ingested();
    let db = dir.path().join("e.db");
    let hits =
        listed(&epimem(&db, &["recall", "flaky webhook test", "--limit", "2", "--json"]), "hits");
    assert!(!hits.is_empty() && hits.len() <= 2);
    assert_eq!(hits[0]["first_seq"], 11, "the CI episode: {}", hits[0]);
    assert_eq!(hits[0]["lexical_rank"], 1);
    assert!(hits[0]["score"].as_f64().unwrap() > 0.0);
    let shakshuka = listed(
        &epimem(&db, &["recall", "shakshuka", "--json", "--conversation", "maya-assistant"]),
        "hits",
    );
    assert_eq!(shakshuka.len(), 1);
    let elsewhere = listed(
        &epimem(&db, &["recall", "shakshuka", "--json", "--tenant", "someone-else"]),
        "hits",
    );
    assert!(elsewhere.is_empty());
}

#[test]
fn recall_with_a_budget_prints_lines_or_whole_episodes() {
    let dir = ingested();
    let db = dir.path().join("e.db");
    let lines =
        json_lines(&epimem(&db, &["recall", "flaky webhook test", "--budget", "200", "--json"]));
    assert!(lines[0]["tokens"].as_u64().unwrap() <= 200, "{}", lines[0]);
    assert!(!lines[0]["turns"].as_array().unwrap().is_empty());
    let whole = json_lines(&epimem(
        &db,
        &["recall", "flaky webhook test", "--budget", "400", "--episodes", "--json"],
    ));
    let episodes = whole[0]["hits"].as_array().unwrap();
    assert!(whole[0]["tokens"].as_u64().unwrap() <= 400, "{}", whole[0]);
    let title = episodes[0]["title"].as_str().unwrap();
    assert_eq!(episodes[0]["first_seq"], 11, "the CI episode: {}", whole[0]);
    assert!(whole[0]["context"].as_str().unwrap().contains(title));
    // --episodes shapes a budgeted block; alone it is a mistake worth naming.
    let alone = epimem(&db, &["recall", "flaky webhook test", "--episodes"]);
    assert!(!alone.status.success());
    assert!(String::from_utf8_lossy(&alone.stderr).contains("--budget"));
}

#[test]
fn show_returns_messages_and_names_unknown_ids() {
    let dir = ingested();
    let db = dir.path().join("e.db");
    let first = &listed(&epimem(&db, &["episodes", "--json", "--limit", "1"]), "episodes")[0];
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
        Some(listed(&epimem(&db, &["episodes", "--json"]), "episodes").len() as u64)
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

#[test]
fn segmentation_harness_scores_every_segmenter_and_dumps_lengths() {
    let dir = tempfile::tempdir().unwrap();
    // Two dialogues in DialSeg711's format: a garden topic then a travel topic.
    let garden = [
        "my tomato plants wilt in the garden",
        "water the tomato plants at dawn",
        "should the garden soil get compost",
        "compost helps garden soil hold water",
    ];
    let travel = [
        "book a train ticket to paris",
        "the paris train leaves at nine",
        "find a hotel near the paris station",
        "the station hotel has rooms",
    ];
    let utterances: Vec<&str> = garden.iter().chain(&travel).copied().collect();
    let data = serde_json::json!([
        {"dial_id": 1, "utterances": utterances, "segments": [4, 4]},
        {"dial_id": 2, "utterances": &utterances[..4], "segments": [4]},
    ]);
    let path = dir.path().join("tiny.json");
    std::fs::write(&path, data.to_string()).unwrap();
    let dump = dir.path().join("dump.jsonl");
    let out = epimem(
        &dir.path().join("unused.db"),
        &[
            "eval",
            "segmentation",
            "--dataset",
            "dialseg711",
            "--path",
            path.to_str().unwrap(),
            "--json",
            "--online",
            "--dump",
            dump.to_str().unwrap(),
        ],
    );
    let rows = json_lines(&out);
    let names: Vec<&str> = rows.iter().map(|r| r["segmenter"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "none",
            "random",
            "even",
            "texttiling",
            "time_gap",
            "intent",
            "semantic",
            "coherence",
            "cohesion",
            "default",
            "online"
        ]
    );
    let none = &rows[0];
    // Dialogue 1 (k = 2): every pair straddling the boundary is missed, 2 of 6; dialogue 2 is perfect.
    assert!((none["pk"].as_f64().unwrap() - (2.0 / 6.0) / 2.0).abs() < 1e-9, "{none}");
    assert_eq!(none["reference_boundaries"], 1);
    let dumped: Vec<Value> = std::fs::read_to_string(&dump)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(dumped.len(), 2 * names.len());
    assert_eq!(dumped[0]["reference"], serde_json::json!([4, 4]));
    assert_eq!(dumped[0]["predicted"], serde_json::json!([8]));
    assert!(dumped.iter().all(|d| {
        d["predicted"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).sum::<u64>()
            == d["reference"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).sum::<u64>()
    }));
    // The replay through ingest closes every utterance, and on dialogues shorter than the
    // trigger's window it cuts where the whole-dialogue segmenter does.
    let predicted = |segmenter: &str| -> Vec<&Value> {
        dumped.iter().filter(|d| d["segmenter"] == segmenter).map(|d| &d["predicted"]).collect()
    };
    assert_eq!(predicted("online").len(), 2);
    assert_eq!(predicted("online"), predicted("default"));
    // A wrong path is named.
    let out = epimem(
        &dir.path().join("unused.db"),
        &["eval", "segmentation", "--dataset", "tiage", "--path", "/nonexistent.json"],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent.json"));
}

#[test]
fn a_message_going_back_in_time_is_kept_at_its_conversations_last_time() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let line = |content: &str, time: &str| {
        serde_json::json!({"conversation": "c", "role": "user", "content": content, "timestamp": time})
            .to_string()
    };
    let file = dir.path().join("chat.jsonl");
    let text = [
        line("a typo in the year would stretch an episode over decades", "2026-05-01T10:00:00Z"),
        line("this line says 1996", "1996-05-01T10:00:00Z"),
    ];
    std::fs::write(&file, text.join("\n")).unwrap();
    json_lines(&epimem(&db, &["ingest", file.to_str().unwrap(), "--flush", "--json"]));
    let episodes = listed(&epimem(&db, &["episodes", "--json"]), "episodes");
    assert_eq!(episodes.len(), 1, "{episodes:?}");
    assert_eq!(episodes[0]["start"], "2026-05-01T10:00:00Z");
    assert_eq!(episodes[0]["end"], "2026-05-01T10:00:00Z");
}

#[test]
fn a_reader_that_stops_early_is_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    // Enough episodes that the listing overfills the pipe and must meet the closed end.
    let lines: Vec<String> = (0..400)
        .map(|i| {
            serde_json::json!({"conversation": format!("c{i}"), "role": "user",
                "content": format!("conversation number {i} talks about its own subject at length")})
            .to_string()
        })
        .collect();
    let file = dir.path().join("many.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    json_lines(&epimem(&db, &["ingest", file.to_str().unwrap(), "--flush", "--json"]));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_epimem"))
        .args(["--db", db.to_str().unwrap(), "--embedder", "hash", "episodes", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 100];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}
