//! `epimem bench import`: a ChatGPT export of years of chats imported as a user imports it,
//! `epimem import --from chatgpt` in its own process, timed whole (reading, checks, storing,
//! closing into episodes).

use std::{
    process::{Command, ExitCode, Stdio},
    time::Instant,
};

use anyhow::{Context, Result, bail};
use clap::Args;

use epimem_app::config::AppConfig;

#[derive(Debug, Args)]
pub struct ImportBenchArgs {
    /// Messages in the export (on the branches kept).
    #[arg(long, default_value_t = 100_000)]
    messages: usize,
    /// Messages per conversation.
    #[arg(long, default_value_t = 20)]
    per_conversation: usize,
}

/// What the whole import must stay under, in seconds.
const TARGET_SECONDS: f64 = 60.0;

pub fn bench_import(config: &AppConfig, args: &ImportBenchArgs) -> Result<ExitCode> {
    if args.messages == 0 || args.per_conversation == 0 {
        bail!("--messages and --per-conversation must be at least 1");
    }
    super::note_debug_build("import");
    let dir = tempfile::tempdir().context("temporary directory")?;
    let conversations = args.messages.div_ceil(args.per_conversation);
    let file = dir.path().join("conversations.json");
    let text = epimem_import::sample::chatgpt_export(conversations, args.per_conversation);
    std::fs::write(&file, &text).context("writing the export")?;
    let program = std::env::current_exe().context("finding this program")?;
    let started = Instant::now();
    let status = Command::new(program)
        .arg("--db")
        .arg(dir.path().join("import.db"))
        .args(["--embedder", &config.embedder, "import", "--from", "chatgpt"])
        .arg(&file)
        .stdout(Stdio::null())
        .status()
        .context("running epimem import")?;
    let took = started.elapsed().as_secs_f64();
    if !status.success() {
        bail!("epimem import failed: {status}");
    }
    let messages = conversations * args.per_conversation;
    println!("| export | messages | conversations | seconds | messages/s | target |");
    println!("|---|---:|---:|---:|---:|---|");
    println!(
        "| ChatGPT, {:.1} MB | {messages} | {conversations} | {took:.1} | {:.0} | {} |",
        text.len() as f64 / 1e6,
        messages as f64 / took,
        if took < TARGET_SECONDS { "under 60 s" } else { "**over 60 s**" }
    );
    Ok(ExitCode::SUCCESS)
}
