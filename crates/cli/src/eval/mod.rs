//! `epimem eval`: quality on public data sets, in the project's own harness.

mod baselines;
mod data;
mod locomo;
mod metrics;
pub(crate) mod recall;
pub(crate) mod segmentation;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub(crate) enum EvalCommand {
    /// Boundary quality (Pk, WindowDiff, boundary F1) on DialSeg711, TIAGE or SuperDialseg,
    /// next to the baselines: no boundary, random, even spacing and TextTiling.
    Segmentation(segmentation::SegmentationArgs),
    /// Evidence recall on LoCoMo at k = 1, 5, 10 and at context budgets of 500, 1,000 and
    /// 2,000 tokens, per question category, with turn-level recall and latency percentiles.
    Recall(recall::RecallArgs),
}
