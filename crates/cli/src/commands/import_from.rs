//! `import --from chatgpt|claude|mem0`: another tool's export read in. Each record becomes the
//! messages `ingest` takes and goes through the same checks; a record or message that fails
//! them is told with its place and left out, and the rest is stored. Every message keeps its
//! id from the export, so running the import again (after a crash, or on a newer export)
//! stores nothing twice.

use std::{collections::BTreeSet, io::Read, path::Path, process::ExitCode};

use anyhow::{Context, Result};
use clap::ValueEnum;
use epimem_api::{IngestReport, Memory, MessageInput};
use epimem_core::{ConversationKey, Scope};
use epimem_import::{Notes, Source};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use super::open_with_embedder;
use crate::{config::AppConfig, input::parse_line, output::json_line};

/// Which tool wrote the file `import --from` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ImportSource {
    /// A ChatGPT data export's conversations.json.
    Chatgpt,
    /// A Claude.ai data export's conversations.json.
    Claude,
    /// What mem0's get_all answers (or its export).
    Mem0,
}

/// What `import --from` is asked.
#[derive(Debug)]
pub(crate) struct Asked<'a> {
    pub(crate) file: &'a Path,
    pub(crate) from: ImportSource,
    pub(crate) user: Option<&'a str>,
    pub(crate) leave_open: bool,
    pub(crate) dry_run: bool,
    pub(crate) json: bool,
}

/// Messages stored per transaction.
const BATCH: usize = 1000;

#[derive(Debug, Default, Serialize)]
struct Report {
    records: usize,
    conversations: usize,
    messages: u64,
    already_held: u64,
    conflicts: u64,
    skipped: usize,
    attachments_named: usize,
    tool_outputs: usize,
    hidden_left_out: usize,
    empty_left_out: usize,
    abandoned_branches_left_out: usize,
    episodes_closed: u64,
    facts: usize,
}

pub(crate) fn import_from(config: &AppConfig, asked: &Asked<'_>) -> Result<ExitCode> {
    let source = match asked.from {
        ImportSource::Chatgpt => Source::ChatGpt,
        ImportSource::Claude => Source::Claude,
        ImportSource::Mem0 => Source::Mem0,
    };
    let name = asked.file.display().to_string();
    let mut text = String::new();
    if name == "-" {
        std::io::stdin().read_to_string(&mut text).context("reading standard input")?;
    } else {
        std::fs::File::open(asked.file)
            .and_then(|mut f| f.read_to_string(&mut text))
            .with_context(|| format!("cannot read {name}"))?;
    }
    let records = epimem_import::read(source, &text).with_context(|| name.clone())?;
    let memory = (!asked.dry_run).then(|| open_with_embedder(config)).transpose()?;
    let bar = progress(records.len() as u64, "reading");
    let mut report = Report { records: records.len(), ..Report::default() };
    let (mut notes, mut conversations, mut batch) = (Notes::default(), BTreeSet::new(), vec![]);
    for record in records {
        bar.inc(1);
        let place = record.place;
        let imported = match record.read {
            Ok(imported) => imported,
            Err(why) => {
                bar.suspend(|| eprintln!("epimem: skipped {name}: {place}: {why}"));
                report.skipped += 1;
                continue;
            }
        };
        notes.add(imported.notes);
        for mut message in imported.messages {
            if message.user.is_none() {
                message.user = asked.user.map(str::to_owned);
            }
            let line = serde_json::to_string(&message).context("encoding a message")?;
            match parse_line(&config.tenant, place.line as u64, &line) {
                Ok(Some(checked)) => {
                    conversations.insert(checked.conversation.conversation.clone());
                    batch.push(checked);
                }
                Ok(None) => {}
                Err(why) => {
                    let id = &message.id;
                    bar.suspend(|| {
                        eprintln!("epimem: skipped {name}: {place}, message {id}: {why}")
                    });
                    report.skipped += 1;
                }
            }
        }
        if batch.len() >= BATCH {
            store(memory.as_ref(), &mut batch, &mut report)?;
        }
    }
    store(memory.as_ref(), &mut batch, &mut report)?;
    bar.finish_and_clear();
    report.conversations = conversations.len();
    if let Some(memory) = &memory
        && !asked.leave_open
    {
        report.episodes_closed = close(memory, &config.tenant, &conversations)?;
        // mem0's memories are facts already: each becomes one, sourced by its episode.
        if source == Source::Mem0 {
            for conversation in &conversations {
                let key = ConversationKey::new(config.tenant.clone(), conversation.clone());
                report.facts += memory.take_as_facts(&key)?;
            }
        }
    }
    report.attachments_named = notes.attachments;
    report.tool_outputs = notes.tool_outputs;
    report.hidden_left_out = notes.hidden;
    report.empty_left_out = notes.empty;
    report.abandoned_branches_left_out = notes.abandoned;
    print(&report, asked)?;
    Ok(if report.skipped > 0 { ExitCode::from(3) } else { ExitCode::SUCCESS })
}

/// Stores the batch in one transaction (a dry run only counts it).
fn store(
    memory: Option<&Memory>,
    batch: &mut Vec<MessageInput>,
    report: &mut Report,
) -> Result<()> {
    let messages = std::mem::take(batch);
    let Some(memory) = memory else {
        report.messages += messages.len() as u64;
        return Ok(());
    };
    let stored: IngestReport = memory.ingest(messages).context(
        "storing a batch of messages failed (those before it are stored; run the same import \
         again: nothing is stored twice)",
    )?;
    report.messages += stored.inserted;
    report.already_held += stored.duplicates;
    report.conflicts += stored.conflicts;
    Ok(())
}

/// Closes the imported conversations into episodes: they are over.
fn close(memory: &Memory, tenant: &str, conversations: &BTreeSet<String>) -> Result<u64> {
    let bar = progress(conversations.len() as u64, "closing into episodes");
    let mut closed = 0;
    for conversation in conversations {
        let scope = Scope::tenant(tenant).with_conversation(Some(conversation.clone()));
        closed += memory.flush_now(&scope)?.episodes_closed;
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(closed)
}

fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} {what} [{{bar:30}}] {{pos}}/{{len}} ({{per_sec}}, {{eta}})"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar
}

fn print(report: &Report, asked: &Asked<'_>) -> std::io::Result<()> {
    if asked.json {
        outln!("{}", json_line(report));
        return Ok(());
    }
    if asked.dry_run {
        outln!(
            "would import {} message(s) in {} conversation(s); {} record(s) or message(s) skipped",
            report.messages,
            report.conversations,
            report.skipped
        );
    } else {
        outln!(
            "imported {} message(s) in {} conversation(s) ({} already held); {} record(s) or \
             message(s) skipped; closed {} episode(s)",
            report.messages,
            report.conversations,
            report.already_held,
            report.skipped,
            report.episodes_closed
        );
    }
    if report.facts > 0 {
        outln!("  {} new lasting fact(s), one a memory, each sourced by its episode", report.facts);
    }
    let left = [
        (report.attachments_named, "attachment(s) named in their messages, not imported"),
        (report.tool_outputs, "tool call(s) or output(s) kept as tool messages or notes"),
        (report.hidden_left_out, "hidden message(s) left out (system prompts, added context)"),
        (report.empty_left_out, "empty message(s) left out"),
        (report.abandoned_branches_left_out, "message(s) of abandoned branches left out"),
    ];
    for (count, what) in left.iter().filter(|(count, _)| *count > 0) {
        outln!("  {count} {what}");
    }
    if report.conflicts > 0 {
        outln!(
            "  {} message(s) not stored: their id already holds a different message, which stays",
            report.conflicts
        );
    }
    Ok(())
}
