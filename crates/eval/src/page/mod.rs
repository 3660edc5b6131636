//! `epimem bench page`: fills the measured parts of `docs/benchmarks.md` from the raw results
//! `scripts/benchmarks.sh` leaves in `target/benchmarks`.
//!
//! The page is written by hand; what a run measures sits between two comments,
//! `<!-- results: NAME -->` and `<!-- end results -->`, and is rendered again from the results.
//! A region whose results are missing (a run that was not made: MiniLM, PostgreSQL, the language
//! model, a million episodes) keeps what the page holds, so a partial run never drops a section.

mod recall;
mod regions;

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;

use regions::Results;

const OPEN: &str = "<!-- results:";
const CLOSE: &str = "<!-- end results -->";

#[derive(Debug, Args)]
pub struct PageArgs {
    /// The raw results: what `scripts/benchmarks.sh` measured (`eval … --json` and `bench`
    /// output, one file a run).
    #[arg(long, default_value = "target/benchmarks")]
    results: PathBuf,
    /// The page to fill in place.
    #[arg(long, default_value = "docs/benchmarks.md")]
    page: PathBuf,
    /// Write nothing; fail if the page does not hold what the results say.
    #[arg(long)]
    check: bool,
}

/// A page with its regions rendered again.
#[derive(Debug)]
pub struct Filled {
    pub text: String,
    /// The regions rendered from results.
    pub filled: Vec<String>,
    /// The regions left as they were: their results are not there.
    pub kept: Vec<String>,
}

/// Renders every region of `page` with `render`, which answers `None` when the region's results
/// are missing. Text outside the regions is never touched.
pub fn fill(page: &str, mut render: impl FnMut(&str) -> Result<Option<String>>) -> Result<Filled> {
    let mut filled =
        Filled { text: String::with_capacity(page.len()), filled: vec![], kept: vec![] };
    let mut lines = page.split_inclusive('\n').enumerate();
    while let Some((number, line)) = lines.next() {
        filled.text.push_str(line);
        let Some(name) = region_name(line) else {
            if line.trim() == CLOSE {
                bail!("line {}: `{CLOSE}` closes no region", number + 1);
            }
            continue;
        };
        let mut held = String::new();
        loop {
            let Some((inner, line)) = lines.next() else {
                bail!("line {}: region `{name}` has no `{CLOSE}`", number + 1);
            };
            if region_name(line).is_some() {
                bail!("line {}: a region opens inside region `{name}`", inner + 1);
            }
            if line.trim() == CLOSE {
                let rendered = render(name).with_context(|| format!("region `{name}`"))?;
                match rendered {
                    Some(body) => {
                        filled.text.push_str(body.trim_end_matches('\n'));
                        filled.text.push('\n');
                        filled.filled.push(name.to_owned());
                    }
                    None => {
                        filled.text.push_str(&held);
                        filled.kept.push(name.to_owned());
                    }
                }
                filled.text.push_str(line);
                break;
            }
            held.push_str(line);
        }
    }
    Ok(filled)
}

fn region_name(line: &str) -> Option<&str> {
    let name = line.trim().strip_prefix(OPEN)?.strip_suffix("-->")?.trim();
    (!name.is_empty()).then_some(name)
}

pub fn page(args: &PageArgs) -> Result<std::process::ExitCode> {
    let text = std::fs::read_to_string(&args.page)
        .with_context(|| format!("reading {}", args.page.display()))?;
    anyhow::ensure!(
        args.results.is_dir(),
        "{} is not a directory of results: run scripts/benchmarks.sh first",
        args.results.display()
    );
    let results = Results::new(&args.results);
    let filled = fill(&text, |name| results.render(name))
        .with_context(|| format!("filling {}", args.page.display()))?;
    eprintln!(
        "{} regions rendered from {}; kept as they were, no results: {}",
        filled.filled.len(),
        args.results.display(),
        if filled.kept.is_empty() { "none".to_owned() } else { filled.kept.join(", ") }
    );
    if args.check {
        if filled.text != text {
            eprintln!("{} does not hold what the results say", args.page.display());
            return Ok(std::process::ExitCode::FAILURE);
        }
        return Ok(std::process::ExitCode::SUCCESS);
    }
    if filled.text != text {
        std::fs::write(&args.page, &filled.text)
            .with_context(|| format!("writing {}", args.page.display()))?;
        eprintln!("wrote {}", args.page.display());
    }
    Ok(std::process::ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests;
