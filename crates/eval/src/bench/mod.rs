//! `epimem bench`: throughput of ingest and segmentation on synthetic conversations, recall
//! latency over many episodes, the server under load and the hooks as Claude Code runs them.

pub mod hook;
pub mod import;
pub mod recall;
pub mod serve;

use std::{
    process::ExitCode,
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use epimem_api::MessageInput;
use epimem_core::{
    ConversationKey, NewMessage, Role, Scope, SegmentMessage, Timestamp, TokenCounter,
};
use epimem_store::Store;
use epimem_store_sqlite::SqliteStore;
use indicatif::ProgressBar;

use epimem_app::config::{AppConfig, Database};
use epimem_app::{open_at, open_on, open_store};

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Messages per second for token counting, batched SQLite ingest, the full ingest
    /// pipeline (tokens, store, triggers, segmentation, summaries, full-text index) and
    /// segmentation alone. Build with --release for meaningful numbers.
    Ingest(IngestBenchArgs),
    /// Recall latency (p50 / p95 / p99) over many episodes, excluding query embedding, with
    /// the configured embedder. Build with --release for meaningful numbers.
    Recall(recall::RecallBenchArgs),
    /// `epimem serve` on loopback: messages added (single, then in batches) while recalls run,
    /// with throughput, p50 / p99 and errors. Build with --release for meaningful numbers.
    Serve(serve::ServeBenchArgs),
    /// `epimem hook` as Claude Code runs it, one process per event, on a project with
    /// sessions behind it: p50 / p99 per event kind against the 15 ms target. Build with
    /// --release for meaningful numbers.
    Hook(hook::HookBenchArgs),
    /// A ChatGPT export of many chats (100,000 messages) imported as a user imports it, timed
    /// whole against a minute. Build with --release for meaningful numbers.
    Import(import::ImportBenchArgs),
    /// Fills the measured parts of docs/benchmarks.md and docs/experiments/ from the raw results
    /// scripts/benchmarks.sh leaves in target/benchmarks; a part whose run was not made keeps
    /// what the page says.
    Page(crate::page::PageArgs),
}

#[derive(Debug, Args)]
pub struct IngestBenchArgs {
    /// Messages to generate.
    #[arg(long, default_value_t = 100_000)]
    messages: usize,
    /// Messages per transaction.
    #[arg(long, default_value_t = 1_000)]
    batch: usize,
    /// Conversations the messages are spread over.
    #[arg(long, default_value_t = 10)]
    conversations: usize,
    /// Seed of the synthetic conversations.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Measure the store push and the full ingest on this PostgreSQL database (postgres://…)
    /// too, beside SQLite: its tenant `bench` is forgotten first and left filled.
    #[arg(long, value_name = "URL")]
    postgres: Option<String>,
}

/// The nearest-rank percentile `p` (0 to 1) of `sorted` milliseconds; NaN when there are none.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

pub fn bench(config: &AppConfig, command: &BenchCommand) -> Result<ExitCode> {
    match command {
        BenchCommand::Ingest(args) => bench_ingest(config, args),
        BenchCommand::Recall(args) => recall::bench_recall(config, args),
        BenchCommand::Serve(args) => serve::bench_serve(config, args),
        BenchCommand::Hook(args) => hook::bench_hook(config, args),
        BenchCommand::Import(args) => import::bench_import(config, args),
        BenchCommand::Page(args) => crate::page::page(args),
    }
}

/// Says so on standard error when a benchmark runs in a debug build, whose numbers mean little.
fn note_debug_build(bench: &str) {
    if cfg!(debug_assertions) {
        eprintln!(
            "note: this is a debug build; use `cargo run --release -p epimem -- bench {bench}`"
        );
    }
}

fn bench_ingest(config: &AppConfig, args: &IngestBenchArgs) -> Result<ExitCode> {
    anyhow::ensure!(
        args.messages > 0 && args.batch > 0 && args.conversations > 0,
        "counts must be positive"
    );
    note_debug_build("ingest");
    let inputs = synthetic(args.messages, args.conversations, args.seed);
    let dir = tempfile::tempdir().context("temporary directory")?;
    let mut rows = Vec::new();

    let counter = TokenCounter::cl100k();
    let (tokens, took) =
        timed(|| inputs.iter().map(|m| counter.count(&m.content)).collect::<Vec<_>>());
    rows.push(Row::new("token counting (cl100k)", inputs.len(), took, None));

    let messages: Vec<NewMessage> =
        inputs.iter().zip(&tokens).map(|(m, &t)| new_message(m, t)).collect();
    let store = SqliteStore::open(&dir.path().join("push.db"))?;
    let took = push_all(&store, &messages, args.batch)?;
    rows.push(Row::new("store push, batched (SQLite, WAL)", messages.len(), took, Some(50_000.0)));

    let memory = open_at(config, &dir.path().join("full.db"), true)?;
    let bar = ProgressBar::new(inputs.len() as u64);
    let (ingested, took) = timed(|| -> Result<u64> {
        let mut episodes = 0;
        for chunk in inputs.chunks(args.batch) {
            episodes += memory.ingest(chunk.to_vec())?.segmentation.episodes_closed;
            bar.inc(chunk.len() as u64);
        }
        Ok(episodes + memory.flush_now(&Scope::tenant("bench"))?.episodes_closed)
    });
    let episodes = ingested?;
    bar.finish_and_clear();
    rows.push(Row::new(
        "full ingest (tokens, store, segment, summarize, index)",
        inputs.len(),
        took,
        None,
    ));

    if let Some(url) = &args.postgres {
        let database = Database::Postgres(url.clone());
        let store = open_store(&database)?;
        store.delete_tenant("bench")?;
        let took = push_all(&*store, &messages, args.batch)?;
        rows.push(Row::new("store push, batched (PostgreSQL)", messages.len(), took, None));
        store.delete_tenant("bench")?;
        drop(store);
        let memory = open_on(config, &database, true)?;
        let bar = ProgressBar::new(inputs.len() as u64);
        let (ingested, took) = timed(|| -> Result<()> {
            for chunk in inputs.chunks(args.batch) {
                memory.ingest(chunk.to_vec())?;
                bar.inc(chunk.len() as u64);
            }
            memory.flush_now(&Scope::tenant("bench"))?;
            Ok(())
        });
        ingested?;
        bar.finish_and_clear();
        rows.push(Row::new("full ingest (PostgreSQL)", inputs.len(), took, None));
    }

    let policy = &config.engine().segmentation;
    let by_conversation = group(&messages, args.conversations);
    let reps = 5;
    let (boundaries, took) = timed(|| {
        let mut n = 0;
        for _ in 0..reps {
            for conv in &by_conversation {
                n += std::hint::black_box(policy.boundaries(conv)).len();
            }
        }
        n / reps
    });
    rows.push(Row::new(
        "segmentation alone (default policy, pure)",
        messages.len() * reps,
        took,
        Some(1_000_000.0),
    ));

    outln!("{:<56} {:>10} {:>9} {:>12} {:>12}", "stage", "messages", "seconds", "msg/s", "target");
    for r in &rows {
        let target = r.target.map_or(String::new(), |t| format!("≥ {t:.0}"));
        let mark = match r.target {
            Some(t) if r.rate() >= t => " ok",
            Some(_) => " MISSED",
            None => "",
        };
        outln!(
            "{:<56} {:>10} {:>9.3} {:>12.0} {:>12}{mark}",
            r.stage,
            r.messages,
            r.seconds,
            r.rate(),
            target
        );
    }
    outln!(
        "\n{} conversations; {} episodes from the full ingest; {} boundaries per segmentation pass",
        args.conversations,
        episodes,
        boundaries
    );
    Ok(ExitCode::SUCCESS)
}

/// Pushes `messages` into `store`, `batch` at a time, with a progress bar; how long it took.
fn push_all(store: &dyn Store, messages: &[NewMessage], batch: usize) -> Result<Duration> {
    let bar = ProgressBar::new(messages.len() as u64);
    let (pushed, took) = timed(|| -> Result<()> {
        for chunk in messages.chunks(batch) {
            store.push_messages(chunk)?;
            bar.inc(chunk.len() as u64);
        }
        Ok(())
    });
    pushed?;
    bar.finish_and_clear();
    Ok(took)
}

struct Row {
    stage: &'static str,
    messages: usize,
    seconds: f64,
    target: Option<f64>,
}

impl Row {
    fn new(stage: &'static str, messages: usize, took: Duration, target: Option<f64>) -> Self {
        Self { stage, messages, seconds: took.as_secs_f64(), target }
    }

    fn rate(&self) -> f64 {
        self.messages as f64 / self.seconds.max(1e-9)
    }
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

fn new_message(m: &MessageInput, tokens: u32) -> NewMessage {
    NewMessage {
        conversation: m.conversation.clone(),
        user: None,
        agent: None,
        key: m.key.clone(),
        role: m.role,
        speaker: m.speaker.clone(),
        content: m.content.clone(),
        timestamp: m.timestamp.unwrap_or(Timestamp(0)),
        metadata: serde_json::Value::Null,
        tokens,
    }
}

fn group(messages: &[NewMessage], conversations: usize) -> Vec<Vec<SegmentMessage<'_>>> {
    let mut out = vec![Vec::new(); conversations];
    for (i, m) in messages.iter().enumerate() {
        out[i % conversations].push(SegmentMessage {
            role: m.role,
            content: &m.content,
            timestamp: m.timestamp,
            tokens: m.tokens,
            embedding: None,
        });
    }
    out
}

pub const TOPICS: &[&[&str]] = &[
    &["trip", "lisbon", "hotel", "tram", "museum", "flight", "booking", "castle", "beach"],
    &["build", "pipeline", "test", "flaky", "deploy", "merge", "timeout", "server", "logs"],
    &["recipe", "dinner", "tomato", "garlic", "oven", "pasta", "sauce", "spice", "bake"],
    &["garden", "seedling", "water", "soil", "balcony", "sunlight", "compost", "harvest", "pot"],
    &["budget", "invoice", "salary", "savings", "rent", "taxes", "expense", "loan", "bank"],
];
pub const FILLER: &[&str] =
    &["the", "we", "should", "maybe", "about", "and", "then", "with", "for", "it"];

/// Deterministic conversations: topics that change every dozen or so messages, gaps from
/// seconds to hours, user prompts and longer assistant answers.
pub(super) fn synthetic(messages: usize, conversations: usize, seed: u64) -> Vec<MessageInput> {
    let mut rng = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = move |n: u64| {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (rng >> 33) % n
    };
    let mut clocks = vec![1_767_225_600_000i64; conversations];
    let mut topics = vec![0usize; conversations];
    (0..messages)
        .map(|i| {
            let c = i % conversations;
            if next(14) == 0 {
                topics[c] = next(TOPICS.len() as u64) as usize;
            }
            clocks[c] += if next(40) == 0 { 3_600_000 } else { 20_000 + next(100_000) as i64 };
            let user = (i / conversations).is_multiple_of(2);
            let words = if user { 6 + next(10) } else { 15 + next(25) };
            let vocab = TOPICS[topics[c]];
            let content = (0..words)
                .map(|_| {
                    if next(3) == 0 {
                        FILLER[next(FILLER.len() as u64) as usize]
                    } else {
                        vocab[next(vocab.len() as u64) as usize]
                    }
                })
                .collect::<Vec<_>>()
                .join(" ");
            MessageInput {
                conversation: ConversationKey::new("bench", format!("c{c}")),
                user: None,
                agent: None,
                key: format!("m{i}"),
                role: if user { Role::User } else { Role::Assistant },
                speaker: None,
                content,
                timestamp: Some(Timestamp(clocks[c])),
                metadata: serde_json::Value::Null,
            }
        })
        .collect()
}
