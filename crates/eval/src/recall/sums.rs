//! What recall on a data set sums per question, per category and per part, and the tables it
//! prints: evidence recall at k episodes, at a context budget and at k turns.

use std::{
    collections::{BTreeMap, HashMap},
    fmt::Write as _,
};

use anyhow::Result;
use serde::Serialize;

pub(super) const KS: [usize; 3] = [1, 5, 10];
pub(super) const BUDGETS: [usize; 3] = [500, 1_000, 2_000];
pub(super) const TURN_KS: [usize; 3] = [5, 10, 25];

#[derive(Debug, Default, Clone, Serialize)]
pub(super) struct Sums {
    pub(super) questions: usize,
    pub(super) at_k: [f64; 3],
    pub(super) at_budget: [f64; 3],
    pub(super) turns_at_k: [f64; 3],
}

impl Sums {
    pub(super) fn mean(&self) -> Means {
        let n = self.questions.max(1) as f64;
        Means {
            questions: self.questions,
            episode_recall_at_k: KS
                .iter()
                .zip(self.at_k)
                .map(|(k, s)| (k.to_string(), s / n))
                .collect(),
            recall_at_budget: BUDGETS
                .iter()
                .zip(self.at_budget)
                .map(|(b, s)| (b.to_string(), s / n))
                .collect(),
            turn_recall_at_k: TURN_KS
                .iter()
                .zip(self.turns_at_k)
                .map(|(k, s)| (k.to_string(), s / n))
                .collect(),
        }
    }
}

#[derive(Debug, Serialize)]
pub(super) struct Means {
    questions: usize,
    episode_recall_at_k: BTreeMap<String, f64>,
    recall_at_budget: BTreeMap<String, f64>,
    turn_recall_at_k: BTreeMap<String, f64>,
}

/// Question categories, as each data set names them.
pub(super) fn category_names(dataset: &str) -> HashMap<u8, &'static str> {
    let names: &[(u8, &str)] = if dataset == "beam" {
        &[(1, "multi-session"), (2, "temporal"), (3, "update/preference"), (4, "extraction")]
    } else if dataset == "agent" {
        &[(1, "agent's finding"), (2, "user's request"), (3, "tool output"), (4, "several")]
    } else {
        &[(1, "multi-hop"), (2, "temporal"), (3, "open-domain"), (4, "single-hop")]
    };
    names.iter().copied().collect()
}

/// The questions of one part of the set: all of them, and per category.
#[derive(Debug, Default)]
pub(super) struct PartSums {
    pub(super) overall: Sums,
    pub(super) by_category: BTreeMap<u8, Sums>,
}

impl PartSums {
    pub(super) fn add(&mut self, category: u8, one: &Sums) {
        add(&mut self.overall, one);
        add(self.by_category.entry(category).or_default(), one);
    }

    pub(super) fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "overall": self.overall.mean(),
            "by_category": self.by_category.iter().map(|(c, s)| (c.to_string(), s.mean())).collect::<BTreeMap<_, _>>(),
        })
    }
}

/// The standard error of a mean recall over `n` questions, taking the spread of a 0/1 outcome
/// at its widest (p = 0.5): what a difference must exceed before it is more than noise.
pub(super) fn standard_error(n: usize) -> f64 {
    0.5 / (n.max(1) as f64).sqrt()
}

pub(super) fn write_table(
    out: &mut String,
    part: &PartSums,
    names: &HashMap<u8, &str>,
) -> Result<()> {
    writeln!(
        out,
        "{:<20} {:>5} {:>6} {:>6} {:>6} {:>7} {:>7} {:>7} {:>8} {:>8} {:>8}",
        "questions",
        "n",
        "R@1",
        "R@5",
        "R@10",
        "≤500t",
        "≤1000t",
        "≤2000t",
        "turn@5",
        "turn@10",
        "turn@25"
    )?;
    let categories = part
        .by_category
        .iter()
        .map(|(c, s)| (format!("{c} {}", names.get(c).copied().unwrap_or("?")), s));
    for (label, s) in std::iter::once(("all".to_owned(), &part.overall)).chain(categories) {
        let n = s.questions.max(1) as f64;
        writeln!(
            out,
            "{label:<20} {:>5} {:>6.3} {:>6.3} {:>6.3} {:>7.3} {:>7.3} {:>7.3} {:>8.3} {:>8.3} {:>8.3}",
            s.questions,
            s.at_k[0] / n,
            s.at_k[1] / n,
            s.at_k[2] / n,
            s.at_budget[0] / n,
            s.at_budget[1] / n,
            s.at_budget[2] / n,
            s.turns_at_k[0] / n,
            s.turns_at_k[1] / n,
            s.turns_at_k[2] / n
        )?;
    }
    writeln!(out)?;
    Ok(())
}

fn add(total: &mut Sums, one: &Sums) {
    total.questions += one.questions;
    for i in 0..3 {
        total.at_k[i] += one.at_k[i];
        total.at_budget[i] += one.at_budget[i];
        total.turns_at_k[i] += one.turns_at_k[i];
    }
}
