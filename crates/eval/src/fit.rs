//! `epimem eval fit-segmenter`: the coherence segmenter's weights, fitted on the tuning sets.
//!
//! A logistic regression of "a new segment begins here" on the features of every gap, by
//! Newton's method with a small ridge penalty; each data set weighs the same whatever its
//! size, so that no one kind of dialogue decides alone. Hand-written: thirteen weights need no
//! machine-learning crate, and the fit must read exactly the features the segmenter computes.

use std::{fmt::Write as _, path::PathBuf, process::ExitCode, sync::Arc};

use anyhow::{Context, Result, bail};
use clap::Args;
use epimem_core::segment::{
    CoherenceConfig, CoherenceWeights, FEATURES, coherence_boundaries, gap_features,
};
use epimem_embed::Embedder;

use super::{
    data::{Dialogue, SegDataset, load},
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

const DIM: usize = FEATURES.len() + 1;

/// A gap's features (a constant 1 first, for the bias) and whether a reference segment begins
/// there.
type Row = ([f64; DIM], bool);

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
                .map(|(g, f)| {
                    let mut x = [1.0; DIM];
                    x[1..].copy_from_slice(&f.values());
                    (x, starts.contains(&(g + 1)))
                })
                .collect(),
        );
    }
    Ok(Gaps { name: dataset.name(), dialogues, vectors: all, rows })
}

/// The weights fitted on the dialogues `take`s, every feature's weight of the sign its
/// principle allows ([`FEATURES`]): a feature fitted against it is left out (the one most
/// against first) and the rest fitted again.
fn fit(sets: &[Gaps], take: impl Fn(usize) -> bool, ridge: f64) -> Result<CoherenceWeights> {
    let mut free = [true; DIM];
    loop {
        let w = newton(sets, &take, ridge, &free)?;
        let against = (1..DIM)
            .filter(|&a| free[a] && f64::from(FEATURES[a - 1].1) * w[a] < 0.0)
            .max_by(|&a, &b| w[a].abs().total_cmp(&w[b].abs()));
        match against {
            Some(a) => free[a] = false,
            None => {
                let mut features = [0.0; DIM - 1];
                features.copy_from_slice(&w[1..]);
                return Ok(CoherenceWeights { bias: w[0], features });
            }
        }
    }
}

/// Newton's method on the ridge-penalized, set-balanced log loss of the dialogues `take`s,
/// the weights not `free` held at zero.
#[allow(clippy::needless_range_loop, reason = "indices read as the algebra they compute")]
fn newton(
    sets: &[Gaps],
    take: &impl Fn(usize) -> bool,
    ridge: f64,
    free: &[bool; DIM],
) -> Result<[f64; DIM]> {
    let data: Vec<(f64, &[Row])> = sets
        .iter()
        .flat_map(|set| {
            let gaps: usize =
                set.rows.iter().enumerate().filter(|(i, _)| take(*i)).map(|(_, r)| r.len()).sum();
            let weight = 1.0 / (gaps.max(1) * sets.len()) as f64;
            set.rows
                .iter()
                .enumerate()
                .filter(|(i, _)| take(*i))
                .map(move |(_, r)| (weight, r.as_slice()))
        })
        .collect();
    let total: usize = data.iter().map(|(_, r)| r.len()).sum();
    if total == 0 {
        bail!("the data sets hold no gap to fit on");
    }
    // Weights are scaled so that they average one per gap, as the penalty assumes.
    let scale = total as f64;
    let mut w = [0.0f64; DIM];
    for _ in 0..50 {
        let mut grad = [0.0f64; DIM];
        let mut hess = [[0.0f64; DIM]; DIM];
        for (weight, rows) in &data {
            for (x, y) in rows.iter() {
                let z: f64 = w.iter().zip(x).map(|(a, b)| a * b).sum();
                let p = 1.0 / (1.0 + (-z).exp());
                let s = weight * scale;
                let r = s * (p - f64::from(u8::from(*y)));
                let h = s * p * (1.0 - p);
                for a in 0..DIM {
                    grad[a] += r * x[a];
                    for b in 0..DIM {
                        hess[a][b] += h * x[a] * x[b];
                    }
                }
            }
        }
        for a in 1..DIM {
            grad[a] += ridge * w[a];
            hess[a][a] += ridge;
        }
        for a in (0..DIM).filter(|&a| !free[a]) {
            grad[a] = 0.0;
            for b in 0..DIM {
                hess[a][b] = 0.0;
                hess[b][a] = 0.0;
            }
            hess[a][a] = 1.0;
        }
        let step = solve(hess, grad).context("the features are degenerate: cannot fit")?;
        let mut moved = 0.0f64;
        for a in 0..DIM {
            w[a] -= step[a];
            moved = moved.max(step[a].abs());
        }
        if moved < 1e-9 {
            break;
        }
    }
    Ok(w)
}

/// `a⁻¹ b` by Gaussian elimination with partial pivoting; `None` when `a` is singular.
#[allow(clippy::needless_range_loop, reason = "indices read as the algebra they compute")]
fn solve(mut a: [[f64; DIM]; DIM], mut b: [f64; DIM]) -> Option<[f64; DIM]> {
    for col in 0..DIM {
        let pivot = (col..DIM).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..DIM {
            let f = a[row][col] / a[col][col];
            for k in col..DIM {
                a[row][k] -= f * a[col][k];
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = [0.0; DIM];
    for row in (0..DIM).rev() {
        let rest: f64 = (row + 1..DIM).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    Some(x)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_small_system() {
        let mut a = [[0.0; DIM]; DIM];
        let mut b = [0.0; DIM];
        for i in 0..DIM {
            a[i][i] = 2.0;
            b[i] = i as f64;
        }
        a[0][1] = 1.0;
        let x = solve(a, b).unwrap();
        for i in 0..DIM {
            let got: f64 = (0..DIM).map(|k| a[i][k] * x[k]).sum();
            assert!((got - b[i]).abs() < 1e-9);
        }
        assert!(solve([[0.0; DIM]; DIM], b).is_none());
    }
}
