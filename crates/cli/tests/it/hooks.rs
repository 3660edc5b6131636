//! `epimem hook` driven as Claude Code drives it: one process per event, JSON on standard
//! input, the agent's replies in a transcript the hooks read as it grows.

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::common::{epimem, json_lines};

/// A machine with Claude Code on it: a database, a project (a git repository), settings.
struct Claude {
    dir: tempfile::TempDir,
    db: PathBuf,
    config: PathBuf,
    project: PathBuf,
}

impl Claude {
    /// `settings` is added to the configuration file; by default hooks start no worker (the
    /// tests run `epimem tick` where a worker would have run).
    fn new(settings: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("shop");
        std::fs::create_dir_all(project.join(".git")).unwrap();
        std::fs::create_dir_all(project.join("src")).unwrap();
        let config = dir.path().join("epimem.toml");
        let settings = if settings.contains("[hooks]") {
            settings.to_owned()
        } else {
            format!("[hooks]\nbackground = false\n{settings}")
        };
        std::fs::write(&config, settings).unwrap();
        let db = dir.path().join("memory.db");
        Self { dir, db, config, project }
    }

    fn session(&self, id: &str) -> Session<'_> {
        self.session_in(id, self.project.clone())
    }

    fn session_in(&self, id: &str, cwd: PathBuf) -> Session<'_> {
        let transcript = self.dir.path().join(format!("{id}.jsonl"));
        std::fs::write(&transcript, "").unwrap();
        Session { claude: self, id: id.into(), transcript, cwd, entries: 0 }
    }

    /// Runs `epimem hook` with `event` on standard input.
    fn hook_on(&self, db: &Path, event: &str) -> (Output, Duration) {
        let started = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_epimem"))
            .arg("--db")
            .arg(db)
            .arg("--config")
            .arg(&self.config)
            .arg("hook")
            .env_remove("EPIMEM_TENANT")
            .env_remove("EPIMEM_LLM_URL")
            .env("EPIMEM_EMBEDDER", "hash")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(event.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        (out, started.elapsed())
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut all = vec!["--config", self.config.to_str().unwrap()];
        all.extend_from_slice(args);
        epimem(&self.db, &all)
    }

    /// What the hook starts in the background when a session ends (here switched off, so
    /// the tests say when): close everything the session left pending.
    fn close(&self, session: &str) {
        let out = self.run(&["flush", "--conversation", session]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    /// Episodes with their messages and skeletons, oldest first.
    fn episodes(&self, session: &str) -> Vec<Value> {
        json_lines(&self.run(&["episodes", "--json", "--conversation", session]))
            .iter()
            .map(|e| {
                json_lines(&self.run(&["show", "--json", e["id"].as_str().unwrap()])).remove(0)
            })
            .collect()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("memory.db.hooks/hooks.log"))
            .unwrap_or_default()
    }
}

struct Session<'a> {
    claude: &'a Claude,
    id: String,
    transcript: PathBuf,
    cwd: PathBuf,
    entries: usize,
}

impl Session<'_> {
    /// Sends an event; the hook must succeed silently on stderr. Returns what it printed.
    fn event(&self, name: &str, fields: Value) -> String {
        let mut event = json!({
            "session_id": self.id,
            "transcript_path": self.transcript,
            "cwd": self.cwd,
            "hook_event_name": name,
        });
        event.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        let (out, _) = self.claude.hook_on(&self.claude.db, &event.to_string());
        assert!(out.status.success());
        assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// The context a SessionStart or UserPromptSubmit hook added ("" for none).
    fn context(printed: &str, event: &str) -> String {
        if printed.trim().is_empty() {
            return String::new();
        }
        let value: Value = serde_json::from_str(printed).unwrap();
        assert_eq!(value["hookSpecificOutput"]["hookEventName"], event);
        value["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_owned()
    }

    fn start(&self) -> String {
        Self::context(&self.event("SessionStart", json!({"source": "startup"})), "SessionStart")
    }

    fn prompt(&self, text: &str) -> String {
        Self::context(&self.event("UserPromptSubmit", json!({"prompt": text})), "UserPromptSubmit")
    }

    /// The agent says something: Claude Code appends it to the transcript.
    fn reply(&mut self, text: &str) {
        self.entries += 1;
        let entry = json!({
            "type": "assistant",
            "uuid": format!("{}-a{}", self.id, self.entries),
            "timestamp": "2026-11-20T09:00:00Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}
        });
        let mut file = std::fs::OpenOptions::new().append(true).open(&self.transcript).unwrap();
        writeln!(file, "{entry}").unwrap();
    }

    fn tool(&mut self, name: &str, input: Value, response: Value) {
        self.entries += 1;
        let id = format!("{}-t{}", self.id, self.entries);
        self.event("PostToolUse", json!({"tool_name": name, "tool_input": input, "tool_response": response, "tool_use_id": id}));
    }

    fn fail(&mut self, name: &str, input: Value, error: &str) {
        self.entries += 1;
        let id = format!("{}-t{}", self.id, self.entries);
        self.event(
            "PostToolUseFailure",
            json!({"tool_name": name, "tool_input": input, "error": error, "tool_use_id": id}),
        );
    }

    fn read(&mut self, file: &str) {
        let path = self.cwd.join(file);
        self.tool(
            "Read",
            json!({"file_path": path}),
            json!({"type": "text", "file": {"filePath": path, "content": "fn main() {}"}}),
        );
    }

    fn edit(&mut self, file: &str) {
        let path = self.cwd.join(file);
        self.tool(
            "Edit",
            json!({"file_path": path, "old_string": "a", "new_string": "b"}),
            json!({"filePath": path}),
        );
    }

    fn bash(&mut self, command: &str, stdout: &str) {
        self.tool(
            "Bash",
            json!({"command": command}),
            json!({"stdout": stdout, "stderr": "", "interrupted": false}),
        );
    }

    fn stop(&self) {
        assert_eq!(self.event("Stop", json!({"stop_hook_active": false})), "");
    }

    fn end(&self) {
        assert_eq!(self.event("SessionEnd", json!({"reason": "exit"})), "");
    }
}

/// A bug hunt: one request, a failing test, reading, a fix, a commit.
fn debugging(claude: &Claude, id: &str) {
    let mut s = claude.session(id);
    assert_eq!(s.start(), "", "nothing is known of the project yet");
    s.prompt("The refund webhook test fails since yesterday's merge, can you find out why?");
    s.reply("Let me run the test first.");
    s.fail(
        "Bash",
        json!({"command": "cargo test refund_webhook"}),
        "thread 'refund_webhook' panicked: connection refused (os error 111)",
    );
    s.read("src/webhook.rs");
    s.tool(
        "Grep",
        json!({"pattern": "mock_server", "path": s.cwd.join("src")}),
        json!({"filenames": ["src/webhook.rs", "tests/webhook.rs"]}),
    );
    s.reply(
        "The mock server binds its port asynchronously, so the test connects before it listens.",
    );
    s.prompt("ok fix it");
    s.edit("tests/webhook.rs");
    s.edit("src/webhook.rs");
    s.bash("cargo test refund_webhook", "test refund_webhook ... ok");
    s.bash(
        "git commit -am 'Wait for the mock server port before the refund webhook test'",
        "[main 3f2a1c0] Wait for the mock server port",
    );
    s.reply("Committed: the test now waits for the mock server's port.");
    s.stop();
    s.end();
}

#[test]
fn a_debugging_session_is_one_work_unit_with_its_skeleton() {
    let claude = Claude::new("");
    debugging(&claude, "s1");
    claude.close("s1");
    let episodes = claude.episodes("s1");
    assert_eq!(episodes.len(), 1, "{episodes:#?}");
    let e = &episodes[0];
    let messages = e["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    // Two prompts, three replies (each read once from the transcript), seven actions.
    assert_eq!(roles.iter().filter(|r| **r == "user").count(), 2);
    assert_eq!(roles.iter().filter(|r| **r == "assistant").count(), 3);
    assert_eq!(roles.iter().filter(|r| **r == "tool").count(), 7);
    // A reply comes before the action that followed it.
    assert_eq!(roles[..3], ["user", "assistant", "tool"]);
    let skeleton = &e["skeleton"];
    assert_eq!(skeleton["prompts"], 2);
    assert_eq!(
        (skeleton["investigate"].as_u64(), skeleton["execute"].as_u64()),
        (Some(2), Some(5))
    );
    assert_eq!(skeleton["failures"], 1);
    assert_eq!(skeleton["failed"], json!(["cargo test refund_webhook"]));
    assert_eq!(skeleton["hot_files"][0], "src/webhook.rs");
    assert!(skeleton["hot_files"].as_array().unwrap().contains(&json!("tests/webhook.rs")));
    assert_eq!(skeleton["commits"].as_array().unwrap().len(), 1);
    let summary = e["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("Intent: The refund webhook test fails since yesterday's merge"),
        "{summary}"
    );
    assert!(summary.contains("Completed: git commit"), "{summary}");
    let title = e["title"].as_str().unwrap().to_lowercase();
    assert!(title.contains("refund") && title.contains("webhook"), "{title}");
    assert_eq!(claude.log(), "", "nothing went wrong");
}

#[test]
fn a_feature_session_is_cut_at_each_new_intent_and_after_a_commit() {
    let claude = Claude::new("");
    let mut s = claude.session("f1");
    s.start();
    s.prompt("Add a CSV export button to the orders page in the admin dashboard");
    s.read("src/admin/orders.tsx");
    s.edit("src/admin/orders.tsx");
    s.reply("Added an Export CSV button that downloads the visible orders.");
    s.prompt("the CSV export should include the order totals and the customer email");
    s.edit("src/admin/export.ts");
    s.prompt("now write tests for the CSV export of orders");
    s.edit("src/admin/export.test.ts");
    s.bash("npm test -- export", "2 passed");
    s.bash(
        "git add -A && git commit -m 'CSV export of orders'",
        "[main 9e1d2aa] CSV export of orders",
    );
    s.reply("Committed the CSV export with its tests.");
    s.prompt("update the README install section for the new docker image");
    s.edit("README.md");
    s.prompt("the docker image tag in the README should be 2.4 not latest");
    s.edit("README.md");
    s.prompt("now add a dark mode toggle to the settings page");
    s.read("src/settings/page.tsx");
    s.edit("src/settings/page.tsx");
    s.reply("The settings page has a dark mode toggle stored in local storage.");
    s.end();
    claude.close("f1");
    let episodes = claude.episodes("f1");
    let told: Vec<(String, String)> = episodes
        .iter()
        .map(|e| {
            (
                e["title"].as_str().unwrap().to_lowercase(),
                e["boundary_reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(told.len(), 3, "{told:#?}");
    assert!(told[0].0.contains("csv") || told[0].0.contains("export"), "{told:?}");
    assert!(told[1].0.contains("readme") || told[1].0.contains("docker"), "{told:?}");
    assert!(told[2].0.contains("dark") || told[2].0.contains("settings"), "{told:?}");
    // The first unit ends at the commit's next prompt, the second at the new intent.
    assert_eq!(told[0].1, "commit");
    assert_eq!(told[1].1, "intent_shift");
    assert_eq!(episodes[0]["skeleton"]["prompts"], 3);
    assert_eq!(episodes[0]["skeleton"]["commits"].as_array().unwrap().len(), 1);
    assert_eq!(episodes[1]["skeleton"]["hot_files"], json!(["README.md"]));
}

#[test]
fn with_a_language_model_each_work_unit_is_told_as_a_story_and_cut_where_the_user_moved_on() {
    use epimem_llm::scripted::{Reply, ScriptedServer};
    let server = ScriptedServer::start([]);
    server.otherwise(|asked| {
        let user = asked.message("user").to_lowercase();
        let (title, intent) = if user.contains("dark mode") {
            ("Dark mode toggle on the settings page", "Add a dark mode toggle")
        } else {
            ("Retries for the refund webhook sender", "Make the sender retry")
        };
        Reply::Answer(
            json!({"title": title, "intent": intent, "what_happened": "The agent edited the code and ran the tests.",
                   "learned": "", "completed": "", "notes": ""})
            .to_string(),
        )
    });
    let claude = Claude::new(&format!("[llm]\nurl = \"{}\"\nmodel = \"scripted\"\n", server.url()));
    let mut s = claude.session("l1");
    s.prompt("Add retries with exponential backoff to the refund webhook sender");
    s.edit("src/sender.rs");
    s.bash("cargo test sender", "ok");
    s.prompt("now add a dark mode toggle to the settings page");
    s.edit("src/settings/page.tsx");
    s.end();
    claude.close("l1");
    let episodes = claude.episodes("l1");
    let titles: Vec<&str> = episodes.iter().map(|e| e["title"].as_str().unwrap()).collect();
    assert_eq!(
        titles,
        ["Retries for the refund webhook sender", "Dark mode toggle on the settings page"]
    );
    assert!(episodes.iter().all(|e| e["told_by"] == "llm"));
    assert!(episodes[0]["summary"].as_str().unwrap().starts_with("Intent: Make the sender retry."));
    assert_eq!(episodes[0]["skeleton"]["hot_files"], json!(["src/sender.rs"]));
    // One story a unit (and the facts the consolidation asks for), no cutting by the model.
    let asked: Vec<String> =
        server.received().iter().map(|r| r.message("system").to_owned()).collect();
    let stories = asked.iter().filter(|s| s.starts_with("You write down an episode of work"));
    assert_eq!(stories.count(), 2, "{asked:#?}");
    assert!(
        asked.iter().all(|s| s.starts_with("You write down")
            || s.starts_with("You keep a list of lasting facts")),
        "{asked:#?}"
    );
}

#[test]
fn terse_prompts_continue_the_work_they_answer() {
    let claude = Claude::new("");
    let mut s = claude.session("t1");
    s.prompt("Rename the fetchUser helper to loadUser across the web client");
    s.tool(
        "Grep",
        json!({"pattern": "fetchUser"}),
        json!({"filenames": ["src/api.ts", "src/profile.tsx"]}),
    );
    s.reply("fetchUser is used in 2 files. Options: 1. rename only 2. rename and add a deprecated alias");
    for (prompt, file) in [("2", "src/api.ts"), ("yes", "src/profile.tsx"), ("do it", "src/api.ts")]
    {
        s.prompt(prompt);
        s.edit(file);
    }
    s.bash("npm run typecheck", "ok");
    s.prompt("ok push");
    s.bash("git push", "main -> main");
    s.end();
    claude.close("t1");
    let episodes = claude.episodes("t1");
    assert_eq!(episodes.len(), 1, "{episodes:#?}");
    assert_eq!(episodes[0]["skeleton"]["prompts"], 5);
    assert_eq!(episodes[0]["boundary_reason"], "flush");
}

#[test]
fn the_next_session_is_told_the_project_memory_and_a_matching_prompt_the_work_it_matches() {
    let claude = Claude::new("[work]\nrecent_episodes = 1\n");
    debugging(&claude, "s1");
    claude.close("s1");
    // A second session fails the same way, on other work.
    let mut s2 = claude.session("s2");
    s2.start();
    s2.prompt("Add retries with exponential backoff to the refund webhook sender");
    s2.edit("src/sender.rs");
    s2.fail("Bash", json!({"command": "cargo test refund_webhook"}), "connection refused");
    s2.reply("The retries are in; the webhook test still needs the mock server.");
    s2.end();
    claude.close("s2");

    let s3 = claude.session("s3");
    let context = s3.start();
    let recent = context.find("Recent work").expect(&context);
    let failures = context.find("Known failures").expect(&context);
    let earlier = context.find("Earlier sessions").expect(&context);
    assert!(recent < failures && failures < earlier, "{context}");
    // The newest episode whole, with its files; the older session by its summary.
    assert!(context[recent..failures].to_lowercase().contains("retries"), "{context}");
    assert!(context[recent..failures].contains("src/sender.rs"), "{context}");
    assert!(
        context[failures..earlier].contains("`cargo test refund_webhook` failed in 2 sessions"),
        "{context}"
    );
    assert!(context[earlier..].to_lowercase().contains("refund webhook"), "{context}");

    // A prompt about that work is given it; one about something new is given nothing.
    let matched =
        s3.prompt("the refund webhook test is failing again after the mock server change");
    assert!(matched.contains("Earlier work in this project"), "{matched}");
    assert!(matched.contains("src/webhook.rs"), "{matched}");
    assert_eq!(s3.prompt("add a dark mode toggle to the settings page"), "");

    // Another project knows nothing of this one.
    let other = claude.dir.path().join("blog");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    assert_eq!(claude.session_in("b1", other.join("posts")).start(), "");

    let patterns = claude.run(&[
        "patterns",
        "--project",
        claude.project.join("src").to_str().unwrap(),
        "--json",
    ]);
    let patterns = &json_lines(&patterns)[0];
    assert_eq!(patterns["failures"][0]["what"], "cargo test refund_webhook");
    assert_eq!(patterns["failures"][0]["sessions"], 2);
    assert_eq!(patterns["sessions"], 2);
}

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

    // Missing: the database's folder is gone.
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
        assert!(!crate::common::in_some_file(claude.dir.path(), secret), "{secret} was stored");
    }
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
            .filter(|c| c.contains(" hook "))
            .collect();
        assert_eq!(commands.len(), 1, "{event}: {installed:#}");
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
        let episodes = json_lines(&claude.run(&["episodes", "--json"]));
        if !episodes.is_empty() {
            assert_eq!(episodes[0]["message_count"], 3);
            break;
        }
        assert!(Instant::now() < deadline, "no worker cut the session: {}", claude.log());
        std::thread::sleep(Duration::from_millis(200));
    }
}
