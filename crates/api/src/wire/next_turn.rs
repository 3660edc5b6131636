//! What an agent reads before its next turn, in one call.

use crate::engine::NextTurn;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{MessageOut, TurnOut};

/// The budget of a next-turn block that names none.
pub const DEFAULT_NEXT_TURN_BUDGET: usize = 2000;

/// `POST /v1/conversations/{conversation}/next-turn`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NextTurnIn {
    /// What to look up in long-term memory; the newest message a person wrote when absent.
    #[serde(default)]
    pub query: Option<String>,
    /// Tokens the whole block may take (default 2,000).
    #[serde(default)]
    pub budget: Option<usize>,
    /// The share of the budget for the newest messages, verbatim (default
    /// `next_turn.recent_share`, 0.4).
    #[serde(default)]
    pub recent_share: Option<f64>,
    /// The share for what came before them, told short (default `next_turn.summary_share`,
    /// 0.2). The long-term lines take the rest, and whatever the other two leave.
    #[serde(default)]
    pub summary_share: Option<f64>,
}

/// The block for the next turn, and each of its parts with the share it had.
#[derive(Debug, Serialize, ToSchema)]
pub struct NextTurnOut {
    /// The block, ready to put in a prompt: the long-term lines, what came earlier, then the
    /// newest messages.
    pub context: String,
    /// Tokens of `context`, never more than `budget`.
    pub tokens: usize,
    pub budget: usize,
    pub recent: RecentOut,
    pub summary: SummaryOut,
    pub memory: MemoryPartOut,
}

/// The conversation's newest messages, verbatim, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct RecentOut {
    pub messages: Vec<MessageOut>,
    pub tokens: usize,
    /// Tokens this part could take.
    pub share: usize,
}

/// What came before the newest messages, told short: its episodes' titles and summaries.
#[derive(Debug, Serialize, ToSchema)]
pub struct SummaryOut {
    pub text: String,
    /// The episodes it tells, oldest first.
    pub episodes: Vec<String>,
    pub tokens: usize,
    pub share: usize,
}

/// The long-term lines that bear on the moment (any conversation of the tenant, none of the
/// recent part).
#[derive(Debug, Serialize, ToSchema)]
pub struct MemoryPartOut {
    pub context: String,
    pub tokens: usize,
    /// Its share, with what the recent part and the summary left unused.
    pub share: usize,
    /// What was looked up: the request's query, else the newest message a person wrote.
    pub query: Option<String>,
    /// True when nothing remembered bears on it: `context` is then empty.
    pub nothing_relevant: bool,
    /// The lines quoted, best first.
    pub turns: Vec<TurnOut>,
}

impl From<NextTurn> for NextTurnOut {
    fn from(t: NextTurn) -> Self {
        Self {
            context: t.text,
            tokens: t.tokens,
            budget: t.budget,
            recent: RecentOut {
                messages: t.recent.iter().map(|m| MessageOut::new(m, false)).collect(),
                tokens: t.recent_tokens,
                share: t.recent_share,
            },
            summary: SummaryOut {
                text: t.summary,
                episodes: t.summary_episodes.into_iter().map(|id| id.0).collect(),
                tokens: t.summary_tokens,
                share: t.summary_share,
            },
            memory: MemoryPartOut {
                context: t.memory.text,
                tokens: t.memory.tokens,
                share: t.memory_share,
                query: t.memory_query,
                nothing_relevant: !t.memory.relevant,
                turns: t
                    .memory
                    .turns
                    .into_iter()
                    .map(|(id, seq)| TurnOut { episode: id.0, seq })
                    .collect(),
            },
        }
    }
}
