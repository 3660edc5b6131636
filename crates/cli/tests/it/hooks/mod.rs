//! `epimem hook` driven as Claude Code drives it: one process per event, JSON on standard
//! input, the agent's replies in a transcript the hooks read as it grows.

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::common::{epimem, episodes_shown};

mod safety;
mod server;
mod sessions;

/// A machine with Claude Code on it: a database, a project (a git repository), settings.
pub(crate) struct Claude {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) db: PathBuf,
    pub(crate) config: PathBuf,
    pub(crate) project: PathBuf,
}

impl Claude {
    /// `settings` is added to the configuration file; by default hooks start no worker (the
    /// tests run `epimem tick` where a worker would have run).
    pub(crate) fn new(settings: &str) -> Self {
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

    pub(crate) fn session(&self, id: &str) -> Session<'_> {
        self.session_in(id, self.project.clone())
    }

    pub(crate) fn session_in(&self, id: &str, cwd: PathBuf) -> Session<'_> {
        let transcript = self.dir.path().join(format!("{id}.jsonl"));
        std::fs::write(&transcript, "").unwrap();
        Session { claude: self, id: id.into(), transcript, cwd, entries: 0 }
    }

    /// Runs `epimem-hook` (what `hooks install` sets up) with `event` on standard input.
    pub(crate) fn hook_on(&self, db: &Path, event: &str) -> (Output, Duration) {
        self.hook_with(Command::new(env!("CARGO_BIN_EXE_epimem-hook")), db, event)
    }

    /// Runs `command` (a hook's program and its arguments so far) on `db` with `event` on
    /// standard input.
    pub(crate) fn hook_with(
        &self,
        mut command: Command,
        db: &Path,
        event: &str,
    ) -> (Output, Duration) {
        let started = Instant::now();
        let mut child = command
            .arg("--db")
            .arg(db)
            .arg("--config")
            .arg(&self.config)
            .env_remove("EPIMEM_TENANT")
            .env_remove("EPIMEM_LLM_URL")
            .env("EPIMEM_EMBEDDER", "hash")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A hook that refuses its command line exits without reading: a closed pipe is its
        // answer, not the test's failure.
        match child.stdin.take().unwrap().write_all(event.as_bytes()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            written => written.unwrap(),
        }
        let out = child.wait_with_output().unwrap();
        (out, started.elapsed())
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        let mut all = vec!["--config", self.config.to_str().unwrap()];
        all.extend_from_slice(args);
        epimem(&self.db, &all)
    }

    /// What the hook starts in the background when a session ends (here switched off, so
    /// the tests say when): close everything the session left pending.
    pub(crate) fn close(&self, session: &str) {
        let out = self.run(&["flush", "--conversation", session]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    /// Episodes with their messages and skeletons, oldest first.
    pub(crate) fn episodes(&self, session: &str) -> Vec<Value> {
        episodes_shown(|args| self.run(args), &["--conversation", session])
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("memory.db.hooks/hooks.log"))
            .unwrap_or_default()
    }
}

pub(crate) struct Session<'a> {
    claude: &'a Claude,
    id: String,
    transcript: PathBuf,
    cwd: PathBuf,
    entries: usize,
}

impl Session<'_> {
    /// Sends an event; the hook must succeed silently on stderr. Returns what it printed.
    pub(crate) fn event(&self, name: &str, fields: Value) -> String {
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

    pub(crate) fn start(&self) -> String {
        Self::context(&self.event("SessionStart", json!({"source": "startup"})), "SessionStart")
    }

    pub(crate) fn prompt(&self, text: &str) -> String {
        Self::context(&self.event("UserPromptSubmit", json!({"prompt": text})), "UserPromptSubmit")
    }

    /// The agent says something: Claude Code appends it to the transcript.
    pub(crate) fn reply(&mut self, text: &str) {
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

    pub(crate) fn tool(&mut self, name: &str, input: Value, response: Value) {
        self.entries += 1;
        let id = format!("{}-t{}", self.id, self.entries);
        self.event("PostToolUse", json!({"tool_name": name, "tool_input": input, "tool_response": response, "tool_use_id": id}));
    }

    pub(crate) fn fail(&mut self, name: &str, input: Value, error: &str) {
        self.entries += 1;
        let id = format!("{}-t{}", self.id, self.entries);
        self.event(
            "PostToolUseFailure",
            json!({"tool_name": name, "tool_input": input, "error": error, "tool_use_id": id}),
        );
    }

    pub(crate) fn read(&mut self, file: &str) {
        let path = self.cwd.join(file);
        self.tool(
            "Read",
            json!({"file_path": path}),
            json!({"type": "text", "file": {"filePath": path, "content": "fn main() {}"}}),
        );
    }

    pub(crate) fn edit(&mut self, file: &str) {
        let path = self.cwd.join(file);
        self.tool(
            "Edit",
            json!({"file_path": path, "old_string": "a", "new_string": "b"}),
            json!({"filePath": path}),
        );
    }

    pub(crate) fn bash(&mut self, command: &str, stdout: &str) {
        self.tool(
            "Bash",
            json!({"command": command}),
            json!({"stdout": stdout, "stderr": "", "interrupted": false}),
        );
    }

    pub(crate) fn stop(&self) {
        assert_eq!(self.event("Stop", json!({"stop_hook_active": false})), "");
    }

    pub(crate) fn end(&self) {
        assert_eq!(self.event("SessionEnd", json!({"reason": "exit"})), "");
    }
}

/// A bug hunt: one request, a failing test, reading, a fix, a commit.
pub(crate) fn debugging(claude: &Claude, id: &str) {
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
