//! `edit`: a person's correction of an episode's title or summary.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use epimem_api::wire::EpisodeEditIn;

use super::open_with_embedder;
use crate::{config::AppConfig, output::json_line};

#[derive(Debug, Args)]
#[command(after_help = "The old title and summary are kept as a version (the browser's episode \
page and GET /v1/episodes/ID/versions show them), and every search index takes the new words: \
this process's at once, every other's from the change log.")]
pub(crate) struct EditArgs {
    /// The episode to correct (ep_…).
    id: String,
    /// Its new title (not empty).
    #[arg(long, required_unless_present = "summary")]
    title: Option<String>,
    /// Its new summary.
    #[arg(long)]
    summary: Option<String>,
    /// Print the episode as one JSON object (the API's fields).
    #[arg(long)]
    json: bool,
}

pub(crate) fn edit(config: &AppConfig, args: &EditArgs) -> Result<ExitCode> {
    // With the embedder the saved search index was built for, so it is opened, not rebuilt.
    let memory = open_with_embedder(config)?;
    let edit = EpisodeEditIn { title: args.title.clone(), summary: args.summary.clone() };
    let edited = memory.edit_episode(&config.tenant, &args.id, edit).map_err(super::query::said)?;
    if args.json {
        outln!("{}", json_line(&edited));
    } else {
        outln!("{}: {}", edited.id, edited.title);
    }
    Ok(ExitCode::SUCCESS)
}
