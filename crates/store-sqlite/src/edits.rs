//! A person's edits of an episode's title and summary: the episode takes the new text, the old
//! is kept as a version, and the change log says the episode was forgotten and closed again,
//! so every search index drops its old words and takes the new ones.

use epimem_core::{Episode, EpisodeId, FsrsState, Scope, Timestamp};
use epimem_store::{
    Edits, EpisodeEdit, EpisodeVersion, Episodes, ExportedReview, ExportedVersion, StoreError,
};
use rusqlite::{Connection, Transaction, params};

use crate::{
    SqliteStore,
    episodes::{SCOPE_FILTER, with_scope},
    map_err,
};

/// The versions of a conversation's episodes, for its export.
pub(crate) fn exported(
    conn: &Connection,
    conversation: i64,
) -> Result<Vec<ExportedVersion>, StoreError> {
    of_conversation(
        conn,
        conversation,
        "SELECT episode_id, version, title, summary, replaced_at FROM episode_versions
         WHERE conversation_id = ?1 ORDER BY episode_id, version",
        |r| Ok(ExportedVersion { episode: EpisodeId(r.get(0)?), version: version_at(r, 1)? }),
    )
}

/// Stores an imported conversation's versions.
pub(crate) fn import(
    tx: &Transaction<'_>,
    conversation: i64,
    versions: &[ExportedVersion],
) -> Result<(), StoreError> {
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO episode_versions (episode_id, conversation_id, version, title, summary,
               replaced_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(map_err)?;
    for v in versions {
        let x = &v.version;
        insert
            .execute(params![
                v.episode.0,
                conversation,
                x.version,
                x.title,
                x.summary,
                x.replaced_at.0
            ])
            .map_err(map_err)?;
    }
    Ok(())
}

/// The reviews of a conversation's episodes, for its export.
pub(crate) fn exported_reviews(
    conn: &Connection,
    conversation: i64,
) -> Result<Vec<ExportedReview>, StoreError> {
    of_conversation(
        conn,
        conversation,
        "SELECT episode_id, stability, difficulty, reviewed_at, due FROM episode_reviews
         WHERE conversation_id = ?1 ORDER BY episode_id, rowid",
        |r| Ok(ExportedReview { episode: EpisodeId(r.get(0)?), state: state_at(r, 1)? }),
    )
}

/// Stores an imported conversation's reviews, in their order.
pub(crate) fn import_reviews(
    tx: &Transaction<'_>,
    conversation: i64,
    reviews: &[ExportedReview],
) -> Result<(), StoreError> {
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO episode_reviews (episode_id, conversation_id, reviewed_at, stability,
               difficulty, due) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(map_err)?;
    for r in reviews {
        let s = &r.state;
        insert
            .execute(params![
                r.episode.0,
                conversation,
                s.last_review.map(Timestamp::millis),
                s.stability,
                s.difficulty,
                s.due.map(Timestamp::millis)
            ])
            .map_err(map_err)?;
    }
    Ok(())
}

/// A version from the columns version, title, summary, replaced_at starting at `i`.
fn version_at(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<EpisodeVersion> {
    Ok(EpisodeVersion {
        version: r.get(i)?,
        title: r.get(i + 1)?,
        summary: r.get(i + 2)?,
        replaced_at: Timestamp(r.get(i + 3)?),
    })
}

/// A memory state from the columns stability, difficulty, reviewed_at, due starting at `i`.
fn state_at(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<FsrsState> {
    Ok(FsrsState {
        stability: r.get(i)?,
        difficulty: r.get(i + 1)?,
        last_review: r.get::<_, Option<i64>>(i + 2)?.map(Timestamp),
        due: r.get::<_, Option<i64>>(i + 3)?.map(Timestamp),
    })
}

/// The rows of `select_from` (columns, then a table aliased and keyed by `episode_id`) that
/// belong to the episode `scope` sees as `id`, in `order`.
fn of_episode<T>(
    conn: &Connection,
    scope: &Scope,
    id: &EpisodeId,
    select_from: &str,
    order: &str,
    read: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>, StoreError> {
    let alias = select_from.rsplit(' ').next().unwrap_or_default();
    conn.prepare_cached(&format!(
        "SELECT {select_from}
         JOIN episodes e ON e.id = {alias}.episode_id
         JOIN conversations c ON c.id = e.conversation_id
         WHERE {SCOPE_FILTER} AND e.id = ?7 ORDER BY {order}"
    ))
    .and_then(|mut s| {
        s.query_map(rusqlite::params_from_iter(with_scope(scope, vec![Box::new(&id.0)])), read)?
            .collect()
    })
    .map_err(map_err)
}

/// The rows `sql` (with the conversation as ?1) reads, for an export.
fn of_conversation<T>(
    conn: &Connection,
    conversation: i64,
    sql: &str,
    read: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>, StoreError> {
    conn.prepare_cached(sql)
        .and_then(|mut s| s.query_map([conversation], read)?.collect())
        .map_err(map_err)
}

impl Edits for SqliteStore {
    fn edit_episode(
        &self,
        scope: &Scope,
        id: &EpisodeId,
        edit: &EpisodeEdit,
    ) -> Result<Option<Episode>, StoreError> {
        // The old text is kept as a version, and the freed bytes are zeroed (secure_delete).
        if !self.forget(
            |tx| {
                edit.check()?;
                let found = crate::forget::find(tx, scope, id, "e.title, e.summary", |r| {
                    Ok((r.get::<_, String>(2)?, r.get::<_, String>(3)?))
                })?;
                let Some((rowid, conversation, (title, summary))) = found else { return Ok(false) };
                let version: u32 = tx
                    .query_row(
                        "SELECT count(*) + 1 FROM episode_versions WHERE episode_id = ?1",
                        [&id.0],
                        |r| r.get(0),
                    )
                    .map_err(map_err)?;
                tx.execute(
        "INSERT INTO episode_versions (episode_id, conversation_id, version, title, summary,
           replaced_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![id.0, conversation, version, title, summary, edit.at.0],
    )
    .map_err(map_err)?;
                tx.execute(
        "UPDATE episodes SET title = coalesce(?2, title), summary = coalesce(?3, summary)
         WHERE rowid = ?1",
        params![rowid, edit.title, edit.summary],
    )
    .map_err(map_err)?;
                crate::changes::forgotten(tx, &scope.tenant, std::slice::from_ref(id))?;
                tx.execute(
                    "INSERT INTO episode_changes (tenant, episode_id) VALUES (?1, ?2)",
                    params![scope.tenant, id.0],
                )
                .map_err(map_err)?;
                Ok(true)
            },
            |&found| found,
        )? {
            return Ok(None);
        }
        Ok(self.episodes_by_id(scope, std::slice::from_ref(id))?.into_iter().next())
    }

    fn episode_versions(
        &self,
        scope: &Scope,
        id: &EpisodeId,
    ) -> Result<Vec<EpisodeVersion>, StoreError> {
        self.read(|conn| {
            of_episode(
                conn,
                scope,
                id,
                "v.version, v.title, v.summary, v.replaced_at FROM episode_versions v",
                "v.version",
                |r| version_at(r, 0),
            )
        })
    }

    fn episode_reviews(&self, scope: &Scope, id: &EpisodeId) -> Result<Vec<FsrsState>, StoreError> {
        self.read(|conn| {
            of_episode(
                conn,
                scope,
                id,
                "r.stability, r.difficulty, r.reviewed_at, r.due FROM episode_reviews r",
                "r.rowid",
                |r| state_at(r, 0),
            )
        })
    }
}
