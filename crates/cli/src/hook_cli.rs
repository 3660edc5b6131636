//! `epimem-hook`: `epimem hook` as a binary of its own. It takes the options a hook is
//! installed with and nothing else, so it links (and at each start, relocates) only what a
//! hook runs.

use std::process::ExitCode;

use clap::{Parser, error::ErrorKind};

use crate::{
    commands::hook::{HookArgs, HookEntry, hook},
    config::{AppConfig, PlaceArgs},
};

/// Record one hook event of a coding agent (JSON on standard input; `--agent`: claude, codex,
/// gemini, opencode) and print the memory to add to the session, if any: `epimem hook`, in a
/// smaller binary that starts faster. Always exits 0: what goes wrong is written to the hooks'
/// log (`<db>.hooks/hooks.log`). Set up with `epimem hooks install`.
#[derive(Debug, Parser)]
#[command(name = "epimem-hook", version, max_term_width = 100)]
struct HookCli {
    #[command(flatten)]
    place: PlaceArgs,
    #[command(flatten)]
    args: HookArgs,
}

/// `epimem-hook`: parses its options and records the event on standard input.
pub fn run_hook() -> ExitCode {
    let cli = match HookCli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            e.exit()
        }
        // The agents read exit code 2 as "block this prompt": a hook whose command line is
        // wrong says so and lets the agent go on.
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::SUCCESS;
        }
    };
    match hook(AppConfig::load(&cli.place.overrides()), &cli.args, HookEntry::Binary) {
        Ok(code) => code,
        Err(e) => {
            if cli.args.verbose {
                eprintln!("epimem-hook: error: {e:#}");
            }
            ExitCode::SUCCESS
        }
    }
}
