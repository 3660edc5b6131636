//! `epimem hooks backfill` on a Claude Code transcript written as Claude Code writes one: a
//! prompt, a failed command and a passing one, a sub-agent's entries and a meta entry (the
//! agent's own, left out), in a project among others; a dry run; a file that cannot be read.
//! The real agents' own files are backfilled in `agents/sessions.rs`.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{epimem_command, json_lines};

fn transcript(session: &str, cwd: &Path) -> String {
    let at = |s: u32| format!("2026-03-02T09:00:{s:02}.000Z");
    let entry = |kind: &str, s: u32, message: Value, extra: Value| {
        let mut e = json!({"type": kind, "uuid": format!("{session}-{s}"), "timestamp": at(s),
            "sessionId": session, "cwd": cwd, "isSidechain": false, "message": message});
        e.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        e.to_string()
    };
    [
        json!({"type": "summary", "summary": "Flaky checkout test", "leafUuid": "x"}).to_string(),
        entry("user", 1, json!({"role": "user", "content": "The checkout test is flaky; find out why"}), json!({})),
        entry("user", 2, json!({"role": "user", "content": "<command-name>/clear</command-name>"}), json!({"isMeta": true})),
        entry("assistant", 3, json!({"role": "assistant", "content": [
            {"type": "text", "text": "Running it a few times."},
            {"type": "tool_use", "id": "toolu_a", "name": "Bash", "input": {"command": "cargo test checkout"}}]}), json!({})),
        entry("user", 4, json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "test checkout ... FAILED", "is_error": true}]}), json!({})),
        entry("assistant", 5, json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_side", "name": "Bash", "input": {"command": "ls"}}]}), json!({"isSidechain": true})),
        entry("assistant", 6, json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_b", "name": "Bash", "input": {"command": "cargo test checkout -- --test-threads=1"}}]}), json!({})),
        entry("user", 7, json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_b", "content": "ok"}]}),
            json!({"toolUseResult": {"stdout": "test checkout ... ok", "stderr": "", "interrupted": false}})),
        entry("assistant", 8, json!({"role": "assistant", "content": [
            {"type": "text", "text": "It passes alone: the tests share a cart fixture."}]}), json!({})),
    ]
    .join("\n")
        + "\n"
}

#[test]
fn a_claude_code_transcript_is_recorded_as_the_hooks_would() {
    let dir = tempfile::tempdir().unwrap();
    let (home, db) = (dir.path().join("home"), dir.path().join("memory.db"));
    let (shop, blog) = (dir.path().join("shop"), dir.path().join("blog"));
    for project in [&shop, &blog] {
        std::fs::create_dir_all(project.join(".git")).unwrap();
    }
    let sessions = home.join(".claude/projects");
    std::fs::create_dir_all(sessions.join("-shop")).unwrap();
    std::fs::create_dir_all(sessions.join("-blog")).unwrap();
    std::fs::write(sessions.join("-shop/s-shop.jsonl"), transcript("s-shop", &shop)).unwrap();
    std::fs::write(sessions.join("-blog/s-blog.jsonl"), transcript("s-blog", &blog)).unwrap();
    let run = |args: &[&str]| {
        epimem_command(&db)
            .args(args)
            .env("HOME", &home)
            .env_remove("CLAUDE_CONFIG_DIR")
            .current_dir(&shop)
            .output()
            .unwrap()
    };
    let report = |args: &[&str]| -> Value { json_lines(&run(args)).remove(0) };

    let dry = report(&["hooks", "backfill", "--agent", "claude", "--dry-run", "--json"]);
    assert_eq!(
        (dry["sessions_found"].as_u64(), dry["sessions_recorded"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(
        (dry["messages"].as_u64(), dry["skipped_other_project"].as_u64()),
        (Some(5), Some(1))
    );
    assert_eq!(
        json_lines(&run(&["stats", "--json"]))[0]["messages"],
        0,
        "a dry run records nothing"
    );

    let done = report(&["hooks", "backfill", "--agent", "claude", "--json"]);
    assert_eq!(
        (done["sessions_recorded"].as_u64(), done["work_units"].as_u64()),
        (Some(1), Some(1))
    );
    let shown = json_lines(&run(&["episodes", "--json"]));
    let episode = &shown[0]["episodes"][0];
    assert_eq!(episode["conversation"], "s-shop");
    let detail = json_lines(&run(&["show", "--json", episode["id"].as_str().unwrap()])).remove(0);
    let said: Vec<(String, String)> = detail["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (m["role"].as_str().unwrap().to_owned(), m["content"].as_str().unwrap().to_owned())
        })
        .collect();
    assert_eq!(said[0], ("user".into(), "The checkout test is flaky; find out why".into()));
    assert_eq!(said[1], ("assistant".into(), "Running it a few times.".into()));
    assert!(
        said[2].0 == "tool"
            && said[2].1.contains("cargo test checkout")
            && said[2].1.contains("FAILED"),
        "{said:?}"
    );
    assert!(
        said[3].1.contains("--test-threads=1") && said[3].1.contains("test checkout ... ok"),
        "{said:?}"
    );
    assert_eq!(said[4].1, "It passes alone: the tests share a cart fixture.");
    assert_eq!(said.len(), 5, "the sub-agent's and the meta entries are left out: {said:?}");
    assert_eq!(detail["skeleton"]["failures"], 1, "{}", detail["skeleton"]);

    // Every project's, then again: what is in memory is left as it is.
    let all = report(&["hooks", "backfill", "--agent", "claude", "--all", "--json"]);
    assert_eq!(
        (all["sessions_recorded"].as_u64(), all["skipped_already_recorded"].as_u64()),
        (Some(1), Some(1))
    );
    let again = report(&["hooks", "backfill", "--agent", "claude", "--all", "--json"]);
    assert_eq!(again["sessions_recorded"], 0);

    // A transcript that cannot be read is said, and the rest still recorded.
    std::fs::write(sessions.join("-shop/broken.jsonl"), [0xff, 0xfe, b'\n']).unwrap();
    let out = run(&["hooks", "backfill", "--agent", "claude", "--all"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("broken.jsonl"));
}
