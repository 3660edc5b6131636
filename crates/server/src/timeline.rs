//! The timeline over HTTP: `GET /v1/timeline` (its top) and `GET /v1/timeline/{node}`.

use axum::{
    Json,
    extract::{Extension, Path, Query, State, rejection::QueryRejection},
};
use epimem_core::{TimelineNode, TocNode};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::{
    App,
    auth::Tenant,
    error::{ApiError, ErrorBody},
    routes::blocking,
};

/// A node of the timeline: a year, month, ISO week or day summed up from its children.
#[derive(Debug, Serialize, ToSchema)]
pub struct TimelineNodeOut {
    /// `toc:year:2026`, `toc:month:2026:03`, `toc:week:2026:W09` or `toc:day:2026-03-01`.
    pub id: String,
    /// `year`, `month`, `week` or `day`.
    pub level: String,
    /// 1 for the first rollup; a late episode adds a version (older ones stay readable).
    pub version: u32,
    /// The span it covers, `start` included, `end` not (RFC 3339).
    pub start: String,
    pub end: String,
    pub title: String,
    pub bullets: Vec<String>,
    pub keywords: Vec<String>,
    pub episodes: u64,
    pub messages: u64,
    /// Its children in time order: node ids, or a day's episode ids.
    pub children: Vec<String>,
}

impl From<&TimelineNode> for TimelineNodeOut {
    fn from(n: &TimelineNode) -> Self {
        let (start, end) = n.id.span();
        Self {
            id: n.id.to_string(),
            level: format!("{:?}", n.id.level()).to_lowercase(),
            version: n.version,
            start: start.to_rfc3339(),
            end: end.to_rfc3339(),
            title: n.summary.title.clone(),
            bullets: n.summary.bullets.clone(),
            keywords: n.summary.keywords.clone(),
            episodes: n.summary.episodes,
            messages: n.summary.messages,
            children: n.children.clone(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TimelineOut {
    pub nodes: Vec<TimelineNodeOut>,
}

/// `GET /v1/timeline/{node}`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct VersionQuery {
    /// That version instead of the newest.
    version: Option<u32>,
}

/// The top of the caller's timeline: the periods rolled up whose parent is not (past years,
/// then the months of the year still running, …), oldest first.
#[utoipa::path(get, path = "/v1/timeline", tag = "timeline",
    responses((status = 200, body = TimelineOut)))]
pub(crate) async fn timeline_top(
    State(app): State<App>,
    Extension(tenant): Extension<Tenant>,
) -> Result<Json<TimelineOut>, ApiError> {
    let nodes = blocking(&app, move |engine| Ok(engine.timeline_top(&tenant)?)).await?;
    Ok(Json(TimelineOut { nodes: nodes.iter().map(TimelineNodeOut::from).collect() }))
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
    let id: TocNode = node.parse().map_err(|e| ApiError::bad_input(format!("node: {e}")))?;
    let found =
        blocking(&app, move |engine| Ok(engine.timeline_node(&tenant, &id, q.version)?)).await?;
    let found = found.ok_or_else(|| ApiError::not_found(format!("timeline node {node}")))?;
    Ok(Json(TimelineNodeOut::from(&found)))
}
