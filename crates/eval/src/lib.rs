//! epimem's evaluation harness, behind `epimem eval`: segmentation quality (Pk, WindowDiff,
//! boundary F1) on DialSeg711, TIAGE, SuperDialseg and our coding-agent sessions, and evidence
//! recall on LoCoMo, BEAM and our sessions, tuning and test parts apart; and the benchmarks
//! behind `epimem bench` ([`bench`]). Both run on the memory the configuration names
//! (`epimem-app`'s wiring); what they find is a report to a person, so their errors are
//! `anyhow`'s.

#[macro_use]
extern crate epimem_app;

mod agent;
mod baselines;
pub mod bench;
mod data;
mod fit;
mod fit_relevance;
mod handed;
mod implied;
mod locomo;
mod logistic;
mod madial;
mod metrics;
mod misspell;
mod negatives;
mod online;
pub mod page;
mod prompt_context;
mod prompts;
mod recall;
mod segmentation;
mod summaries;
mod timeline_check;

use std::{fs::File, io::BufWriter, path::Path, process::ExitCode, sync::Arc};

use anyhow::{Context, Result};
use clap::Subcommand;
use epimem_app::config::AppConfig;

/// One JSON object on a line of its own.
fn json_line(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).expect("report rows serialize")
}

/// A progress bar of `len` steps, in the harness's style.
fn progress(len: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} ({eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

/// Opens the `--dump` file, if one was asked for.
fn create_dump(path: Option<&Path>) -> Result<Option<BufWriter<File>>> {
    path.map(|p| {
        File::create(p)
            .map(BufWriter::new)
            .with_context(|| format!("cannot create {}", p.display()))
    })
    .transpose()
}

#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Boundary quality (Pk, WindowDiff, boundary F1) on DialSeg711, TIAGE, SuperDialseg or our
    /// coding-agent sessions, next to the baselines: no boundary, random, even spacing and
    /// TextTiling.
    Segmentation(segmentation::SegmentationArgs),
    /// Evidence recall on LoCoMo, BEAM or our coding-agent sessions at k = 1, 5, 10 and at
    /// context budgets of 500, 1,000 and 2,000 tokens, per question category, with turn-level
    /// recall and latency percentiles.
    Recall(recall::RecallArgs),
    /// Fits the coherence segmenter's weights on the tuning sets (TIAGE, SuperDialseg's
    /// validation split) and prints them as configuration, with each set's Pk fitted and
    /// two-fold cross-validated.
    FitSegmenter(fit::FitArgs),
    /// Fits the relevance judgement's two channels (words, meaning) on the tuning parts of
    /// LoCoMo, BEAM, MADial-Bench and new-task prompts asked in each, every kind of query
    /// weighing the same, and prints them as configuration with how often each kind's blocks
    /// would speak.
    FitRelevance(fit_relevance::FitRelevanceArgs),
    /// The extractive summaries against DialogSum's human ones (ROUGE-1/2/L F1), beside
    /// extractive baselines: the first turns and the longest turns.
    Summaries(summaries::SummariesArgs),
}

/// Runs `command` on the memory and models `config` names.
pub fn run(config: &AppConfig, command: &EvalCommand) -> Result<ExitCode> {
    match command {
        EvalCommand::Segmentation(args) => {
            segmentation::run(config, config.embedder()?.map(Arc::from), args)
        }
        EvalCommand::Recall(args) => recall::run(config, args),
        EvalCommand::FitSegmenter(args) => {
            fit::run(config, config.embedder()?.map(Arc::from), args)
        }
        EvalCommand::Summaries(args) => summaries::run(args),
        EvalCommand::FitRelevance(args) => fit_relevance::run(config, args),
    }
}
