//! `epimem eval`: quality on public data sets, in the project's own harness.

mod baselines;
mod data;
mod metrics;
pub(crate) mod segmentation;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub(crate) enum EvalCommand {
    /// Boundary quality (Pk, WindowDiff, boundary F1) on DialSeg711, TIAGE or SuperDialseg,
    /// next to the baselines: no boundary, random, even spacing and TextTiling.
    Segmentation(segmentation::SegmentationArgs),
}
