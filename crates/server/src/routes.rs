//! The `/v1` handlers. Each reads its request, calls [`Memory`] on the blocking pool (SQLite
//! and the models are synchronous) and answers with its wire type or an [`ApiError`].

use axum::{
    Json,
    body::Bytes,
    extract::{
        Extension, Path, Query, State,
        rejection::{BytesRejection, QueryRejection},
    },
    http::StatusCode,
};
use epimem_api::{
    Memory, MemoryError, parse_messages,
    wire::{
        AddedOut, ConversationOut, ConversationsOut, ConversationsQuery, DeletedOut, EpisodeEditIn,
        EpisodeOut, EpisodeVersionsOut, EpisodesOut, EpisodesQuery, FactsOut, FactsQuery,
        FlushedOut, JobsOut, JobsQuery, MessagesOut, MessagesQuery, NextTurnIn, NextTurnOut,
        ProjectMemoryIn, ProjectMemoryOut, RecallIn, RecallOut, StoredMessageOut, TimelineNodeOut,
        TimelineOut, TimelineQuery, VersionQuery,
    },
};

use crate::{
    App,
    auth::Tenant,
    error::{ApiError, ErrorBody},
};

/// Runs `f` on the engine in the blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    app: &App,
    f: impl FnOnce(&Memory) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let memory = app.memory.clone();
    // The blocking pool's thread carries on the request's trace.
    let span = tracing::Span::current();
    tokio::task::spawn_blocking(move || span.in_scope(|| f(&memory)))
        .await
        .map_err(|e| ApiError::internal(format!("the request's worker thread failed: {e}")))?
}

/// Runs `f` on [`Memory`] in the blocking pool.
pub(crate) async fn ask<T: Send + 'static>(
    app: &App,
    f: impl FnOnce(&Memory) -> Result<T, MemoryError> + Send + 'static,
) -> Result<T, ApiError> {
    blocking(app, move |memory| Ok(f(memory)?)).await
}

/// A request body read as JSON into `T` ([`epimem_api::from_json`]).
pub(crate) fn json_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    Ok(epimem_api::from_json(body)?)
}

/// Remember messages: one message object or an array of them.
#[utoipa::path(post, path = "/v1/messages", tag = "messages",
    request_body(content = Vec<epimem_api::wire::MessageIn>, description = "One message, or an array of them"),
    responses((status = 200, body = AddedOut), (status = 400, body = ErrorBody), (status = 413, body = ErrorBody)))]
pub(crate) async fn add_messages(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<AddedOut>, ApiError> {
    let batch = parse_messages(&tenant, &body?)?;
    Ok(Json(ask(&app, move |memory| memory.remember(batch)).await?))
}

/// A conversation: messages, pending ones, episodes, last activity.
#[utoipa::path(get, path = "/v1/conversations/{conversation}", tag = "conversations",
    params(("conversation" = String, Path)),
    responses((status = 200, body = ConversationOut), (status = 404, body = ErrorBody)))]
pub(crate) async fn get_conversation(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    Path(conversation): Path<String>,
) -> Result<Json<ConversationOut>, ApiError> {
    Ok(Json(ask(&app, move |memory| memory.conversation(&tenant, &conversation)).await?))
}

/// The caller's conversations by name, in name order: those starting with `prefix`, a page
/// at a time.
#[utoipa::path(get, path = "/v1/conversations", tag = "conversations", params(ConversationsQuery),
    responses((status = 200, body = ConversationsOut), (status = 400, body = ErrorBody)))]
pub(crate) async fn list_conversations(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    query: Result<Query<ConversationsQuery>, QueryRejection>,
) -> Result<Json<ConversationsOut>, ApiError> {
    let Query(q) = query?;
    Ok(Json(ask(&app, move |memory| memory.conversation_names(&tenant, q)).await?))
}

/// A conversation's messages as it holds them, oldest first: the newest `limit` of those
/// before `before`, each with its metadata and the episode it closed into.
#[utoipa::path(get, path = "/v1/conversations/{conversation}/messages", tag = "conversations",
    params(("conversation" = String, Path), MessagesQuery),
    responses((status = 200, body = MessagesOut), (status = 400, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub(crate) async fn list_messages(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    Path(conversation): Path<String>,
    query: Result<Query<MessagesQuery>, QueryRejection>,
) -> Result<Json<MessagesOut>, ApiError> {
    let Query(q) = query?;
    Ok(Json(ask(&app, move |memory| memory.messages(&tenant, &conversation, q)).await?))
}

/// Take back a conversation's newest message while it is in no episode (an agent undoing its
/// last turn): it is gone from every file, and its id may be sent again. 409 once an episode
/// holds it.
#[utoipa::path(delete, path = "/v1/conversations/{conversation}/messages/newest",
    tag = "conversations", params(("conversation" = String, Path)),
    responses((status = 200, body = StoredMessageOut), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
pub(crate) async fn take_back_message(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    Path(conversation): Path<String>,
) -> Result<Json<StoredMessageOut>, ApiError> {
    Ok(Json(ask(&app, move |memory| memory.take_back(&tenant, &conversation)).await?))
}

/// Close everything pending in a conversation into episodes now (end of a session).
#[utoipa::path(post, path = "/v1/conversations/{conversation}/flush", tag = "conversations",
    params(("conversation" = String, Path)),
    responses((status = 200, body = FlushedOut), (status = 404, body = ErrorBody)))]
pub(crate) async fn flush_conversation(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    Path(conversation): Path<String>,
) -> Result<Json<FlushedOut>, ApiError> {
    Ok(Json(ask(&app, move |memory| memory.flush(&tenant, &conversation)).await?))
}

/// Close everything pending in every conversation of the caller's tenant into episodes now
/// (the end of an import).
#[utoipa::path(post, path = "/v1/flush", tag = "conversations",
    responses((status = 200, body = FlushedOut)))]
pub(crate) async fn flush_tenant(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
) -> Result<Json<FlushedOut>, ApiError> {
    Ok(Json(ask(&app, move |memory| memory.flush_tenant(&tenant)).await?))
}

/// Forget a conversation: its messages, episodes, vectors and pending work, from every file.
#[utoipa::path(delete, path = "/v1/conversations/{conversation}", tag = "conversations",
    params(("conversation" = String, Path)),
    responses((status = 200, body = DeletedOut), (status = 404, body = ErrorBody)))]
pub(crate) async fn delete_conversation(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    Path(conversation): Path<String>,
) -> Result<Json<DeletedOut>, ApiError> {
    Ok(Json(ask(&app, move |memory| memory.forget_conversation(&tenant, &conversation)).await?))
}

/// Forget everything one person said: every conversation whose messages carry this `user`,
/// from every file and index. The tenant's timeline is told again without them.
#[utoipa::path(delete, path = "/v1/users/{user}", tag = "conversations",
    params(("user" = String, Path)),
    responses((status = 200, body = DeletedOut), (status = 400, body = ErrorBody)))]
pub(crate) async fn delete_user(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    Path(user): Path<String>,
) -> Result<Json<DeletedOut>, ApiError> {
    Ok(Json(ask(&app, move |memory| memory.forget_user(&tenant, &user)).await?))
}

/// Forget everything the caller's tenant remembers: every conversation, from every file and
/// index. Its API keys stay.
#[utoipa::path(delete, path = "/v1/tenant", tag = "conversations",
    responses((status = 200, body = DeletedOut)))]
pub(crate) async fn delete_tenant(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
) -> Result<Json<DeletedOut>, ApiError> {
    Ok(Json(ask(&app, move |memory| memory.forget_tenant(&tenant)).await?))
}

/// The caller's jobs not yet done: queued, running, waiting to be retried, or parked after
/// failing too often (with their errors).
#[utoipa::path(get, path = "/v1/jobs", tag = "jobs", params(JobsQuery),
    responses((status = 200, body = JobsOut), (status = 400, body = ErrorBody)))]
pub(crate) async fn list_jobs(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    query: Result<Query<JobsQuery>, QueryRejection>,
) -> Result<Json<JobsOut>, ApiError> {
    let Query(q) = query?;
    Ok(Json(ask(&app, move |memory| memory.jobs(&tenant, q)).await?))
}

/// Episodes, newest first (by start), a page at a time.
#[utoipa::path(get, path = "/v1/episodes", tag = "episodes", params(EpisodesQuery),
    responses((status = 200, body = EpisodesOut), (status = 400, body = ErrorBody)))]
pub(crate) async fn list_episodes(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    query: Result<Query<EpisodesQuery>, QueryRejection>,
) -> Result<Json<EpisodesOut>, ApiError> {
    let Query(q) = query?;
    Ok(Json(ask(&app, move |memory| memory.episodes(&tenant, q)).await?))
}

/// One episode with its messages (and the overlap carried in from the one before), its
/// memory strength and what it said before each edit.
#[utoipa::path(get, path = "/v1/episodes/{id}", tag = "episodes", params(("id" = String, Path)),
    responses((status = 200, body = EpisodeOut), (status = 404, body = ErrorBody)))]
pub(crate) async fn get_episode(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
) -> Result<Json<EpisodeOut>, ApiError> {
    Ok(Json(ask(&app, move |memory| memory.episode(&tenant, &id)).await?))
}

/// Forget an episode: it leaves every index, and its messages lose their text.
#[utoipa::path(delete, path = "/v1/episodes/{id}", tag = "episodes", params(("id" = String, Path)),
    responses((status = 200, body = DeletedOut), (status = 404, body = ErrorBody)))]
pub(crate) async fn delete_episode(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
) -> Result<Json<DeletedOut>, ApiError> {
    Ok(Json(ask(&app, move |memory| memory.forget_episode(&tenant, &id)).await?))
}

/// Give an episode a new title or summary; the old is kept as a version.
#[utoipa::path(patch, path = "/v1/episodes/{id}", tag = "episodes", params(("id" = String, Path)),
    request_body = EpisodeEditIn,
    responses((status = 200, body = EpisodeOut), (status = 400, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub(crate) async fn edit_episode(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<EpisodeOut>, ApiError> {
    let edit: EpisodeEditIn = json_body(&body?)?;
    Ok(Json(ask(&app, move |memory| memory.edit_episode(&tenant, &id, edit)).await?))
}

/// What an episode's title and summary said before each edit.
#[utoipa::path(get, path = "/v1/episodes/{id}/versions", tag = "episodes",
    params(("id" = String, Path)),
    responses((status = 200, body = EpisodeVersionsOut), (status = 404, body = ErrorBody)))]
pub(crate) async fn episode_versions(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
) -> Result<Json<EpisodeVersionsOut>, ApiError> {
    Ok(Json(ask(&app, move |memory| memory.episode_versions(&tenant, &id)).await?))
}

/// The episodes that best answer a query, or a context block of them within a token budget.
#[utoipa::path(post, path = "/v1/recall", tag = "recall", request_body = RecallIn,
    responses((status = 200, body = RecallOut), (status = 400, body = ErrorBody)))]
pub(crate) async fn recall(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<RecallOut>, ApiError> {
    let request: RecallIn = json_body(&body?)?;
    Ok(Json(ask(&app, move |memory| memory.recall(&tenant, request)).await?))
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
    Ok(Json(ask(&app, move |memory| memory.next_turn(&tenant, &conversation, request)).await?))
}

/// What a coding agent should know of a project: given a prompt, the earlier work that bears
/// on it; else its recent work, recurring failures and older sessions.
#[utoipa::path(post, path = "/v1/project-memory", tag = "agents", request_body = ProjectMemoryIn,
    responses((status = 200, body = ProjectMemoryOut), (status = 400, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "the caller's tenant is not the request's")))]
pub(crate) async fn project_memory(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<ProjectMemoryOut>, ApiError> {
    let request: ProjectMemoryIn = json_body(&body?)?;
    let context = ask(&app, move |memory| memory.project_memory(&tenant, &request)).await?;
    Ok(Json(ProjectMemoryOut { context }))
}

/// Facts distilled from the caller's episodes, newest first (by when they became true).
#[utoipa::path(get, path = "/v1/facts", tag = "facts", params(FactsQuery),
    responses((status = 200, body = FactsOut), (status = 400, body = ErrorBody)))]
pub(crate) async fn list_facts(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    query: Result<Query<FactsQuery>, QueryRejection>,
) -> Result<Json<FactsOut>, ApiError> {
    let Query(q) = query?;
    Ok(Json(ask(&app, move |memory| memory.facts(&tenant, q)).await?))
}

/// The top of the caller's timeline: the periods rolled up whose parent is not (past years,
/// then the months of the year still running, …), oldest first.
#[utoipa::path(get, path = "/v1/timeline", tag = "timeline", params(TimelineQuery),
    responses((status = 200, body = TimelineOut), (status = 400, body = ErrorBody)))]
pub(crate) async fn timeline_top(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    query: Result<Query<TimelineQuery>, QueryRejection>,
) -> Result<Json<TimelineOut>, ApiError> {
    let Query(q) = query?;
    Ok(Json(ask(&app, move |memory| memory.timeline(&tenant, q)).await?))
}

/// One node of the caller's timeline with its children's ids.
#[utoipa::path(get, path = "/v1/timeline/{node}", tag = "timeline", params(VersionQuery),
    responses((status = 200, body = TimelineNodeOut), (status = 400, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub(crate) async fn timeline_node(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    Path(node): Path<String>,
    query: Result<Query<VersionQuery>, QueryRejection>,
) -> Result<Json<TimelineNodeOut>, ApiError> {
    let Query(q) = query?;
    Ok(Json(ask(&app, move |memory| memory.timeline_node(&tenant, &node, q)).await?))
}

/// Counts of what the caller's tenant holds, and what its language model calls cost.
#[utoipa::path(get, path = "/v1/stats", tag = "admin",
    responses((status = 200, body = epimem_api::wire::StatsOut)))]
pub(crate) async fn get_stats(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
) -> Result<Json<epimem_api::wire::StatsOut>, ApiError> {
    Ok(Json(ask(&app, move |memory| memory.stats(&tenant)).await?))
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "health", responses((status = 200, body = String)))]
pub(crate) async fn healthz() -> &'static str {
    "ok"
}

/// The search index is open and caught up with the store, and writes go through: recall
/// answers at full speed and messages are stored. Else 503 `unavailable`, saying why.
#[utoipa::path(get, path = "/readyz", tag = "health",
    responses((status = 200, body = String), (status = 503, body = ErrorBody)))]
pub(crate) async fn readyz(State(app): State<App>) -> Result<&'static str, ApiError> {
    let unavailable = |why| ApiError::of_status(StatusCode::SERVICE_UNAVAILABLE, why);
    if let Some(why) = app.memory.out_of_space() {
        return Err(unavailable(format!(
            "writes fail for lack of space ({why}); what is stored stays, and new messages are \
             refused until space is freed"
        )));
    }
    app.readiness.check().map_err(unavailable)?;
    Ok("ready")
}
