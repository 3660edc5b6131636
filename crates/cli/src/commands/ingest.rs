//! `ingest`, `flush` and `tick`: getting messages in and episodes out.

use std::{
    collections::BTreeSet,
    fs::File,
    io::{BufRead, BufReader},
    path::PathBuf,
    process::ExitCode,
};

use anyhow::{Context, Result, bail};
use clap::Args;
use epimem_api::{IngestReport, Memory, MessageInput, RunReport};
use epimem_core::{ConversationKey, Scope};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use super::open_with_embedder;
use crate::{config::AppConfig, input::parse_line, output::json_line};

#[derive(Debug, Args)]
pub(crate) struct IngestArgs {
    /// The JSONL file to read, or - for standard input.
    file: PathBuf,
    /// Close everything pending in the file's conversations at the end (end of an import).
    #[arg(long)]
    flush: bool,
    /// Report invalid lines and go on, instead of stopping at the first one.
    #[arg(long)]
    skip_invalid: bool,
    /// Messages stored per transaction.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    batch: u64,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct FlushArgs {
    /// Only this conversation.
    #[arg(long)]
    conversation: Option<String>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct IngestJson {
    lines: u64,
    inserted: u64,
    duplicates: u64,
    conflicts: u64,
    skipped_lines: u64,
    conversations: usize,
    episodes_closed: u64,
    pending: u64,
}

pub(crate) fn ingest(config: &AppConfig, args: &IngestArgs) -> Result<ExitCode> {
    let memory = open_with_embedder(config)?;
    let (name, reader, size): (String, Box<dyn BufRead>, Option<u64>) =
        if args.file.as_os_str() == "-" {
            ("<stdin>".into(), Box::new(std::io::stdin().lock()), None)
        } else {
            let file = File::open(&args.file)
                .with_context(|| format!("cannot open {}", args.file.display()))?;
            let size = file.metadata().ok().map(|m| m.len());
            (args.file.display().to_string(), Box::new(BufReader::new(file)), size)
        };
    let progress = progress_bar(size);
    let mut report = IngestReport::default();
    let mut conversations = BTreeSet::new();
    let mut batch = Vec::new();
    // The line the batch's first message came from, to say what was not stored on an error.
    let mut batch_from = 1u64;
    let (mut lines, mut skipped, mut bytes) = (0u64, 0u64, 0u64);
    for (index, raw) in reader.split(b'\n').enumerate() {
        let line_no = index as u64 + 1;
        let raw = match raw {
            Ok(raw) => raw,
            Err(e) => {
                report.add(send(&memory, &mut batch, (&name, batch_from, line_no), &report)?);
                bail!("{name}:{line_no}: cannot read: {e} (the lines before it were ingested)");
            }
        };
        lines = line_no;
        bytes += raw.len() as u64 + 1;
        let parsed = String::from_utf8(raw)
            .map_err(|_| "the line is not valid UTF-8".to_owned())
            .and_then(|text| parse_line(&config.tenant, line_no, &text));
        match parsed {
            Ok(Some(message)) => {
                conversations.insert(message.conversation.conversation.clone());
                if batch.is_empty() {
                    batch_from = line_no;
                }
                batch.push(message);
            }
            Ok(None) => {}
            Err(e) if args.skip_invalid => {
                progress.suspend(|| eprintln!("epimem: skipped {name}:{line_no}: {e}"));
                skipped += 1;
            }
            Err(e) => {
                // Keep what came before: it is valid and the user will re-run after fixing.
                report.add(send(&memory, &mut batch, (&name, batch_from, line_no), &report)?);
                progress.finish_and_clear();
                let before = report.inserted + report.duplicates;
                let were = if before == 1 {
                    "message before this line was"
                } else {
                    "messages before this line were"
                };
                bail!(
                    "{name}:{line_no}: {e}\n({before} {were} ingested; fix the line and run \
                     again: nothing is stored twice)"
                );
            }
        }
        if batch.len() as u64 >= args.batch {
            report.add(send(&memory, &mut batch, (&name, batch_from, line_no), &report)?);
            progress.set_position(bytes);
        }
    }
    report.add(send(&memory, &mut batch, (&name, batch_from, lines), &report)?);
    if args.flush {
        for conversation in &conversations {
            let scope = Scope::tenant(&config.tenant).with_conversation(Some(conversation.clone()));
            report.segmentation.add(memory.flush_now(&scope)?);
        }
    }
    progress.finish_and_clear();
    let pending = pending_in(&memory, &config.tenant, &conversations)?;
    let out = IngestJson {
        lines,
        inserted: report.inserted,
        duplicates: report.duplicates,
        conflicts: report.conflicts,
        skipped_lines: skipped,
        conversations: conversations.len(),
        episodes_closed: report.segmentation.episodes_closed,
        pending,
    };
    if out.conflicts > 0 {
        progress.suspend(|| {
            eprintln!(
                "epimem: {} message(s) not stored: their id already holds a different message, \
                 which stays (the first write wins; give new content a new id)",
                out.conflicts
            )
        });
    }
    if args.json {
        outln!("{}", json_line(&out));
    } else {
        outln!(
            "ingested {} messages ({} already stored, {} lines skipped) in {} conversation(s); \
             closed {} episode(s); {} message(s) pending",
            out.inserted,
            out.duplicates,
            out.skipped_lines,
            out.conversations,
            out.episodes_closed,
            out.pending
        );
    }
    Ok(if skipped > 0 { ExitCode::from(3) } else { ExitCode::SUCCESS })
}

/// Ingests the batch read from lines `from..=to` of `name`; on an error, says what was stored
/// (every batch before it) and what was not (all of this one: a push is one transaction).
fn send(
    memory: &Memory,
    batch: &mut Vec<MessageInput>,
    (name, from, to): (&str, u64, u64),
    before: &IngestReport,
) -> Result<IngestReport> {
    memory.ingest(std::mem::take(batch)).with_context(|| {
        format!(
            "{name}: lines {from}–{to} were not stored (the {} messages before them were; \
             fix the input and run again: nothing is stored twice)",
            before.inserted + before.duplicates
        )
    })
}

fn pending_in(memory: &Memory, tenant: &str, conversations: &BTreeSet<String>) -> Result<u64> {
    let mut pending = 0;
    for c in conversations {
        if let Some(q) = memory.queue(&ConversationKey::new(tenant, c.clone()))? {
            pending += q.pending();
        }
    }
    Ok(pending)
}

fn progress_bar(size: Option<u64>) -> ProgressBar {
    match size {
        Some(len) if len > 1 << 20 => {
            let bar = ProgressBar::new(len);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} ingesting [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar
        }
        _ => ProgressBar::hidden(),
    }
}

fn print_run(report: &RunReport, json: bool) -> std::io::Result<()> {
    if json {
        #[derive(Serialize)]
        struct RunJson {
            jobs_run: u64,
            episodes_closed: u64,
            messages_closed: u64,
        }
        let out = RunJson {
            jobs_run: report.jobs_run,
            episodes_closed: report.episodes_closed,
            messages_closed: report.messages_closed,
        };
        outln!("{}", json_line(&out));
    } else {
        outln!(
            "closed {} episode(s) from {} message(s)",
            report.episodes_closed,
            report.messages_closed
        );
    }
    Ok(())
}

pub(crate) fn flush(config: &AppConfig, args: &FlushArgs) -> Result<ExitCode> {
    let memory = open_with_embedder(config)?;
    let scope = Scope::tenant(&config.tenant).with_conversation(args.conversation.clone());
    print_run(&memory.flush_now(&scope)?, args.json)?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn tick(config: &AppConfig) -> Result<ExitCode> {
    let memory = open_with_embedder(config)?;
    print_run(&memory.tick()?, false)?;
    Ok(ExitCode::SUCCESS)
}
