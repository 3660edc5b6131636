//! The `/v1` handlers. Each reads its request, runs the engine on the blocking pool (SQLite
//! and the models are synchronous) and answers with a wire type or an [`ApiError`].

use std::collections::BTreeSet;

use axum::{
    Json,
    body::Bytes,
    extract::{
        Extension, Path, Query, State,
        rejection::{BytesRejection, QueryRejection},
    },
    http::StatusCode,
};
use epimem_core::RelevanceConfig;
use epimem_core::{ConversationKey, EpisodeId, Scope, Timestamp};
use epimem_engine::{Engine, RecallQuery};
use epimem_store::EpisodeCursor;

use crate::{
    App,
    auth::Tenant,
    error::{ApiError, ErrorBody},
    facts::FactOut,
    messages::parse_messages,
    wire::{
        AddedMessageOut, AddedOut, AddedStatus, ConversationOut, DeletedOut, EpisodeOut,
        EpisodesOut, EpisodesQuery, FlushedOut, JobOut, JobsOut, JobsQuery, MemoryOut, RecallIn,
        RecallOut, SessionSummaryOut, decode_cursor, encode_cursor,
    },
};

const DEFAULT_PAGE: usize = 50;
const MAX_LIMIT: usize = 1000;

/// Runs `f` on the engine in the blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    app: &App,
    f: impl FnOnce(&Engine) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let engine = app.engine.clone();
    tokio::task::spawn_blocking(move || f(&engine))
        .await
        .map_err(|e| ApiError::internal(format!("the request's worker thread failed: {e}")))?
}

/// Remember messages: one message object or an array of them.
#[utoipa::path(post, path = "/v1/messages", tag = "messages",
    request_body(content = Vec<crate::wire::MessageIn>, description = "One message, or an array of them"),
    responses((status = 200, body = AddedOut), (status = 400, body = ErrorBody), (status = 413, body = ErrorBody)))]
pub(crate) async fn add_messages(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<AddedOut>, ApiError> {
    let mut batch = parse_messages(&tenant, &body?)?;
    let added = blocking(&app, move |engine| {
        let messages = std::mem::take(&mut batch.messages);
        let touched: BTreeSet<ConversationKey> =
            messages.iter().map(|m| m.conversation.clone()).collect();
        let sent: Vec<(String, Option<String>)> = messages
            .iter()
            .map(|m| {
                let id = m.key.strip_prefix("id:").map(str::to_owned);
                (m.conversation.conversation.clone(), id)
            })
            .collect();
        let report = engine.enqueue(messages).map_err(|e| batch.refusal(e))?;
        let placed = report.messages.iter().zip(sent).map(|(m, (conversation, id))| {
            AddedMessageOut { conversation, id, seq: m.seq, new: m.new, status: AddedStatus::of(m) }
        });
        let conversations = touched
            .into_iter()
            .map(|key| conversation_state(engine, &key, false))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(AddedOut {
            inserted: report.inserted,
            duplicates: report.duplicates,
            conflicts: report.conflicts,
            messages: placed.collect(),
            conversations,
        })
    })
    .await?;
    Ok(Json(added))
}

/// A conversation's state; 404 if it has no message.
fn conversation_state(
    engine: &Engine,
    key: &ConversationKey,
    count_episodes: bool,
) -> Result<ConversationOut, ApiError> {
    let queue = engine
        .store()
        .queue(key)
        .map_err(epimem_engine::EngineError::from)?
        .ok_or_else(|| ApiError::not_found(format!("conversation {:?}", key.conversation)))?;
    let (episodes, summary) = if count_episodes {
        let scope = Scope::tenant(&key.tenant).with_conversation(Some(key.conversation.clone()));
        let all = engine.episodes(&scope, None)?;
        let summary = (!all.is_empty()).then(|| {
            let s = epimem_core::session_summary(&all, engine.config().timeline.bullets);
            SessionSummaryOut {
                title: s.title,
                bullets: s.bullets,
                keywords: s.keywords,
                messages: s.messages,
            }
        });
        (Some(all.len() as u64), summary)
    } else {
        (None, None)
    };
    let jobs = if count_episodes {
        let jobs = engine.jobs(&key.tenant, Some(&key.conversation), MAX_LIMIT)?;
        Some(jobs.into_iter().map(JobOut::from).collect())
    } else {
        None
    };
    Ok(ConversationOut {
        conversation: key.conversation.clone(),
        last_seq: queue.last_seq,
        pending: queue.pending(),
        last_activity: queue.newest.map(Timestamp::to_rfc3339),
        episodes,
        jobs,
        summary,
    })
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
    let key = ConversationKey::new(&*tenant, conversation);
    Ok(Json(blocking(&app, move |engine| conversation_state(engine, &key, true)).await?))
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
    let key = ConversationKey::new(&*tenant, conversation);
    let report = blocking(&app, move |engine| {
        conversation_state(engine, &key, false)?;
        let scope = Scope::tenant(&key.tenant).with_conversation(Some(key.conversation));
        Ok(engine.flush(&scope)?)
    })
    .await?;
    Ok(Json(report.into()))
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
    let key = ConversationKey::new(&*tenant, conversation);
    let episodes = blocking(&app, move |engine| Ok(engine.delete_conversation(&key)?)).await?;
    Ok(Json(DeletedOut { episodes: episodes as u64 }))
}

/// Forget everything the caller's tenant remembers: every conversation, from every file and
/// index. Its API keys stay.
#[utoipa::path(delete, path = "/v1/tenant", tag = "conversations",
    responses((status = 200, body = DeletedOut)))]
pub(crate) async fn delete_tenant(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
) -> Result<Json<DeletedOut>, ApiError> {
    let episodes = blocking(&app, move |engine| Ok(engine.delete_tenant(&tenant)?)).await?;
    Ok(Json(DeletedOut { episodes: episodes as u64 }))
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
    let limit = limit(q.limit, 100)?;
    let jobs =
        blocking(&app, move |engine| Ok(engine.jobs(&tenant, q.conversation.as_deref(), limit)?))
            .await?;
    Ok(Json(JobsOut { jobs: jobs.into_iter().map(JobOut::from).collect() }))
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
    let limit = limit(q.limit, DEFAULT_PAGE)?;
    let after = match q.cursor.as_deref() {
        None => None,
        Some(c) => Some(decode_cursor(c).ok_or_else(|| {
            ApiError::bad_input(format!("cursor: {c:?} is not a cursor this server gave"))
        })?),
    };
    let scope = Scope {
        since: time(q.from.as_deref(), "from")?,
        until: time(q.to.as_deref(), "to")?,
        ..Scope::tenant(&*tenant).with_conversation(q.conversation)
    };
    let page = blocking(&app, move |engine| {
        // One more than the page says whether there is a next one.
        let mut episodes = engine.episodes_after(&scope, after.as_ref(), limit + 1)?;
        let more = episodes.len() > limit;
        episodes.truncate(limit);
        Ok(EpisodesOut {
            next_cursor: episodes
                .last()
                .filter(|_| more)
                .map(|e| encode_cursor(&EpisodeCursor::after(e))),
            episodes: episodes.iter().map(EpisodeOut::from).collect(),
        })
    })
    .await?;
    Ok(Json(page))
}

/// One episode with its messages (and the overlap carried in from the one before).
#[utoipa::path(get, path = "/v1/episodes/{id}", tag = "episodes", params(("id" = String, Path)),
    responses((status = 200, body = EpisodeOut), (status = 404, body = ErrorBody)))]
pub(crate) async fn get_episode(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
) -> Result<Json<EpisodeOut>, ApiError> {
    let scope = Scope::tenant(&*tenant);
    let out = blocking(&app, move |engine| {
        let detail = engine.episode(&scope, &EpisodeId(id))?;
        let state = &detail.episode.fsrs;
        let (now, curve) = engine.memory_curve(state, CURVE_POINTS);
        let reviews = engine.episode_reviews(&scope, &detail.episode.id)?;
        Ok(EpisodeOut {
            memory: Some(MemoryOut::new(state, now, &curve, &reviews)),
            ..EpisodeOut::from(&detail)
        })
    })
    .await?;
    Ok(Json(out))
}

/// Points of the forgetting curve an episode is shown with.
const CURVE_POINTS: usize = 24;

/// Forget an episode: it leaves every index, and its messages lose their text.
#[utoipa::path(delete, path = "/v1/episodes/{id}", tag = "episodes", params(("id" = String, Path)),
    responses((status = 200, body = DeletedOut), (status = 404, body = ErrorBody)))]
pub(crate) async fn delete_episode(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
) -> Result<Json<DeletedOut>, ApiError> {
    let scope = Scope::tenant(&*tenant);
    blocking(&app, move |engine| Ok(engine.delete_episode(&scope, &EpisodeId(id))?)).await?;
    Ok(Json(DeletedOut { episodes: 1 }))
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
    let out = blocking(&app, move |engine| recall_with(engine, &tenant, request)).await?;
    Ok(Json(out))
}

/// A request body read as JSON into `T`; what was wrong is said with where (`title: invalid
/// type: …`).
pub(crate) fn json_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(body)).map_err(|e| {
        let path = e.path().to_string();
        let place = if path == "." { String::new() } else { format!("{path}: ") };
        ApiError::bad_input(format!("{place}{}", e.into_inner()))
    })
}

/// What `POST /v1/recall` and the MCP `recall` tool answer: hits, or a context block within
/// the budget.
pub(crate) fn recall_with(
    engine: &Engine,
    tenant: &str,
    request: RecallIn,
) -> Result<RecallOut, ApiError> {
    if request.query.trim().is_empty() {
        return Err(ApiError::bad_input("query: must not be empty"));
    }
    if request.budget == Some(0) {
        return Err(ApiError::bad_input("budget: must be at least 1 token"));
    }
    if request.episodes && request.budget.is_none() {
        return Err(ApiError::bad_input("episodes: needs a budget"));
    }
    let mut scope = Scope {
        since: time(request.from.as_deref(), "from")?,
        until: time(request.to.as_deref(), "to")?,
        agent: request.agent.clone(),
        ..Scope::tenant(tenant).with_conversation(request.conversation.clone())
    };
    if let Some(within) = &request.within {
        if scope.since.is_some() || scope.until.is_some() {
            return Err(ApiError::bad_input("within: give a period or from/to, not both"));
        }
        scope = engine.scope_within(scope, within)?;
    }
    if (request.fill || request.min_share.is_some()) && request.budget.is_none() {
        return Err(ApiError::bad_input("fill, min_share: need a budget"));
    }
    let relevance = match (request.fill, request.min_share) {
        (true, _) => Some(RelevanceConfig::FILL),
        (false, Some(share)) if (0.0..=1.0).contains(&share) => {
            Some(RelevanceConfig { min_share: share, ..engine.config().relevance })
        }
        (false, Some(share)) => {
            return Err(ApiError::bad_input(format!("min_share: {share} is not from 0 to 1")));
        }
        (false, None) => None,
    };
    let query = RecallQuery {
        relevance,
        ..RecallQuery::new(scope, request.query, limit(request.limit, 5)?)
    };
    let mut out: RecallOut = match request.budget {
        Some(budget) if request.episodes => engine.recall_episode_context(&query, budget)?.into(),
        Some(budget) => engine.recall_context(&query, budget)?.into(),
        None => RecallOut {
            hits: engine.recall(&query)?.iter().map(EpisodeOut::from).collect(),
            context: None,
            tokens: None,
            nothing_relevant: None,
            turns: None,
            facts: Vec::new(),
        },
    };
    out.facts = engine.recall_facts(&query)?.iter().map(FactOut::from).collect();
    // A fact that bears on the query is something remembered.
    if !out.facts.is_empty() {
        out.nothing_relevant = out.nothing_relevant.map(|_| false);
    }
    Ok(out)
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
    if let Some(why) = app.engine.store().out_of_space() {
        return Err(unavailable(format!(
            "writes fail for lack of space ({why}); what is stored stays, and new messages are \
             refused until space is freed"
        )));
    }
    app.readiness.check().map_err(unavailable)?;
    Ok("ready")
}

pub(crate) fn limit(asked: Option<usize>, default: usize) -> Result<usize, ApiError> {
    match asked.unwrap_or(default) {
        0 => Err(ApiError::bad_input("limit: must be at least 1")),
        n if n > MAX_LIMIT => Err(ApiError::bad_input(format!("limit: at most {MAX_LIMIT}"))),
        n => Ok(n),
    }
}

fn time(value: Option<&str>, field: &str) -> Result<Option<Timestamp>, ApiError> {
    value
        .map(Timestamp::parse_rfc3339)
        .transpose()
        .map_err(|e| ApiError::bad_input(format!("{field}: {e}")))
}
