//! `demo`: the main job on a built-in conversation, end to end.

use std::{io::Write, process::ExitCode};

use anyhow::{Context, Result};
use clap::Args;
use epimem_api::wire::{EpisodesQuery, RecallIn};
use epimem_core::Scope;

use super::open_on;
use crate::{
    commands::query::said,
    config::{AppConfig, Database},
    input::parse_line,
    output::{episode_line, hit_text},
};

/// A multi-topic conversation (a trip, a flaky test, lunch, the trip again, a garden) written
/// for this demo.
const SAMPLE: &str = include_str!("../../data/sample-conversation.jsonl");

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// The question to recall with.
    #[arg(long, default_value = "why did the payments CI fail?")]
    query: String,
    /// Write the sample conversation to this file too, to try `epimem ingest` on it.
    #[arg(long, value_name = "FILE")]
    write_sample: Option<std::path::PathBuf>,
}

pub(crate) fn demo(config: &AppConfig, explicit_db: bool, args: &DemoArgs) -> Result<ExitCode> {
    if let Some(path) = &args.write_sample {
        std::fs::write(path, SAMPLE).with_context(|| format!("cannot write {}", path.display()))?;
    }
    // A throwaway database unless one was asked for, so the demo never touches real memories.
    let scratch = tempfile::tempdir().context("cannot create a temporary directory")?;
    let database = match explicit_db {
        true => config.database()?,
        false => Database::Sqlite(scratch.path().join("demo.db")),
    };
    let memory = open_on(config, &database, true)?;
    let mut messages = Vec::new();
    for (i, line) in SAMPLE.lines().enumerate() {
        let parsed = parse_line(&config.tenant, i as u64 + 1, line)
            .map_err(|e| anyhow::anyhow!("sample line {}: {e}", i + 1))?;
        messages.extend(parsed);
    }
    let count = messages.len();
    let conversation = messages[0].conversation.conversation.clone();
    let report = memory.ingest(messages)?;
    let scope = Scope::tenant(&config.tenant);
    let flushed = memory.flush_now(&scope.clone().with_conversation(Some(conversation.clone())))?;

    let mut out = std::io::stdout().lock();
    writeln!(out, "Ingested {count} messages of conversation {conversation:?} into {}.", database)?;
    writeln!(
        out,
        "{} episode(s) closed while ingesting, {} more on flush.\n",
        report.segmentation.episodes_closed, flushed.episodes_closed
    )?;
    writeln!(out, "Episodes:")?;
    let page = memory.episodes(&config.tenant, EpisodesQuery::default()).map_err(said)?;
    for e in page.episodes.iter().rev() {
        writeln!(out, "{}", episode_line(e))?;
    }
    writeln!(out, "\nRecall {:?}:", args.query)?;
    let request = RecallIn {
        query: args.query.clone(),
        conversation: Some(conversation),
        limit: Some(3),
        ..RecallIn::default()
    };
    for (i, hit) in memory.recall(&config.tenant, request).map_err(said)?.hits.iter().enumerate() {
        writeln!(out, "{}", hit_text(i + 1, hit))?;
    }
    Ok(ExitCode::SUCCESS)
}
