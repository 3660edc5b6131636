//! Forgetting: an episode or a whole conversation leaves every table, and its text leaves the
//! files. `secure_delete` (set when the database opens) zeroes what a delete frees; a
//! checkpoint afterwards copies the zeroed pages over the old ones and truncates the
//! write-ahead log, which still holds the text until then.

use epimem_core::{ConversationKey, EpisodeId, Scope};
use epimem_store::{Forgetting, StoreError};
use rusqlite::{Connection, OptionalExtension, Transaction};

use crate::{
    SqliteStore,
    episodes::{SCOPE_FILTER, with_scope},
    map_err,
};

/// The episode `scope` sees as `id`: its row id, its conversation's, and what `read` takes of
/// `columns` (which come after those two).
pub(crate) fn find<T>(
    tx: &Transaction<'_>,
    scope: &Scope,
    id: &EpisodeId,
    columns: &str,
    read: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<Option<(i64, i64, T)>, StoreError> {
    tx.prepare_cached(&format!(
        "SELECT e.rowid, e.conversation_id, {columns}
         FROM episodes e JOIN conversations c ON c.id = e.conversation_id
         WHERE {SCOPE_FILTER} AND e.id = ?7"
    ))
    .and_then(|mut s| {
        s.query_row(rusqlite::params_from_iter(with_scope(scope, vec![Box::new(&id.0)])), |r| {
            Ok((r.get(0)?, r.get(1)?, read(r)?))
        })
        .optional()
    })
    .map_err(map_err)
}

/// Forgets a conversation: its messages, episodes, vectors, pending reviews and queued jobs.
/// Returns the ids of the episodes it had, or `None` if there was no such conversation.
fn conversation(
    tx: &Transaction<'_>,
    key: &ConversationKey,
) -> Result<Option<Vec<EpisodeId>>, StoreError> {
    let id: Option<i64> = tx
        .query_row(
            "SELECT id FROM conversations WHERE tenant = ?1 AND external_id = ?2",
            [&key.tenant, &key.conversation],
            |r| r.get(0),
        )
        .optional()
        .map_err(map_err)?;
    let Some(id) = id else { return Ok(None) };
    let episodes: Vec<EpisodeId> = tx
        .prepare_cached("SELECT id FROM episodes WHERE conversation_id = ?1 ORDER BY first_seq")
        .and_then(|mut s| s.query_map([id], |r| r.get(0).map(EpisodeId))?.collect())
        .map_err(map_err)?;
    crate::changes::forgotten(tx, &key.tenant, &episodes)?;
    crate::facts::forget_conversation(tx, id)?;
    crate::timeline::forget_episodes(tx, &key.tenant, &episodes)?;
    for table in ["message_vectors", "pending_reviews", "episode_versions", "episodes", "messages"]
    {
        tx.execute(&format!("DELETE FROM {table} WHERE conversation_id = ?1"), [id])
            .map_err(map_err)?;
    }
    // A queued or running segmentation of it has nothing left to do (a running one's commit
    // finds no conversation and changes nothing).
    tx.execute(
        "DELETE FROM jobs WHERE json_extract(payload, '$.conversation.tenant') = ?1
           AND json_extract(payload, '$.conversation.conversation') = ?2",
        [&key.tenant, &key.conversation],
    )
    .map_err(map_err)?;
    tx.execute("DELETE FROM conversations WHERE id = ?1", [id]).map_err(map_err)?;
    Ok(Some(episodes))
}

/// Forgets every conversation of `tenant` (of `user` only, if given). Returns the ids of the
/// episodes they had.
fn conversations_of(
    tx: &Transaction<'_>,
    tenant: &str,
    user: Option<&str>,
) -> Result<Vec<EpisodeId>, StoreError> {
    let conversations: Vec<String> = tx
        .prepare_cached(
            "SELECT external_id FROM conversations
             WHERE tenant = ?1 AND (?2 IS NULL OR user_id = ?2) ORDER BY id",
        )
        .and_then(|mut s| s.query_map(rusqlite::params![tenant, user], |r| r.get(0))?.collect())
        .map_err(map_err)?;
    let mut episodes = Vec::new();
    for c in conversations {
        episodes.extend(conversation(tx, &ConversationKey::new(tenant, c))?.unwrap_or_default());
    }
    Ok(episodes)
}

/// Moves every committed page into the database file and empties the write-ahead log, so
/// text zeroed by a delete survives in no file. A reader in another process can keep the log
/// from being emptied; then the text goes at the next checkpoint that finds no reader.
pub(crate) fn checkpoint(conn: &Connection) -> Result<bool, StoreError> {
    let busy: i64 =
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0)).map_err(map_err)?;
    Ok(busy == 0)
}

impl Forgetting for SqliteStore {
    fn delete_episode(&self, scope: &Scope, id: &EpisodeId) -> Result<bool, StoreError> {
        self.forget(
            |tx| {
                let found =
                    find(tx, scope, id, "e.first_seq, e.last_seq", |r| Ok((r.get(2)?, r.get(3)?)))?;
                let Some((rowid, conversation, (first, last))): Option<(i64, i64, (u64, u64))> =
                    found
                else {
                    return Ok(false);
                };
                crate::changes::forgotten(tx, &scope.tenant, std::slice::from_ref(id))?;
                crate::facts::forget_from(tx, std::slice::from_ref(id))?;
                crate::timeline::forget_episodes(tx, &scope.tenant, std::slice::from_ref(id))?;
                tx.execute("DELETE FROM episodes WHERE rowid = ?1", [rowid]).map_err(map_err)?;
                for table in ["episode_versions", "episode_reviews"] {
                    tx.execute(&format!("DELETE FROM {table} WHERE episode_id = ?1"), [&id.0])
                        .map_err(map_err)?;
                }
                let range = rusqlite::params![conversation, first, last];
                tx.execute(
        "DELETE FROM message_vectors WHERE conversation_id = ?1 AND seq BETWEEN ?2 AND ?3",
        range,
    )
    .map_err(map_err)?;
                tx.execute(
                    "UPDATE messages SET content = '', speaker = NULL, metadata = NULL, tokens = 0
                     WHERE conversation_id = ?1 AND seq BETWEEN ?2 AND ?3",
                    range,
                )
                .map_err(map_err)?;
                tx.execute(
                    "DELETE FROM pending_reviews WHERE conversation_id = ?1
                     AND EXISTS (SELECT 1 FROM json_each(review, '$.memory_ids') WHERE value = ?2)",
                    rusqlite::params![conversation, id.0],
                )
                .map_err(map_err)?;
                Ok(true)
            },
            |&found| found,
        )
    }

    fn delete_conversation(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Option<Vec<EpisodeId>>, StoreError> {
        self.forget(|tx| self::conversation(tx, conversation), Option::is_some)
    }

    fn delete_tenant(&self, tenant: &str) -> Result<Vec<EpisodeId>, StoreError> {
        self.forget(
            |tx| {
                let episodes = conversations_of(tx, tenant, None)?;
                // The timeline is told from the tenant's episodes: it goes with them.
                for table in ["timeline_nodes", "timeline_marks", "timeline_checkpoints"] {
                    tx.execute(&format!("DELETE FROM {table} WHERE tenant = ?1"), [tenant])
                        .map_err(map_err)?;
                }
                Ok(episodes)
            },
            |_| true,
        )
    }

    fn delete_user(&self, tenant: &str, user: &str) -> Result<Vec<EpisodeId>, StoreError> {
        self.forget(|tx| conversations_of(tx, tenant, Some(user)), |_| true)
    }

    fn compact(&self) -> Result<(), StoreError> {
        self.with_conn(|conn| {
            conn.execute_batch("VACUUM").map_err(map_err)?;
            checkpoint(conn).map(drop)
        })
    }
}
