//! `epimem bench hook`: how long a coding agent waits for `epimem hook`, one process per
//! event as the agent runs them (its events' names and payloads), on a project with a history
//! of sessions behind it.

use std::{
    collections::BTreeMap,
    io::Write,
    path::Path,
    process::{Command, ExitCode, Stdio},
    time::Instant,
};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::{Value, json};

use epimem_app::hook_program;
use epimem_hooks::{Agent, EventKind};

use super::percentile;
use epimem_app::config::AppConfig;

#[derive(Debug, Args)]
pub struct HookBenchArgs {
    /// Sessions run before measuring, closed into episodes (what a session start reads).
    #[arg(long, default_value_t = 50)]
    history: usize,
    /// Sessions measured (each: a start, 4 requests with 4 tool calls and a stop each, an
    /// end: 26 events).
    #[arg(long, default_value_t = 20)]
    sessions: usize,
    /// Run `epimem serve` on the database and point the hooks at it (`hooks.server_url`): a
    /// prompt's earlier work is then recalled by the server, and the prompts' row times the
    /// round trip to it.
    #[arg(long)]
    server: bool,
    /// The agent whose events are sent: claude, codex, gemini or opencode.
    #[arg(long, default_value = "claude")]
    agent: Agent,
}

/// The bench's configuration: the hook alone, no worker competing for the cores while it
/// runs.
const BENCH_CONFIG: &str = "embedder = \"hash\"\n[hooks]\nbackground = false\n";

/// What p50 and p99 per event must stay under, in milliseconds.
const TARGET_P50_MS: f64 = 10.0;
const TARGET_P99_MS: f64 = 20.0;

pub fn bench_hook(_config: &AppConfig, args: &HookBenchArgs) -> Result<ExitCode> {
    if args.sessions == 0 {
        bail!("--sessions must be at least 1");
    }
    super::note_debug_build("hook");
    let dir = tempfile::tempdir().context("temporary directory")?;
    let project = dir.path().join("shop");
    std::fs::create_dir_all(project.join(".git"))?;
    let config = dir.path().join("epimem.toml");
    std::fs::write(&config, BENCH_CONFIG)?;
    let db = dir.path().join("bench.db");
    let bench =
        Bench { db: &db, config: &config, project: &project, dir: dir.path(), agent: args.agent };

    eprintln!("epimem: {} sessions of history...", args.history);
    for i in 0..args.history {
        bench.session(&format!("history-{i}"), i, &mut BTreeMap::new())?;
    }
    bench.run(&["flush"])?;
    // Killed when the bench ends, whatever happened.
    let server = match args.server {
        true => {
            let server = ServerProcess::start(&bench)?;
            std::fs::write(&config, format!("{BENCH_CONFIG}server_url = \"{}\"\n", server.base))?;
            Some(server)
        }
        false => None,
    };
    let mut times: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
    for i in 0..args.sessions {
        bench.session(&format!("measured-{i}"), args.history + i, &mut times)?;
    }

    outln!(
        "epimem hook, one process per event of {} ({} sessions after {} of history{})",
        args.agent.title(),
        args.sessions,
        args.history,
        server.as_ref().map_or(String::new(), |s| format!("; prompts asked of {}", s.base))
    );
    outln!("{:<20} {:>7} {:>8} {:>8} {:>8}", "event", "count", "p50 ms", "p99 ms", "max ms");
    let row = |label: &str, ms: &[f64]| -> std::io::Result<()> {
        let (p50, p99, max) = (percentile(ms, 0.5), percentile(ms, 0.99), ms[ms.len() - 1]);
        outln!("{label:<20} {:>7} {p50:>8.2} {p99:>8.2} {max:>8.2}", ms.len());
        Ok(())
    };
    let mut all: Vec<f64> = Vec::new();
    for (event, ms) in &mut times {
        ms.sort_by(f64::total_cmp);
        row(event, ms)?;
        // "(start with context)" repeats some session starts.
        if !event.starts_with('(') {
            all.extend(ms.iter());
        }
    }
    all.sort_by(f64::total_cmp);
    row("all", &all)?;
    let (p50, p99) = (percentile(&all, 0.5), percentile(&all, 0.99));
    outln!(
        "target: p50 ≤ {TARGET_P50_MS} ms and p99 ≤ {TARGET_P99_MS} ms per event: {}",
        if p50 <= TARGET_P50_MS && p99 <= TARGET_P99_MS { "met" } else { "MISSED" }
    );
    Ok(ExitCode::SUCCESS)
}

/// `epimem serve` on the bench's database, on a port of its choosing, killed when dropped.
struct ServerProcess {
    child: std::process::Child,
    base: String,
}

impl ServerProcess {
    fn start(bench: &Bench<'_>) -> Result<Self> {
        use std::io::BufRead;
        let mut child = bench
            .command(&["serve", "--listen", "127.0.0.1:0"])?
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start epimem serve")?;
        let mut line = String::new();
        let stdout = child.stdout.take().context("no standard output")?;
        std::io::BufReader::new(stdout).read_line(&mut line)?;
        let base = line.trim().rsplit(' ').next().unwrap_or_default().to_owned();
        let server = Self { child, base };
        if !server.base.starts_with("http://") {
            bail!("epimem serve did not say where it listens: {line:?}");
        }
        // As in use, where a server runs long before a prompt: its index open and caught up.
        let ready = format!("{}/readyz", server.base);
        let started = Instant::now();
        while ureq::get(&ready).call().is_err() {
            if started.elapsed() > std::time::Duration::from_secs(60) {
                bail!("epimem serve was not ready within a minute");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Ok(server)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Bench<'a> {
    db: &'a Path,
    config: &'a Path,
    project: &'a Path,
    dir: &'a Path,
    agent: Agent,
}

impl Bench<'_> {
    /// One session of work, every event timed into `times` under the agent's name for it.
    fn session(
        &self,
        id: &str,
        n: usize,
        times: &mut BTreeMap<&'static str, Vec<f64>>,
    ) -> Result<()> {
        let agent = self.agent;
        let transcript = self.dir.join(format!("{id}.jsonl"));
        std::fs::write(&transcript, "")?;
        let base = json!({"session_id": id, "transcript_path": transcript, "cwd": self.project});
        let event =
            |kind: EventKind, fields: Value, times: &mut BTreeMap<&'static str, Vec<f64>>| {
                // An event the agent does not have (opencode's sessions never end) is not sent.
                let Some(&(name, _)) = agent.events().iter().find(|&&(_, k)| k == kind) else {
                    return Ok(());
                };
                let mut e = base.clone();
                e["hook_event_name"] = json!(name);
                e.as_object_mut()
                    .expect("an object")
                    .extend(fields.as_object().expect("an object").clone());
                let (ms, printed) = self.hook(&e.to_string())?;
                times.entry(name).or_default().push(ms);
                if kind == EventKind::SessionStart && !printed.is_empty() {
                    times.entry("(start with context)").or_default().push(ms);
                }
                anyhow::Ok(())
            };
        event(EventKind::SessionStart, json!({"source": "startup"}), times)?;
        let topics =
            ["refund webhook test", "CSV export of orders", "dark mode toggle", "docker image tag"];
        for (r, topic) in topics.iter().enumerate() {
            let prompt = format!(
                "Look into the {topic} in module {} and fix what is wrong with it",
                (n + r) % 7
            );
            let turn = format!("{id}-{r}");
            event(EventKind::UserPromptSubmit, json!({"prompt": prompt, "turn_id": turn}), times)?;
            for t in 0..4 {
                let said = format!("Checking the {topic}, step {t}.");
                if agent.reads_transcript() {
                    let mut file = std::fs::OpenOptions::new().append(true).open(&transcript)?;
                    let entry = json!({"type": "assistant", "uuid": format!("{turn}-{t}"),
                        "message": {"content": [{"type": "text", "text": said}]}});
                    writeln!(file, "{entry}")?;
                }
                let path = self.project.join(format!("src/{}_{t}.rs", topic.replace(' ', "_")));
                let (kind, fields) = tool_call(agent, &format!("{turn}-{t}"), t, r, &path);
                event(kind, fields, times)?;
            }
            let reply = format!("The {topic} is fixed.");
            event(
                EventKind::Stop,
                json!({"turn_id": turn, "last_assistant_message": reply, "prompt_response": reply}),
                times,
            )?;
        }
        event(EventKind::SessionEnd, json!({"reason": "exit"}), times)?;
        Ok(())
    }

    /// Runs the hook `hooks install` sets up (`epimem-hook` beside this binary, else `epimem
    /// hook`) on `event`; its milliseconds from spawn to exit, and what it printed.
    fn hook(&self, event: &str) -> Result<(f64, String)> {
        let (program, first) = hook_program()?;
        let mut command = self.command_of(program, first);
        command.args(["--agent", self.agent.name()]);
        let started = Instant::now();
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start epimem hook")?;
        child.stdin.take().context("no standard input")?.write_all(event.as_bytes())?;
        let out = child.wait_with_output()?;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        if !out.status.success() {
            bail!("epimem hook exited with {}", out.status);
        }
        Ok((ms, String::from_utf8_lossy(&out.stdout).into_owned()))
    }

    fn run(&self, args: &[&str]) -> Result<()> {
        let status = self.command(args)?.stdout(Stdio::null()).status()?;
        if !status.success() {
            bail!("epimem {} exited with {status}", args.join(" "));
        }
        Ok(())
    }

    fn command(&self, args: &[&str]) -> Result<Command> {
        Ok(self.command_of(std::env::current_exe().context("where is epimem?")?, args))
    }

    fn command_of(&self, program: std::path::PathBuf, args: &[&str]) -> Command {
        let mut command = Command::new(program);
        command.arg("--db").arg(self.db).arg("--config").arg(self.config).args(args);
        command
            .env_remove("EPIMEM_EMBEDDER")
            .env_remove("EPIMEM_LLM_URL")
            .env_remove("EPIMEM_TENANT");
        command
    }
}

/// The `t`-th tool call of request `r`, as `agent` reports it: a read, edits, and every other
/// request a test run that fails.
fn tool_call(agent: Agent, id: &str, t: usize, r: usize, path: &Path) -> (EventKind, Value) {
    let failing = t == 3 && r.is_multiple_of(2);
    match agent {
        Agent::Claude if failing => (
            EventKind::PostToolUseFailure,
            json!({"tool_name": "Bash", "tool_use_id": id, "tool_input": {"command": "cargo test"},
                "error": "test failed: assertion left == right"}),
        ),
        Agent::Claude => (
            EventKind::PostToolUse,
            json!({"tool_name": if t == 0 { "Read" } else { "Edit" }, "tool_use_id": id,
                "tool_input": {"file_path": path}, "tool_response": {"filePath": path}}),
        ),
        // Codex runs everything as commands and says how they ended in their output.
        Agent::Codex => {
            let (command, output) = match (t, failing) {
                (_, true) => ("cargo test".to_owned(), "test failed: assertion left == right"),
                (0, _) => (format!("sed -n 1,80p {}", path.display()), "fn main() {}"),
                _ => (format!("apply_patch {}", path.display()), "Success. Updated the file."),
            };
            (
                EventKind::PostToolUse,
                json!({"tool_name": "Bash", "tool_use_id": id, "tool_input": {"command": command},
                    "tool_response": output}),
            )
        }
        // What epimem's opencode plugin sends.
        Agent::Opencode => {
            let (tool, input) = match (t, failing) {
                (_, true) => ("bash", json!({"command": "cargo test", "description": "test"})),
                (0, _) => ("read", json!({"filePath": path})),
                _ => ("edit", json!({"filePath": path, "oldString": "a", "newString": "b"})),
            };
            let output = if failing { "test failed: assertion left == right" } else { "" };
            (
                EventKind::PostToolUse,
                json!({"tool_name": tool, "tool_use_id": id, "tool_input": input,
                    "tool_response": {"output": output, "is_error": failing}}),
            )
        }
        Agent::Gemini => {
            let (tool, input, display) = match (t, failing) {
                (_, true) => (
                    "run_shell_command",
                    json!({"command": "cargo test"}),
                    "test failed: assertion left == right",
                ),
                (0, _) => ("read_file", json!({"file_path": path}), ""),
                _ => (
                    "replace",
                    json!({"file_path": path, "old_string": "a", "new_string": "b"}),
                    "ok",
                ),
            };
            (
                EventKind::PostToolUse,
                json!({"tool_name": tool, "tool_input": input,
                    "tool_response": {"llmContent": display, "returnDisplay": display}}),
            )
        }
    }
}
