//! The raw results of a benchmark run, and the regions of the page each one renders.

use std::{
    fmt::Write,
    path::{Path, PathBuf},
};

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// The segmentation data sets, in the page's column order.
const SETS: [(&str, &str); 3] = [
    ("dialseg711", "DialSeg711"),
    ("tiage", "TIAGE (train + dev)"),
    ("superdialseg", "SuperDialseg (validation)"),
];

/// A directory of raw results, as `scripts/benchmarks.sh` names its files.
#[derive(Debug)]
pub(super) struct Results {
    dir: PathBuf,
}

impl Results {
    pub(super) fn new(dir: &Path) -> Self {
        Results { dir: dir.to_owned() }
    }

    /// The region called `name`, or `None` when its results are not there.
    pub(super) fn render(&self, name: &str) -> Result<Option<String>> {
        let words: Vec<&str> = name.split_whitespace().collect();
        match words[..] {
            ["segmentation"] => self.segmentation(),
            ["work-units"] => self.work_units(),
            ["output", file] => Ok(self.text(file)?.map(|text| fenced(&text))),
            ["recall", set, embedder] => self.recall_table(set, embedder),
            ["recall-summary", embedder] => self.recall_summary(embedder),
            ["relevance-defaults"] => self.relevance_defaults(),
            ["recall-latency", set, embedder] => self.recall_latency(set, embedder),
            ["prompt-context"] => self.prompt_context(),
            ["relevance", set, part] => self.relevance(set, part),
            ["relevance-agent"] => self.relevance_agent(),
            ["madial", form] => self.madial(form),
            ["madial-new-tasks"] => self.madial_new_tasks(),
            ["llm-notes"] => self.llm_notes(),
            ["postgres-locomo"] => self.postgres_locomo(),
            ["postgres-agent"] => self.postgres_agent(),
            ["targets-segmentation"] => self.targets_segmentation(),
            ["targets-recall"] => self.targets_recall(),
            ["targets-relevance"] => self.targets_relevance(),
            ["targets-serve"] => self.targets_serve(),
            ["targets-latency", file] => self.targets_latency(file),
            ["targets-whole"] => self.targets_whole(),
            _ => bail!("no such region (see crates/eval/src/page/regions.rs for those there are)"),
        }
    }

    /// A file's text, `None` when the run that writes it was not made.
    pub(super) fn text(&self, file: &str) -> Result<Option<String>> {
        let path = self.dir.join(file);
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// A file holding one JSON document.
    pub(super) fn json(&self, file: &str) -> Result<Option<Value>> {
        self.text(file)?
            .map(|text| serde_json::from_str(&text).with_context(|| format!("{file}: not JSON")))
            .transpose()
    }

    /// A file holding one JSON document a line.
    fn json_lines(&self, file: &str) -> Result<Option<Vec<Value>>> {
        let Some(text) = self.text(file)? else { return Ok(None) };
        let rows = text
            .lines()
            .enumerate()
            .map(|(n, line)| {
                serde_json::from_str(line).with_context(|| format!("{file}:{}: not JSON", n + 1))
            })
            .collect::<Result<_>>()?;
        Ok(Some(rows))
    }

    /// The embedders segmentation was measured with: the static one first.
    fn embedders(&self) -> Result<Vec<String>> {
        let mut found = vec![];
        for entry in std::fs::read_dir(&self.dir)? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if let Some(embedder) =
                name.strip_prefix("dialseg711.").and_then(|n| n.strip_suffix(".jsonl"))
            {
                found.push(embedder.to_owned());
            }
        }
        found.sort_by_key(|e| (e != "potion", e.clone()));
        Ok(found)
    }

    /// Each segmenter's rows by data set, in the order they were first measured.
    fn segmenters(&self) -> Result<Vec<(String, Vec<Option<Value>>)>> {
        let mut rows: Vec<(String, Vec<Option<Value>>)> = vec![];
        let embedders = self.embedders()?;
        for (column, (set, _)) in SETS.iter().enumerate() {
            for embedder in &embedders {
                for row in self.json_lines(&format!("{set}.{embedder}.jsonl"))?.unwrap_or_default()
                {
                    let segmenter = string(&row, "segmenter")?;
                    let name = match string(&row, "embedder")? {
                        "none" => segmenter.to_owned(),
                        _ => format!("{segmenter} ({embedder})"),
                    };
                    let at = match rows.iter().position(|(n, _)| *n == name) {
                        Some(at) => at,
                        None => {
                            rows.push((name, vec![None; SETS.len()]));
                            rows.len() - 1
                        }
                    };
                    rows[at].1[column] = Some(row);
                }
            }
        }
        Ok(rows)
    }

    fn segmentation(&self) -> Result<Option<String>> {
        let rows = self.segmenters()?;
        if rows.is_empty() {
            return Ok(None);
        }
        let mut out = table_head("segmenter", SETS.map(|(_, title)| title));
        for (name, cells) in rows {
            let cells = cells.iter().map(|cell| match cell {
                Some(j) => Ok(format!(
                    "{:.3} / {:.3} ({:.3})",
                    num(j, "pk")?,
                    num(j, "window_diff")?,
                    num(j, "f1")?
                )),
                None => Ok("–".to_owned()),
            });
            let cells = cells.collect::<Result<Vec<_>>>()?;
            writeln!(out, "| {name} | {} |", cells.join(" | "))?;
        }
        Ok(Some(out))
    }

    /// The coding-agent sessions cut into work units, by part and rules.
    fn work_units(&self) -> Result<Option<String>> {
        let mut out = table_head(
            "work units · part",
            [
                "none",
                "even",
                "keywords (containment < 0.4, before)",
                "+ discourse cues",
                "+ cues, bar 0.2 (default)",
            ],
        );
        for (part, sessions) in [("tuning", 14), ("test", 16)] {
            let mut runs = vec![];
            for rules in ["default", "keywords", "cues"] {
                match self.json_lines(&format!("agent.{part}.{rules}.jsonl"))? {
                    Some(rows) => runs.push(rows),
                    None => return Ok(None),
                }
            }
            let row = |run: usize, segmenter: &str| {
                runs[run]
                    .iter()
                    .find(|r| r["segmenter"] == segmenter)
                    .with_context(|| format!("agent.{part}: no `{segmenter}` row"))
            };
            let columns = [
                row(0, "none")?,
                row(0, "even")?,
                row(1, "online")?,
                row(2, "online")?,
                row(0, "online")?,
            ];
            let mut pk = columns
                .iter()
                .map(|j| Ok(format!("{:.3} / {:.3}", num(j, "pk")?, num(j, "window_diff")?)))
                .collect::<Result<Vec<_>>>()?;
            let default = pk.last_mut().expect("five columns");
            *default = format!("**{default}**");
            writeln!(out, "| {part} ({sessions} sessions) Pk / WD | {} |", pk.join(" | "))?;
            let reference = num(columns[0], "reference_boundaries")?;
            let cuts = columns
                .iter()
                .map(|j| {
                    let right = (num(j, "recall")? * reference).round();
                    Ok(format!("{} ({right})", num(j, "predicted_boundaries")?))
                })
                .collect::<Result<Vec<_>>>()?;
            writeln!(out, "| {part}: cuts (right) of {reference} | {} |", cuts.join(" | "))?;
        }
        Ok(Some(out))
    }

    /// The default segmenter (static embedder) on each set, against its target.
    fn targets_segmentation(&self) -> Result<Option<String>> {
        let rows = self.segmenters()?;
        let find = |name: &str| rows.iter().find(|(n, _)| n == name).map(|(_, cells)| cells);
        let Some(default) = find("default (potion)") else { return Ok(None) };
        let mut out = String::from(
            "- Segmentation targets, with the default policy (judged on test splits we do not have; these are\n  DialSeg711 whole and the tuning splits of the other two):\n",
        );
        let targets =
            [("DialSeg711", 0.20, ";"), ("TIAGE", 0.40, ";"), ("SuperDialseg", 0.30, ".")];
        for ((label, target, end), cell) in targets.into_iter().zip(default) {
            let Some(row) = cell else { continue };
            let pk = num(row, "pk")?;
            let verdict = if pk <= target { "met" } else { "not met" };
            writeln!(out, "  {label} Pk ≤ {target:.2}: **{pk:.3}**, {verdict}{end}")?;
        }
        if let Some(Some(cohesion)) = find("cohesion (potion)").map(|cells| &cells[0]) {
            let pk = num(cohesion, "pk")?;
            writeln!(
                out,
                "- The cohesion segmenter (off by default) reaches Pk {pk:.3} on DialSeg711."
            )?;
        }
        Ok(Some(out))
    }

    /// Recall latency over many episodes, from a `bench recall` table.
    fn targets_latency(&self, file: &str) -> Result<Option<String>> {
        let Some(text) = self.text(file)? else { return Ok(None) };
        let (episodes, messages) =
            (bench_p99(&text, "episodes (")?, bench_p99(&text, "messages (")?);
        let opened = text
            .lines()
            .find_map(|l| l.strip_prefix("open to first answer"))
            .and_then(|rest| rest.split_once(": "))
            .map(|(_, time)| time.trim())
            .with_context(|| format!("{file}: no `open to first answer` line"))?;
        let count = text.split_whitespace().next().unwrap_or("?");
        let count = count.parse::<u64>().map(thousands).unwrap_or_else(|_| count.to_owned());
        let verdict = |ok: bool| if ok { "met" } else { "not met" };
        let open_ms: f64 =
            opened.split_whitespace().next().unwrap_or("").parse().unwrap_or(f64::MAX);
        Ok(Some(format!(
            "- Recall over {count} episodes (query embedding excluded; the targets, set at 1,000,000: episode p99 ≤ 5 ms, turn p99 ≤ 20 ms, open to first answer ≤ 1 s): episode p99 **{episodes:.1} ms** ({}), turn p99 **{messages:.1} ms** ({}), **{opened}** from open to first answer ({}).",
            verdict(episodes <= 5.0),
            verdict(messages <= 20.0),
            verdict(open_ms <= 1000.0),
        )))
    }

    /// The server under load, from `bench serve`'s table: batches of 100, with the open tail
    /// searched and without.
    fn targets_serve(&self) -> Result<Option<String>> {
        let Some(text) = self.text("bench_serve.txt")? else { return Ok(None) };
        let seconds = text
            .split_once(" s on loopback")
            .and_then(|(before, _)| before.split_whitespace().last())
            .unwrap_or("?");
        let (rate, p99, errors) = served_in_batches(&text)?;
        let met = rate >= 5000.0 && p99 <= 20.0 && errors == 0.0;
        let mut out = format!(
            "- The server under load ({seconds} s, recall searching the open tail): **{}** messages/s added in batches of 100, recall p99 **{p99:.1} ms** while adding, {errors} errors (targets ≥ 5,000 and ≤ 20 ms, none): {}.",
            thousands(rate as u64),
            if met { "met" } else { "not met" }
        );
        if let Some(text) = self.text("bench_serve_tail0.txt")? {
            let (rate, p99, _) = served_in_batches(&text)?;
            write!(
                out,
                "\n  With `open_tail_lines = 0` (what was just said found once it closes): {} messages/s, recall p99 **{p99:.1} ms** (see \"What was just said\").",
                thousands(rate as u64)
            )?;
        }
        Ok(Some(out))
    }

    fn targets_whole(&self) -> Result<Option<String>> {
        let Some(text) = self.text("dialseg711_whole_seconds")? else { return Ok(None) };
        let seconds: f64 = text.trim().parse().context("dialseg711_whole_seconds: not a number")?;
        Ok(Some(format!(
            "- The whole DialSeg711 evaluation (19,350 utterances, every segmenter, model load and embedding\n  included) takes **{seconds:.1} s** with the static embedder (target: under 10 s)."
        )))
    }
}

/// The p99 of the first row starting with `row` in a `bench recall` table (the default search;
/// a later table times the exact scan).
fn bench_p99(text: &str, row: &str) -> Result<f64> {
    let line =
        text.lines().find(|l| l.starts_with(row)).with_context(|| format!("no `{row}…` row"))?;
    let numbers: Vec<f64> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    numbers.get(2).copied().with_context(|| format!("`{line}`: no p99"))
}

/// Messages a second, recall p99 (ms) and errors of `bench serve`'s batches of 100.
fn served_in_batches(text: &str) -> Result<(f64, f64, f64)> {
    let row = text
        .lines()
        .find(|l| l.starts_with("batches of"))
        .context("no `batches of` row in bench serve's table")?;
    // Read from the right: caught up, jobs left, errors, recall max, recall p99, recall p50,
    // recalls/s, add p99, add p50, messages/s.
    let cells: Vec<f64> = row
        .split_whitespace()
        .rev()
        .take(10)
        .map(|cell| cell.trim_end_matches("ms").trim_end_matches('s').parse().unwrap_or(f64::NAN))
        .collect();
    anyhow::ensure!(
        cells.len() == 10 && cells.iter().all(|c| c.is_finite()),
        "`{row}`: not ten figures"
    );
    Ok((cells[9], cells[4], cells[2]))
}

/// A table's first two lines.
pub(super) fn table_head<const N: usize>(first: &str, columns: [&str; N]) -> String {
    format!("| {first} | {} |\n|---|{}\n", columns.join(" | "), "---|".repeat(N))
}

/// A file's text as a code block.
fn fenced(text: &str) -> String {
    format!("```\n{}\n```", text.trim_end())
}

/// The number at a dotted path (`splits.test.overall.questions`), or an error naming it.
pub(super) fn num(value: &Value, path: &str) -> Result<f64> {
    at(value, path)?.as_f64().with_context(|| format!("`{path}` is not a number"))
}

pub(super) fn string<'v>(value: &'v Value, path: &str) -> Result<&'v str> {
    at(value, path)?.as_str().with_context(|| format!("`{path}` is not a string"))
}

pub(super) fn at<'v>(value: &'v Value, path: &str) -> Result<&'v Value> {
    path.split('.').try_fold(value, |v, key| v.get(key).with_context(|| format!("no `{path}`")))
}

/// 1234567 as "1,234,567".
pub(super) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
