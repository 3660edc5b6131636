//! `epimem eval fit-segmenter`: the coherence segmenter's weights, fitted on the tuning sets.
//!
//! A logistic regression of "a new segment begins here" on the features of every gap, by
//! Newton's method with a small ridge penalty (`logistic.rs`); each data set weighs the same
//! whatever its size, so that no one kind of dialogue decides alone.

use std::{fmt::Write as _, path::PathBuf, process::ExitCode, sync::Arc};

use anyhow::{Context, Result, bail};
use clap::Args;
use epimem_core::segment::{
    CoherenceConfig, CoherenceWeights, FEATURES, coherence_boundaries, gap_features,
};
use epimem_embed::Embedder;

use super::{
    data::{Dialogue, SegDataset, load},
    logistic::{self, Example},
    metrics,
};
use epimem_app::config::AppConfig;

#[derive(Debug, Args)]
pub struct FitArgs {
    /// TIAGE (train and dev: both are tuning data).
    #[arg(long, value_name = "PATH")]
    tiage: PathBuf,
    /// SuperDialseg's validation split.
    #[arg(long, value_name = "PATH")]
    superdialseg: PathBuf,
    /// Ridge penalty on the weights (not the bias).
    #[arg(long, default_value_t = 1.0)]
    ridge: f64,
}

/// A gap's features and whether a reference segment begins there.
type Row = ([f64; FEATURES.len()], bool);

/// One data set's gaps.
struct Gaps {
    name: &'static str,
    dialogues: Vec<Dialogue>,
    vectors: Vec<Vec<Vec<f32>>>,
    /// Per dialogue, per gap.
    rows: Vec<Vec<Row>>,
}

pub(crate) fn run(
    config: &AppConfig,
    embedder: Option<Arc<dyn Embedder>>,
    args: &FitArgs,
) -> Result<ExitCode> {
    let embedder = embedder.context("fitting needs an embedder: pass --embedder potion|minilm")?;
    let sets = [
        gaps(embedder.as_ref(), SegDataset::Tiage, &args.tiage)?,
        gaps(embedder.as_ref(), SegDataset::SuperDialseg, &args.superdialseg)?,
    ];
    let weights = fit(&sets, |_| true, args.ridge)?;
    // Two-fold: fitted on every other dialogue, scored on the rest.
    let even = fit(&sets, |i| i % 2 == 0, args.ridge)?;
    let odd = fit(&sets, |i| i % 2 == 1, args.ridge)?;
    let base = config.engine().segmentation.coherence;
    let mut out = String::new();
    writeln!(out, "embedder {}", embedder.fingerprint())?;
    writeln!(
        out,
        "Pk of the coherence segmenter alone, two-fold cross-validated (fitted on every"
    )?;
    writeln!(out, "other dialogue, scored on the rest), by threshold:")?;
    write!(out, "{:>9}", "threshold")?;
    for set in &sets {
        write!(out, " {:>12}", set.name)?;
    }
    writeln!(out, " {:>8}", "mean")?;
    let mut best = (f64::INFINITY, base.threshold);
    for step in 5..=12 {
        let threshold = f64::from(step) * 0.05;
        let with = |weights: &CoherenceWeights| CoherenceConfig {
            weights: weights.clone(),
            threshold,
            ..base.clone()
        };
        write!(out, "{threshold:>9.2}")?;
        let mut sum = 0.0;
        for set in &sets {
            let cv = (pk(set, &with(&even), |i| i % 2 == 1) + pk(set, &with(&odd), |i| i % 2 == 0))
                / 2.0;
            sum += cv;
            write!(out, " {cv:>12.3}")?;
        }
        let mean = sum / sets.len() as f64;
        writeln!(out, " {mean:>8.3}")?;
        if mean < best.0 {
            best = (mean, threshold);
        }
    }
    writeln!(
        out,
        "\nbest on the tuning sets: threshold {:.2} (the default is {:.2}: check where it cuts chats)",
        best.1, base.threshold
    )?;
    writeln!(out, "\n[segmentation.coherence.weights]")?;
    writeln!(out, "bias = {:.3}", weights.bias)?;
    let names: Vec<&str> = FEATURES.iter().map(|&(name, _)| name).collect();
    writeln!(out, "# {}", names.join(", "))?;
    let features: Vec<String> = weights.features.iter().map(|w| format!("{w:.3}")).collect();
    writeln!(out, "features = [{}]", features.join(", "))?;
    out!("{out}");
    Ok(ExitCode::SUCCESS)
}

fn gaps(embedder: &dyn Embedder, dataset: SegDataset, path: &std::path::Path) -> Result<Gaps> {
    let dialogues = load(dataset, path)?;
    let mut rows = Vec::with_capacity(dialogues.len());
    let mut all = Vec::with_capacity(dialogues.len());
    for d in &dialogues {
        let texts: Vec<&str> = d.utterances.iter().map(|(_, t)| t.as_str()).collect();
        let vectors = embedder.embed(&texts).with_context(|| format!("embedding {}", d.id))?;
        let features = gap_features(&d.messages(Some(&vectors), None)).unwrap_or_default();
        all.push(vectors);
        let starts = metrics::boundaries(&d.reference);
        rows.push(
            features
                .iter()
                .enumerate()
                .map(|(g, f)| (f.values(), starts.contains(&(g + 1))))
                .collect(),
        );
    }
    Ok(Gaps { name: dataset.name(), dialogues, vectors: all, rows })
}

/// The weights fitted on the dialogues `take`s, every feature's weight of the sign its
/// principle allows ([`FEATURES`]): a feature fitted against it is left out.
fn fit(sets: &[Gaps], take: impl Fn(usize) -> bool, ridge: f64) -> Result<CoherenceWeights> {
    let mut examples = Vec::new();
    for set in sets {
        let gaps: usize =
            set.rows.iter().enumerate().filter(|(i, _)| take(*i)).map(|(_, r)| r.len()).sum();
        let weight = 1.0 / (gaps.max(1) * sets.len()) as f64;
        for (_, rows) in set.rows.iter().enumerate().filter(|(i, _)| take(*i)) {
            examples.extend(rows.iter().map(|(x, y)| Example { weight, x: x.to_vec(), y: *y }));
        }
    }
    if examples.is_empty() {
        bail!("the data sets hold no gap to fit on");
    }
    let signs: Vec<i8> = FEATURES.iter().map(|&(_, sign)| sign).collect();
    let fitted = logistic::fit(&examples, &signs, ridge)?;
    let mut features = [0.0; FEATURES.len()];
    features.copy_from_slice(&fitted.weights);
    Ok(CoherenceWeights { bias: fitted.bias, features })
}

/// Mean Pk of the coherence segmenter alone over the dialogues `take`s.
fn pk(set: &Gaps, config: &CoherenceConfig, take: impl Fn(usize) -> bool) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for (i, d) in set.dialogues.iter().enumerate().filter(|(i, _)| take(*i)) {
        let Some(k) = metrics::window(&d.reference) else { continue };
        let cuts: Vec<usize> =
            coherence_boundaries(&d.messages(Some(&set.vectors[i]), None), config)
                .into_iter()
                .map(|b| b.index)
                .collect();
        sum += metrics::pk(d.utterances.len(), &metrics::boundaries(&d.reference), &cuts, k);
        n += 1;
    }
    sum / n.max(1) as f64
}
