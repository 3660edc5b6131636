//! What must hold whatever the store or the session does: the agent's turn never fails, no
//! secret is kept, settings are merged and unmerged exactly, the cutting is left to a worker.

use std::{
    path::Path,
    process::Output,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use super::Claude;
use crate::common::listed;

#[test]
fn a_locked_missing_or_corrupt_store_never_fails_the_turn() {
    let claude = Claude::new("");
    let session = claude.session("x1");
    let prompt = |db: &Path, text: &str| {
        let event = json!({"session_id": "x1", "cwd": session.cwd, "hook_event_name": "UserPromptSubmit", "prompt": text});
        claude.hook_on(db, &event.to_string())
    };
    let check = |(out, took): (Output, Duration), what: &str| {
        assert!(out.status.success(), "{what}");
        assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{what}: {out:?}");
        assert!(took < Duration::from_secs(2), "{what} took {took:?}");
    };
    // Not even an event.
    check(claude.hook_on(&claude.db, "this is not json"), "garbage");
    assert!(claude.log().contains("not a hook event"));

    // Locked: another process holds the database's write lock.
    check(prompt(&claude.db, "first prompt about the refund webhook"), "the first prompt");
    let lock = rusqlite::Connection::open(&claude.db).unwrap();
    lock.execute_batch("BEGIN EXCLUSIVE").unwrap();
    check(prompt(&claude.db, "second prompt while the database is locked"), "locked");
    assert!(claude.log().contains("kept and stored by a later hook"), "{}", claude.log());
    drop(lock);
    // The next hook stores the kept event first.
    check(prompt(&claude.db, "third prompt once the lock is gone"), "after the lock");
    let pending = claude.run(&["flush"]);
    assert!(pending.status.success());
    let texts: Vec<String> = claude
        .episodes("x1")
        .iter()
        .flat_map(|e| e["messages"].as_array().unwrap().clone())
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(texts.iter().filter(|t| t.contains("prompt")).count(), 3, "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("while the database is locked")));

    // Missing: no database yet, nor its folder (a first session after `hooks install`): both
    // are made, as by any command, and the turn goes on.
    check(
        prompt(&claude.dir.path().join("gone/memory.db"), "a prompt with no database"),
        "missing",
    );
    // Corrupt: the file is not a database.
    let corrupt = claude.dir.path().join("corrupt.db");
    std::fs::write(&corrupt, vec![0x5a; 8192]).unwrap();
    check(prompt(&corrupt, "a prompt into a broken database"), "corrupt");
    let log =
        std::fs::read_to_string(claude.dir.path().join("corrupt.db.hooks/hooks.log")).unwrap();
    assert!(log.contains("cannot open the database"), "{log}");
}

#[test]
fn secrets_a_session_shows_are_in_no_file_of_the_memory() {
    let claude = Claude::new("");
    let mut s = claude.session("k1");
    s.prompt("Deploy with the token ghp_Zk3v9QmW2xTf8LpR4nYc6HbJ1sDa5uEo7gKi please");
    s.bash(
        "OPENAI_API_KEY=sk-proj-Qw3rTy8uIo2pAs5dFg7hJk9lZx ./deploy.sh --db postgres://app:Hunt3rPassw0rd@db/shop",
        "deployed; AWS key AKIAQWERTYUIOPASDFGH in use",
    );
    s.end();
    claude.close("k1");
    let episodes = claude.episodes("k1");
    let text = episodes[0]["messages"].to_string();
    assert!(text.contains("[redacted]") && text.contains("./deploy.sh"), "{text}");
    for secret in [
        "ghp_Zk3v9QmW2xTf8LpR4nYc6HbJ1sDa5uEo7gKi",
        "sk-proj-Qw3rTy8uIo2pAs5dFg7hJk9lZx",
        "Hunt3rPassw0rd",
        "AKIAQWERTYUIOPASDFGH",
    ] {
        assert_eq!(
            crate::common::in_some_file(claude.dir.path(), secret),
            None,
            "{secret} was stored"
        );
    }
}

#[test]
fn epimem_hook_and_the_hook_binary_record_and_answer_alike() {
    let claude = Claude::new("");
    super::debugging(&claude, "s1");
    claude.close("s1");
    let prompt = "the refund webhook test is failing again after the mock server change";
    let event = |session: &str| {
        json!({"session_id": session, "cwd": claude.project, "hook_event_name": "UserPromptSubmit",
            "prompt": prompt})
        .to_string()
    };
    let mut subcommand = std::process::Command::new(env!("CARGO_BIN_EXE_epimem"));
    subcommand.arg("hook");
    let (by_subcommand, _) = claude.hook_with(subcommand, &claude.db, &event("s2"));
    let (by_binary, _) = claude.hook_on(&claude.db, &event("s3"));
    assert!(by_subcommand.status.success() && by_binary.status.success());
    let told = String::from_utf8_lossy(&by_binary.stdout);
    assert!(told.contains("Earlier work in this project"), "{told}");
    assert_eq!(by_subcommand.stdout, by_binary.stdout);
    claude.close("s2");
    claude.close("s3");
    let stored = |session: &str| claude.episodes(session)[0]["messages"][0]["content"].clone();
    assert_eq!(stored("s2"), prompt);
    assert_eq!(stored("s3"), prompt);

    // A command line the hook cannot read is said on stderr, never with Claude Code's
    // "block this prompt" exit code 2.
    let mut wrong = std::process::Command::new(env!("CARGO_BIN_EXE_epimem-hook"));
    wrong.arg("--colour");
    let (out, _) = claude.hook_with(wrong, &claude.db, &event("s4"));
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--colour"), "{out:?}");
}

#[test]
fn hooks_install_merges_into_settings_and_uninstall_removes_exactly_that() {
    let claude = Claude::new("");
    let settings = claude.project.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let theirs = json!({"permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}]}});
    std::fs::write(&settings, serde_json::to_string_pretty(&theirs).unwrap()).unwrap();
    let project = claude.project.to_str().unwrap();
    for _ in 0..2 {
        let out = claude.run(&["hooks", "install", "--project", project]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let installed: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SessionEnd",
    ] {
        let commands: Vec<&str> = installed["hooks"][event]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["hooks"].as_array().unwrap())
            .filter_map(|h| h["command"].as_str())
            .filter(|c| c.contains("epimem"))
            .collect();
        assert_eq!(commands.len(), 1, "{event}: {installed:#}");
        // The hook binary beside `epimem`, which starts faster than `epimem hook`.
        let program = env!("CARGO_BIN_EXE_epimem-hook");
        assert!(commands[0].starts_with(&format!("{program} --db ")), "{}", commands[0]);
        assert!(commands[0].contains(claude.db.to_str().unwrap()), "{}", commands[0]);
        assert!(commands[0].contains(claude.config.to_str().unwrap()), "{}", commands[0]);
    }
    assert_eq!(installed["hooks"]["PostToolUse"][0]["hooks"][0]["command"], "prettier --write");
    assert_eq!(installed["permissions"], theirs["permissions"]);
    let out = claude.run(&["hooks", "uninstall", "--project", project]);
    assert!(out.status.success());
    let restored: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(restored, theirs);

    // A file Claude Code could not read is left as it is.
    std::fs::write(&settings, "{ not json").unwrap();
    let out = claude.run(&["hooks", "install", "--project", project]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid JSON"));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{ not json");
}

#[test]
fn a_session_end_leaves_the_cutting_to_a_background_worker() {
    let claude = Claude::new("[hooks]\nbackground = true\n");
    let mut s = claude.session("bg1");
    s.prompt("Bump the tokio dependency to the latest 1.x release");
    s.bash("cargo update -p tokio", "Updating tokio v1.40.0 -> v1.48.0");
    s.reply("Updated tokio.");
    let started = Instant::now();
    s.end();
    assert!(started.elapsed() < Duration::from_secs(2), "the hook waited for the worker");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let episodes = listed(&claude.run(&["episodes", "--json"]), "episodes");
        if !episodes.is_empty() {
            assert_eq!(episodes[0]["message_count"], 3);
            break;
        }
        assert!(Instant::now() < deadline, "no worker cut the session: {}", claude.log());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Without a server, the flush a session's end starts cuts that session only: the work another
/// session left queued is run by the tick the next session's start begins.
#[test]
fn without_a_server_a_queued_session_is_cut_when_the_next_session_starts() {
    let claude = Claude::new("[hooks]\nbackground = true\n");
    let episodes_of = |session: &str| {
        listed(&claude.run(&["episodes", "--json", "--conversation", session]), "episodes").len()
    };
    let wait_for = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done() {
            assert!(Instant::now() < deadline, "{what}: {}", claude.log());
            std::thread::sleep(Duration::from_millis(200));
        }
    };

    // A long session of two pieces of work whose window filled: its cutting is queued (the
    // first piece closes when it runs), and nothing has run it.
    let mut long = claude.session("long1");
    long.prompt("Profile the checkout service and find what makes it slow");
    for i in 0..12 {
        long.bash(&format!("curl -s localhost:8080/checkout?run={i}"), "200 OK in 840 ms");
    }
    long.prompt("Now write release notes for version 2.4 of the mobile app");
    for i in 0..12 {
        long.bash(&format!("git log --oneline v2.3..v2.4 -- app/screen{i}"), "a1b2c3 fix layout");
    }
    let stats = String::from_utf8(claude.run(&["stats"]).stdout).unwrap();
    let queued = stats.lines().find(|l| l.starts_with("jobs queued")).unwrap();
    assert!(!queued.ends_with(" 0"), "the full window queued no job: {stats}");

    // Another session ends: its flush cuts it, and leaves the long session's job queued.
    let mut short = claude.session("short1");
    short.prompt("Bump the tokio dependency to the latest 1.x release");
    short.bash("cargo update -p tokio", "Updating tokio v1.40.0 -> v1.48.0");
    short.reply("Updated tokio.");
    short.end();
    wait_for("the ended session was not cut", &|| episodes_of("short1") > 0);
    assert_eq!(episodes_of("long1"), 0, "a session's flush ran another session's job");

    // The next session's start ticks: the long session's queued job runs.
    claude.session("next1").start();
    wait_for("the queued session was not cut at the next start", &|| episodes_of("long1") > 0);
}

/// Each agent's files before `hooks install`: someone's hook, someone's MCP server, a comment.
fn theirs(agent: &str) -> Vec<(&'static str, String)> {
    let hook = json!({"PostToolUse": [{"matcher": "Edit",
        "hooks": [{"type": "command", "command": "prettier --write"}]}]});
    let server = json!({"github": {"command": "gh-mcp"}});
    match agent {
        "claude" => vec![
            (".claude/settings.json", json!({"hooks": hook}).to_string()),
            (".mcp.json", json!({"mcpServers": server}).to_string()),
        ],
        "codex" => vec![
            (".codex/hooks.json", json!({"hooks": hook}).to_string()),
            (
                ".codex/config.toml",
                "# mine\nmodel = \"o4\"\n\n[mcp_servers.github]\ncommand = \"gh-mcp\"\n".into(),
            ),
        ],
        "opencode" => vec![(
            "opencode.json",
            json!({"model": "local/x", "mcp": {"github": {"type": "local", "command": ["gh-mcp"]}},
                "plugin": ["opencode-wakatime"]})
            .to_string(),
        )],
        _ => vec![(
            ".gemini/settings.json",
            json!({"theme": "dark", "hooks": hook, "mcpServers": server}).to_string(),
        )],
    }
}

#[test]
fn every_agent_gets_hooks_and_a_server_once_and_loses_exactly_them() {
    for agent in ["claude", "codex", "gemini", "opencode"] {
        let claude = Claude::new("");
        let project = claude.project.to_str().unwrap();
        for (file, text) in theirs(agent) {
            let path = claude.project.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let install = ["hooks", "install", "--agent", agent, "--project", project];
        for _ in 0..2 {
            let out = claude.run(&install);
            assert!(out.status.success(), "{agent}: {}", String::from_utf8_lossy(&out.stderr));
        }
        let read = |file: &str| std::fs::read_to_string(claude.project.join(file)).unwrap();
        let mut files: Vec<&str> = theirs(agent).iter().map(|(f, _)| *f).collect();
        if agent == "opencode" {
            files.push(".opencode/plugins/epimem.js");
        }
        let all: String = files.iter().map(|f| read(f)).collect();
        // One hook command per event, naming the agent (opencode's plugin runs one for all);
        // one server.
        let (hooks, named) = match agent {
            "claude" => (6, 0),
            "opencode" => (1, 1),
            _ => (5, 5),
        };
        assert_eq!(all.matches("epimem-hook").count(), hooks, "{agent}: {all}");
        // (The plugin's comments name `--agent` too: its command line is a JSON array.)
        let flag = if agent == "opencode" { "\"--agent\",\"opencode\"" } else { "--agent" };
        assert_eq!(all.matches(flag).count(), named, "{agent}: {all}");
        assert!(all.contains("gh-mcp"), "{all}");
        assert!(agent == "opencode" || all.contains("prettier --write"), "{all}");
        // `epimem mcp` once (opencode's settings name their servers under "mcp" too).
        let mcp = all.matches("\"mcp\"").count();
        assert_eq!(mcp, if agent == "opencode" { 2 } else { 1 }, "{agent}: {all}");
        let out = claude.run(&["hooks", "uninstall", "--agent", agent, "--project", project]);
        assert!(out.status.success());
        for (file, text) in theirs(agent) {
            let now = read(file);
            if file.ends_with(".toml") {
                assert_eq!(now, text, "{agent}: {file}");
            } else {
                let now: Value = serde_json::from_str(&now).unwrap();
                assert_eq!(now, serde_json::from_str::<Value>(&text).unwrap(), "{agent}: {file}");
            }
        }
        assert!(!claude.project.join(".opencode/plugins/epimem.js").exists());
        // Into a project with no settings, and out again: nothing is left behind.
        let bare = claude.dir.path().join("bare");
        std::fs::create_dir_all(&bare).unwrap();
        let bare_dir = bare.to_str().unwrap();
        claude.run(&["hooks", "install", "--agent", agent, "--project", bare_dir]);
        claude.run(&["hooks", "uninstall", "--agent", agent, "--project", bare_dir]);
        let left: Vec<_> = walk(&bare);
        assert!(left.is_empty(), "{agent}: {left:?}");
    }
}

/// The files under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() { files.extend(walk(&path)) } else { files.push(path) }
    }
    files
}

#[test]
fn codex_and_gemini_events_never_fail_the_turn_either() {
    let claude = Claude::new("");
    let corrupt = claude.dir.path().join("corrupt.db");
    std::fs::write(&corrupt, vec![0x5a; 8192]).unwrap();
    let cwd = claude.project.to_str().unwrap();
    for (agent, event) in [
        (
            "codex",
            json!({"session_id": "c1", "turn_id": "t1", "cwd": cwd, "hook_event_name": "Stop", "last_assistant_message": "done"}),
        ),
        (
            "gemini",
            json!({"session_id": "g1", "cwd": cwd, "hook_event_name": "BeforeAgent", "prompt": "hello"}),
        ),
    ] {
        for db in [&corrupt, &claude.db] {
            let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_epimem-hook"));
            command.args(["--agent", agent]);
            let (out, took) = claude.hook_with(command, db, &event.to_string());
            assert!(out.status.success() && out.stderr.is_empty(), "{agent}: {out:?}");
            assert!(took < Duration::from_secs(2), "{agent} took {took:?}");
        }
    }
    // An agent the hook does not know is its command line's mistake: said, exit 0.
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_epimem-hook"));
    command.args(["--agent", "cursor"]);
    let (out, _) = claude.hook_with(command, &claude.db, "{}");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no agent \"cursor\""), "{out:?}");
    claude.run(&["flush"]);
    let stored = claude.episodes("c1");
    let text = stored.iter().flat_map(|e| e["messages"].as_array().unwrap().clone());
    assert!(text.map(|m| m["content"].clone()).any(|c| c == "done"), "{stored:?}");
}

/// A full disk: the database, its journal, the spool and the log all on a 512 KiB filesystem
/// that is then filled. Mounted in a user and mount namespace of the test's own
/// (`unshare -Urm`); where the machine allows none, the test says so and passes.
#[test]
fn a_full_disk_never_fails_the_turn() {
    let claude = Claude::new("");
    let disk = claude.dir.path().join("disk");
    std::fs::create_dir_all(&disk).unwrap();
    let cwd = claude.project.to_str().unwrap();
    let first = json!({"session_id": "f1", "cwd": cwd, "hook_event_name": "UserPromptSubmit",
        "prompt": "the first prompt, before the disk is full"});
    let prompt = json!({"session_id": "f1", "cwd": cwd, "hook_event_name": "UserPromptSubmit",
        "prompt": format!("a prompt on a full disk {}", "with many words ".repeat(400))});
    std::fs::write(claude.dir.path().join("first.json"), first.to_string()).unwrap();
    std::fs::write(claude.dir.path().join("prompt.json"), prompt.to_string()).unwrap();
    let script = r#"
        mount -t tmpfs -o size=512k tmpfs "$DISK" || exit 99
        "$HOOK" --db "$DISK/m.db" --config "$CONFIG" < "$DIR/first.json" || exit 98
        dd if=/dev/zero of="$DISK/fill" bs=4k 2>/dev/null
        start=$(date +%s%N)
        "$HOOK" --db "$DISK/m.db" --config "$CONFIG" < "$DIR/prompt.json" > "$DIR/out" 2>&1
        rc=$?
        echo "$rc $(( ($(date +%s%N) - start) / 1000000 ))"
        ls -la "$DISK" "$DISK/m.db.hooks" 2>&1
    "#;
    let out = std::process::Command::new("unshare")
        .args(["-Urm", "sh", "-c", script])
        .env("DISK", &disk)
        .env("DIR", claude.dir.path())
        .env("CONFIG", &claude.config)
        .env("HOOK", env!("CARGO_BIN_EXE_epimem-hook"))
        .env("EPIMEM_EMBEDDER", "hash")
        .env_remove("EPIMEM_TENANT")
        .output();
    let out = match out {
        Ok(out) if out.status.code() != Some(99) && out.status.code() != Some(1) => out,
        other => {
            eprintln!("skipped: no filesystem of the test's own could be mounted: {other:?}");
            return;
        }
    };
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    let (rc, ms) = said.lines().next().and_then(|l| l.split_once(' ')).expect(&said);
    assert_eq!(rc, "0", "the hook failed on a full disk: {said}");
    let ms: u64 = ms.parse().unwrap();
    assert!(ms < 2000, "the hook took {ms} ms on a full disk");
    let printed = std::fs::read_to_string(claude.dir.path().join("out")).unwrap();
    assert!(printed.is_empty(), "a hook says nothing on a full disk: {printed}");
}
