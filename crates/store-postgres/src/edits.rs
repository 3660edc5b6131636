//! A person's edits of an episode's title and summary, as on SQLite: the episode takes the new
//! text, the old is kept as a version, and the change log says the episode was forgotten and
//! closed again, so every search index drops its old words and takes the new ones.

use epimem_core::{Episode, EpisodeId, FsrsState, Scope, Timestamp};
use epimem_store::{
    Edits, EpisodeEdit, EpisodeVersion, Episodes, ExportedReview, ExportedVersion, StoreError,
};

use crate::{
    Failure, PostgresStore, Tx, changes,
    episodes::{SCOPE_FILTER, scope_params},
};

/// The versions of a conversation's episodes, for its export.
pub(crate) fn exported(
    tx: &mut Tx<'_>,
    conversation: i64,
) -> Result<Vec<ExportedVersion>, Failure> {
    let rows = tx.query(
        "SELECT episode_id, version, title, summary, replaced_at FROM episode_versions
         WHERE conversation_id = $1 ORDER BY episode_id, version",
        &[&conversation],
    )?;
    Ok(rows
        .iter()
        .map(|r| ExportedVersion { episode: EpisodeId(r.get(0)), version: version_at(r, 1) })
        .collect())
}

/// Stores an imported conversation's versions.
pub(crate) fn import(
    tx: &mut Tx<'_>,
    conversation: i64,
    versions: &[ExportedVersion],
) -> Result<(), Failure> {
    for v in versions {
        let x = &v.version;
        tx.execute(
            "INSERT INTO episode_versions (episode_id, conversation_id, version, title, summary,
               replaced_at) VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &v.episode.0,
                &conversation,
                &i64::from(x.version),
                &x.title,
                &x.summary,
                &x.replaced_at.0,
            ],
        )?;
    }
    Ok(())
}

/// The reviews of a conversation's episodes, for its export.
pub(crate) fn exported_reviews(
    tx: &mut Tx<'_>,
    conversation: i64,
) -> Result<Vec<ExportedReview>, Failure> {
    let rows = tx.query(
        "SELECT episode_id, stability, difficulty, reviewed_at, due FROM episode_reviews
         WHERE conversation_id = $1 ORDER BY episode_id, id",
        &[&conversation],
    )?;
    Ok(rows
        .iter()
        .map(|r| ExportedReview { episode: EpisodeId(r.get(0)), state: state_at(r, 1) })
        .collect())
}

/// Stores an imported conversation's reviews, in their order.
pub(crate) fn import_reviews(
    tx: &mut Tx<'_>,
    conversation: i64,
    reviews: &[ExportedReview],
) -> Result<(), Failure> {
    for r in reviews {
        let s = &r.state;
        tx.execute(
            "INSERT INTO episode_reviews (episode_id, conversation_id, reviewed_at, stability,
               difficulty, due) VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &r.episode.0,
                &conversation,
                &s.last_review.map(Timestamp::millis),
                &s.stability,
                &s.difficulty,
                &s.due.map(Timestamp::millis),
            ],
        )?;
    }
    Ok(())
}

/// A version from the columns version, title, summary, replaced_at starting at `i`.
fn version_at(r: &postgres::Row, i: usize) -> EpisodeVersion {
    EpisodeVersion {
        version: r.get::<_, i64>(i).max(0) as u32,
        title: r.get(i + 1),
        summary: r.get(i + 2),
        replaced_at: Timestamp(r.get(i + 3)),
    }
}

/// A memory state from the columns stability, difficulty, reviewed_at, due starting at `i`.
fn state_at(r: &postgres::Row, i: usize) -> FsrsState {
    FsrsState {
        stability: r.get(i),
        difficulty: r.get(i + 1),
        last_review: r.get::<_, Option<i64>>(i + 2).map(Timestamp),
        due: r.get::<_, Option<i64>>(i + 3).map(Timestamp),
    }
}

/// The rows of `select_from` (columns, then a table aliased and keyed by `episode_id`) that
/// belong to the episode `scope` sees as `id`, in `order`.
fn of_episode(
    tx: &mut Tx<'_>,
    scope: &Scope,
    id: &EpisodeId,
    select_from: &str,
    order: &str,
) -> Result<Vec<postgres::Row>, Failure> {
    let alias = select_from.rsplit(' ').next().unwrap_or_default();
    let params = scope_params(scope);
    tx.query(
        &format!(
            "SELECT {select_from}
             JOIN episodes e ON e.id = {alias}.episode_id
             JOIN conversations c ON c.id = e.conversation_id
             WHERE {SCOPE_FILTER} AND e.id = $7 ORDER BY {order}"
        ),
        &params.with(&[&id.0]),
    )
}

impl Edits for PostgresStore {
    fn edit_episode(
        &self,
        scope: &Scope,
        id: &EpisodeId,
        edit: &EpisodeEdit,
    ) -> Result<Option<Episode>, StoreError> {
        if !self.write(|tx| {
            edit.check()?;
            let params = scope_params(scope);
            let found = tx.query_opt(
                &format!(
                    "SELECT e.serial, e.conversation_id, e.title, e.summary
                     FROM episodes e JOIN conversations c ON c.id = e.conversation_id
                     WHERE {SCOPE_FILTER} AND e.id = $7 FOR UPDATE OF e"
                ),
                &params.with(&[&id.0]),
            )?;
            let Some(row) = found else { return Ok(false) };
            let (serial, conversation): (i64, i64) = (row.get(0), row.get(1));
            let (title, summary): (String, String) = (row.get(2), row.get(3));
            tx.execute(
        "INSERT INTO episode_versions (episode_id, conversation_id, version, title, summary,
           replaced_at)
         SELECT $1, $2, count(*) + 1, $3, $4, $5 FROM episode_versions WHERE episode_id = $1",
        &[&id.0, &conversation, &title, &summary, &edit.at.0],
    )?;
            tx.execute(
                "UPDATE episodes SET title = coalesce($2, title), summary = coalesce($3, summary)
                 WHERE serial = $1",
                &[&serial, &edit.title, &edit.summary],
            )?;
            let ids = std::slice::from_ref(id);
            changes::append(tx, &scope.tenant, ids, changes::Change::Forgotten)?;
            changes::append(tx, &scope.tenant, ids, changes::Change::Closed)?;
            Ok(true)
        })? {
            return Ok(None);
        }
        Ok(self.episodes_by_id(scope, std::slice::from_ref(id))?.into_iter().next())
    }

    fn episode_versions(
        &self,
        scope: &Scope,
        id: &EpisodeId,
    ) -> Result<Vec<EpisodeVersion>, StoreError> {
        self.read(|tx| {
            let select = "v.version, v.title, v.summary, v.replaced_at FROM episode_versions v";
            let rows = of_episode(tx, scope, id, select, "v.version")?;
            Ok(rows.iter().map(|r| version_at(r, 0)).collect())
        })
    }

    fn episode_reviews(&self, scope: &Scope, id: &EpisodeId) -> Result<Vec<FsrsState>, StoreError> {
        self.read(|tx| {
            let select = "r.stability, r.difficulty, r.reviewed_at, r.due FROM episode_reviews r";
            let rows = of_episode(tx, scope, id, select, "r.id")?;
            Ok(rows.iter().map(|r| state_at(r, 0)).collect())
        })
    }
}
