//! The timeline: its top and one node.

use epimem_core::TimelineNode;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

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
    /// People, places and named things of the period, those in most of it first.
    pub names: Vec<String>,
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
            names: n.summary.names.clone(),
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
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct VersionQuery {
    /// That version instead of the newest.
    pub version: Option<u32>,
    /// The node of this person's timeline instead: told on the spot from their episodes,
    /// without a model (always version 1).
    pub user: Option<String>,
}

/// `GET /v1/timeline`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TimelineQuery {
    /// This person's timeline instead of the tenant's: told on the spot from their episodes,
    /// without a model.
    pub user: Option<String>,
}
