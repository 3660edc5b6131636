//! The MCP server: the same memory as the HTTP API, as tools a model calls. Served over stdio
//! (`epimem mcp`) and over streamable HTTP at `/mcp` in `epimem serve`. Errors carry the same
//! stable codes as the HTTP API's, in the error's `data.code`.

use std::sync::Arc;

use epimem_api::{
    Memory, message_list,
    wire::{
        EpisodesQuery, MessageIn, NextTurnIn, ProjectMemoryIn, RecallIn, RecallOut,
        TimelineNodeOut, TimelineQuery, VersionQuery,
    },
};
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    handler::server::{tool::ToolRouter, wrapper::Parameters},
    model::{CallToolResult, Content, Implementation, ServerCapabilities, ServerInfo},
    service::RequestContext,
    tool, tool_router,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{App, auth::Tenant, error::ApiError, routes::ask};
use tracing::Instrument as _;

/// The context budget of a recall that names none: room for the gist of a few episodes.
const DEFAULT_BUDGET: usize = 1000;
const DEFAULT_LIST: usize = 20;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RememberParams {
    /// The messages, oldest first.
    pub messages: Vec<MessageIn>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProjectMemoryParams {
    /// The project: the root folder of its repository, as the sessions recorded it (their
    /// messages' `agent`).
    pub project: String,
    /// The request about to be worked on: only earlier work that bears on it is returned
    /// (found by recall, words and meaning agreeing). Without it, what a new session is told: recent episodes of work, failures
    /// that recur across sessions, older sessions' summaries.
    #[serde(default)]
    pub prompt: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecallParams {
    /// What to look for, in plain words ("why did the deploy fail last week?").
    pub query: String,
    /// Only this conversation.
    #[serde(default)]
    pub conversation: Option<String>,
    /// Only what this person said (the `user` their messages carry).
    #[serde(default)]
    pub user: Option<String>,
    /// Only the sessions of this project (a coding agent's: its repository's root folder).
    #[serde(default)]
    pub project: Option<String>,
    /// Only this period: "last week", "yesterday", "in March", "in 2025", or a timeline node id
    /// (`toc:week:2026:W09`), read against the conversation's time.
    #[serde(default)]
    pub within: Option<String>,
    /// Only episodes that end at or after this time (RFC 3339); not with `within`.
    #[serde(default)]
    pub since: Option<String>,
    /// Only episodes that start at or before this time (RFC 3339); not with `within`.
    #[serde(default)]
    pub until: Option<String>,
    /// The most tokens of context to return (default 1000).
    #[serde(default)]
    pub budget: Option<usize>,
    /// Whole episodes (title, time, summary, matching lines) instead of single lines.
    #[serde(default)]
    pub episodes: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NextTurnParams {
    /// The conversation you are about to answer in (the one you `remember` its messages in).
    pub conversation: String,
    /// What to look up in long-term memory; the newest message the user wrote when left out.
    #[serde(default)]
    pub query: Option<String>,
    /// The most tokens the whole block may take (default 2000).
    #[serde(default)]
    pub budget: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListParams {
    /// Only this conversation.
    #[serde(default)]
    pub conversation: Option<String>,
    /// At most this many, newest first (default 20).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TimelineParams {
    /// A node id: `toc:year:2026`, `toc:month:2026:03`, `toc:week:2026:W09` or
    /// `toc:day:2026-03-01`; leave it out for the top of the timeline.
    pub node: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EpisodeParams {
    /// The episode's id (`ep_…`), from `recall` or `list_episodes`.
    pub id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ForgetParams {
    /// The episode to forget (`ep_…`)...
    #[serde(default)]
    pub episode: Option<String>,
    /// ...or a whole conversation. Exactly one of the two.
    #[serde(default)]
    pub conversation: Option<String>,
}

/// The tools over one memory and tenant.
pub struct MemoryTools {
    app: App,
    tool_router: ToolRouter<Self>,
}

impl Clone for MemoryTools {
    fn clone(&self) -> Self {
        Self { app: self.app.clone(), tool_router: self.tool_router.clone() }
    }
}

impl std::fmt::Debug for MemoryTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTools").field("tenant", &self.app.tenant).finish_non_exhaustive()
    }
}

impl From<ApiError> for McpError {
    fn from(e: ApiError) -> Self {
        let data = Some(serde_json::json!({ "code": e.code() }));
        if e.status().is_client_error() {
            McpError::invalid_params(e.message().to_owned(), data)
        } else {
            McpError::internal_error(e.message().to_owned(), data)
        }
    }
}

/// A tool's answer: `text` for the model to read, and the same answer as the HTTP API gives
/// it as structured content.
fn answer(text: String, value: &impl Serialize) -> Result<CallToolResult, McpError> {
    let structured =
        serde_json::to_value(value).map_err(|e| McpError::internal_error(e.to_string(), None))?;
    Ok(CallToolResult {
        structured_content: Some(structured),
        ..CallToolResult::success(vec![Content::text(text)])
    })
}

/// A tool's answer whose text is its JSON, pretty-printed.
fn answer_json(value: &impl Serialize) -> Result<CallToolResult, McpError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| McpError::internal_error(e.to_string(), None))?;
    answer(text, value)
}

#[tool_router]
impl MemoryTools {
    pub(crate) fn new(app: App) -> Self {
        Self { app, tool_router: Self::tool_router() }
    }

    /// Over HTTP, the tenant the request's API key (or the single-user setting) gave it; over
    /// stdio, the configured one.
    fn tenant(&self, context: &RequestContext<RoleServer>) -> Arc<str> {
        context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Tenant>())
            .map_or_else(|| self.app.tenant.clone(), |t| t.0.clone())
    }

    #[tool(
        description = "Remember messages of a conversation (the user's, yours, tools'). Send each message once, as it happens; give each an `id` to make resending harmless. epimem cuts the conversation into episodes by itself (on a change of subject, a silence, or when a session ends) and makes them findable with `recall`."
    )]
    async fn remember(
        &self,
        Parameters(p): Parameters<RememberParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let tenant = self.tenant(&context);
        let batch = message_list(&tenant, "messages", p.messages).map_err(ApiError::from)?;
        let added = ask(&self.app, move |memory| memory.remember(batch)).await?;
        let mut said = format!(
            "Remembered {} message(s) ({} already known). They are cut into episodes in the \
             background, when the conversation has enough or falls silent; recall finds them \
             at once.",
            added.inserted, added.duplicates
        );
        let conflicts: Vec<String> = added
            .messages
            .iter()
            .enumerate()
            .filter(|(_, m)| m.status == epimem_api::wire::AddedStatus::Conflict)
            .map(|(i, m)| m.id.clone().unwrap_or_else(|| format!("messages[{i}]")))
            .collect();
        if !conflicts.is_empty() {
            said.push_str(&format!(
                " Not stored: {} (each id already holds a different message, which stays; \
                 send new content under a new id).",
                conflicts.join(", ")
            ));
        }
        answer(said, &added)
    }

    #[tool(
        description = "Recall what happened before: returns the lines of past conversations that bear on the query, grouped by episode under the time it began, within a token budget (only as much as bears on it), ready to read. Ask in plain words; name people, things or dates when you can. \"Nothing remembered bears on this.\" means what it says: answer without memory."
    )]
    async fn recall(
        &self,
        Parameters(p): Parameters<RecallParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let request = RecallIn {
            query: p.query,
            conversation: p.conversation,
            user: p.user,
            project: p.project,
            since: p.since,
            until: p.until,
            within: p.within,
            budget: Some(p.budget.unwrap_or(DEFAULT_BUDGET)),
            episodes: p.episodes,
            ..RecallIn::default()
        };
        let tenant = self.tenant(&context);
        let out: RecallOut = ask(&self.app, move |memory| memory.recall(&tenant, request)).await?;
        answer(out.text(), &out)
    }

    #[tool(
        description = "Everything to read before your next turn in a conversation, in one block under one budget: the long-term memories that bear on the moment (none when nothing does), what was said earlier in this conversation told short, and its newest messages verbatim. Call it before you answer instead of assembling `recall` and the conversation yourself."
    )]
    async fn next_turn(
        &self,
        Parameters(p): Parameters<NextTurnParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let tenant = self.tenant(&context);
        let request = NextTurnIn { query: p.query, budget: p.budget, ..NextTurnIn::default() };
        let out = ask(&self.app, move |memory| memory.next_turn(&tenant, &p.conversation, request))
            .await?;
        answer(out.context.clone(), &out)
    }

    #[tool(
        description = "List remembered episodes, newest first: id, conversation, time span, title and summary. Use it to browse; use `recall` to search."
    )]
    async fn list_episodes(
        &self,
        Parameters(p): Parameters<ListParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let tenant = self.tenant(&context);
        let query = EpisodesQuery {
            conversation: p.conversation,
            limit: Some(p.limit.unwrap_or(DEFAULT_LIST)),
            ..EpisodesQuery::default()
        };
        let page = ask(&self.app, move |memory| memory.episodes(&tenant, query)).await?;
        answer_json(&page)
    }

    #[tool(description = "One episode in full: its title, summary, keywords and every message.")]
    async fn get_episode(
        &self,
        Parameters(p): Parameters<EpisodeParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let tenant = self.tenant(&context);
        let episode = ask(&self.app, move |memory| memory.episode(&tenant, &p.id)).await?;
        answer_json(&episode)
    }

    #[tool(
        description = "Walk the timeline of what is remembered, for questions like 'what did we work on last week?'. Without `node`: the top (past years, then the months of this year, and so on). With a node id: that period summed up (title, bullets, keywords, names, counts) and its children's ids to go down to; a day's children are episode ids, for `get_episode`. Periods appear once they are over."
    )]
    async fn timeline(
        &self,
        Parameters(p): Parameters<TimelineParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let tenant = self.tenant(&context);
        let Some(node) = p.node else {
            let top =
                ask(&self.app, move |memory| memory.timeline(&tenant, TimelineQuery::default()))
                    .await?;
            return answer_json(&top);
        };
        let found: TimelineNodeOut = ask(&self.app, move |memory| {
            memory.timeline_node(&tenant, &node, VersionQuery::default())
        })
        .await?;
        answer_json(&found)
    }

    #[tool(
        description = "What a coding agent should know before working on a project: its recent episodes of work (intent, what happened, files, failures, commits), the failures that recur across its sessions and its older sessions; or, given the prompt about to be worked on, the earlier work that bears on it. Empty when nothing is known."
    )]
    async fn project_memory(
        &self,
        Parameters(p): Parameters<ProjectMemoryParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let tenant = self.tenant(&context);
        let request =
            ProjectMemoryIn { project: p.project, prompt: p.prompt, session: None, tenant: None };
        let context =
            ask(&self.app, move |memory| memory.project_memory(&tenant, &request)).await?;
        let out = epimem_api::wire::ProjectMemoryOut { context };
        answer(out.context.clone(), &out)
    }

    #[tool(
        description = "Forget an episode (by id) or a whole conversation, for good: its text leaves every file and index. Only when the user asks to forget something."
    )]
    async fn forget(
        &self,
        Parameters(p): Parameters<ForgetParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let tenant = self.tenant(&context);
        let (said, out) = match (p.episode, p.conversation) {
            (Some(id), None) => {
                let said = format!("Forgot episode {id}.");
                (said, ask(&self.app, move |memory| memory.forget_episode(&tenant, &id)).await?)
            }
            (None, Some(conversation)) => {
                let said = format!("Forgot conversation {conversation}");
                let out = ask(&self.app, move |memory| {
                    memory.forget_conversation(&tenant, &conversation)
                })
                .await?;
                (format!("{said} and its {} episode(s).", out.episodes), out)
            }
            _ => {
                return Err(ApiError::bad_input(
                    "give exactly one of `episode` and `conversation`",
                )
                .into());
            }
        };
        answer(said, &out)
    }
}

// Written out rather than by `#[tool_handler]`, for a span around each call.
impl ServerHandler for MemoryTools {
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let tool = request.name.clone();
        // Over HTTP, under the request that carries the call (over stdio, a trace of its own).
        let request_span = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<crate::traces::RequestSpan>())
            .and_then(|span| span.0.id());
        // OpenTelemetry's MCP server conventions: the method and the tool it calls.
        let span = tracing::info_span!(
            parent: request_span,
            "mcp",
            otel.name = %format_args!("tools/call {tool}"),
            otel.kind = "server",
            otel.status_code = tracing::field::Empty,
            mcp.method.name = "tools/call",
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = %tool,
        );
        let call = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        let result = self.tool_router.call(call).instrument(span.clone()).await;
        if result.as_ref().is_err() {
            span.record("otel.status_code", "error");
        }
        result
    }

    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, McpError> {
        Ok(rmcp::model::ListToolsResult {
            tools: self.tool_router.list_all(),
            meta: None,
            next_cursor: None,
        })
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.tool_router.get(name).cloned()
    }

    fn get_info(&self) -> ServerInfo {
        ServerInfo {
            instructions: Some(
                "epimem is your long-term episodic memory. Call `remember` with each message of the conversation as it happens; call `recall` before answering anything that may depend on earlier conversations (what the user said, decided, liked, or what went wrong before)."
                    .into(),
            ),
            capabilities: ServerCapabilities::builder().enable_tools().build(),
            server_info: Implementation {
                name: "epimem".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                ..Implementation::default()
            },
            ..Default::default()
        }
    }
}

/// The tools over `memory`, working in `tenant`.
pub fn memory_tools(memory: Memory, tenant: &str) -> MemoryTools {
    MemoryTools::new(App {
        memory,
        tenant: Arc::from(tenant),
        access: crate::Access::SingleUser,
        allowed_origins: Arc::default(),
        readiness: Arc::new(crate::readiness::Readiness::ready()),
        metrics: Arc::default(),
    })
}

/// Serves the tools over standard input and output until the client closes them (answering
/// every request it sent before that), reading no message longer than `max_message` bytes.
/// Nothing else may write to standard output meanwhile.
pub async fn serve_stdio(
    memory: Memory,
    tenant: &str,
    max_message: usize,
    index_report: epimem_app::index_progress::IndexReport,
) -> std::io::Result<()> {
    use rmcp::ServiceExt as _;
    // The tenant's search index is opened (built, caught up) while the client starts its
    // session, so that its first recall does not wait for a build; a recall during one waits a
    // little, then is refused as unavailable.
    let stop_opening =
        crate::readiness::spawn_open_index(memory.clone(), tenant.to_owned(), None, index_report);
    let transport =
        crate::stdio::LineTransport::new(tokio::io::stdin(), tokio::io::stdout(), max_message);
    let served = async {
        let running = match memory_tools(memory, tenant).serve(transport).await {
            Ok(running) => running,
            // The client went away before it started a session: nothing was asked, nothing
            // failed (a client checking that the command starts does this).
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(e) => return Err(std::io::Error::other(e)),
        };
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    }
    .await;
    stop_opening.store(true, std::sync::atomic::Ordering::Release);
    served
}
