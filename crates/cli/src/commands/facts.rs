//! `epimem facts`: the lasting facts distilled from episodes.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use epimem_core::Scope;
use epimem_server::FactOut;

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
    let scope = Scope::tenant(&config.tenant).with_conversation(args.conversation.clone());
    let facts = engine.facts(&scope, args.all, args.limit)?;
    for fact in &facts {
        let out = FactOut::from(fact);
        if args.json {
            outln!("{}", json_line(&out));
            continue;
        }
        let since = out.valid_at.get(..10).unwrap_or(&out.valid_at);
        match out.invalid_at.as_deref() {
            None => outln!("{since}  {}", out.text),
            Some(until) => {
                outln!("{since}  {}  (until {})", out.text, until.get(..10).unwrap_or(until))
            }
        }
    }
    if facts.is_empty() && !args.json {
        eprintln!(
            "no facts yet (a language model distils them from episodes: see `epimem config`, [llm])"
        );
    }
    Ok(ExitCode::SUCCESS)
}
