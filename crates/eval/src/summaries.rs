//! `epimem eval summaries`: the extractive summarizer against human summaries. Each DialogSum
//! dialogue is summarized as one episode and scored with ROUGE-1, ROUGE-2 and ROUGE-L F1
//! against every reference (the mean over references, and the best), beside extractive
//! baselines computed in the same harness with the same tokenisation: the first turns and the
//! longest turns, each up to a typical summary's length. ROUGE is `rougers`, which scores as
//! Google's rouge-score does (here without stemming).

use std::{path::PathBuf, process::ExitCode};

use anyhow::{Context, Result, bail};
use clap::Args;
use epimem_core::{
    Message, Role, Timestamp,
    telling::{SummaryConfig, summarize},
};
use rougers::{RougeScorer, RougeType};
use serde::Deserialize;

#[derive(Debug, Args)]
pub struct SummariesArgs {
    /// A DialogSum file: one JSON object a line with `dialogue` and `summary` (dev) or
    /// `summary1`..`summary3` (test).
    #[arg(long, value_name = "FILE")]
    path: PathBuf,
    /// The baselines' length in words: DialogSum's dev summaries average 20.9 words.
    #[arg(long, default_value_t = 21)]
    words: usize,
    /// The summaries' length limit in words, to tune it [default: the summarizer's default]
    #[arg(long, value_name = "WORDS")]
    summary_words: Option<usize>,
    /// Only the first this many dialogues.
    #[arg(long)]
    limit: Option<usize>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Deserialize)]
struct Line {
    dialogue: String,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    summary1: Option<String>,
    #[serde(default)]
    summary2: Option<String>,
    #[serde(default)]
    summary3: Option<String>,
}

impl Line {
    fn references(&self) -> Vec<&str> {
        [&self.summary, &self.summary1, &self.summary2, &self.summary3]
            .into_iter()
            .filter_map(|s| s.as_deref())
            .collect()
    }
}

/// The systems compared, in the order printed.
const SYSTEMS: [&str; 3] = ["first turns", "longest turns", "epimem summary"];

pub(crate) fn run(args: &SummariesArgs) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.path)
        .with_context(|| format!("cannot read {}", args.path.display()))?;
    let scorer = RougeScorer::new(["rouge1", "rouge2", "rougeL"], false)
        .map_err(|e| anyhow::anyhow!("the ROUGE scorer: {e}"))?;
    let mut config = SummaryConfig::default();
    if let Some(words) = args.summary_words {
        config.max_summary_words = words;
    }
    // Per system: the means over references (R1, R2, RL), the bests, and RL's squares.
    let mut sums = [[0.0f64; 7]; 3];
    let mut dialogues = 0usize;
    for (i, raw) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        if args.limit.is_some_and(|n| dialogues >= n) {
            break;
        }
        let line: Line = serde_json::from_str(raw)
            .with_context(|| format!("{} line {}", args.path.display(), i + 1))?;
        let references = line.references();
        if references.is_empty() {
            bail!("{} line {}: no summary to score against", args.path.display(), i + 1);
        }
        let turns = turns(&line.dialogue);
        let outputs = [
            first_turns(&turns, args.words),
            longest_turns(&turns, args.words),
            summarize(&messages(&turns), &config).summary,
        ];
        for (system, output) in outputs.iter().enumerate() {
            let scores: Vec<[f64; 3]> =
                references.iter().map(|r| rouge(&scorer, output, r)).collect();
            for metric in 0..3 {
                let all = scores.iter().map(|s| s[metric]);
                let mean = all.clone().sum::<f64>() / scores.len() as f64;
                sums[system][metric] += mean;
                sums[system][metric + 3] += all.fold(0.0, f64::max);
                if metric == 2 {
                    sums[system][6] += mean * mean;
                }
            }
        }
        dialogues += 1;
    }
    let n = dialogues.max(1) as f64;
    if args.json {
        let rows: serde_json::Map<String, serde_json::Value> = SYSTEMS
            .iter()
            .zip(&sums)
            .map(|(name, s)| {
                let row = serde_json::json!({
                    "mean": {"rouge1": s[0] / n, "rouge2": s[1] / n, "rougeL": s[2] / n},
                    "best": {"rouge1": s[3] / n, "rouge2": s[4] / n, "rougeL": s[5] / n},
                    "rougeL_standard_error": standard_error(s[2], s[6], n),
                });
                ((*name).to_owned(), row)
            })
            .collect();
        outln!("{}", serde_json::json!({"dialogues": dialogues, "systems": rows}));
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{}: {dialogues} dialogues; ROUGE F1 against each reference, the mean over references \
         (and the best); baselines up to {} words",
        args.path.display(),
        args.words
    );
    outln!(
        "{:<16} {:>15} {:>15} {:>15} {:>8}",
        "system",
        "ROUGE-1",
        "ROUGE-2",
        "ROUGE-L",
        "L's SE"
    );
    for (name, s) in SYSTEMS.iter().zip(&sums) {
        let cell = |m: usize| format!("{:.3} ({:.3})", s[m] / n, s[m + 3] / n);
        let se = standard_error(s[2], s[6], n);
        outln!("{name:<16} {:>15} {:>15} {:>15} {se:>8.4}", cell(0), cell(1), cell(2));
    }
    Ok(ExitCode::SUCCESS)
}

/// The standard error of a mean from the sum and the sum of squares of `n` values.
fn standard_error(sum: f64, squares: f64, n: f64) -> f64 {
    let mean = sum / n;
    let variance = (squares / n - mean * mean).max(0.0) * n / (n - 1.0).max(1.0);
    (variance / n).sqrt()
}

/// The dialogue's turns: (speaker, text).
fn turns(dialogue: &str) -> Vec<(&str, &str)> {
    dialogue
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(who, text)| (who.trim(), text.trim()))
        .filter(|(_, text)| !text.is_empty())
        .collect()
}

/// The turns as an episode's messages, the first speaker the user.
fn messages(turns: &[(&str, &str)]) -> Vec<Message> {
    let first = turns.first().map_or("", |t| t.0);
    turns
        .iter()
        .enumerate()
        .map(|(i, &(who, text))| Message {
            seq: i as u64 + 1,
            key: format!("{i}"),
            role: if who == first { Role::User } else { Role::Assistant },
            speaker: Some(who.to_owned()),
            content: text.to_owned(),
            timestamp: Timestamp::from_millis(i as i64 * 60_000),
            metadata: serde_json::Value::Null,
            tokens: 0,
        })
        .collect()
}

/// The first turns, whole, while they fit in `words` (at least one).
fn first_turns(turns: &[(&str, &str)], words: usize) -> String {
    fitting(turns.iter().map(|&(who, text)| (who, text)), words)
}

/// The longest turns, whole, while they fit in `words` (at least one), in dialogue order.
fn longest_turns(turns: &[(&str, &str)], words: usize) -> String {
    let mut by_length: Vec<usize> = (0..turns.len()).collect();
    by_length.sort_by_key(|&i| std::cmp::Reverse(turns[i].1.split_whitespace().count()));
    let mut chosen = Vec::new();
    let mut used = 0;
    for i in by_length {
        let n = turns[i].1.split_whitespace().count();
        if used + n > words && !chosen.is_empty() {
            continue;
        }
        used += n;
        chosen.push(i);
    }
    chosen.sort_unstable();
    fitting(chosen.into_iter().map(|i| turns[i]), usize::MAX)
}

fn fitting<'a>(turns: impl Iterator<Item = (&'a str, &'a str)>, words: usize) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut used = 0;
    for (who, text) in turns {
        let n = text.split_whitespace().count();
        if used + n > words && !out.is_empty() {
            break;
        }
        used += n;
        out.push(format!("{who} {text}"));
    }
    out.join(" ")
}

/// ROUGE-1, ROUGE-2 and ROUGE-L F1 of `output` against `reference`, as rouge-score computes
/// them without stemming (lower-cased words of letters and digits).
fn rouge(scorer: &RougeScorer, output: &str, reference: &str) -> [f64; 3] {
    let scores = scorer.score(reference, output);
    [RougeType::N(1), RougeType::N(2), RougeType::L]
        .map(|t| scores.get(t).map_or(0.0, |s| s.fmeasure))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rouge_counts_shared_words_pairs_and_the_longest_common_sequence() {
        let scorer = RougeScorer::new(["rouge1", "rouge2", "rougeL"], false).unwrap();
        let rouge = |output, reference| rouge(&scorer, output, reference);
        let [r1, r2, rl] = rouge("the cat sat on the mat", "the cat lay on the mat");
        assert!((r1 - 5.0 / 6.0).abs() < 1e-9, "{r1}");
        assert!((r2 - 3.0 / 5.0).abs() < 1e-9, "{r2}");
        assert!((rl - 5.0 / 6.0).abs() < 1e-9, "{rl}");
        assert_eq!(rouge("", "anything"), [0.0; 3]);
        // "#Person1#" is the word "person1"; case and punctuation do not count.
        assert_eq!(rouge("#Person1# isn't here.", "person1 ISN T here"), [1.0; 3]);
    }

    #[test]
    fn baselines_keep_whole_turns_within_their_length() {
        let turns = [("A", "one two three"), ("B", "four five six seven"), ("A", "eight")];
        assert_eq!(first_turns(&turns, 5), "A one two three");
        assert_eq!(longest_turns(&turns, 5), "B four five six seven A eight");
        assert_eq!(first_turns(&turns, 1), "A one two three", "at least one turn");
    }

    #[test]
    fn a_line_without_a_reference_is_refused_by_its_number() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let good = serde_json::json!({"dialogue": "#A#: we fix the roof on monday\n#B#: fine",
            "summary1": "A and B fix the roof.", "summary2": "The roof is fixed."});
        let bad = serde_json::json!({"dialogue": "#A#: hello"});
        std::fs::write(file.path(), format!("{good}\n{bad}\n")).unwrap();
        let args = SummariesArgs {
            path: file.path().into(),
            words: 21,
            summary_words: None,
            limit: None,
            json: true,
        };
        let error = run(&args).unwrap_err().to_string();
        assert!(error.contains("line 2") && error.contains("no summary"), "{error}");
        let line: Line = serde_json::from_value(good).unwrap();
        assert_eq!(line.references().len(), 2);
        let limited = SummariesArgs { limit: Some(1), ..args };
        assert!(run(&limited).is_ok());
    }
}
