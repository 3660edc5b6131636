//! `epimem eval segmentation`: every segmenter and baseline, on one data set, in one pass.

use std::{
    fmt::Write as _,
    io::Write,
    path::PathBuf,
    process::ExitCode,
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use clap::Args;
use epimem_core::{
    SegmentationPolicy, TokenCounter,
    segment::{
        coherence_boundaries, cohesion_boundaries, intent_boundaries, semantic_boundaries,
        time_gap_boundaries,
    },
};
use epimem_embed::Embedder;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use super::{
    baselines,
    data::{Dialogue, SegDataset, load},
    metrics::{self, BoundaryCounts},
    online,
};
use epimem_app::config::AppConfig;

use crate::json_line;

#[derive(Debug, Args)]
pub struct SegmentationArgs {
    /// The data set's format: dialseg711, tiage, superdialseg, or agent (coding-agent sessions
    /// in `epimem ingest`'s format, labelled in their metadata, like crates/eval/data/agent-sessions.jsonl).
    #[arg(long)]
    dataset: SegDataset,
    /// The data set file.
    #[arg(long)]
    path: PathBuf,
    /// Only this epimem segmenter (time_gap, intent, semantic, coherence, cohesion, default); the
    /// baselines always run. `llm`: the language model configured (--llm-url, --llm-model)
    /// cuts, through the ingest path as `--online` replays it; combine with --limit, since a
    /// small local model takes seconds per window.
    #[arg(long)]
    segmenter: Option<String>,
    /// Also replay every dialogue through the ingest path, one utterance per call (triggers,
    /// windows of pending messages, the open last segment, overlap), and score the episodes
    /// the store ends up with, as `online`: what users get from the default.
    #[arg(long)]
    online: bool,
    /// Only dialogues of this split (TIAGE: train or dev; agent sessions: tuning or test).
    #[arg(long)]
    set: Option<String>,
    /// Only the first N dialogues.
    #[arg(long)]
    limit: Option<usize>,
    /// Seed of the random baseline.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// One JSON object per segmenter instead of a table.
    #[arg(long)]
    json: bool,
    /// Write one JSON line per dialogue and segmenter with reference and predicted segment
    /// lengths, for outside scorers.
    #[arg(long, value_name = "FILE")]
    dump: Option<PathBuf>,
}

const BASELINES: &[&str] = &["none", "random", "even", "texttiling"];
const EPIMEM: &[&str] = &["time_gap", "intent", "semantic", "coherence", "cohesion", "default"];
/// The segmenters that read embeddings (the online replay and the model's cuts too).
const EMBEDDED: &[&str] = &["semantic", "coherence", "cohesion", "default", "online", "llm"];

#[derive(Debug, Default)]
struct Score {
    pk: f64,
    window_diff: f64,
    scored: usize,
    counts: BoundaryCounts,
    took: Duration,
}

#[derive(Debug, Serialize)]
struct ScoreJson<'a> {
    dataset: &'static str,
    segmenter: &'a str,
    embedder: &'a str,
    pk: f64,
    window_diff: f64,
    precision: f64,
    recall: f64,
    f1: f64,
    predicted_boundaries: usize,
    reference_boundaries: usize,
    dialogues: usize,
    utterances: usize,
    seconds: f64,
}

#[derive(Serialize)]
struct DumpLine<'a> {
    dataset: &'static str,
    dialogue: &'a str,
    segmenter: &'a str,
    reference: &'a [usize],
    predicted: Vec<usize>,
}

pub(crate) fn run(
    config: &AppConfig,
    embedder: Option<Arc<dyn Embedder>>,
    args: &SegmentationArgs,
) -> Result<ExitCode> {
    let started = Instant::now();
    let mut dialogues = load(args.dataset, &args.path)?;
    if let Some(set) = &args.set {
        dialogues.retain(|d| d.set.as_deref() == Some(set.as_str()));
        if dialogues.is_empty() {
            bail!("no dialogue of {} is in set {set:?}", args.path.display());
        }
    }
    if let Some(limit) = args.limit {
        dialogues.truncate(limit);
    }
    let by_model = args.segmenter.as_deref() == Some("llm");
    let chat = match by_model {
        true => Some(config.chat_model()?.context(
            "--segmenter llm needs a language model: pass --llm-url and --llm-model (scripts/local-llm.sh starts one)",
        )?),
        false => None,
    };
    let ours: Vec<&str> = match &args.segmenter {
        Some(_) if by_model => Vec::new(),
        Some(name) if EPIMEM.contains(&name.as_str()) => vec![name.as_str()],
        Some(name) => {
            bail!("unknown segmenter {name:?}: expected one of {}, or llm", EPIMEM.join(", "))
        }
        None => EPIMEM.to_vec(),
    };
    let online = args.online || by_model;
    let needs_vectors = online || ours.iter().any(|s| EMBEDDED.contains(s));
    if needs_vectors && embedder.is_none() {
        bail!(
            "the semantic, coherence, cohesion and default segmenters need an embedder: pass --embedder potion|minilm|hash"
        );
    }
    let utterances: usize = dialogues.iter().map(|d| d.utterances.len()).sum();
    let progress = bar(dialogues.len() as u64 * if online { 3 } else { 2 });

    // Embed everything once: the cost of the model is reported apart from the segmenters'.
    let embed_started = Instant::now();
    let mut vectors: Vec<Vec<Vec<f32>>> = Vec::with_capacity(dialogues.len());
    if let (true, Some(e)) = (needs_vectors, embedder.as_deref()) {
        for d in &dialogues {
            let texts: Vec<&str> = d.utterances.iter().map(|(_, t)| t.as_str()).collect();
            vectors.push(e.embed(&texts).with_context(|| format!("embedding dialogue {}", d.id))?);
            progress.inc(1);
        }
    } else {
        vectors.resize(dialogues.len(), Vec::new());
        progress.inc(dialogues.len() as u64);
    }
    let embed_took = embed_started.elapsed();
    // The replay embeds again, inside the engine: its time is the whole path's.
    let (replayed, usage) = match online {
        true => {
            let (replayed, usage) =
                online::replay(config, embedder.clone(), chat, &dialogues, &progress)?;
            (Some(replayed), usage)
        }
        false => (None, Default::default()),
    };

    let policy = config.engine().segmentation;
    let counter = TokenCounter::cl100k();
    let online_name: &[&str] = match (by_model, online) {
        (true, _) => &["llm"],
        (false, true) => &["online"],
        (false, false) => &[],
    };
    let names: Vec<&str> = BASELINES.iter().chain(&ours).chain(online_name).copied().collect();
    let mut scores: Vec<Score> = names.iter().map(|_| Score::default()).collect();
    let mut dump = super::create_dump(args.dump.as_deref())?;
    for (index, (d, vecs)) in dialogues.iter().zip(&vectors).enumerate() {
        let n = d.utterances.len();
        let reference = metrics::boundaries(&d.reference);
        let tokens: Vec<u32> = d.utterances.iter().map(|(_, t)| counter.count(t)).collect();
        for (name, score) in names.iter().zip(scores.iter_mut()) {
            let predicted = match (*name, &replayed) {
                ("online" | "llm", Some(replayed)) => {
                    score.took += replayed[index].took;
                    replayed[index].boundaries.clone()
                }
                _ => {
                    let start = Instant::now();
                    let seed = args.seed ^ index as u64;
                    let predicted = predict(name, d, vecs, &tokens, &policy, &reference, seed);
                    score.took += start.elapsed();
                    predicted
                }
            };
            score.counts.add(&reference, &predicted);
            if let Some(k) = metrics::window(&d.reference) {
                score.pk += metrics::pk(n, &reference, &predicted, k);
                score.window_diff += metrics::window_diff(n, &reference, &predicted, k);
                score.scored += 1;
            }
            if let Some(out) = dump.as_mut() {
                let line = DumpLine {
                    dataset: args.dataset.name(),
                    dialogue: &d.id,
                    segmenter: name,
                    reference: &d.reference,
                    predicted: metrics::lengths(n, &predicted),
                };
                writeln!(out, "{}", json_line(&line))?;
            }
        }
        progress.inc(1);
    }
    if let Some(mut out) = dump {
        out.flush()?;
    }
    progress.finish_and_clear();

    let embedder_name = embedder.as_deref().map_or("none", |e| e.fingerprint());
    let mut out = String::new();
    if !args.json {
        let reference: usize = dialogues.iter().map(|d| d.reference.len() - 1).sum();
        writeln!(
            out,
            "{}: {} dialogues, {utterances} utterances, {reference} reference boundaries{}",
            args.dataset.name(),
            dialogues.len(),
            args.set.as_ref().map_or(String::new(), |s| format!(" (set {s})"))
        )?;
        writeln!(
            out,
            "Pk and WindowDiff macro-averaged over dialogues, k = half the mean reference segment length (at least 2);"
        )?;
        writeln!(
            out,
            "boundary P/R/F1 micro-averaged over exact positions; random and even place as many boundaries as the reference."
        )?;
        if needs_vectors {
            writeln!(
                out,
                "embedder {embedder_name}: {:.2} s for all utterances ({:.0} utterances/s)",
                embed_took.as_secs_f64(),
                utterances as f64 / embed_took.as_secs_f64().max(1e-9)
            )?;
        }
        writeln!(
            out,
            "\n{:<12} {:>6} {:>6} {:>6} {:>6} {:>6} {:>10} {:>12} {:>14}",
            "segmenter", "Pk", "WD", "P", "R", "F1", "boundaries", "dialogues/s", "utterances/s"
        )?;
    }
    for (name, s) in names.iter().zip(&scores) {
        let (p, r, f) = s.counts.prf();
        let scored = s.scored.max(1) as f64;
        let secs = s.took.as_secs_f64().max(1e-9);
        if args.json {
            let line = ScoreJson {
                dataset: args.dataset.name(),
                segmenter: name,
                embedder: if EMBEDDED.contains(name) { embedder_name } else { "none" },
                pk: s.pk / scored,
                window_diff: s.window_diff / scored,
                precision: p,
                recall: r,
                f1: f,
                predicted_boundaries: s.counts.predicted,
                reference_boundaries: s.counts.reference,
                dialogues: dialogues.len(),
                utterances,
                seconds: s.took.as_secs_f64(),
            };
            writeln!(out, "{}", json_line(&line))?;
        } else {
            writeln!(
                out,
                "{:<12} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>10} {:>12.0} {:>14.0}",
                name,
                s.pk / scored,
                s.window_diff / scored,
                p,
                r,
                f,
                s.counts.predicted,
                dialogues.len() as f64 / secs,
                utterances as f64 / secs
            )?;
        }
    }
    if by_model && !args.json {
        writeln!(out, "\nllm: {usage}")?;
    }
    if by_model && args.json {
        writeln!(out, "{}", json_line(&serde_json::json!({ "llm_usage": usage })))?;
    }
    if !args.json {
        writeln!(out, "\nwhole evaluation: {:.2} s", started.elapsed().as_secs_f64())?;
    }
    out!("{out}");
    Ok(ExitCode::SUCCESS)
}

fn predict(
    name: &str,
    d: &Dialogue,
    vectors: &[Vec<f32>],
    tokens: &[u32],
    policy: &SegmentationPolicy,
    reference: &[usize],
    seed: u64,
) -> Vec<usize> {
    let n = d.utterances.len();
    let texts = || d.utterances.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>();
    let messages = |with_vectors: bool| d.messages(with_vectors.then_some(vectors), Some(tokens));
    let indices = |b: Vec<epimem_core::Boundary>| b.into_iter().map(|b| b.index).collect();
    match name {
        "none" => Vec::new(),
        "random" => baselines::random(n, reference.len(), seed),
        "even" => baselines::even(n, reference.len()),
        "texttiling" => baselines::texttiling(&texts()),
        "time_gap" => indices(time_gap_boundaries(&messages(false), &policy.time_gap)),
        "intent" => indices(intent_boundaries(&messages(false), &policy.intent)),
        "semantic" => indices(semantic_boundaries(&messages(true), &policy.semantic)),
        "coherence" => indices(coherence_boundaries(&messages(true), &policy.coherence)),
        "cohesion" => indices(cohesion_boundaries(&messages(true), &policy.cohesion)),
        _ => indices(policy.boundaries(&messages(true))),
    }
}

fn bar(len: u64) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{spinner} evaluating [{bar:30}] {pos}/{len} ({eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}
