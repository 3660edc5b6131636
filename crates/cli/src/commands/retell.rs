//! `retell`: the episodes and the timeline told again as this version tells them.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::open_with_embedder;
use crate::{config::AppConfig, output::json_line};

#[derive(Debug, Args)]
#[command(after_help = "After an upgrade that tells episodes and periods better, what was \
stored keeps the telling it was given. Retell gives every episode no model told and no one \
corrected the title and summary this version would give it, from its messages (the old is \
kept as a version: `epimem show`, the browser and GET /v1/episodes/ID/versions show it; an \
episode with a version is left as it is), then tells every period of the timeline again (a \
changed period gets a new version). Search indexes take the new words.")]
pub(crate) struct RetellArgs {
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub(crate) fn retell(config: &AppConfig, args: &RetellArgs) -> Result<ExitCode> {
    // With the embedder the saved search index was built for, so it is opened, not rebuilt,
    // and the configured model, which tells the periods as the worker's rollups do.
    let memory = open_with_embedder(config)?;
    let bar = if args.json { ProgressBar::hidden() } else { ProgressBar::new(0) };
    bar.set_style(
        ProgressStyle::with_template("{spinner} retelling [{bar:30}] {pos}/{len} episodes ({eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let report = memory.retell(&config.tenant, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    })?;
    bar.finish_and_clear();
    let failed: Vec<String> =
        report.timeline.failed.iter().map(|(node, e)| format!("{node}: {e}")).collect();
    if args.json {
        let out = serde_json::json!({
            "tenant": config.tenant,
            "episodes": report.episodes,
            "retold": report.retold,
            "kept": report.kept,
            "periods": report.timeline.written,
            "periods_failed": failed,
        });
        outln!("{}", json_line(&out));
    } else {
        outln!(
            "retold {} of {} episode(s) of tenant {} ({} told by a model or corrected, kept); \
             told {} period(s) again",
            report.retold,
            report.episodes,
            config.tenant,
            report.kept,
            report.timeline.written
        );
        for line in &failed {
            eprintln!("not told again: {line}");
        }
    }
    Ok(if failed.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
