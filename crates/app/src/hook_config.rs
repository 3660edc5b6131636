//! `[hooks]`: how `epimem hook` behaves. Kept here, with the rest of the configuration, so
//! that a program which opens a memory does not link the hooks.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// `[hooks]`: how `epimem hook` behaves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HookConfig {
    /// What a session is handed of the project's earlier work, and when.
    pub hand: Hand,
    /// How long a hook waits for a database another process is writing before it keeps the
    /// event for later and returns.
    pub busy_timeout_ms: u64,
    /// Characters of a tool's output kept with its action (its start and its end).
    pub output_chars: usize,
    /// Start `epimem tick` in the background when a session ends or starts, or a session's
    /// queue is full, so episodes are cut without a server running.
    pub background: bool,
    /// The hooks' folder (transcript cursors, spool, log) [default: beside a SQLite
    /// database, `<db>.hooks`; under the user's data directory for PostgreSQL].
    pub dir: Option<PathBuf>,
    /// An `epimem serve` on the same database (`http://127.0.0.1:8080`): a prompt's earlier
    /// work is recalled there, by words and meaning, which a hook has no time to load.
    pub server_url: Option<String>,
    /// Its API key, when it requires one.
    pub server_key: Option<String>,
    /// How long a prompt waits for the server before its keywords choose instead.
    pub server_timeout_ms: u64,
}

/// When a session is handed the project's earlier work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Hand {
    /// The work the session's first prompt bears on, if any.
    #[default]
    FirstPrompt,
    /// The project's newest work, rules and recurring failures, at the session's start.
    Start,
    StartAndFirstPrompt,
    /// The start, and the work each prompt bears on.
    EveryPrompt,
}

impl Hand {
    pub fn at_start(self) -> bool {
        matches!(self, Self::Start | Self::StartAndFirstPrompt | Self::EveryPrompt)
    }

    /// Whether a prompt is handed its earlier work; `first` says whether it is the session's
    /// first prompt, and is asked only when that decides (it leaves a mark in the hooks' folder).
    pub fn at_prompt(self, first: impl FnOnce() -> bool) -> bool {
        match self {
            Self::FirstPrompt | Self::StartAndFirstPrompt => first(),
            Self::EveryPrompt => true,
            Self::Start => false,
        }
    }
}

impl Default for HookConfig {
    fn default() -> Self {
        Self {
            hand: Hand::default(),
            busy_timeout_ms: 250,
            output_chars: 600,
            background: true,
            dir: None,
            server_url: None,
            server_key: None,
            server_timeout_ms: 150,
        }
    }
}
