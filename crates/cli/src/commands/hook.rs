//! `epimem hook`, `epimem hooks install|uninstall` and `epimem patterns`: memory for coding
//! agents (Claude Code's hooks).

use std::{
    io::Read,
    path::{Path, PathBuf},
    process::{Command, ExitCode, Stdio},
    time::Duration,
};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use epimem_api::wire::ProjectMemoryIn;
use epimem_core::TokenCounter;
use epimem_engine::{Clock, Engine, SystemClock};
use epimem_hooks::{
    Background, Hook, HookConfig, HookDir, PromptRecall, install, project_of, uninstall,
};
use epimem_server::ProjectMemoryClient;
use epimem_store_sqlite::SqliteStore;

use super::{beside_this, engine_without_index, hook_program, open_engine, open_store};
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
    /// Also say on standard error what went wrong (it always goes to the hooks' log).
    #[arg(long)]
    pub(crate) verbose: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HooksCommand {
    /// Add `epimem-hook` (the binary beside this one; `epimem hook` where there is none) to
    /// Claude Code's settings for SessionStart, UserPromptSubmit, PostToolUse,
    /// PostToolUseFailure, Stop and SessionEnd, beside the hooks already there (nothing is
    /// added twice: an epimem hook already there is made this one). The hook is given the database, tenant and configuration file
    /// this command was given; anything else comes from that file and the agent's environment.
    Install(HooksWhere),
    /// Remove exactly the entries `install` added, and nothing else.
    Uninstall(HooksWhere),
}

#[derive(Debug, Args)]
pub(crate) struct HooksWhere {
    /// The project whose `.claude/settings.json` to change [default: the current folder].
    #[arg(long, value_name = "DIR", conflicts_with = "user")]
    project: Option<PathBuf>,
    /// Change the user's `~/.claude/settings.json` instead (every project).
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

/// Reads one hook event on standard input, stores it, prints what Claude Code should add to
/// the session (if anything) and exits 0 whatever happened.
pub(crate) fn hook(
    config: Result<AppConfig>,
    args: &HookArgs,
    entry: HookEntry,
) -> Result<ExitCode> {
    let received = SystemClock.now();
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
    let server = config.hooks.server_url.as_deref().map(|url| ServerRecall {
        url,
        tenant: &config.tenant,
        config: &config.hooks,
    });
    let hook = Hook {
        tenant: &config.tenant,
        dir: &dir,
        config: &config.hooks,
        recall: server.as_ref().map(|s| s as &dyn PromptRecall),
    };
    let outcome =
        hook.run(&raw, received, || open_hook_engine(&config).map_err(|e| format!("{e:#}")));
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
    config: &'a HookConfig,
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

/// The store, waiting only briefly for another process's lock; no embedder, no search index
/// (a hook never searches), tokens estimated.
fn open_hook_engine(config: &AppConfig) -> Result<Engine> {
    let database = config.database()?;
    let store: std::sync::Arc<dyn epimem_store::Store> = match &database {
        Database::Sqlite(path) => {
            let busy = Duration::from_millis(config.hooks.busy_timeout_ms);
            std::sync::Arc::new(
                SqliteStore::open_waiting(path, busy)
                    .with_context(|| format!("cannot open the database {}", path.display()))?,
            )
        }
        Database::Postgres(_) => open_store(&database)?,
    };
    Ok(engine_without_index(config, store).with_token_counter(TokenCounter::estimate()))
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
    };
    let path = settings_path(place)?;
    let mut settings: serde_json::Value = match std::fs::read_to_string(&path) {
        Ok(text) if text.trim().is_empty() => serde_json::json!({}),
        Ok(text) => serde_json::from_str(&text).with_context(|| {
            format!("{} is not valid JSON; it was left as it is", path.display())
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => serde_json::json!({}),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let changed = if installing {
        install(&mut settings, &hook_command(config, config_file)?)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("{} was left as it is", path.display()))?
    } else {
        uninstall(&mut settings)
    };
    if !changed {
        outln!(
            "{}: {}",
            path.display(),
            if installing {
                "epimem's hooks are already there"
            } else {
                "no epimem hook to remove"
            }
        );
        return Ok(ExitCode::SUCCESS);
    }
    write_atomically(&path, &format!("{}\n", serde_json::to_string_pretty(&settings)?))?;
    if installing {
        outln!("{}: epimem records and recalls this agent's sessions", path.display());
    } else {
        outln!("{}: epimem's hooks removed", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn settings_path(place: &HooksWhere) -> Result<PathBuf> {
    if place.user {
        let home = dirs::home_dir().context("no home directory is known for this user")?;
        return Ok(home.join(".claude").join("settings.json"));
    }
    let project = match &place.project {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    if !project.is_dir() {
        bail!("{} is not a folder", project.display());
    }
    Ok(project.join(".claude").join("settings.json"))
}

/// [`hook_program`] and the database, tenant and configuration file it was told to use (so
/// the hooks write where `install` was pointed, whatever the agent's environment says).
fn hook_command(config: &AppConfig, config_file: Option<&Path>) -> Result<String> {
    let (program, first) = hook_program()?;
    let mut command = quote(&program.display().to_string());
    for arg in first {
        command.push_str(&format!(" {arg}"));
    }
    match config.database()? {
        Database::Sqlite(path) => {
            let path = std::path::absolute(&path).unwrap_or(path);
            command.push_str(&format!(" --db {}", quote(&path.display().to_string())));
        }
        Database::Postgres(url) => command.push_str(&format!(" --db {}", quote(&url))),
    }
    command.push_str(&format!(" --tenant {}", quote(&config.tenant)));
    if let Some(file) = config_file {
        let file = std::path::absolute(file).unwrap_or_else(|_| file.to_owned());
        command.push_str(&format!(" --config {}", quote(&file.display().to_string())));
    }
    Ok(command)
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
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
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
    let engine = open_engine(config)?;
    let patterns = engine.patterns(&config.tenant, &project, args.episodes)?;
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
