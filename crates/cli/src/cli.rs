//! `epimem`: every command.

use std::{path::PathBuf, process::ExitCode, time::Duration};

use clap::{Parser, Subcommand};

use crate::{
    commands::{self, hook::HookEntry},
    config::{self, AppConfig, Overrides, PlaceArgs},
};

/// Episodic memory for LLM agents: stream conversations in, get episodes out.
///
/// Messages are ingested from JSONL, cut into episodes (by time gaps, topic shifts read from
/// local embeddings, and token budgets), summarized, and recalled by words and meaning, weighted
/// by memory strength. Everything lives in one SQLite file; models run locally on the CPU.
#[derive(Debug, Parser)]
#[command(name = "epimem", version, max_term_width = 100)]
struct Cli {
    #[command(flatten)]
    place: PlaceArgs,
    /// The embedder for semantic segmentation: potion (static, fast), minilm (BERT, better),
    /// hash (no model; lexical), or none.
    #[arg(long, global = true, env = "EPIMEM_EMBEDDER", value_name = "NAME")]
    embedder: Option<String>,
    /// The folder holding the models [default: ~/.cache/epimem/models].
    #[arg(long, global = true, env = "EPIMEM_MODELS", value_name = "DIR")]
    models: Option<PathBuf>,
    /// An OpenAI-compatible API (base URL ending in /v1: OpenAI, llama.cpp's llama-server,
    /// vLLM, Ollama) that cuts and titles episodes; the LLM-free segmenters stand in whenever
    /// it fails. Its key comes from EPIMEM_LLM_API_KEY or the config file [default: none].
    #[arg(long, global = true, env = "EPIMEM_LLM_URL", value_name = "URL")]
    llm_url: Option<String>,
    /// The model to ask at --llm-url.
    #[arg(long, global = true, env = "EPIMEM_LLM_MODEL", value_name = "NAME")]
    llm_model: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the HTTP API (remember, recall, list, forget) with a background worker that
    /// closes conversations that fell silent: the way agents use epimem.
    Serve(commands::serve::ServeArgs),
    /// Serve the memory tools (remember, recall, list_episodes, get_episode, forget) to an MCP
    /// client over standard input and output; `serve` offers them over HTTP at /mcp.
    Mcp,
    /// Run the background worker alone on the database: close conversations that fell silent
    /// and run queued jobs (a dead worker's too) until Ctrl-C or SIGTERM.
    Worker,
    /// Record one hook event of a coding agent (JSON on standard input; `--agent`: claude,
    /// codex, gemini, opencode) and print the memory to add to the session, if any. Always
    /// exits 0 within milliseconds: what goes wrong is written to the hooks' log
    /// (`<db>.hooks/hooks.log`), and an event the database cannot take is
    /// kept and stored by the next hook. Set up with `epimem hooks install`.
    Hook(commands::hook::HookArgs),
    /// Add epimem to (or remove it from) a coding agent's settings (Claude Code, Codex CLI,
    /// Gemini CLI, opencode): every session is recorded, cut into work units, and handed back
    /// to the next session of the project, whichever agent runs it.
    #[command(subcommand)]
    Hooks(commands::hook::HooksCommand),
    /// Recurring requests and repeated failures across a project's coding sessions.
    Patterns(commands::hook::PatternsArgs),
    /// Make, list and revoke the API keys `serve` requires once any exists.
    #[command(subcommand)]
    Keys(commands::keys::KeysCommand),
    /// Ingest messages from a JSONL file (or - for standard input).
    ///
    /// One JSON object per line: "conversation", "role" (user, assistant, system, tool),
    /// "content", and optionally "speaker", "timestamp" (RFC 3339), "metadata" (an object),
    /// "id" (idempotency key), "user", "agent". Re-ingesting a file adds nothing twice: lines
    /// without an "id" are keyed by their position and content. A message timestamped before
    /// the newest one of its conversation is stored at that newest time (a conversation's time
    /// only moves forward), the time it was given kept as "given_timestamp" in its metadata.
    Ingest(commands::ingest::IngestArgs),
    /// Close everything pending into episodes (all conversations, or one).
    Flush(commands::ingest::FlushArgs),
    /// Segment conversations that fell silent or waited too long, by the wall clock, and run
    /// queued jobs (including those of crashed workers). Run it from a scheduler.
    Tick,
    /// List episodes.
    Episodes(commands::query::EpisodesArgs),
    /// Show one episode with its messages.
    Show(commands::query::ShowArgs),
    /// Find the episodes that best match a query.
    Recall(commands::query::RecallArgs),
    /// What an agent reads before its next turn in a conversation, in one block under one
    /// budget: the long-term memories that bear on the moment, what came earlier in the
    /// conversation told short, and its newest messages verbatim.
    NextTurn(commands::next_turn::NextTurnArgs),
    /// Correct an episode's title or summary (the old is kept as a version).
    Edit(commands::edit::EditArgs),
    /// Forget an episode, a whole conversation or everything of a tenant: its text leaves the
    /// database's files and every index.
    Forget(commands::query::ForgetArgs),
    /// Walk the timeline: day, week, month and year summaries of the episodes.
    Timeline(commands::timeline::TimelineArgs),
    /// List the lasting facts a language model distilled from episodes, newest first.
    Facts(commands::facts::FactsArgs),
    /// Count conversations, messages, episodes and jobs.
    Stats(commands::query::StatsArgs),
    /// Rewrite the database's files so that nothing forgotten is left in them and its space is
    /// returned (on PostgreSQL: VACUUM FULL of each table, which locks it while it runs).
    Compact,
    /// Create or bring up to date the database's schema (every command also does, on first
    /// use).
    Migrate,
    /// Write the tenant's memory (or every tenant's) as JSON lines, for `import` into another
    /// database: SQLite to PostgreSQL or back.
    Export(commands::transfer::ExportArgs),
    /// Read what `export` wrote into this database.
    Import(commands::transfer::ImportArgs),
    /// Copy the database (every tenant) and its search index to a new file while servers
    /// write to it: all that was stored when the copy began. SQLite; PostgreSQL is backed up
    /// with pg_dump (docs/operations.md).
    Backup(commands::transfer::BackupArgs),
    /// Put a backup in place of the database (stop every process using it first).
    Restore(commands::transfer::RestoreArgs),
    /// Build the tenant's search index again from the database, with a progress bar.
    Reindex(commands::reindex::ReindexArgs),
    /// Tell the episodes and the timeline again as this version tells them (after an
    /// upgrade): each episode no model told and no one corrected gets a new title and summary
    /// from its messages (the old kept as a version), then every period is told again.
    Retell(commands::retell::RetellArgs),
    /// Print the reference configuration (every setting, its default, and what it does).
    Config,
    /// Print the HTTP API's OpenAPI document (what `serve` answers at /v1/openapi.json), from
    /// which the Python and TypeScript clients' types are generated.
    Openapi,
    /// Ingest a built-in multi-topic conversation and show its episodes and a recall.
    Demo(commands::demo::DemoArgs),
    /// Measure throughput and latency.
    #[command(subcommand)]
    Bench(epimem_eval::bench::BenchCommand),
    /// Measure quality on public data sets.
    #[command(subcommand)]
    Eval(epimem_eval::EvalCommand),
}

/// `epimem`: parses the command line and runs the command.
pub fn run_cli() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        // The reader went away (`| head`): stop quietly, as other command-line tools do.
        Err(e) if broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("epimem: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let explicit_db = cli.place.db.is_some();
    let overrides = Overrides {
        embedder: cli.embedder,
        models: cli.models,
        llm_url: cli.llm_url,
        llm_model: cli.llm_model,
        ..cli.place.overrides()
    };
    // A hook must exit 0 whatever happens, a configuration it cannot read included.
    if let Command::Hook(args) = &cli.command {
        return commands::hook::hook(AppConfig::load(&overrides), args, HookEntry::Subcommand);
    }
    let config = AppConfig::load(&overrides)?;
    let tracing = epimem_telemetry::Settings::from_env(config.telemetry.capture_content)?;
    // Held to the end of the command: dropping it sends what is still buffered.
    let told = Box::new(|what: &str| eprintln!("epimem: {what}"));
    let _telemetry = epimem_telemetry::start(&tracing, "epimem", Duration::from_secs(5), told)?;
    match cli.command {
        Command::Hook(_) => unreachable!("handled above"),
        Command::Hooks(command) => {
            commands::hook::hooks(&config, overrides.config.as_deref(), &command)
        }
        Command::Patterns(args) => commands::hook::patterns(&config, &args),
        Command::Serve(args) => commands::serve::serve(&config, &args),
        Command::Mcp => commands::mcp::mcp(&config),
        Command::Worker => commands::worker::worker(&config),
        Command::Keys(command) => commands::keys::keys(&config, &command),
        Command::Ingest(args) => commands::ingest::ingest(&config, &args),
        Command::Flush(args) => commands::ingest::flush(&config, &args),
        Command::Tick => commands::ingest::tick(&config),
        Command::Episodes(args) => commands::query::episodes(&config, &args),
        Command::Show(args) => commands::query::show(&config, &args),
        Command::Recall(args) => commands::query::recall(&config, &args),
        Command::NextTurn(args) => commands::next_turn::next_turn(&config, &args),
        Command::Stats(args) => commands::query::stats(&config, &args),
        Command::Facts(args) => commands::facts::facts(&config, &args),
        Command::Timeline(args) => commands::timeline::timeline(&config, &args),
        Command::Edit(args) => commands::edit::edit(&config, &args),
        Command::Forget(args) => commands::query::forget(&config, &args),
        Command::Migrate => commands::transfer::migrate(&config),
        Command::Compact => commands::transfer::compact(&config),
        Command::Export(args) => commands::transfer::export(&config, &args),
        Command::Import(args) => commands::transfer::import(&config, &args),
        Command::Backup(args) => commands::transfer::backup(&config, &args),
        Command::Restore(args) => commands::transfer::restore(&config, &args),
        Command::Reindex(args) => commands::reindex::reindex(&config, &args),
        Command::Retell(args) => commands::retell::retell(&config, &args),
        Command::Config => {
            out!("{}", config::REFERENCE);
            Ok(ExitCode::SUCCESS)
        }
        Command::Openapi => {
            let document = epimem_server::openapi().to_pretty_json()?;
            outln!("{document}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Demo(args) => commands::demo::demo(&config, explicit_db, &args),
        Command::Bench(command) => epimem_eval::bench::bench(&config, &command),
        Command::Eval(command) => epimem_eval::run(&config, &command),
    }
}

pub(crate) fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
