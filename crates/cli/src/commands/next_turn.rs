//! `next-turn`: what an agent reads before its next turn in a conversation, as the HTTP API's
//! `POST /v1/conversations/{c}/next-turn` and the MCP tool `next_turn` answer it.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use epimem_api::wire::NextTurnIn;

use super::open_with_embedder;
use crate::{config::AppConfig, output::json_line};

#[derive(Debug, Args)]
pub(crate) struct NextTurnArgs {
    /// The conversation about to be answered in.
    conversation: String,
    /// What to look up in long-term memory (default: the newest message a person wrote).
    #[arg(long)]
    query: Option<String>,
    /// The most tokens the whole block may take.
    #[arg(long, value_name = "TOKENS", default_value_t = epimem_api::wire::DEFAULT_NEXT_TURN_BUDGET)]
    budget: usize,
    /// The share of the budget for the newest messages, verbatim (0 to 1; default
    /// next_turn.recent_share, 0.4).
    #[arg(long, value_name = "SHARE")]
    recent_share: Option<f64>,
    /// The share for what came before them, told short (default next_turn.summary_share,
    /// 0.2). Long-term memories take the rest and whatever the other two leave.
    #[arg(long, value_name = "SHARE")]
    summary_share: Option<f64>,
    /// One JSON object: the block and each part, with the fields of the HTTP API's answer.
    #[arg(long)]
    json: bool,
}

pub(crate) fn next_turn(config: &AppConfig, args: &NextTurnArgs) -> Result<ExitCode> {
    let memory = open_with_embedder(config)?;
    super::load_index(&memory, &config.tenant)?;
    let request = NextTurnIn {
        query: args.query.clone(),
        budget: Some(args.budget),
        recent_share: args.recent_share,
        summary_share: args.summary_share,
    };
    let out = memory
        .next_turn(&config.tenant, &args.conversation, request)
        .map_err(super::query::said)?;
    if args.json {
        outln!("{}", json_line(&out));
    } else {
        outln!("{}", out.context);
    }
    Ok(ExitCode::SUCCESS)
}
