//! What an agent reads before its next turn, in one call:
//! `POST /v1/conversations/{c}/next-turn`, the MCP tool `next_turn` and `epimem next-turn`
//! answer it alike (`NextTurnOut`).

use axum::{
    Json,
    body::Bytes,
    extract::{Extension, Path, State, rejection::BytesRejection},
};
use epimem_core::{ConversationKey, NextTurnConfig};
use epimem_engine::{Engine, NextTurn, NextTurnQuery};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{
    App,
    auth::Tenant,
    error::{ApiError, ErrorBody},
    routes::{blocking, json_body},
    wire::{MessageOut, TurnOut},
};

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

/// Everything an agent reads before its next turn in a conversation, under one budget: the
/// long-term lines that bear on the moment (empty when nothing does), what came earlier told
/// short, and the newest messages verbatim; no line in two parts.
#[utoipa::path(post, path = "/v1/conversations/{conversation}/next-turn", tag = "recall",
    params(("conversation" = String, Path)), request_body = NextTurnIn,
    responses((status = 200, body = NextTurnOut), (status = 400, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "the conversation has no message")))]
pub(crate) async fn next_turn(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    Path(conversation): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<NextTurnOut>, ApiError> {
    let body = body?;
    // An empty body asks with every default.
    let request: NextTurnIn =
        if body.is_empty() { NextTurnIn::default() } else { json_body(&body)? };
    let out = blocking(&app, move |engine| next_turn_with(engine, &tenant, &conversation, request))
        .await?;
    Ok(Json(out))
}

/// What every door answers for a next-turn request.
pub fn next_turn_with(
    engine: &Engine,
    tenant: &str,
    conversation: &str,
    request: NextTurnIn,
) -> Result<NextTurnOut, ApiError> {
    let budget = request.budget.unwrap_or(DEFAULT_NEXT_TURN_BUDGET);
    if budget == 0 {
        return Err(ApiError::bad_input("budget: must be at least 1 token"));
    }
    let defaults = engine.config().next_turn;
    let shares = NextTurnConfig {
        recent_share: request.recent_share.unwrap_or(defaults.recent_share),
        summary_share: request.summary_share.unwrap_or(defaults.summary_share),
    };
    shares.check().map_err(ApiError::bad_input)?;
    let query = NextTurnQuery {
        conversation: ConversationKey::new(tenant, conversation),
        query: request.query.filter(|q| !q.trim().is_empty()),
        budget,
        shares: Some(shares),
        relevance: None,
    };
    Ok(engine.next_turn(&query)?.into())
}
