//! Logistic regression as the fits of `epimem eval` need it: weighted examples (so each data
//! set weighs the same whatever its size), a small ridge penalty, and every weight held to
//! the sign its principle allows (a feature fitted against it is left out, the one most
//! against first, and the rest fitted again). Newton's method: a handful of weights need no
//! machine-learning crate, and none offers the sign rule.

use anyhow::{Context, Result, bail};

/// One example: how much it weighs, its inputs, and its outcome.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Example {
    pub(crate) weight: f64,
    pub(crate) x: Vec<f64>,
    pub(crate) y: bool,
}

/// A fitted model: the bias, and a weight per input (0 for one left out).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fitted {
    pub(crate) bias: f64,
    pub(crate) weights: Vec<f64>,
}

impl Fitted {
    /// The log-odds of `x`.
    pub(crate) fn logit(&self, x: &[f64]) -> f64 {
        self.bias + self.weights.iter().zip(x).map(|(w, v)| w * v).sum::<f64>()
    }
}

/// Fits `examples`, whose inputs each have `signs.len()` values; `signs[i]` is the sign input
/// `i`'s weight may take (`+1`, `-1`, or `0` for either). `ridge` penalizes the weights, not
/// the bias.
pub(crate) fn fit(examples: &[Example], signs: &[i8], ridge: f64) -> Result<Fitted> {
    if examples.iter().all(|e| e.weight <= 0.0) {
        bail!("no example to fit on");
    }
    if let Some(e) = examples.iter().find(|e| e.x.len() != signs.len()) {
        bail!("an example has {} inputs, not {}", e.x.len(), signs.len());
    }
    let mut free = vec![true; signs.len()];
    loop {
        let w = newton(examples, ridge, &free)?;
        let against = (0..signs.len())
            .filter(|&a| free[a] && f64::from(signs[a]) * w[a + 1] < 0.0)
            .max_by(|&a, &b| w[a + 1].abs().total_cmp(&w[b + 1].abs()));
        match against {
            Some(a) => free[a] = false,
            None => return Ok(Fitted { bias: w[0], weights: w[1..].to_vec() }),
        }
    }
}

/// Newton's method on the ridge-penalized, weighted log loss, the inputs not `free` held at
/// zero. The result holds the bias first.
#[allow(clippy::needless_range_loop, reason = "indices read as the algebra they compute")]
fn newton(examples: &[Example], ridge: f64, free: &[bool]) -> Result<Vec<f64>> {
    let dim = free.len() + 1;
    // Weights are scaled so that they average one per example, as the penalty assumes.
    let total: f64 = examples.iter().map(|e| e.weight).sum();
    let scale = examples.len() as f64 / total;
    let mut w = vec![0.0f64; dim];
    let mut x = vec![1.0f64; dim];
    for _ in 0..100 {
        let mut grad = vec![0.0f64; dim];
        let mut hess = vec![vec![0.0f64; dim]; dim];
        for e in examples {
            x[1..].copy_from_slice(&e.x);
            let z: f64 = w.iter().zip(&x).map(|(a, b)| a * b).sum();
            let p = 1.0 / (1.0 + (-z).exp());
            let s = e.weight * scale;
            let r = s * (p - f64::from(u8::from(e.y)));
            let h = s * p * (1.0 - p);
            for a in 0..dim {
                grad[a] += r * x[a];
                for b in 0..dim {
                    hess[a][b] += h * x[a] * x[b];
                }
            }
        }
        for a in 1..dim {
            grad[a] += ridge * w[a];
            hess[a][a] += ridge;
        }
        for a in (1..dim).filter(|&a| !free[a - 1]) {
            grad[a] = 0.0;
            for b in 0..dim {
                hess[a][b] = 0.0;
                hess[b][a] = 0.0;
            }
            hess[a][a] = 1.0;
        }
        let step = solve(hess, grad).context("the features are degenerate: cannot fit")?;
        let mut moved = 0.0f64;
        for a in 0..dim {
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
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..n {
            let f = a[row][col] / a[col][col];
            for k in col..n {
                a[row][k] -= f * a[col][k];
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let rest: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_small_system() {
        let n = 4;
        let mut a = vec![vec![0.0; n]; n];
        let mut b = vec![0.0; n];
        for i in 0..n {
            a[i][i] = 2.0;
            b[i] = i as f64;
        }
        a[0][1] = 1.0;
        let x = solve(a.clone(), b.clone()).unwrap();
        for i in 0..n {
            let got: f64 = (0..n).map(|k| a[i][k] * x[k]).sum();
            assert!((got - b[i]).abs() < 1e-9);
        }
        assert!(solve(vec![vec![0.0; n]; n], b).is_none());
    }

    /// Outcomes that rise with the first input and do not depend on the second, except that
    /// the second is made to look against its sign.
    fn examples() -> Vec<Example> {
        let mut out = Vec::new();
        for i in 0..200 {
            let a = f64::from(i) / 100.0 - 1.0;
            let noise = if i % 7 == 0 { 1.0 } else { 0.0 };
            out.push(Example { weight: 1.0, x: vec![a, noise], y: a + 0.3 * noise > 0.1 });
        }
        out
    }

    #[test]
    fn recovers_the_direction_and_keeps_signs() {
        let free = fit(&examples(), &[1, 0], 0.01).unwrap();
        assert!(free.weights[0] > 1.0 && free.weights[1] > 0.0, "{free:?}");
        let held = fit(&examples(), &[1, -1], 0.01).unwrap();
        assert_eq!(held.weights[1], 0.0, "fitted against its sign: left out");
        assert!(held.weights[0] > 1.0);
        assert!(held.logit(&[1.0, 0.0]) > 0.0 && held.logit(&[-1.0, 0.0]) < 0.0);
        assert!(fit(&[], &[1], 1.0).is_err());
    }
}
