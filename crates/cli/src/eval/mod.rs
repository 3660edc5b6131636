//! `epimem eval`: quality on public data sets, in the project's own harness.

mod agent;
mod baselines;
mod data;
pub(crate) mod fit;
mod locomo;
mod metrics;
mod negatives;
mod online;
mod prompt_context;
pub(crate) mod recall;
pub(crate) mod segmentation;
mod timeline_check;

use std::{fs::File, io::BufWriter, path::Path};

use anyhow::{Context, Result};
use clap::Subcommand;

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
pub(crate) enum EvalCommand {
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
}
