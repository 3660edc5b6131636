//! `epimem timeline`: walking the day → week → month → year summaries.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use epimem_api::wire::{TimelineNodeOut, TimelineQuery, VersionQuery};
use epimem_core::ErrorKind;

use crate::{config::AppConfig, output::json_line};
use epimem_app::open_telling;

#[derive(Debug, Args)]
#[command(after_help = "Periods appear once they are over (a day an hour after it ends, a week \
or month a day after, a year a week after; see [timeline] in `epimem config`). This command \
rolls up what is due before it reads, as `epimem tick` and the server's worker do.")]
pub(crate) struct TimelineArgs {
    /// A node: toc:year:2026, toc:month:2026:03, toc:week:2026:W09 or toc:day:2026-03-01
    /// [default: the top of the timeline].
    node: Option<String>,
    /// That version of the node instead of the newest.
    #[arg(long, requires = "node")]
    version: Option<u32>,
    /// This person's timeline instead of the tenant's: told on the spot from the episodes of
    /// their conversations, without a model.
    #[arg(long)]
    user: Option<String>,
    /// The answer as one JSON object (the top: its nodes; a node: the node).
    #[arg(long)]
    json: bool,
}

pub(crate) fn timeline(config: &AppConfig, args: &TimelineArgs) -> Result<ExitCode> {
    // The configured model tells the periods it rolls up; no embedder or search index is needed.
    let memory = open_telling(config)?;
    memory.roll_up_timeline(&config.tenant)?;
    let nodes: Vec<TimelineNodeOut> = match &args.node {
        None => {
            let query = TimelineQuery { user: args.user.clone() };
            let top = memory.timeline(&config.tenant, query).map_err(super::query::said)?;
            if args.json {
                outln!("{}", json_line(&top));
                return Ok(ExitCode::SUCCESS);
            }
            top.nodes
        }
        Some(id) => match memory.timeline_node(
            &config.tenant,
            id,
            VersionQuery { version: args.version, user: args.user.clone() },
        ) {
            Ok(node) if args.json => {
                outln!("{}", json_line(&node));
                return Ok(ExitCode::SUCCESS);
            }
            Ok(node) => vec![node],
            Err(e) if e.kind() == ErrorKind::NotFound => anyhow::bail!(match args.version {
                Some(v) => format!("{id} has no version {v}"),
                None => format!("{id} is not rolled up (nothing remembered then, or not over yet)"),
            }),
            Err(e) => return Err(super::query::said(e)),
        },
    };
    for out in &nodes {
        let span = |t: &str| t.get(..10).unwrap_or(t).to_owned();
        outln!(
            "{} (v{})  {} to {}  {}",
            out.id,
            out.version,
            span(&out.start),
            span(&out.end),
            out.title
        );
        for bullet in &out.bullets {
            outln!("  - {bullet}");
        }
        if !out.names.is_empty() {
            outln!("  names: {}", out.names.join(", "));
        }
        outln!(
            "  {} episode(s), {} message(s); keywords: {}",
            out.episodes,
            out.messages,
            out.keywords.join(", ")
        );
        if args.node.is_some() {
            outln!("  children: {}", out.children.join(" "));
        }
    }
    if nodes.is_empty() {
        eprintln!("the timeline is empty: periods appear once they are over (see --help)");
    }
    Ok(ExitCode::SUCCESS)
}
