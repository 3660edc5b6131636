//! epimem's evaluation harness, behind `epimem eval`: segmentation quality (Pk, WindowDiff,
//! boundary F1) on DialSeg711, TIAGE, SuperDialseg and our coding-agent sessions, and evidence
//! recall on LoCoMo, BEAM and our sessions, tuning and test parts apart. The program that runs
//! it hands it the configured engine and models ([`Setup`]); what it finds is a report to a
//! person, so its errors are `anyhow`'s.

/// `println!` that returns the write's error instead of panicking (a closed pipe ends the
/// report quietly).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)?
    }};
}

/// `print!` that returns the write's error (see `outln!`).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)?
    }};
}

mod agent;
mod baselines;
mod data;
pub mod fit;
mod locomo;
mod metrics;
mod negatives;
mod online;
mod prompt_context;
pub mod recall;
pub mod segmentation;
mod timeline_check;

use std::{fs::File, io::BufWriter, path::Path, sync::Arc};

use anyhow::{Context, Result};
use clap::Subcommand;
use epimem_engine::{Engine, EngineConfig};
use epimem_llm::ChatModel;

/// What the harness needs from the program that runs it: the settings, models and engines
/// the user configured.
pub trait Setup {
    /// The engine's settings.
    fn engine_config(&self) -> EngineConfig;
    /// The configured language model, if any.
    fn chat_model(&self) -> Result<Option<Arc<dyn ChatModel>>>;
    /// The configured embedder's fingerprint (`none` without one).
    fn embedder_fingerprint(&self) -> Result<String>;
    /// An engine on `target` with the configured embedder and search index.
    fn open_engine(&self, target: Target<'_>) -> Result<Engine>;
}

/// The database a harness writes its data set into.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    Sqlite(&'a Path),
    /// A `postgres://` URL.
    Postgres(&'a str),
}

impl Target<'_> {
    /// `sqlite` or `postgres`, as a report names the store.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Sqlite(_) => "sqlite",
            Self::Postgres(_) => "postgres",
        }
    }
}

/// One JSON object on a line of its own.
fn json_line(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).expect("report rows serialize")
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
}
