//! `epimem facts`: the lasting facts distilled from episodes.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use epimem_api::wire::FactsQuery;

use super::open_memory;
use crate::{config::AppConfig, output::json_line};

#[derive(Debug, Args)]
pub(crate) struct FactsArgs {
    /// Only this conversation's.
    #[arg(long)]
    conversation: Option<String>,
    /// Only those drawn from this person's conversations (the `user` their messages carry).
    #[arg(long)]
    user: Option<String>,
    /// Invalidated facts too (marked with when they stopped holding).
    #[arg(long)]
    all: bool,
    /// Only the newest this many.
    #[arg(long)]
    limit: Option<usize>,
    /// The answer as one JSON object, as `GET /v1/facts` gives it.
    #[arg(long)]
    json: bool,
}

pub(crate) fn facts(config: &AppConfig, args: &FactsArgs) -> Result<ExitCode> {
    let memory = open_memory(config)?;
    let query = FactsQuery {
        conversation: args.conversation.clone(),
        user: args.user.clone(),
        all: args.all,
        limit: args.limit.or(Some(epimem_api::MAX_LIMIT)),
    };
    let out = memory.facts(&config.tenant, query).map_err(super::query::said)?;
    if args.json {
        outln!("{}", json_line(&out));
        return Ok(ExitCode::SUCCESS);
    }
    for fact in &out.facts {
        let since = fact.valid_at.get(..10).unwrap_or(&fact.valid_at);
        match fact.invalid_at.as_deref() {
            None => outln!("{since}  {}", fact.text),
            Some(until) => {
                outln!("{since}  {}  (until {})", fact.text, until.get(..10).unwrap_or(until))
            }
        }
    }
    if out.facts.is_empty() {
        eprintln!(
            "no facts yet (a language model distils them from episodes: see `epimem config`, [llm])"
        );
    }
    Ok(ExitCode::SUCCESS)
}
