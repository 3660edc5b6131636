//! Mapping between rows and domain values.

use epimem_core::{
    BoundaryReason, ConversationKey, Episode, EpisodeId, FsrsState, Message, Role, Timestamp,
    ToldBy,
};
use epimem_store::StoreError;
use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::map_err;

/// Columns read by [`message`], in order.
pub(crate) const MESSAGE_COLUMNS: &str = "seq, key, role, speaker, content, ts, metadata, tokens";

pub(crate) fn message(row: &Row<'_>) -> rusqlite::Result<Result<Message, StoreError>> {
    let role: String = row.get(2)?;
    let metadata: Option<String> = row.get(6)?;
    let role = match role.parse::<Role>() {
        Ok(r) => r,
        Err(e) => return Ok(Err(StoreError::Internal(format!("stored message: {e}")))),
    };
    let metadata = match metadata.map(|m| serde_json::from_str(&m)).transpose() {
        Ok(m) => m.unwrap_or(serde_json::Value::Null),
        Err(e) => return Ok(Err(StoreError::Internal(format!("stored metadata: {e}")))),
    };
    Ok(Ok(Message {
        seq: row.get(0)?,
        key: row.get(1)?,
        role,
        speaker: row.get(3)?,
        content: row.get(4)?,
        timestamp: Timestamp(row.get(5)?),
        metadata,
        tokens: row.get(7)?,
    }))
}

/// Messages `from..=to` of a conversation.
pub(crate) fn messages(
    conn: &Connection,
    conversation_id: i64,
    from: u64,
    to: u64,
) -> Result<Vec<Message>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages
             WHERE conversation_id = ?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq"
        ))
        .map_err(map_err)?;
    let rows = stmt.query_map(params![conversation_id, from, to], message).map_err(map_err)?;
    let mut out = Vec::new();
    for row in rows {
        out.push(row.map_err(map_err)??);
    }
    Ok(out)
}

/// Columns read by [`episode`], in order; `e` is `episodes`, `c` is `conversations`.
pub(crate) const EPISODE_COLUMNS: &str = "e.id, c.tenant, c.external_id, c.user_id, c.agent_id, \
     e.first_seq, e.last_seq, e.context_first_seq, e.start_ts, e.end_ts, e.title, e.summary, \
     e.keywords, e.surprise, e.boundary_reason, e.stability, e.difficulty, e.last_review, e.due, \
     e.told_by, e.told_note";

/// How many columns [`EPISODE_COLUMNS`] holds: a query's own columns come after.
pub(crate) const EPISODE_COLUMN_COUNT: usize = 21;

pub(crate) fn episode(row: &Row<'_>) -> rusqlite::Result<Result<Episode, StoreError>> {
    let keywords: String = row.get(12)?;
    let reason: String = row.get(14)?;
    let keywords = match serde_json::from_str(&keywords) {
        Ok(k) => k,
        Err(e) => return Ok(Err(StoreError::Internal(format!("stored keywords: {e}")))),
    };
    let Some(boundary_reason) = BoundaryReason::parse(&reason) else {
        return Ok(Err(StoreError::Internal(format!("stored boundary reason {reason:?}"))));
    };
    let told: String = row.get(19)?;
    let Some(told_by) = ToldBy::parse(&told) else {
        return Ok(Err(StoreError::Internal(format!("stored teller {told:?}"))));
    };
    Ok(Ok(Episode {
        id: EpisodeId(row.get(0)?),
        conversation: ConversationKey::new(row.get::<_, String>(1)?, row.get::<_, String>(2)?),
        user: row.get(3)?,
        agent: row.get(4)?,
        first_seq: row.get(5)?,
        last_seq: row.get(6)?,
        context_first_seq: row.get(7)?,
        start: Timestamp(row.get(8)?),
        end: Timestamp(row.get(9)?),
        title: row.get(10)?,
        summary: row.get(11)?,
        keywords,
        surprise: row.get(13)?,
        boundary_reason,
        fsrs: FsrsState {
            stability: row.get(15)?,
            difficulty: row.get(16)?,
            last_review: row.get::<_, Option<i64>>(17)?.map(Timestamp),
            due: row.get::<_, Option<i64>>(18)?.map(Timestamp),
        },
        told_by,
        told_note: row.get(20)?,
    }))
}

/// The internal id of a conversation, if it exists.
pub(crate) fn conversation_id(
    conn: &Connection,
    key: &ConversationKey,
) -> Result<Option<i64>, StoreError> {
    conn.prepare_cached("SELECT id FROM conversations WHERE tenant = ?1 AND external_id = ?2")
        .and_then(|mut s| {
            s.query_row(params![key.tenant, key.conversation], |r| r.get(0)).optional()
        })
        .map_err(map_err)
}
