//! `bench serve`: the server on loopback under a mixed load, as agents would use it: writers
//! add messages (one per request, then in batches, then a few at a time with pauses, each
//! pause letting the search index save) while readers recall.

use std::{
    process::ExitCode,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use clap::Args;
use epimem_api::Memory;
use epimem_api::MessageInput;
use epimem_server::Access;

use epimem_app::{open_serving, worker_report};

use super::synthetic;
use epimem_app::config::{AppConfig, Database};

#[derive(Debug, Args)]
pub struct ServeBenchArgs {
    /// Seconds of load in all, split between single messages, batches, and a few messages
    /// at a time with pauses.
    #[arg(long, default_value_t = 90)]
    seconds: u64,
    /// Messages per request in the batched half.
    #[arg(long, default_value_t = 100)]
    batch: usize,
    /// Threads adding messages.
    #[arg(long, default_value_t = 2)]
    writers: usize,
    /// Threads recalling while they do.
    #[arg(long, default_value_t = 1)]
    readers: usize,
    /// Serve this SQLite store as it is, in the tenant of --tenant (a new temporary one
    /// otherwise): the load then meets a memory of that size, such as the one `bench recall
    /// --db` built (its tenant is `bench`). What the load adds stays in it.
    #[arg(long, value_name = "FILE")]
    db: Option<std::path::PathBuf>,
}

/// How writers add messages in a phase.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// One message per request, without pause.
    Single,
    /// This many messages per request, without pause.
    Batches(usize),
    /// A few messages to a new conversation, which is then flushed, then a pause of
    /// [`PAUSE`]: a second without updates lets the search index save its state (what agents
    /// talking now and then cause), while readers go on recalling.
    Pauses,
}

/// Messages a writer adds before each pause.
const BEFORE_PAUSE: usize = 5;
/// The pause.
const PAUSE: Duration = Duration::from_secs(2);

impl Phase {
    fn label(self) -> String {
        match self {
            Self::Single => "one message per request".into(),
            Self::Batches(n) => format!("batches of {n}"),
            Self::Pauses => format!("{BEFORE_PAUSE} at a time, pauses"),
        }
    }

    /// Messages per request.
    fn batch(self) -> usize {
        match self {
            Self::Single => 1,
            Self::Batches(n) => n,
            Self::Pauses => BEFORE_PAUSE,
        }
    }

    fn tag(self) -> &'static str {
        match self {
            Self::Single => "single",
            Self::Batches(_) => "batch",
            Self::Pauses => "paused",
        }
    }
}

/// What one kind of request did in a phase.
#[derive(Debug, Default)]
struct Timings {
    ms: Vec<f64>,
    errors: u64,
    messages: u64,
}

impl Timings {
    fn add(&mut self, other: Timings) {
        self.ms.extend(other.ms);
        self.errors += other.errors;
        self.messages += other.messages;
    }

    fn percentile(&mut self, p: f64) -> f64 {
        self.ms.sort_by(f64::total_cmp);
        super::percentile(&self.ms, p)
    }
}

pub fn bench_serve(config: &AppConfig, args: &ServeBenchArgs) -> Result<ExitCode> {
    if args.seconds < 3 || args.batch == 0 || args.writers == 0 {
        bail!("--seconds must be at least 3, --batch and --writers at least 1");
    }
    super::note_debug_build("serve");
    let dir = tempfile::tempdir().context("temporary directory")?;
    let path = args.db.clone().unwrap_or_else(|| dir.path().join("bench.db"));
    let memory = open_serving(config, &Database::Sqlite(path))?;
    let fingerprint = memory.measure().embedder_fingerprint().unwrap_or("none").to_owned();
    let served = memory.clone();
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let base = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = runtime.spawn(epimem_server::serve(
        served,
        listener,
        epimem_server::ServerConfig {
            tenant: config.tenant.clone(),
            access: Access::SingleUser,
            serving: config.server.checked()?,
        },
        worker_report(false),
        Box::new(|_| {}),
        async move {
            let _ = stopped.await;
        },
    ));
    let pool = Arc::new(synthetic(20_000, 200, 11));
    let third = Duration::from_secs(args.seconds / 3);
    // Ids and conversations of this run's own: on a store a run before filled (`--db`), the
    // same ones would be taken as already stored and add nothing.
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let mut rows = Vec::new();
    for phase in [Phase::Single, Phase::Batches(args.batch), Phase::Pauses] {
        let timings = load(&base, &pool, phase, args, third, &format!("r{run:x}"))?;
        let backlog = drain(&memory, &config.tenant)?;
        rows.push((phase, timings, backlog));
    }
    let _ = stop.send(());
    runtime.block_on(serving).context("the server task failed")??;

    outln!(
        "bench serve: {} s on loopback, {} writer(s), {} reader(s), embedder {fingerprint}",
        args.seconds,
        args.writers,
        args.readers
    );
    outln!(
        "{:<28} {:>11} {:>9} {:>9} {:>9} {:>10} {:>10} {:>10} {:>7} {:>9} {:>9}",
        "phase",
        "messages/s",
        "add p50",
        "add p99",
        "recalls/s",
        "recall p50",
        "recall p99",
        "recall max",
        "errors",
        "jobs left",
        "caught up"
    );
    let secs = third.as_secs_f64();
    let mut met = true;
    for (phase, (mut adds, mut recalls), (jobs_left, caught_up)) in rows {
        outln!(
            "{:<28} {:>11.0} {:>7.2}ms {:>7.2}ms {:>9.0} {:>8.2}ms {:>8.2}ms {:>8.2}ms {:>7} {:>9} {:>8.1}s",
            phase.label(),
            adds.messages as f64 / secs,
            adds.percentile(0.5),
            adds.percentile(0.99),
            recalls.ms.len() as f64 / secs,
            recalls.percentile(0.5),
            recalls.percentile(0.99),
            recalls.percentile(1.0),
            adds.errors + recalls.errors,
            jobs_left,
            caught_up.as_secs_f64()
        );
        met &= adds.errors + recalls.errors == 0 && recalls.percentile(0.99) <= 20.0;
        if let Phase::Batches(_) = phase {
            met &= adds.messages as f64 / secs >= 5000.0;
        }
    }
    outln!(
        "messages are stored when a request returns and cut into episodes by the worker: \
         'jobs left' were still queued when the phase ended, 'caught up' is how long the \
         worker took to run them; with pauses, each writer adds {BEFORE_PAUSE} messages to a new \
         conversation, flushes it (its time counts as an add) and waits {} s",
        PAUSE.as_secs()
    );
    outln!(
        "targets: ≥ 5,000 messages/s in batches, recall p99 ≤ 20 ms while adding, no errors: {}",
        if met { "met" } else { "MISSED" }
    );
    Ok(ExitCode::SUCCESS)
}

/// Waits until the worker has run every job of `tenant` but those parked (at most ten
/// minutes); returns how many were left when it began and how long it took. It asks for the
/// tenant's jobs, not the store's counts: counting a million episodes ten times a second took
/// a core from the worker it waits for.
fn drain(memory: &Memory, tenant: &str) -> Result<(u64, Duration)> {
    let started = Instant::now();
    let left = || -> Result<u64> { Ok(memory.measure().jobs_left(tenant)? as u64) };
    let queued = left()?;
    eprintln!("epimem: {queued} job(s) still queued; waiting for the worker…");
    while left()? > 0 {
        if started.elapsed() > Duration::from_secs(600) {
            bail!("the worker did not catch up within ten minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok((queued, started.elapsed()))
}

/// Runs writers and readers against `base` for `duration`, their ids and conversations
/// marked with `run`; returns (adds, recalls).
fn load(
    base: &str,
    pool: &Arc<Vec<MessageInput>>,
    phase: Phase,
    args: &ServeBenchArgs,
    duration: Duration,
    run: &str,
) -> Result<(Timings, Timings)> {
    let done = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..args.writers)
        .map(|w| {
            let (base, pool, done) = (base.to_owned(), pool.clone(), done.clone());
            let tag = format!("{run}-{}{w}", phase.tag());
            std::thread::spawn(move || write(&base, &pool, phase, &tag, &done))
        })
        .collect();
    let readers: Vec<_> = (0..args.readers)
        .map(|r| {
            let (base, pool, done) = (base.to_owned(), pool.clone(), done.clone());
            std::thread::spawn(move || read(&base, &pool, r, &done))
        })
        .collect();
    eprintln!("epimem: {} for {} s…", phase.label(), duration.as_secs());
    std::thread::sleep(duration);
    done.store(true, Ordering::Release);
    let (mut adds, mut recalls) = (Timings::default(), Timings::default());
    for w in writers {
        adds.add(w.join().map_err(|_| anyhow::anyhow!("a writer thread panicked"))?);
    }
    for r in readers {
        recalls.add(r.join().map_err(|_| anyhow::anyhow!("a reader thread panicked"))?);
    }
    Ok((adds, recalls))
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).build().new_agent()
}

fn write(base: &str, pool: &[MessageInput], phase: Phase, tag: &str, done: &AtomicBool) -> Timings {
    let (agent, url) = (agent(), format!("{base}/v1/messages"));
    let batch = phase.batch();
    let mut timings = Timings::default();
    let mut next = 0usize;
    while !done.load(Ordering::Acquire) {
        // With pauses, a conversation of its own each time, closed by the flush.
        let paused = matches!(phase, Phase::Pauses).then(|| format!("{tag}-{next}"));
        let messages: Vec<serde_json::Value> = (0..batch)
            .map(|_| {
                let m = &pool[next % pool.len()];
                next += 1;
                let conversation = paused
                    .clone()
                    .unwrap_or_else(|| format!("{tag}-{}", m.conversation.conversation));
                serde_json::json!({
                    "conversation": conversation,
                    "id": format!("{tag}-{next}"),
                    "role": m.role.as_str(),
                    "content": m.content,
                })
            })
            .collect();
        let body = if batch == 1 {
            messages[0].to_string()
        } else {
            serde_json::Value::Array(messages).to_string()
        };
        let started = Instant::now();
        let sent = agent.post(&url).content_type("application/json").send(body);
        timings.ms.push(started.elapsed().as_secs_f64() * 1000.0);
        match sent {
            Ok(r) if r.status().is_success() => timings.messages += batch as u64,
            _ => timings.errors += 1,
        }
        if let Some(conversation) = paused {
            let flush = format!("{base}/v1/conversations/{conversation}/flush");
            let started = Instant::now();
            let flushed = agent.post(&flush).send_empty();
            timings.ms.push(started.elapsed().as_secs_f64() * 1000.0);
            if !flushed.is_ok_and(|r| r.status().is_success()) {
                timings.errors += 1;
            }
            let until = Instant::now() + PAUSE;
            while Instant::now() < until && !done.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
    timings
}

fn read(base: &str, pool: &[MessageInput], reader: usize, done: &AtomicBool) -> Timings {
    let (agent, url) = (agent(), format!("{base}/v1/recall"));
    let mut timings = Timings::default();
    let mut i = reader * 7919;
    while !done.load(Ordering::Acquire) {
        // A few words of a message as the query, as an agent would ask about something said.
        let words: Vec<&str> = pool[i % pool.len()].content.split_whitespace().take(5).collect();
        i += 13;
        let body = serde_json::json!({"query": words.join(" "), "budget": 500}).to_string();
        let started = Instant::now();
        let answered = agent.post(&url).content_type("application/json").send(body);
        timings.ms.push(started.elapsed().as_secs_f64() * 1000.0);
        if !answered.is_ok_and(|r| r.status().is_success()) {
            timings.errors += 1;
        }
    }
    timings
}
