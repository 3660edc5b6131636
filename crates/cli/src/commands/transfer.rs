//! The database as a whole: `migrate` and `compact` it; `export` and `import` a memory
//! between databases (SQLite and PostgreSQL, either way) as JSON lines.

use std::{
    collections::BTreeMap,
    io::{BufRead, BufWriter, Write},
    path::PathBuf,
    process::ExitCode,
};

use anyhow::{Context, Result, bail};
use clap::Args;
use epimem_core::{
    ConversationKey, Episode, Message, TimelineNode, facts::Fact, fsrs::PendingReview,
};
use epimem_store::{
    ConversationExport, ExportedFact, ExportedReview, ExportedVectors, ExportedVersion,
};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};

use crate::config::AppConfig;
use epimem_app::open_memory;

/// One line of an export. A conversation's line comes before its messages, episodes, recalls
/// waiting for review, facts and vectors; timeline nodes come last.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Line {
    Conversation(ConversationLine),
    Message(Of<Message>),
    Episode(Episode),
    PendingReview(Of<PendingReview>),
    Fact(FactLine),
    Vector(VectorLine),
    EpisodeVersion(Of<ExportedVersion>),
    EpisodeReview(Of<ExportedReview>),
    TimelineNode(NodeLine),
}

#[derive(Debug, Serialize, Deserialize)]
struct ConversationLine {
    #[serde(flatten)]
    conversation: ConversationKey,
    user: Option<String>,
    agent: Option<String>,
    watermark: u64,
    window_doubled: bool,
    consolidated_upto: u64,
}

/// A record of a conversation, with the conversation it belongs to.
#[derive(Debug, Serialize, Deserialize)]
struct Of<T> {
    tenant: String,
    conversation: String,
    #[serde(flatten)]
    item: T,
}

#[derive(Debug, Serialize, Deserialize)]
struct FactLine {
    #[serde(flatten)]
    fact: Fact,
    fingerprint: Option<String>,
    vector: Option<Vec<f32>>,
}

#[derive(Debug, Serialize, Deserialize)]
struct VectorLine {
    tenant: String,
    conversation: String,
    fingerprint: String,
    seq: u64,
    vector: Vec<f32>,
}

#[derive(Debug, Serialize, Deserialize)]
struct NodeLine {
    tenant: String,
    #[serde(flatten)]
    node: TimelineNode,
}

#[derive(Debug, Args)]
#[command(after_help = "Everything a tenant's memory holds goes: every message (pending ones \
too), episodes with their memory strength, their reviews and their earlier titles and summaries, recalls \
waiting for review, facts, the timeline's \
nodes (every version) and the cached message vectors. Jobs, API keys and language model usage \
stay behind. The search index is not exported: the importing side builds its own.")]
pub(crate) struct ExportArgs {
    /// The file to write, or - for standard output.
    file: PathBuf,
    /// Every tenant's memory, not only --tenant's.
    #[arg(long)]
    all_tenants: bool,
}

#[derive(Debug, Args)]
#[command(after_help = "What `epimem export` wrote: a conversation the database already has is \
refused (nothing of it is written): forget it first to replace it. Each conversation is imported \
in one transaction, so an import that stops halfway can be run again once the conversations it \
wrote are forgotten, or with --skip-existing.

Another tool's export (--from): each conversation (each mem0 memory) becomes messages that go \
through the checks `ingest` makes; a record that fails them is told with its line and left out, \
and the rest is imported (exit status 3 then). Every message keeps its id from the export, so \
the same import run again, after a crash or on a newer export, stores nothing twice. A ChatGPT \
conversation is the branch the user ended on (an edited message's first version is left out); \
attachments are named in their messages, tools' output kept as tool messages. A mem0 memory \
becomes a message of its owner's conversation (mem0-<user>) under that user, the memory whole \
in its metadata, and then a lasting fact sourced by that message's episode.")]
pub(crate) struct ImportArgs {
    /// The file `epimem export` (or the tool of --from) wrote, or - for standard input.
    file: PathBuf,
    /// Leave conversations the database already has as they are, instead of stopping.
    #[arg(long, conflicts_with = "from")]
    skip_existing: bool,
    /// Read another tool's export: chatgpt or claude (the conversations.json of a ChatGPT or
    /// Claude.ai data export), or mem0 (what its get_all answers).
    #[arg(long, value_name = "TOOL")]
    from: Option<super::import_from::ImportSource>,
    /// With --from chatgpt or claude: whose conversations these are (recall by --user reads
    /// them).
    #[arg(long, requires = "from")]
    user: Option<String>,
    /// With --from chatgpt or claude: leave the conversations for the worker to close (by
    /// default they are closed into episodes at the end: they are over).
    #[arg(long, requires = "from")]
    leave_open: bool,
    /// With --from: read and check everything, store nothing.
    #[arg(long, requires = "from")]
    dry_run: bool,
    /// With --from: the report as one JSON object.
    #[arg(long, requires = "from")]
    json: bool,
}

#[derive(Debug, Args)]
#[command(after_help = "The copy is one snapshot of the database, taken in a read transaction: \
servers and workers go on writing while it is taken, and it holds everything stored before it \
began. Beside it (DEST.search) goes the search index of that copy, built from the copy (the \
live index's files change while a server saves them), so a restored copy answers at once. \
Restore it with `epimem restore`.")]
pub(crate) struct BackupArgs {
    /// The new file to write (never one that exists).
    dest: PathBuf,
}

#[derive(Debug, Args)]
#[command(after_help = "The backup is copied beside the database and opened (its schema \
brought up to date) before anything is replaced, so a bad file changes nothing. Stop every \
server, worker and hook using the database first.")]
pub(crate) struct RestoreArgs {
    /// The file `epimem backup` wrote.
    backup: PathBuf,
    /// Replace the database if there is one: it is kept beside, renamed
    /// (<db>.replaced-<time>).
    #[arg(long)]
    replace: bool,
}

pub(crate) fn backup(config: &AppConfig, args: &BackupArgs) -> Result<ExitCode> {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{spinner} indexing {msg} [{bar:30}] {pos}/{len} ({eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let copied = epimem_app::backup::backup(config, &args.dest, &mut |tenant, done, total| {
        bar.set_message(tenant.to_owned());
        bar.set_length(total);
        bar.set_position(done);
    })?;
    bar.finish_and_clear();
    println!(
        "backed up {} to {} ({:.1} MB) in {:.1} s",
        config.database()?,
        copied.database.display(),
        copied.bytes as f64 / 1e6,
        copied.seconds
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn restore(config: &AppConfig, args: &RestoreArgs) -> Result<ExitCode> {
    let copied = epimem_app::backup::restore(config, &args.backup, args.replace)?;
    println!(
        "restored {} from {} ({:.1} MB) in {:.1} s; {}",
        copied.database.display(),
        args.backup.display(),
        copied.bytes as f64 / 1e6,
        copied.seconds,
        if copied.with_index {
            "its search index came with it"
        } else {
            "its search index is built when first used"
        }
    );
    if let Some(kept) = &copied.kept {
        println!("the database it replaced is kept as {}", kept.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn migrate(config: &AppConfig) -> Result<ExitCode> {
    let database = config.database()?;
    // Opening a database brings its schema up to date.
    open_memory(config)?;
    println!("{database}: the schema is up to date");
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn compact(config: &AppConfig) -> Result<ExitCode> {
    let database = config.database()?;
    let started = std::time::Instant::now();
    open_memory(config)?.compact()?;
    println!("{database}: compacted in {:.1} s", started.elapsed().as_secs_f64());
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn export(config: &AppConfig, args: &ExportArgs) -> Result<ExitCode> {
    let memory = open_memory(config)?;
    let tenants = if args.all_tenants { memory.tenants()? } else { vec![config.tenant.clone()] };
    let out: Box<dyn Write> = match args.file.to_str() {
        Some("-") => Box::new(std::io::stdout().lock()),
        _ => Box::new(
            std::fs::File::create(&args.file)
                .with_context(|| format!("cannot create {}", args.file.display()))?,
        ),
    };
    let mut out = BufWriter::new(out);
    let mut write = |line: &Line| -> Result<()> {
        serde_json::to_writer(&mut out, line)?;
        out.write_all(b"\n")?;
        Ok(())
    };
    let (mut conversations, mut nodes) = (0, 0);
    for tenant in &tenants {
        let keys = memory.conversations(tenant)?;
        let bar = ProgressBar::new(keys.len() as u64).with_message(format!("exporting {tenant}"));
        for key in keys {
            bar.inc(1);
            // Forgotten since it was listed: nothing to export.
            let Some(export) = memory.export_conversation(&key)? else { continue };
            for line in lines_of(export) {
                write(&line)?;
            }
            conversations += 1;
        }
        bar.finish_and_clear();
        for node in memory.export_timeline(tenant)? {
            write(&Line::TimelineNode(NodeLine { tenant: tenant.clone(), node }))?;
            nodes += 1;
        }
    }
    out.flush()?;
    eprintln!("exported {conversations} conversation(s) and {nodes} timeline node(s)");
    Ok(ExitCode::SUCCESS)
}

fn of<T>(key: &ConversationKey, item: T) -> Of<T> {
    Of { tenant: key.tenant.clone(), conversation: key.conversation.clone(), item }
}

/// The conversation being read, which a record of `tenant`/`conversation` must belong to.
fn within<'a>(
    current: &'a mut Option<ConversationExport>,
    tenant: &str,
    conversation: &str,
    number: usize,
) -> Result<&'a mut ConversationExport> {
    match current.as_mut() {
        Some(c)
            if c.conversation.tenant == tenant && c.conversation.conversation == conversation =>
        {
            Ok(c)
        }
        _ => bail!(
            "line {number}: a record of {tenant}/{conversation} outside that conversation's lines"
        ),
    }
}

fn lines_of(export: ConversationExport) -> Vec<Line> {
    let key = export.conversation.clone();
    let mut lines = vec![Line::Conversation(ConversationLine {
        conversation: export.conversation.clone(),
        user: export.user,
        agent: export.agent,
        watermark: export.watermark,
        window_doubled: export.window_doubled,
        consolidated_upto: export.consolidated_upto,
    })];
    lines.extend(export.messages.into_iter().map(|m| Line::Message(of(&key, m))));
    lines.extend(export.episodes.into_iter().map(Line::Episode));
    lines.extend(export.pending_reviews.into_iter().map(|r| Line::PendingReview(of(&key, r))));
    lines.extend(export.facts.into_iter().map(|f| {
        Line::Fact(FactLine { fact: f.fact, fingerprint: f.fingerprint, vector: f.vector })
    }));
    lines.extend(export.versions.into_iter().map(|v| Line::EpisodeVersion(of(&key, v))));
    lines.extend(export.reviews.into_iter().map(|r| Line::EpisodeReview(of(&key, r))));
    for group in export.vectors {
        lines.extend(group.vectors.into_iter().map(|(seq, vector)| {
            Line::Vector(VectorLine {
                tenant: key.tenant.clone(),
                conversation: key.conversation.clone(),
                fingerprint: group.fingerprint.clone(),
                seq,
                vector,
            })
        }));
    }
    lines
}

pub(crate) fn import(config: &AppConfig, args: &ImportArgs) -> Result<ExitCode> {
    if let Some(from) = args.from {
        if args.leave_open && from == super::import_from::ImportSource::Mem0 {
            bail!("--leave-open: mem0's memories become facts once their conversations are closed");
        }
        let asked = super::import_from::Asked {
            file: &args.file,
            from,
            user: args.user.as_deref(),
            leave_open: args.leave_open,
            dry_run: args.dry_run,
            json: args.json,
        };
        return super::import_from::import_from(config, &asked);
    }
    let memory = open_memory(config)?;
    let input: Box<dyn BufRead> = match args.file.to_str() {
        Some("-") => Box::new(std::io::stdin().lock()),
        _ => Box::new(std::io::BufReader::new(
            std::fs::File::open(&args.file)
                .with_context(|| format!("cannot open {}", args.file.display()))?,
        )),
    };
    let bar = ProgressBar::new_spinner().with_message("importing");
    let (mut imported, mut skipped) = (0, 0);
    let mut current: Option<ConversationExport> = None;
    let mut nodes: BTreeMap<String, Vec<TimelineNode>> = BTreeMap::new();
    let mut finish = |export: ConversationExport| -> Result<()> {
        if args.skip_existing && memory.queue(&export.conversation)?.is_some() {
            skipped += 1;
            return Ok(());
        }
        memory
            .import_conversation(&export)
            .with_context(|| format!("importing conversation {}", export.conversation))?;
        imported += 1;
        bar.inc(1);
        Ok(())
    };
    for (number, line) in input.lines().enumerate() {
        let line = line.with_context(|| format!("reading {}", args.file.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Line = serde_json::from_str(&line)
            .with_context(|| format!("line {}: not a line of an epimem export", number + 1))?;
        let number = number + 1;
        match parsed {
            Line::Conversation(c) => {
                if let Some(done) = current.take() {
                    finish(done)?;
                }
                current = Some(ConversationExport {
                    conversation: c.conversation,
                    user: c.user,
                    agent: c.agent,
                    watermark: c.watermark,
                    window_doubled: c.window_doubled,
                    consolidated_upto: c.consolidated_upto,
                    messages: Vec::new(),
                    episodes: Vec::new(),
                    pending_reviews: Vec::new(),
                    facts: Vec::new(),
                    vectors: Vec::new(),
                    versions: Vec::new(),
                    reviews: Vec::new(),
                });
            }
            Line::Message(m) => {
                within(&mut current, &m.tenant, &m.conversation, number)?.messages.push(m.item)
            }
            Line::Episode(e) => {
                let key = e.conversation.clone();
                within(&mut current, &key.tenant, &key.conversation, number)?.episodes.push(e);
            }
            Line::PendingReview(r) => {
                within(&mut current, &r.tenant, &r.conversation, number)?
                    .pending_reviews
                    .push(r.item);
            }
            Line::Fact(f) => {
                let key = f.fact.conversation.clone();
                within(&mut current, &key.tenant, &key.conversation, number)?.facts.push(
                    ExportedFact { fact: f.fact, fingerprint: f.fingerprint, vector: f.vector },
                );
            }
            Line::Vector(v) => {
                let export = within(&mut current, &v.tenant, &v.conversation, number)?;
                match export.vectors.last_mut().filter(|g| g.fingerprint == v.fingerprint) {
                    Some(group) => group.vectors.push((v.seq, v.vector)),
                    None => export.vectors.push(ExportedVectors {
                        fingerprint: v.fingerprint,
                        vectors: vec![(v.seq, v.vector)],
                    }),
                }
            }
            Line::EpisodeVersion(v) => {
                within(&mut current, &v.tenant, &v.conversation, number)?.versions.push(v.item)
            }
            Line::EpisodeReview(r) => {
                within(&mut current, &r.tenant, &r.conversation, number)?.reviews.push(r.item)
            }
            Line::TimelineNode(n) => nodes.entry(n.tenant).or_default().push(n.node),
        }
    }
    if let Some(done) = current.take() {
        finish(done)?;
    }
    let mut node_count = 0;
    for (tenant, nodes) in &nodes {
        memory.import_timeline(tenant, nodes)?;
        node_count += nodes.len();
    }
    bar.finish_and_clear();
    eprintln!(
        "imported {imported} conversation(s) ({skipped} already there, left as they were) and \
         {node_count} timeline node(s)"
    );
    Ok(ExitCode::SUCCESS)
}
