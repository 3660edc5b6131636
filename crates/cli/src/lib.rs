//! The command line of the epimem episodic memory engine, with two entry points: `epimem`
//! (every command, [`run_cli`]) and `epimem-hook` (Claude Code's hook alone, [`run_hook`]): a
//! hook is a process per event, and a binary that links only what a hook runs starts faster.

/// `println!` that returns the write's error instead of panicking: `epimem recall … | head`
/// closes the pipe early, and that is not a crash (see `run_cli`).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)?
    }};
}

/// `print!` that returns the write's error (see `outln!`).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)?
    }};
}

mod cli;
mod commands;
use epimem_app::config;
mod hook_cli;
mod input;
mod output;

pub use cli::run_cli;
pub use hook_cli::run_hook;
