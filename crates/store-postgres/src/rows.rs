//! Mapping between rows and domain values.

use epimem_core::{
    BoundaryReason, ConversationKey, Episode, EpisodeId, FsrsState, Message, Role, Timestamp,
    ToldBy,
};
use epimem_store::StoreError;
use postgres::Row;

use crate::{Failure, Tx};

/// A count or sequence number as PostgreSQL holds it (`BIGINT`).
pub(crate) fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A `BIGINT` column read back as a count or sequence number.
pub(crate) fn uint(row: &Row, i: usize) -> u64 {
    row.get::<_, i64>(i).max(0) as u64
}

/// An optional `BIGINT` column read back as a sequence number.
pub(crate) fn opt_uint(row: &Row, i: usize) -> Option<u64> {
    row.get::<_, Option<i64>>(i).map(|v| v.max(0) as u64)
}

pub(crate) fn json<T: serde::Serialize>(value: &T, what: &str) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Internal(format!("encoding {what}: {e}")))
}

pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    text: &str,
    what: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Internal(format!("stored {what}: {e}")))
}

/// Columns read by [`message`], in order.
pub(crate) const MESSAGE_COLUMNS: &str = "seq, key, role, speaker, content, ts, metadata, tokens";

pub(crate) fn message(row: &Row) -> Result<Message, StoreError> {
    let role: String = row.get(2);
    let role =
        role.parse::<Role>().map_err(|e| StoreError::Internal(format!("stored message: {e}")))?;
    let metadata: Option<String> = row.get(6);
    let metadata = match metadata {
        Some(m) => from_json(&m, "metadata")?,
        None => serde_json::Value::Null,
    };
    Ok(Message {
        seq: uint(row, 0),
        key: row.get(1),
        role,
        speaker: row.get(3),
        content: row.get(4),
        timestamp: Timestamp(row.get(5)),
        metadata,
        tokens: u32::try_from(uint(row, 7)).unwrap_or(u32::MAX),
    })
}

/// Messages `from..=to` of a conversation.
pub(crate) fn messages(
    tx: &mut Tx<'_>,
    conversation_id: i64,
    from: u64,
    to: u64,
) -> Result<Vec<Message>, Failure> {
    let rows = tx.query(
        &format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages
             WHERE conversation_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq"
        ),
        &[&conversation_id, &int(from), &int(to)],
    )?;
    Ok(rows.iter().map(message).collect::<Result<_, _>>()?)
}

/// Columns read by [`episode`], in order; `e` is `episodes`, `c` is `conversations`.
pub(crate) const EPISODE_COLUMNS: &str = "e.id, c.tenant, c.external_id, c.user_id, c.agent_id, \
     e.first_seq, e.last_seq, e.context_first_seq, e.start_ts, e.end_ts, e.title, e.summary, \
     e.keywords, e.surprise, e.boundary_reason, e.stability, e.difficulty, e.last_review, e.due, \
     e.told_by, e.told_note";

/// How many columns [`EPISODE_COLUMNS`] holds: a query's own columns come after.
pub(crate) const EPISODE_COLUMN_COUNT: usize = 21;

pub(crate) fn episode(row: &Row) -> Result<Episode, StoreError> {
    let keywords: String = row.get(12);
    let reason: String = row.get(14);
    let boundary_reason = BoundaryReason::parse(&reason)
        .ok_or_else(|| StoreError::Internal(format!("stored boundary reason {reason:?}")))?;
    let told: String = row.get(19);
    let told_by = ToldBy::parse(&told)
        .ok_or_else(|| StoreError::Internal(format!("stored teller {told:?}")))?;
    Ok(Episode {
        id: EpisodeId(row.get(0)),
        conversation: ConversationKey::new(row.get::<_, String>(1), row.get::<_, String>(2)),
        user: row.get(3),
        agent: row.get(4),
        first_seq: uint(row, 5),
        last_seq: uint(row, 6),
        context_first_seq: opt_uint(row, 7),
        start: Timestamp(row.get(8)),
        end: Timestamp(row.get(9)),
        title: row.get(10),
        summary: row.get(11),
        keywords: from_json(&keywords, "keywords")?,
        surprise: row.get(13),
        boundary_reason,
        fsrs: FsrsState {
            stability: row.get(15),
            difficulty: row.get(16),
            last_review: row.get::<_, Option<i64>>(17).map(Timestamp),
            due: row.get::<_, Option<i64>>(18).map(Timestamp),
        },
        told_by,
        told_note: row.get(20),
    })
}

/// The internal id of a conversation, if it exists.
pub(crate) fn conversation_id(
    tx: &mut Tx<'_>,
    key: &ConversationKey,
) -> Result<Option<i64>, Failure> {
    Ok(tx
        .query_opt(
            "SELECT id FROM conversations WHERE tenant = $1 AND external_id = $2",
            &[&key.tenant, &key.conversation],
        )?
        .map(|r| r.get(0)))
}

/// Queues a job; its id.
pub(crate) fn insert_job(tx: &mut Tx<'_>, kind: &epimem_core::JobKind) -> Result<i64, Failure> {
    let payload = serde_json::to_value(kind)
        .map_err(|e| StoreError::Internal(format!("encoding a job: {e}")))?;
    Ok(tx.query_one("INSERT INTO jobs (payload) VALUES ($1) RETURNING id", &[&payload])?.get(0))
}
