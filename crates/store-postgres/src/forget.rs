//! Forgetting: an episode or a whole conversation leaves every table.

use epimem_core::{ConversationKey, EpisodeId, Scope};

use crate::{
    Failure, PostgresStore, Tx, changes,
    episodes::{SCOPE_FILTER, scope_params},
    rows::uint,
};
use epimem_store::{Forgetting, StoreError};

/// Forgets a conversation: its messages, episodes, vectors, pending reviews and queued jobs.
/// Returns the ids of the episodes it had, or `None` if there was no such conversation.
fn conversation(tx: &mut Tx<'_>, key: &ConversationKey) -> Result<Option<Vec<EpisodeId>>, Failure> {
    let Some(id) = crate::rows::conversation_id(tx, key)? else { return Ok(None) };
    let episodes: Vec<EpisodeId> = tx
        .query("SELECT id FROM episodes WHERE conversation_id = $1 ORDER BY first_seq", &[&id])?
        .iter()
        .map(|r| EpisodeId(r.get(0)))
        .collect();
    changes::append(tx, &key.tenant, &episodes, changes::Change::Forgotten)?;
    crate::facts::forget_conversation(tx, id)?;
    crate::timeline::forget_episodes(tx, &key.tenant, &episodes)?;
    for table in ["message_vectors", "pending_reviews", "episode_versions", "episodes", "messages"]
    {
        tx.execute(&format!("DELETE FROM {table} WHERE conversation_id = $1"), &[&id])?;
    }
    // A queued or running segmentation of it has nothing left to do (a running one's commit
    // finds no conversation and changes nothing).
    tx.execute(
        "DELETE FROM jobs WHERE payload -> 'conversation' ->> 'tenant' = $1
           AND payload -> 'conversation' ->> 'conversation' = $2",
        &[&key.tenant, &key.conversation],
    )?;
    tx.execute("DELETE FROM conversations WHERE id = $1", &[&id])?;
    Ok(Some(episodes))
}

/// Forgets every conversation of `tenant` (of `user` only, if given). Returns the ids of the
/// episodes they had.
fn conversations_of(
    tx: &mut Tx<'_>,
    tenant: &str,
    user: Option<&str>,
) -> Result<Vec<EpisodeId>, Failure> {
    let conversations: Vec<String> = tx
        .query(
            "SELECT external_id FROM conversations
             WHERE tenant = $1 AND ($2::text IS NULL OR user_id = $2) ORDER BY id",
            &[&tenant, &user],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut episodes = Vec::new();
    for c in conversations {
        episodes.extend(conversation(tx, &ConversationKey::new(tenant, c))?.unwrap_or_default());
    }
    Ok(episodes)
}

impl Forgetting for PostgresStore {
    fn delete_episode(&self, scope: &Scope, id: &EpisodeId) -> Result<bool, StoreError> {
        self.write(|tx| {
            let params = scope_params(scope);
            let found = tx.query_opt(
                &format!(
                    "SELECT e.serial, e.conversation_id, e.first_seq, e.last_seq
                     FROM episodes e JOIN conversations c ON c.id = e.conversation_id
                     WHERE {SCOPE_FILTER} AND e.id = $7"
                ),
                &params.with(&[&id.0]),
            )?;
            let Some(row) = found else { return Ok(false) };
            let (serial, conversation): (i64, i64) = (row.get(0), row.get(1));
            let (first, last) = (uint(&row, 2) as i64, uint(&row, 3) as i64);
            let ids = std::slice::from_ref(id);
            changes::append(tx, &scope.tenant, ids, changes::Change::Forgotten)?;
            crate::facts::forget_from(tx, ids)?;
            crate::timeline::forget_episodes(tx, &scope.tenant, ids)?;
            tx.execute("DELETE FROM episodes WHERE serial = $1", &[&serial])?;
            for table in ["episode_versions", "episode_reviews"] {
                tx.execute(&format!("DELETE FROM {table} WHERE episode_id = $1"), &[&id.0])?;
            }
            tx.execute(
                "DELETE FROM message_vectors WHERE conversation_id = $1 AND seq BETWEEN $2 AND $3",
                &[&conversation, &first, &last],
            )?;
            tx.execute(
                "UPDATE messages SET content = '', speaker = NULL, metadata = NULL, tokens = 0
                 WHERE conversation_id = $1 AND seq BETWEEN $2 AND $3",
                &[&conversation, &first, &last],
            )?;
            tx.execute(
        "DELETE FROM pending_reviews WHERE conversation_id = $1 AND review -> 'memory_ids' ? $2",
        &[&conversation, &id.0],
    )?;
            Ok(true)
        })
    }

    fn delete_conversation(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Option<Vec<EpisodeId>>, StoreError> {
        self.write(|tx| self::conversation(tx, conversation))
    }

    fn delete_tenant(&self, tenant: &str) -> Result<Vec<EpisodeId>, StoreError> {
        self.write(|tx| {
            let episodes = conversations_of(tx, tenant, None)?;
            // The timeline is told from the tenant's episodes: it goes with them.
            for table in ["timeline_nodes", "timeline_marks", "timeline_checkpoints"] {
                tx.execute(&format!("DELETE FROM {table} WHERE tenant = $1"), &[&tenant])?;
            }
            Ok(episodes)
        })
    }

    fn delete_user(&self, tenant: &str, user: &str) -> Result<Vec<EpisodeId>, StoreError> {
        self.write(|tx| conversations_of(tx, tenant, Some(user)))
    }

    fn compact(&self) -> Result<(), StoreError> {
        self.compact_tables()
    }
}
