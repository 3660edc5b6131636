//! `episodes`, `show`, `recall` and `stats`: reading what epimem remembers.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use epimem_core::{EpisodeId, Scope};

use super::open_engine;
use crate::{
    config::AppConfig,
    output::{EpisodeJson, detail_text, episode_line, hit_text, json_line},
};

#[derive(Debug, Args)]
pub(crate) struct EpisodesArgs {
    /// Only this conversation.
    #[arg(long)]
    conversation: Option<String>,
    /// At most this many episodes.
    #[arg(long)]
    limit: Option<usize>,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The episode's id (ep_…).
    id: String,
    /// One JSON object, messages included.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct RecallArgs {
    /// What to look for, in plain words.
    query: String,
    /// Only this conversation.
    #[arg(long)]
    conversation: Option<String>,
    /// At most this many episodes.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
    limit: u64,
    /// One JSON object per line, best first.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct StatsArgs {
    /// One JSON object.
    #[arg(long)]
    json: bool,
}

pub(crate) fn episodes(config: &AppConfig, args: &EpisodesArgs) -> Result<ExitCode> {
    let engine = open_engine(config)?;
    let scope = Scope::tenant(&config.tenant).with_conversation(args.conversation.clone());
    let episodes = engine.episodes(&scope, args.limit)?;
    for e in &episodes {
        if args.json {
            println!("{}", json_line(&EpisodeJson::new(e)));
        } else {
            println!("{}", episode_line(e));
        }
    }
    if episodes.is_empty() && !args.json {
        eprintln!(
            "no episodes yet (messages become episodes when a trigger fires or on `epimem flush`)"
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn show(config: &AppConfig, args: &ShowArgs) -> Result<ExitCode> {
    let engine = open_engine(config)?;
    let detail = engine.episode(&Scope::tenant(&config.tenant), &EpisodeId(args.id.clone()))?;
    if args.json {
        println!("{}", json_line(&EpisodeJson::detail(&detail)));
    } else {
        print!("{}", detail_text(&detail));
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn recall(config: &AppConfig, args: &RecallArgs) -> Result<ExitCode> {
    let engine = open_engine(config)?;
    let scope = Scope::tenant(&config.tenant).with_conversation(args.conversation.clone());
    let hits = engine.recall(&scope, &args.query, args.limit as usize)?;
    for (i, h) in hits.iter().enumerate() {
        if args.json {
            println!("{}", json_line(&EpisodeJson::hit(h)));
        } else {
            println!("{}", hit_text(i + 1, h));
        }
    }
    if hits.is_empty() && !args.json {
        eprintln!("no episode matches {:?}", args.query);
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn stats(config: &AppConfig, args: &StatsArgs) -> Result<ExitCode> {
    let engine = open_engine(config)?;
    let s = engine.stats(Some(&config.tenant))?;
    if args.json {
        println!("{}", json_line(&s));
    } else {
        println!("tenant          {}", config.tenant);
        println!("conversations   {}", s.conversations);
        println!("messages        {}", s.messages);
        println!("pending         {}", s.pending_messages);
        println!("episodes        {}", s.episodes);
        println!("jobs queued     {}", s.queued_jobs);
        println!("jobs failed     {}", s.failed_jobs);
    }
    Ok(ExitCode::SUCCESS)
}
