//! The command line of the epimem episodic memory engine, with two entry points: `epimem`
//! (every command, [`run_cli`]) and `epimem-hook` (Claude Code's hook alone, [`run_hook`]): a
//! hook is a process per event, and a binary that links only what a hook runs starts faster.

#[macro_use]
extern crate epimem_app;

mod cli;
mod commands;
use epimem_app::config;
mod hook_cli;
mod input;
mod output;

pub use cli::run_cli;
pub use hook_cli::run_hook;
