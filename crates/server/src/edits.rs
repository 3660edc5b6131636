//! A person's corrections over HTTP: `PATCH /v1/episodes/{id}` gives an episode a new title or
//! summary (the old is kept as a version, and the search indexes take the new words), and
//! `GET /v1/episodes/{id}/versions` lists what it said before.

use axum::{
    Json,
    body::Bytes,
    extract::{Extension, Path, State, rejection::BytesRejection},
};
use epimem_core::{EpisodeId, Scope};
use epimem_store::EpisodeVersion;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{
    App,
    auth::Tenant,
    error::{ApiError, ErrorBody},
    routes::{blocking, json_body},
    wire::EpisodeOut,
};

/// What to change; what is left out stays.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EpisodeEditIn {
    /// The new title (not empty).
    pub(crate) title: Option<String>,
    /// The new summary.
    pub(crate) summary: Option<String>,
}

/// What an episode said before an edit.
#[derive(Debug, Serialize, ToSchema)]
pub struct EpisodeVersionOut {
    /// 1 for the text it was told with, one more per edit.
    pub version: u32,
    pub title: String,
    pub summary: String,
    /// When an edit replaced it (RFC 3339).
    pub replaced_at: String,
}

impl From<&EpisodeVersion> for EpisodeVersionOut {
    fn from(v: &EpisodeVersion) -> Self {
        Self {
            version: v.version,
            title: v.title.clone(),
            summary: v.summary.clone(),
            replaced_at: v.replaced_at.to_rfc3339(),
        }
    }
}

/// `GET /v1/episodes/{id}/versions`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct EpisodeVersionsOut {
    /// Oldest first; empty if it was never edited.
    pub(crate) versions: Vec<EpisodeVersionOut>,
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
    let scope = Scope::tenant(&*tenant);
    let edited = blocking(&app, move |engine| {
        Ok(engine.edit_episode(&scope, &EpisodeId(id), edit.title, edit.summary)?)
    })
    .await?;
    Ok(Json(EpisodeOut::from(&edited)))
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
    let scope = Scope::tenant(&*tenant);
    let versions = blocking(&app, move |engine| {
        let id = EpisodeId(id);
        // An episode this tenant cannot see is not found, rather than never edited.
        engine.episode(&scope, &id)?;
        Ok(engine.episode_versions(&scope, &id)?)
    })
    .await?;
    Ok(Json(EpisodeVersionsOut {
        versions: versions.iter().map(EpisodeVersionOut::from).collect(),
    }))
}
