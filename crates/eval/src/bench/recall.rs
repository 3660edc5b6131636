//! `bench recall`: latency of hybrid recall over many episodes.

use std::{process::ExitCode, time::Instant};

use anyhow::{Context, Result};
use clap::Args;
use epimem_api::{EngineError, IndexTask, Memory, MessageInput, RecallQuery};
use epimem_core::{ConversationKey, Role, Scope, Timestamp};
use indicatif::ProgressBar;

use epimem_app::{
    config::{AppConfig, Database},
    load_index, open_at, open_on, search_folder,
};

use super::{FILLER, TOPICS};

#[derive(Debug, Args)]
pub struct RecallBenchArgs {
    /// Episodes to create.
    #[arg(long, default_value_t = 100_000)]
    pub episodes: usize,
    /// Messages per episode.
    #[arg(long, default_value_t = 2)]
    pub messages_per_episode: usize,
    /// Recalls to time.
    #[arg(long, default_value_t = 1_000)]
    pub queries: usize,
    /// Hits per recall.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Keep the synthetic database here, and reuse it when it already holds episodes (a
    /// temporary one otherwise).
    #[arg(long, value_name = "FILE")]
    pub db: Option<std::path::PathBuf>,
    /// Message vectors from which vector search goes by groups of vectors (the configured
    /// `search.approximate_from` otherwise). When it does, the recalls are timed again with
    /// every vector scanned, and how often the two agree is printed.
    #[arg(long, value_name = "VECTORS")]
    pub approximate_from: Option<usize>,
    /// When the vectors are searched by groups, do not time the recalls again with every vector
    /// scanned (over a million episodes that takes most of a run); the agreement line goes too.
    #[arg(long)]
    pub no_exact: bool,
    /// Time the same recalls on this PostgreSQL database (postgres://…) too, beside SQLite:
    /// its tenant `bench` is forgotten, filled with the same episodes and left there.
    #[arg(long, value_name = "URL")]
    pub postgres: Option<String>,
    /// Time the recalls again with this many messages stored and not yet in an episode (the
    /// open tail every recall searches too), then forget them.
    #[arg(long, value_name = "MESSAGES", default_value_t = 2_000)]
    pub open: usize,
}

/// Conversations the episodes are spread over.
const CONVERSATIONS: usize = 100;

pub fn bench_recall(config: &AppConfig, args: &RecallBenchArgs) -> Result<ExitCode> {
    anyhow::ensure!(
        args.episodes > 0 && args.messages_per_episode > 0 && args.queries > 0,
        "counts must be positive"
    );
    super::note_debug_build("recall");
    let mut config = config.clone();
    if let Some(rows) = args.approximate_from {
        config.search.approximate_from = rows;
    }
    let config = &config;
    let dir = tempfile::tempdir().context("temporary directory")?;
    let path = args.db.clone().unwrap_or_else(|| dir.path().join("recall.db"));
    let memory = open_at(config, &path, true)?;
    let embedder = config
        .embedder()?
        .context("bench recall needs an embedder (--embedder potion|minilm|hash)")?;
    // Queries from their own stream, so a reused database gets the same ones.
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);

    let started = Instant::now();
    if memory.counts(Some("bench"))?.episodes > 0 {
        eprintln!("reusing the episodes in {}", path.display());
    } else {
        build(&memory, args, &mut Rng(0x2545_F491_4F6C_DD1D))?;
    }
    let built = started.elapsed();
    let episodes = memory.counts(Some("bench"))?.episodes;

    let texts: Vec<String> = (0..args.queries).map(|_| rng.sentence(3, 5)).collect();
    let embed_started = Instant::now();
    let vectors = embedder.embed(&texts.iter().map(String::as_str).collect::<Vec<_>>())?;
    let embed_ms = embed_started.elapsed().as_secs_f64() * 1000.0 / args.queries as f64;

    let scope = Scope::tenant("bench");
    let queries: Vec<RecallQuery> = texts
        .iter()
        .zip(vectors)
        .map(|(text, vector)| RecallQuery {
            vector: Some(vector),
            ..RecallQuery::new(scope.clone(), text.clone(), args.limit)
        })
        .collect();
    // The search index is built (or caught up) and saved here, so the next process opens it.
    let index_started = Instant::now();
    let index_work = load_index(&memory, "bench")?;
    let indexed = index_started.elapsed();
    let held_elsewhere = memory.measure().index_held_elsewhere("bench")?;
    // What a new process pays before its first answer: opening the store, opening the
    // tenant's saved search index, one recall.
    drop(memory);
    let open_started = Instant::now();
    let memory = open_at(config, &path, true)?;
    memory.measure().recall(&queries[0])?;
    let open_ms = open_started.elapsed().as_secs_f64() * 1000.0;
    let timed = Timed::run(&memory, &queries)?;
    let vectors = memory.indexed_vectors();
    outln!(
        "{episodes} episodes ({vectors} message vectors) built in {:.1} s; embedder {}",
        built.as_secs_f64(),
        embedder.fingerprint()
    );
    let index_did = match index_work {
        None => "opened as saved".to_owned(),
        Some(IndexTask::Build { why: None }) => "built and saved".to_owned(),
        Some(IndexTask::Build { why: Some(why) }) => format!("built again ({why}) and saved"),
        Some(IndexTask::AwaitSave) => {
            "read as saved once the process holding it had saved it".to_owned()
        }
        Some(IndexTask::Copy) => "built in memory (another process holds the saved one)".to_owned(),
        Some(IndexTask::CatchUp) if held_elsewhere => {
            "caught up in memory (another process holds the saved one)".to_owned()
        }
        Some(IndexTask::CatchUp) => "caught up and saved".to_owned(),
    };
    outln!(
        "search index {index_did} in {:.1} s ({})",
        indexed.as_secs_f64(),
        search_folder(&path).display()
    );
    outln!(
        "open to first answer (store opened, saved search index opened, one recall): {open_ms:.0} ms"
    );
    outln!("resident memory after the recalls: {}", resident_memory());
    outln!("query embedding: {embed_ms:.3} ms per query (excluded below)\n");
    let grouped = vectors >= config.search.approximate_from;
    let how = if grouped {
        format!("vectors searched by groups (from {} vectors)", config.search.approximate_from)
    } else {
        format!("every vector scanned (groups from {})", config.search.approximate_from)
    };
    outln!("vector search: {how}");
    outln!(
        "{:<48} {:>9} {:>9} {:>9} {:>9}",
        format!("{} recalls, top {}", args.queries, args.limit),
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "target"
    );
    timed.print(true)?;
    if args.open > 0 {
        let open = store_open_tail(&memory, args.open, &mut rng)?;
        // The first recall embeds the tail; later ones reuse the vectors.
        let first = Instant::now();
        memory.measure().recall_messages(&queries[0])?;
        let first_ms = first.elapsed().as_secs_f64() * 1000.0;
        let with_tail = Timed::run(&memory, &queries)?;
        outln!(
            "\nthe same with {} messages not yet in an episode (the first recall, which embeds \
             them, {first_ms:.0} ms):",
            args.open
        );
        with_tail.print(false)?;
        for conversation in &open {
            memory.forget_conversation(&conversation.tenant, &conversation.conversation)?;
        }
    }
    if grouped && !args.no_exact {
        drop(memory);
        let mut exact_config = config.clone();
        exact_config.search.approximate_from = usize::MAX;
        let memory = open_at(&exact_config, &path, true)?;
        memory.measure().recall(&queries[0])?;
        let exact = Timed::run(&memory, &queries)?;
        outln!("\nthe same with every vector scanned:");
        exact.print(false)?;
        let (episodes, messages) = timed.agreement(&exact);
        outln!(
            "top {} shared with the exact scan: episodes {:.1}%, messages {:.1}%",
            args.limit,
            episodes * 100.0,
            messages * 100.0
        );
    }
    if let Some(url) = &args.postgres {
        let database = Database::Postgres(url.clone());
        let memory = open_on(config, &database, true)?;
        memory.forget_tenant("bench")?;
        let started = Instant::now();
        build(&memory, args, &mut Rng(0x2545_F491_4F6C_DD1D))?;
        let built = started.elapsed();
        // A process's index of a PostgreSQL store lives in its memory: filled on first use.
        let index_started = Instant::now();
        load_index(&memory, "bench")?;
        let indexed = index_started.elapsed();
        let on_postgres = Timed::run(&memory, &queries)?;
        outln!(
            "\nthe same on {database}: built in {:.1} s, search index filled in {:.1} s",
            built.as_secs_f64(),
            indexed.as_secs_f64()
        );
        on_postgres.print(false)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Latency of each kind of recall over the queries, and what each recall returned.
struct Timed {
    episodes_ms: Vec<f64>,
    messages_ms: Vec<f64>,
    episodes: Vec<Vec<String>>,
    messages: Vec<Vec<(String, u64)>>,
}

impl Timed {
    fn run(memory: &Memory, queries: &[RecallQuery]) -> Result<Self> {
        let mut episodes = Vec::new();
        let episodes_ms = time_each(queries, |q| {
            let hits = memory.measure().recall(q)?;
            episodes.push(hits.into_iter().map(|h| h.episode.id.0).collect());
            Ok(())
        })?;
        let mut messages = Vec::new();
        let messages_ms = time_each(queries, |q| {
            let hits = memory.measure().recall_messages(q)?;
            messages.push(hits.into_iter().map(|h| (h.episode.0, h.seq)).collect());
            Ok(())
        })?;
        Ok(Self { episodes_ms, messages_ms, episodes, messages })
    }

    fn print(&self, with_targets: bool) -> std::io::Result<()> {
        for (label, ms, target) in [
            ("episodes (BM25 + vectors, fused)", &self.episodes_ms, 5.0),
            ("messages (BM25 + vectors + words)", &self.messages_ms, 20.0),
        ] {
            let pct = |p: f64| super::percentile(ms, p);
            let verdict = if pct(0.99) <= target { "ok" } else { "MISSED" };
            let mark =
                if with_targets { format!("p99≤{target} {verdict}") } else { String::new() };
            outln!("{label:<48} {:>9.2} {:>9.2} {:>9.2} {mark:>9}", pct(0.5), pct(0.95), pct(0.99));
        }
        Ok(())
    }

    /// The share of what the other recalls returned that these returned too (episodes,
    /// messages).
    fn agreement(&self, other: &Self) -> (f64, f64) {
        fn share<T: PartialEq>(a: &[Vec<T>], b: &[Vec<T>]) -> f64 {
            let wanted: usize = b.iter().map(Vec::len).sum();
            let found: usize =
                a.iter().zip(b).map(|(a, b)| b.iter().filter(|x| a.contains(x)).count()).sum();
            if wanted == 0 { 1.0 } else { found as f64 / wanted as f64 }
        }
        (share(&self.episodes, &other.episodes), share(&self.messages, &other.messages))
    }
}

/// The process's resident set size, as the kernel reports it (Linux), else "unknown".
fn resident_memory() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    };
    match (field("VmRSS:"), field("VmHWM:")) {
        (Some(now), Some(peak)) => format!("{} MiB (peak {} MiB)", now / 1024, peak / 1024),
        _ => "unknown".into(),
    }
}

/// Milliseconds each call took, sorted.
fn time_each<T>(
    items: &[T],
    mut call: impl FnMut(&T) -> Result<(), EngineError>,
) -> Result<Vec<f64>> {
    let mut ms = Vec::with_capacity(items.len());
    for item in items {
        let t0 = Instant::now();
        call(item)?;
        ms.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    ms.sort_by(f64::total_cmp);
    Ok(ms)
}

/// Fills the database: `episodes` episodes over [`CONVERSATIONS`] conversations, four hours
/// apart (a hard time gap) in each.
fn build(memory: &Memory, args: &RecallBenchArgs, rng: &mut Rng) -> Result<()> {
    let bar = ProgressBar::new(args.episodes as u64);
    let per_conversation = args.episodes.div_ceil(CONVERSATIONS);
    let mut made = 0;
    for c in 0..CONVERSATIONS {
        let key = ConversationKey::new("bench", format!("c{c}"));
        let mut batch = Vec::new();
        for e in 0..per_conversation.min(args.episodes - made) {
            for m in 0..args.messages_per_episode {
                batch.push(MessageInput {
                    conversation: key.clone(),
                    user: None,
                    agent: None,
                    key: format!("{e}-{m}"),
                    role: if m % 2 == 0 { Role::User } else { Role::Assistant },
                    speaker: None,
                    content: rng.sentence(8, 12),
                    timestamp: Some(Timestamp(
                        1_767_225_600_000 + e as i64 * 4 * 3_600_000 + m as i64 * 60_000,
                    )),
                    metadata: serde_json::Value::Null,
                });
            }
            made += 1;
        }
        for chunk in batch.chunks(5_000) {
            memory.ingest(chunk.to_vec())?;
        }
        memory
            .flush_now(&Scope::tenant("bench").with_conversation(Some(key.conversation.clone())))?;
        bar.set_position(made as u64);
        if made >= args.episodes {
            break;
        }
    }
    bar.finish_and_clear();
    Ok(())
}

/// Stores `messages` in conversations of their own, fifteen each (fewer than a segmentation
/// waits for), without closing them: the open tail. Returns the conversations.
fn store_open_tail(
    memory: &Memory,
    messages: usize,
    rng: &mut Rng,
) -> Result<Vec<ConversationKey>> {
    const PER_CONVERSATION: usize = 15;
    let mut conversations = Vec::new();
    let mut batch = Vec::with_capacity(messages);
    for i in 0..messages {
        if i.is_multiple_of(PER_CONVERSATION) {
            conversations
                .push(ConversationKey::new("bench", format!("open{}", i / PER_CONVERSATION)));
        }
        let m = i % PER_CONVERSATION;
        batch.push(MessageInput {
            conversation: conversations.last().expect("one per fifteen").clone(),
            user: None,
            agent: None,
            key: format!("{m}"),
            role: if m.is_multiple_of(2) { Role::User } else { Role::Assistant },
            speaker: None,
            content: rng.sentence(8, 12),
            timestamp: Some(Timestamp(1_767_225_600_000 + m as i64 * 60_000)),
            metadata: serde_json::Value::Null,
        });
    }
    memory.enqueue(batch)?;
    Ok(conversations)
}

/// xorshift: deterministic synthetic text.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    /// `min` to `min + spread - 1` words: a third from one topic, the rest from a Zipfian
    /// vocabulary of pseudo-words, as in real text where a few words are everywhere and most
    /// are rare.
    fn sentence(&mut self, min: usize, spread: usize) -> String {
        let words = min + self.below(spread);
        let topic = TOPICS[self.below(TOPICS.len())];
        (0..words)
            .map(|_| match self.below(6) {
                0 => FILLER[self.below(FILLER.len())].to_owned(),
                1 | 2 => topic[self.below(topic.len())].to_owned(),
                _ => self.zipf_word(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Word of rank r with probability ∝ 1/r over 20,000 ranks (inverse-CDF on a log scale).
    fn zipf_word(&mut self) -> String {
        let u = (self.below(1_000_000) as f64 + 0.5) / 1_000_000.0;
        let rank = (20_000f64.powf(u)) as usize;
        // Pronounceable and distinct: base-20 digits as consonant-vowel syllables.
        const SYLLABLES: [&str; 20] = [
            "ka", "lo", "mi", "ne", "pu", "ra", "si", "to", "vu", "ze", "ba", "de", "fi", "go",
            "hu", "ja", "ko", "le", "mu", "no",
        ];
        let mut n = rank + 20;
        let mut word = String::new();
        while n > 0 {
            word.push_str(SYLLABLES[n % 20]);
            n /= 20;
        }
        word
    }
}
