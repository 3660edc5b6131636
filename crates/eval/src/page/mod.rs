//! `epimem bench page`: fills the measured parts of `docs/benchmarks.md` (the results) and of
//! `docs/experiments/*.md` (the notebook: rules tried, curves, history) from the raw results
//! `scripts/benchmarks.sh` leaves in `target/benchmarks`.
//!
//! Each page is written by hand; what a run measures sits between two comments,
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
    /// A page to fill in place (repeat for several) [default: docs/benchmarks.md and every
    /// docs/experiments/*.md].
    #[arg(long)]
    page: Vec<PathBuf>,
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
    anyhow::ensure!(
        args.results.is_dir(),
        "{} is not a directory of results: run scripts/benchmarks.sh first",
        args.results.display()
    );
    let pages = match args.page.is_empty() {
        true => default_pages()?,
        false => args.page.clone(),
    };
    let results = Results::new(&args.results);
    let mut stale = Vec::new();
    for page in &pages {
        if !fill_page(page, &results, args.check)? {
            stale.push(page.display().to_string());
        }
    }
    if !stale.is_empty() {
        eprintln!("not what the results say: {}", stale.join(", "));
        return Ok(std::process::ExitCode::FAILURE);
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// `docs/benchmarks.md` and the notebook's pages, `docs/experiments/*.md`, in name order.
fn default_pages() -> Result<Vec<PathBuf>> {
    let mut pages = vec![PathBuf::from("docs/benchmarks.md")];
    let notebook = std::path::Path::new("docs/experiments");
    let mut entries: Vec<PathBuf> = std::fs::read_dir(notebook)
        .with_context(|| format!("reading {}", notebook.display()))?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    entries.retain(|p| p.extension().is_some_and(|e| e == "md"));
    entries.sort();
    pages.extend(entries);
    Ok(pages)
}

/// Fills `page` from `results` (or, with `check`, only compares); whether it held them.
fn fill_page(page: &std::path::Path, results: &Results, check: bool) -> Result<bool> {
    let text =
        std::fs::read_to_string(page).with_context(|| format!("reading {}", page.display()))?;
    let filled = fill(&text, |name| results.render(name))
        .with_context(|| format!("filling {}", page.display()))?;
    eprintln!(
        "{}: {} regions rendered; kept as they were, no results: {}",
        page.display(),
        filled.filled.len(),
        if filled.kept.is_empty() { "none".to_owned() } else { filled.kept.join(", ") }
    );
    if filled.text == text {
        return Ok(true);
    }
    if check {
        return Ok(false);
    }
    std::fs::write(page, &filled.text).with_context(|| format!("writing {}", page.display()))?;
    eprintln!("wrote {}", page.display());
    Ok(true)
}

#[cfg(test)]
mod tests;
