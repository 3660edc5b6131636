//! `epimem keys`: the API keys `serve` accepts, one tenant each.

use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use serde::Serialize;

use super::open_engine;
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
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct RevokeArgs {
    /// The key's id, from `keys list`.
    id: u64,
}

#[derive(Debug, Serialize)]
struct KeyJson<'a> {
    id: u64,
    tenant: &'a str,
    name: &'a str,
    created: String,
    revoked: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
}

pub(crate) fn keys(config: &AppConfig, command: &KeysCommand) -> Result<ExitCode> {
    let engine = open_engine(config)?;
    match command {
        KeysCommand::Create(args) => {
            let tenant = config.tenant.as_str();
            let (stored, key) = engine.create_api_key(tenant, &args.name)?;
            if args.json {
                let line = KeyJson {
                    id: stored.id,
                    tenant,
                    name: &stored.name,
                    created: stored.created.to_rfc3339(),
                    revoked: None,
                    key: Some(&key),
                };
                outln!("{}", json_line(&line));
            } else {
                outln!("{key}");
                eprintln!(
                    "key {} for tenant {tenant:?}: shown this once, only its hash is kept",
                    stored.id
                );
            }
        }
        KeysCommand::List(args) => {
            for k in engine.api_keys(None)? {
                let created = k.created.to_rfc3339();
                let revoked = k.revoked.map(|t| t.to_rfc3339());
                if args.json {
                    let line = KeyJson {
                        id: k.id,
                        tenant: &k.tenant,
                        name: &k.name,
                        created,
                        revoked,
                        key: None,
                    };
                    outln!("{}", json_line(&line));
                } else {
                    let state = revoked.map_or("active".to_owned(), |t| format!("revoked {t}"));
                    outln!("{:>4}  {:<16} {:<16} made {created}  {state}", k.id, k.tenant, k.name);
                }
            }
        }
        KeysCommand::Revoke(args) => {
            engine.revoke_api_key(args.id)?;
            eprintln!("key {} revoked", args.id);
        }
    }
    Ok(ExitCode::SUCCESS)
}
