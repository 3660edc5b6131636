//! `epimem keys`: the API keys `serve` accepts, one tenant each.

use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};

use super::{open_memory, query::said};
use crate::{config::AppConfig, output::json_line};

#[derive(Debug, Subcommand)]
pub(crate) enum KeysCommand {
    /// Make a key for the tenant named by --tenant (or the configured one). The key is printed
    /// once: only its hash is kept.
    Create(CreateArgs),
    /// List every tenant's keys (never the keys themselves): id, tenant, name, made, revoked.
    List(ListArgs),
    /// Revoke a key by id: requests with it are refused from then on.
    Revoke(RevokeArgs),
}

#[derive(Debug, Args)]
pub(crate) struct CreateArgs {
    /// What the key is for ("ci", "laptop"), to tell keys apart when listing.
    #[arg(long, default_value = "")]
    name: String,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// The answer as one JSON object (`keys`: every key, oldest first).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct RevokeArgs {
    /// The key's id, from `keys list`.
    id: u64,
}

pub(crate) fn keys(config: &AppConfig, command: &KeysCommand) -> Result<ExitCode> {
    let memory = open_memory(config)?;
    match command {
        KeysCommand::Create(args) => {
            let made = memory.create_key(&config.tenant, &args.name).map_err(said)?;
            if args.json {
                outln!("{}", json_line(&made));
            } else {
                outln!("{}", made.key.as_deref().unwrap_or_default());
                eprintln!(
                    "key {} for tenant {:?}: shown this once, only its hash is kept",
                    made.id, made.tenant
                );
            }
        }
        KeysCommand::List(args) => {
            let all = memory.keys().map_err(said)?;
            if args.json {
                outln!("{}", json_line(&all));
            } else {
                for k in &all.keys {
                    let state =
                        k.revoked.as_ref().map_or("active".to_owned(), |t| format!("revoked {t}"));
                    outln!(
                        "{:>4}  {:<16} {:<16} made {}  {state}",
                        k.id,
                        k.tenant,
                        k.name,
                        k.created
                    );
                }
            }
        }
        KeysCommand::Revoke(args) => {
            memory.revoke_key(args.id).map_err(said)?;
            eprintln!("key {} revoked", args.id);
        }
    }
    Ok(ExitCode::SUCCESS)
}
