//! `epimem hook`, `epimem hooks install|uninstall` and `epimem patterns`: memory for coding
//! agents (the hooks of Claude Code, Codex CLI, Gemini CLI and opencode, and epimem as their MCP
//! server).

use std::{
    io::Read,
    path::{Path, PathBuf},
    process::{Command, ExitCode, Stdio},
    time::Duration,
};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use epimem_api::wire::ProjectMemoryIn;
use epimem_hooks::{
    Agent, Background, Hook, HookDir, PromptRecall, install, install_mcp_json,
    install_mcp_opencode, install_mcp_toml, is_epimem_plugin, opencode_plugin, project_of,
    uninstall, uninstall_mcp_json, uninstall_mcp_opencode, uninstall_mcp_toml,
};
use epimem_server::ProjectMemoryClient;

use super::{beside_this, hook_program, open_memory};
use crate::config::{AppConfig, Database};

/// Which program records a hook event: it decides how the background work is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HookEntry {
    /// `epimem hook`.
    Subcommand,
    /// `epimem-hook`, which has no other command: `epimem` beside it runs the background work.
    Binary,
}

#[derive(Debug, Args)]
pub(crate) struct HookArgs {
    /// The agent that runs the hook: claude, codex, gemini or opencode (what its events are
    /// called and where its replies are).
    #[arg(long, value_name = "NAME", default_value = "claude")]
    pub(crate) agent: Agent,
    /// Also say on standard error what went wrong (it always goes to the hooks' log).
    #[arg(long)]
    pub(crate) verbose: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HooksCommand {
    /// Add `epimem-hook` (the binary beside this one; `epimem hook` where there is none) to
    /// an agent's hooks, beside the hooks already there (nothing is added twice: an epimem
    /// hook already there is made this one), and `epimem mcp` to its MCP servers, so memory
    /// is also reachable as tools.
    ///
    /// Claude Code: `.claude/settings.json` (hooks) and `.mcp.json` (the server), or
    /// `~/.claude/settings.json` and `~/.claude.json` with `--user`. Codex CLI:
    /// `.codex/hooks.json` and `.codex/config.toml`, or the same in `$CODEX_HOME` (`~/.codex`).
    /// Gemini CLI: `.gemini/settings.json`, or `~/.gemini/settings.json`. opencode (no command
    /// hooks): a plugin, `.opencode/plugins/epimem.js`, and `opencode.json`, or the same under
    /// `~/.config/opencode`. The hook and the server are given the database, tenant and
    /// configuration file this command was given.
    Install(HooksWhere),
    /// Remove exactly the entries `install` added, and nothing else.
    Uninstall(HooksWhere),
    /// Record the sessions an agent ran before the hooks were installed, as the hooks would
    /// have (the same prompts, tool actions and replies, at the sessions' own times), each cut
    /// into its work units. Read where each agent keeps them: Claude Code's transcripts
    /// (~/.claude/projects, or $CLAUDE_CONFIG_DIR), Codex's rollouts ($CODEX_HOME/sessions),
    /// Gemini CLI's session logs (~/.gemini/tmp/*/chats), opencode's database
    /// ($XDG_DATA_HOME/opencode/opencode.db). A session already in memory (recorded by the
    /// hooks, or by an earlier backfill) is left as it is, so backfilling twice adds nothing.
    Backfill(super::backfill::BackfillArgs),
}

#[derive(Debug, Args)]
pub(crate) struct HooksWhere {
    /// The agent: claude (Claude Code), codex (Codex CLI), gemini (Gemini CLI) or opencode.
    #[arg(long, value_name = "NAME", default_value = "claude")]
    agent: Agent,
    /// The project whose settings to change [default: the current folder].
    #[arg(long, value_name = "DIR", conflicts_with = "user")]
    project: Option<PathBuf>,
    /// Change the user's settings instead (every project).
    #[arg(long)]
    user: bool,
}

#[derive(Debug, Args)]
pub(crate) struct PatternsArgs {
    /// The project (a folder in its repository) [default: the current folder's].
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Episodes read, newest first.
    #[arg(long, default_value_t = 1000)]
    episodes: usize,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Reads one hook event on standard input, stores it, prints what the agent should add to
/// the session (if anything) and exits 0 whatever happened.
pub(crate) fn hook(
    config: Result<AppConfig>,
    args: &HookArgs,
    entry: HookEntry,
) -> Result<ExitCode> {
    let received = epimem_app::now();
    let mut raw = String::new();
    let _ = std::io::stdin().read_to_string(&mut raw);
    let config = match config {
        Ok(config) => config,
        Err(e) => {
            // No configuration, no folder to log to: only a verbose hook says it.
            if args.verbose {
                eprintln!("epimem hook: {e:#}");
            }
            return Ok(ExitCode::SUCCESS);
        }
    };
    let dir = hook_dir(&config);
    let logged = std::fs::metadata(dir.log_path()).map_or(0, |m| m.len());
    // Traces cannot fail a hook either: a setting they refuse is logged, and at the end the
    // collector gets a moment, not more, for what is buffered.
    let _telemetry = epimem_telemetry::Settings::from_env(config.telemetry.capture_content)
        .and_then(|settings| {
            let log = dir.clone();
            let told = Box::new(move |what: &str| log.log(epimem_app::now(), what));
            epimem_telemetry::start(&settings, "epimem", HOOK_TRACE_WAIT, told)
        })
        .unwrap_or_else(|e| {
            dir.log(received, &format!("traces are not sent: {e}"));
            None
        });
    let span = tracing::info_span!(
        "hook",
        otel.name = %format_args!("hook {}", args.agent.name()),
        otel.kind = "internal",
        epimem.hook.agent = args.agent.name(),
    );
    let _entered = span.enter();
    let server = config.hooks.server_url.as_deref().map(|url| ServerRecall {
        url,
        tenant: &config.tenant,
        config: &config.hooks,
    });
    let hook = Hook {
        agent: args.agent,
        tenant: &config.tenant,
        dir: &dir,
        config: &config.hooks,
        recall: server.as_ref().map(|s| s as &dyn PromptRecall),
    };
    let outcome = hook
        .run(&raw, received, || epimem_app::open_for_hooks(&config).map_err(|e| format!("{e:#}")));
    if !outcome.stdout.is_empty() {
        outln!("{}", outcome.stdout);
    }
    if let Some(work) = &outcome.background
        && let Err(e) = start_background(&dir, work, entry)
    {
        dir.log(received, &format!("cannot start the background work ({work:?}): {e}"));
    }
    if args.verbose {
        let log = std::fs::read(dir.log_path()).unwrap_or_default();
        let new = log.get(logged as usize..).unwrap_or_default();
        eprint!("{}", String::from_utf8_lossy(new));
    }
    Ok(ExitCode::SUCCESS)
}

/// How long a hook's end waits for the collector to take its spans.
const HOOK_TRACE_WAIT: Duration = Duration::from_millis(500);

/// The hooks' folder: configured, else beside a SQLite database, else in the data directory.
pub(crate) fn hook_dir(config: &AppConfig) -> HookDir {
    if let Some(dir) = &config.hooks.dir {
        return HookDir::new(dir);
    }
    match config.database() {
        Ok(Database::Sqlite(path)) => HookDir::beside(&path),
        _ => HookDir::new(
            dirs::data_dir().unwrap_or_else(std::env::temp_dir).join("epimem").join("hooks"),
        ),
    }
}

/// A prompt's earlier work recalled by `epimem serve` on the same database. Its client is
/// made only for a prompt: most events never ask.
#[derive(Debug)]
struct ServerRecall<'a> {
    url: &'a str,
    /// The hook's tenant: a server that works in another refuses rather than answer.
    tenant: &'a str,
    config: &'a epimem_app::config::HookConfig,
}

impl PromptRecall for ServerRecall<'_> {
    fn prompt_context(&self, project: &str, session: &str, prompt: &str) -> Result<String, String> {
        let timeout = Duration::from_millis(self.config.server_timeout_ms);
        let client = ProjectMemoryClient::new(self.url, self.config.server_key.clone(), timeout);
        let request = ProjectMemoryIn {
            project: project.to_owned(),
            prompt: Some(prompt.to_owned()),
            session: Some(session.to_owned()),
            tenant: Some(self.tenant.to_owned()),
        };
        client.ask(&request).map_err(|e| e.to_string())
    }
}

/// Starts `epimem tick` or `epimem flush --conversation` on the same database and settings
/// (this command's own arguments, `hook` replaced; `epimem-hook` starts the `epimem` beside
/// it), in its own process group, and lets it go: its errors go to the hooks' log.
fn start_background(dir: &HookDir, work: &Background, entry: HookEntry) -> std::io::Result<()> {
    use std::os::unix::process::CommandExt;
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    args.retain(|a| a != "--verbose");
    let (program, at) = match entry {
        HookEntry::Subcommand => {
            let Some(at) = args.iter().position(|a| a == "hook") else {
                return Err(std::io::Error::other("no hook subcommand among the arguments"));
            };
            (std::env::current_exe()?, at)
        }
        HookEntry::Binary => {
            args.insert(0, "hook".into());
            (beside_this("epimem")?, 0)
        }
    };
    match work {
        Background::Tick => args[at] = "tick".into(),
        Background::Flush(conversation) => {
            args[at] = "flush".into();
            args.splice(at + 1..at + 1, ["--conversation".into(), conversation.into()]);
        }
    }
    std::fs::create_dir_all(dir.root())?;
    let log = std::fs::OpenOptions::new().create(true).append(true).open(dir.log_path())?;
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .process_group(0)
        .spawn()
        .map(drop)
}

pub(crate) fn hooks(
    config: &AppConfig,
    config_file: Option<&Path>,
    command: &HooksCommand,
) -> Result<ExitCode> {
    let (place, installing) = match command {
        HooksCommand::Install(place) => (place, true),
        HooksCommand::Uninstall(place) => (place, false),
        HooksCommand::Backfill(args) => return super::backfill::backfill(config, args),
    };
    let agent = place.agent;
    let files = AgentFiles::of(place)?;
    let (program, args) = epimem_arguments(config, config_file)?;
    let changed_hooks = match agent {
        Agent::Opencode => edit_plugin(&files.hooks, installing, &hook_line(agent, &args)?)?,
        _ => {
            let hook = hook_line(agent, &args)?.iter().map(|w| quote(w)).collect::<Vec<_>>();
            let hook = hook.join(" ");
            edit_json(&files.hooks, |settings| match installing {
                true => install(settings, agent, &hook),
                false => Ok(uninstall(settings)),
            })?
        }
    };
    let mut mcp_args = vec!["mcp".to_owned()];
    mcp_args.extend(args);
    let program = program.display().to_string();
    let changed_mcp = match agent {
        Agent::Codex => edit_text(&files.mcp, |text| match installing {
            true => install_mcp_toml(text, &program, &mcp_args),
            false => uninstall_mcp_toml(text),
        })?,
        Agent::Opencode => edit_json(&files.mcp, |settings| match installing {
            true => install_mcp_opencode(settings, &program, &mcp_args),
            false => Ok(uninstall_mcp_opencode(settings)),
        })?,
        Agent::Claude | Agent::Gemini => edit_json(&files.mcp, |settings| match installing {
            true => install_mcp_json(settings, &program, &mcp_args),
            false => Ok(uninstall_mcp_json(settings)),
        })?,
    };
    for (path, changed, what) in
        [(&files.hooks, changed_hooks, "hooks"), (&files.mcp, changed_mcp, "MCP server")]
    {
        let said = match (installing, changed) {
            (true, true) => format!("epimem's {what} added"),
            (true, false) => format!("epimem's {what} already there"),
            (false, true) => format!("epimem's {what} removed"),
            (false, false) => format!("no epimem {what} to remove"),
        };
        outln!("{}: {said}", path.display());
    }
    if installing {
        outln!("{} now records its sessions and recalls them in this memory", agent.title());
    }
    Ok(ExitCode::SUCCESS)
}

/// Where an agent keeps its hooks and its MCP servers, in a project or for the user.
struct AgentFiles {
    /// A JSON file with `hooks`, or opencode's plugin.
    hooks: PathBuf,
    /// A JSON file with `mcpServers` (opencode's: `mcp`), or Codex's `config.toml`.
    mcp: PathBuf,
}

impl AgentFiles {
    fn of(place: &HooksWhere) -> Result<Self> {
        let home = || dirs::home_dir().context("no home directory is known for this user");
        let root = if place.user {
            home()?
        } else {
            let project = match &place.project {
                Some(dir) => dir.clone(),
                None => std::env::current_dir().context("cannot read the current folder")?,
            };
            if !project.is_dir() {
                bail!("{} is not a folder", project.display());
            }
            project
        };
        Ok(match place.agent {
            Agent::Claude => Self {
                hooks: root.join(".claude").join("settings.json"),
                mcp: root.join(if place.user { ".claude.json" } else { ".mcp.json" }),
            },
            Agent::Codex => {
                let dir = match std::env::var_os("CODEX_HOME") {
                    Some(dir) if place.user => PathBuf::from(dir),
                    _ => root.join(".codex"),
                };
                Self { hooks: dir.join("hooks.json"), mcp: dir.join("config.toml") }
            }
            Agent::Gemini => {
                let settings = root.join(".gemini").join("settings.json");
                Self { hooks: settings.clone(), mcp: settings }
            }
            Agent::Opencode if place.user => {
                let dir = dirs::config_dir().context("no configuration folder is known")?;
                let dir = dir.join("opencode");
                Self {
                    hooks: dir.join("plugins").join("epimem.js"),
                    mcp: dir.join("opencode.json"),
                }
            }
            Agent::Opencode => Self {
                hooks: root.join(".opencode").join("plugins").join("epimem.js"),
                mcp: root.join("opencode.json"),
            },
        })
    }
}

/// Writes epimem's opencode plugin to `path` (running `hook`), or removes it. A file there
/// that is not epimem's plugin is left as it is.
fn edit_plugin(path: &Path, installing: bool, hook: &[String]) -> Result<bool> {
    let old = read_optional(path)?;
    if old.as_deref().is_some_and(|text| !is_epimem_plugin(text)) {
        bail!("{} is not epimem's plugin; it was left as it is", path.display());
    }
    if !installing {
        if old.is_some() {
            std::fs::remove_file(path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
        }
        return Ok(old.is_some());
    }
    let plugin = opencode_plugin(hook);
    if old.as_deref() == Some(plugin.as_str()) {
        return Ok(false);
    }
    write_atomically(path, &plugin)?;
    Ok(true)
}

/// Reads the JSON file at `path` (missing or empty: `{}`), lets `change` edit it, and writes
/// it back when it says it changed. A file that is not JSON, or that `change` refuses, is
/// left as it is and named in the error.
fn edit_json(
    path: &Path,
    change: impl FnOnce(&mut serde_json::Value) -> Result<bool, String>,
) -> Result<bool> {
    let mut settings: serde_json::Value = match read_optional(path)? {
        Some(text) if !text.trim().is_empty() => {
            serde_json::from_str(&text).with_context(|| {
                format!("{} is not valid JSON; it was left as it is", path.display())
            })?
        }
        _ => serde_json::json!({}),
    };
    let changed = change(&mut settings)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("{} was left as it is", path.display()))?;
    if changed {
        write_or_remove(path, &format!("{}\n", serde_json::to_string_pretty(&settings)?))?;
    }
    Ok(changed)
}

/// Writes `text` to `path`, or removes the file when uninstalling left nothing in it (a file
/// `install` created goes again).
fn write_or_remove(path: &Path, text: &str) -> Result<()> {
    if matches!(text.trim(), "" | "{}") {
        return std::fs::remove_file(path)
            .with_context(|| format!("cannot remove {}", path.display()));
    }
    write_atomically(path, text)
}

/// [`edit_json`] for a text file `change` edits itself (Codex's TOML), keeping its comments.
fn edit_text(
    path: &Path,
    change: impl FnOnce(&str) -> Result<Option<String>, String>,
) -> Result<bool> {
    let text = read_optional(path)?.unwrap_or_default();
    let changed = change(&text)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("{} was left as it is", path.display()))?;
    if let Some(text) = &changed {
        write_or_remove(path, text)?;
    }
    Ok(changed.is_some())
}

fn read_optional(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// This program and the options naming the database, tenant and configuration file it was
/// told to use (so the hooks and the MCP server use what `install` was pointed at, whatever
/// the agent's environment says).
fn epimem_arguments(
    config: &AppConfig,
    config_file: Option<&Path>,
) -> Result<(PathBuf, Vec<String>)> {
    let program = std::env::current_exe().context("cannot tell where this program is")?;
    let mut args = Vec::new();
    match config.database()? {
        Database::Sqlite(path) => {
            let path = std::path::absolute(&path).unwrap_or(path);
            args.extend(["--db".to_owned(), path.display().to_string()]);
        }
        Database::Postgres(url) => args.extend(["--db".to_owned(), url]),
    }
    args.extend(["--tenant".to_owned(), config.tenant.clone()]);
    if let Some(file) = config_file {
        let file = std::path::absolute(file).unwrap_or_else(|_| file.to_owned());
        args.extend(["--config".to_owned(), file.display().to_string()]);
    }
    Ok((program, args))
}

/// The hook's command line, word by word: [`hook_program`], `--agent` for any agent but
/// Claude Code (the default), and `args`.
fn hook_line(agent: Agent, args: &[String]) -> Result<Vec<String>> {
    let (hook, first) = hook_program()?;
    let mut line = vec![hook.display().to_string()];
    line.extend(first.iter().map(|a| (*a).to_owned()));
    if agent != Agent::Claude {
        line.extend(["--agent".to_owned(), agent.name().to_owned()]);
    }
    line.extend_from_slice(args);
    Ok(line)
}

/// A word for a shell: as it is when it is plain, else in single quotes.
fn quote(word: &str) -> String {
    if !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric() || "/._-:@=+,".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let dir = path.parent().context("the settings file has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut name = path.file_name().context("the settings file has no name")?.to_os_string();
    name.push(format!(".{}.tmp", std::process::id()));
    let tmp = path.with_file_name(name);
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))
}

/// The project a folder belongs to, as the hooks name it: the root of its git repository.
pub(crate) fn project_name(folder: &Path) -> Result<String> {
    let folder = std::path::absolute(folder)
        .with_context(|| format!("cannot resolve {}", folder.display()))?;
    Ok(project_of(&folder).display().to_string())
}

pub(crate) fn patterns(config: &AppConfig, args: &PatternsArgs) -> Result<ExitCode> {
    let folder = match &args.project {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    let project = project_name(&folder)?;
    let memory = open_memory(config)?;
    let patterns = memory.patterns(&config.tenant, &project, args.episodes)?;
    if args.json {
        outln!("{}", serde_json::to_string(&patterns)?);
        return Ok(ExitCode::SUCCESS);
    }
    outln!("{project}: {} session(s), {} episode(s) read", patterns.sessions, patterns.episodes);
    outln!("Recurring requests:");
    if patterns.intents.is_empty() {
        outln!("  (none seen in two sessions)");
    }
    for p in &patterns.intents {
        outln!("  {} sessions, last {}: {}", p.sessions, day(p.last), p.keywords.join(", "));
        for title in &p.titles {
            outln!("    - {title}");
        }
    }
    outln!("Repeated failures:");
    if patterns.failures.is_empty() {
        outln!("  (none seen in two sessions)");
    }
    for p in &patterns.failures {
        outln!("  {} sessions, last {}: {}", p.sessions, day(p.last), p.what);
    }
    Ok(ExitCode::SUCCESS)
}

fn day(at: epimem_core::Timestamp) -> String {
    at.to_datetime().format("%Y-%m-%d").to_string()
}
