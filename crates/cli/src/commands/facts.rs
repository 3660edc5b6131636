//! `epimem facts`: the lasting facts distilled from episodes.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use epimem_api::{Memory, wire::FactsQuery};

use super::open_engine;
use crate::{config::AppConfig, output::json_line};

#[derive(Debug, Args)]
pub(crate) struct FactsArgs {
    /// Only this conversation's.
    #[arg(long)]
    conversation: Option<String>,
    /// Invalidated facts too (marked with when they stopped holding).
    #[arg(long)]
    all: bool,
    /// Only the newest this many.
    #[arg(long)]
    limit: Option<usize>,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
}

pub(crate) fn facts(config: &AppConfig, args: &FactsArgs) -> Result<ExitCode> {
    let engine = open_engine(config)?;
    let query = FactsQuery {
        conversation: args.conversation.clone(),
        all: args.all,
        limit: args.limit.or(Some(epimem_api::MAX_LIMIT)),
    };
    let out = Memory::new(&engine).facts(&config.tenant, query).map_err(super::query::said)?;
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
