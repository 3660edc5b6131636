//! Appending messages and reading queue state.

use std::collections::HashMap;

use epimem_core::{
    ConversationKey, EpisodeId, Message, NewMessage, QueueSnapshot, Scope, Timestamp,
};
use epimem_store::{
    HeldMessage, Ingest, PushOutcome, PushedMessage, StoreError, TakeBack,
    encoding::with_given_time,
};
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::{
    SqliteStore, map_err,
    rows::{MESSAGE_COLUMNS, message},
};

struct Touched {
    id: i64,
    last_seq: u64,
    newest: Option<i64>,
    inserted: u64,
    messages: Vec<PushedMessage>,
}

fn ensure_conversation(tx: &Transaction<'_>, m: &NewMessage) -> Result<Touched, StoreError> {
    let existing = tx
        .prepare_cached(
            "SELECT id, last_seq, newest_ts FROM conversations WHERE tenant = ?1 AND external_id = ?2",
        )
        .and_then(|mut s| {
            s.query_row(params![m.conversation.tenant, m.conversation.conversation], |r| {
                Ok(Touched { id: r.get(0)?, last_seq: r.get(1)?, newest: r.get(2)?, inserted: 0, messages: Vec::new() })
            })
            .optional()
        })
        .map_err(map_err)?;
    if let Some(t) = existing {
        return Ok(t);
    }
    tx.prepare_cached(
        "INSERT INTO conversations (tenant, external_id, user_id, agent_id) VALUES (?1, ?2, ?3, ?4)",
    )
    .and_then(|mut s| {
        s.execute(params![m.conversation.tenant, m.conversation.conversation, m.user, m.agent])
    })
    .map_err(map_err)?;
    Ok(Touched {
        id: tx.last_insert_rowid(),
        last_seq: 0,
        newest: None,
        inserted: 0,
        messages: Vec::new(),
    })
}

/// The queue of the conversation with internal id `id`.
pub(crate) fn snapshot(conn: &Connection, id: i64) -> Result<QueueSnapshot, StoreError> {
    conn.prepare_cached(
        "SELECT c.last_seq, c.watermark, c.newest_ts, c.window_doubled,
                (SELECT ts FROM messages m WHERE m.conversation_id = c.id AND m.seq = c.watermark + 1)
         FROM conversations c WHERE c.id = ?1",
    )
    .and_then(|mut s| {
        s.query_row([id], |r| {
            Ok(QueueSnapshot {
                last_seq: r.get(0)?,
                watermark: r.get(1)?,
                newest: r.get::<_, Option<i64>>(2)?.map(Timestamp),
                window_doubled: r.get(3)?,
                oldest_pending: r.get::<_, Option<i64>>(4)?.map(Timestamp),
            })
        })
    })
    .map_err(map_err)
}

impl Ingest for SqliteStore {
    fn out_of_space(&self) -> Option<String> {
        self.space.get()
    }

    fn push_messages(&self, messages: &[NewMessage]) -> Result<Vec<PushOutcome>, StoreError> {
        if messages.is_empty() {
            return Ok(Vec::new());
        }
        self.write(|tx| {
            let mut order: Vec<ConversationKey> = Vec::new();
            let mut touched: HashMap<ConversationKey, Touched> = HashMap::new();
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO messages
                         (conversation_id, seq, key, role, speaker, content, ts, metadata, tokens)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                     ON CONFLICT DO NOTHING",
                )
                .map_err(map_err)?;
            let mut stored = tx
        .prepare_cached(
            "SELECT seq, role, content FROM messages WHERE conversation_id = ?1 AND key = ?2",
        )
        .map_err(map_err)?;
            for (index, m) in messages.iter().enumerate() {
                if !touched.contains_key(&m.conversation) {
                    let state = ensure_conversation(tx, m)?;
                    order.push(m.conversation.clone());
                    touched.insert(m.conversation.clone(), state);
                }
                let t = touched.get_mut(&m.conversation).expect("inserted above");
                // Conversation time only moves forward: a message dated before the conversation's
                // newest (a late writer, a skewed clock) is stored at that newest time, in arrival
                // order, and keeps the time it was given in its metadata. An episode then spans its
                // messages' stored times and a gap between messages is a real silence.
                let (ts, metadata) = match t.newest.filter(|&n| m.timestamp.millis() < n) {
                    Some(newest) => {
                        (newest, Some(with_given_time(&m.metadata, m.timestamp).to_string()))
                    }
                    None => (
                        m.timestamp.millis(),
                        (!m.metadata.is_null()).then(|| m.metadata.to_string()),
                    ),
                };
                let added = insert
                    .execute(params![
                        t.id,
                        t.last_seq + 1,
                        m.key,
                        m.role.as_str(),
                        m.speaker,
                        m.content,
                        ts,
                        metadata,
                        m.tokens,
                    ])
                    .map_err(map_err)?;
                if added == 1 {
                    t.last_seq += 1;
                    t.inserted += 1;
                    t.newest = Some(t.newest.map_or(ts, |n| n.max(ts)));
                    t.messages.push(PushedMessage::stored(index, t.last_seq));
                } else {
                    let (seq, role, content): (i64, String, String) = stored
                        .query_row(params![t.id, m.key], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                        .map_err(map_err)?;
                    let held = (role.as_str(), content.as_str());
                    t.messages.push(PushedMessage::already_held(index, seq as u64, held, m));
                }
            }
            let mut update = tx
                .prepare_cached(
                    "UPDATE conversations SET last_seq = ?2, newest_ts = ?3 WHERE id = ?1",
                )
                .map_err(map_err)?;
            let mut out = Vec::with_capacity(order.len());
            for key in order {
                let t = touched.remove(&key).expect("touched above");
                update.execute(params![t.id, t.last_seq, t.newest]).map_err(map_err)?;
                let queue = snapshot(tx, t.id)?;
                out.push(PushOutcome {
                    conversation: key,
                    inserted: t.inserted,
                    queue,
                    messages: t.messages,
                });
            }
            Ok(out)
        })
    }

    fn queue(&self, key: &ConversationKey) -> Result<Option<QueueSnapshot>, StoreError> {
        self.read(|conn| match crate::rows::conversation_id(conn, key)? {
            Some(id) => snapshot(conn, id).map(Some),
            None => Ok(None),
        })
    }

    fn pending_queues(
        &self,
        tenant: Option<&str>,
    ) -> Result<Vec<(ConversationKey, QueueSnapshot)>, StoreError> {
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT id, tenant, external_id FROM conversations
                     WHERE last_seq > watermark AND (?1 IS NULL OR tenant = ?1) ORDER BY id",
                )
                .map_err(map_err)?;
            let rows: Vec<(i64, String, String)> = stmt
                .query_map([tenant], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .and_then(Iterator::collect)
                .map_err(map_err)?;
            rows.into_iter()
                .map(|(id, t, c)| Ok((ConversationKey::new(t, c), snapshot(conn, id)?)))
                .collect()
        })
    }

    fn pending_messages(
        &self,
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<(ConversationKey, Message)>, StoreError> {
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {MESSAGE_COLUMNS}, c.external_id FROM conversations c
                     JOIN messages m ON m.conversation_id = c.id AND m.seq > c.watermark
                     WHERE c.tenant = ?1 AND c.last_seq > c.watermark
                       AND (?2 IS NULL OR c.external_id = ?2) AND (?3 IS NULL OR c.user_id = ?3)
                       AND (?4 IS NULL OR c.agent_id = ?4)
                       AND (?5 IS NULL OR m.ts >= ?5) AND (?6 IS NULL OR m.ts <= ?6)
                     ORDER BY m.ts DESC, c.id, m.seq DESC LIMIT ?7"
                ))
                .map_err(map_err)?;
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let rows = stmt
                .query_map(
                    params![
                        scope.tenant,
                        scope.conversation,
                        scope.user,
                        scope.agent,
                        scope.since.map(Timestamp::millis),
                        scope.until.map(Timestamp::millis),
                        limit
                    ],
                    |row| Ok((row.get::<_, String>(8)?, message(row)?)),
                )
                .map_err(map_err)?;
            let mut out = Vec::new();
            for row in rows {
                let (conversation, message) = row.map_err(map_err)?;
                out.push((ConversationKey::new(scope.tenant.clone(), conversation), message?));
            }
            Ok(out)
        })
    }

    fn conversation_messages(
        &self,
        key: &ConversationKey,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Option<Vec<HeldMessage>>, StoreError> {
        self.read(|conn| {
            let Some(id) = crate::rows::conversation_id(conn, key)? else {
                return Ok(None);
            };
            // A message of the open tail is in no episode: only a closed one looks for its own.
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {MESSAGE_COLUMNS},
                        CASE WHEN m.seq > c.watermark THEN NULL ELSE
                            (SELECT e.id FROM episodes e
                             WHERE e.conversation_id = c.id AND e.first_seq <= m.seq
                               AND e.last_seq >= m.seq
                             ORDER BY e.first_seq DESC LIMIT 1) END
                     FROM messages m JOIN conversations c ON c.id = m.conversation_id
                     WHERE m.conversation_id = ?1 AND (?2 IS NULL OR m.seq < ?2)
                     ORDER BY m.seq DESC LIMIT ?3"
                ))
                .map_err(map_err)?;
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let rows = stmt
                .query_map(params![id, before, limit], |row| {
                    Ok((message(row)?, row.get::<_, Option<String>>(8)?))
                })
                .map_err(map_err)?;
            let mut out = Vec::new();
            for row in rows {
                let (message, episode) = row.map_err(map_err)?;
                out.push((message?, episode.map(EpisodeId)));
            }
            out.reverse();
            Ok(Some(out))
        })
    }

    fn take_back_newest(&self, key: &ConversationKey) -> Result<TakeBack, StoreError> {
        self.write(|tx| {
            let state = tx
                .prepare_cached(
                    "SELECT id, last_seq, watermark, fence_job IS NOT NULL AND fence_upto >= last_seq
                     FROM conversations WHERE tenant = ?1 AND external_id = ?2",
                )
                .and_then(|mut s| {
                    s.query_row(params![key.tenant, key.conversation], |r| {
                        Ok((r.get::<_, i64>(0)?, r.get::<_, u64>(1)?, r.get::<_, u64>(2)?, r.get(3)?))
                    })
                    .optional()
                })
                .map_err(map_err)?;
            let Some((id, last, watermark, fenced)) = state.filter(|s| s.1 > 0) else {
                return Ok(TakeBack::Nothing);
            };
            if last <= watermark {
                let episode = tx
                    .prepare_cached(
                        "SELECT id FROM episodes WHERE conversation_id = ?1 AND first_seq <= ?2
                           AND last_seq >= ?2 ORDER BY first_seq DESC LIMIT 1",
                    )
                    .and_then(|mut s| s.query_row(params![id, last], |r| r.get(0)).optional())
                    .map_err(map_err)?;
                return Ok(TakeBack::Closed(episode.map(EpisodeId)));
            }
            if fenced {
                return Ok(TakeBack::Closed(None));
            }
            let Some(taken) = crate::rows::messages(tx, id, last, last)?.pop() else {
                return Err(StoreError::Internal(format!("message {last} of conversation {id} is missing")));
            };
            for delete in [
                "DELETE FROM messages WHERE conversation_id = ?1 AND seq = ?2",
                "DELETE FROM message_vectors WHERE conversation_id = ?1 AND seq = ?2",
            ] {
                tx.prepare_cached(delete)
                    .and_then(|mut s| s.execute(params![id, last]))
                    .map_err(map_err)?;
            }
            // Times only move forward, so the message before is the newest left.
            tx.prepare_cached(
                "UPDATE conversations SET last_seq = ?2,
                     newest_ts = (SELECT ts FROM messages WHERE conversation_id = ?1 AND seq = ?2)
                 WHERE id = ?1",
            )
            .and_then(|mut s| s.execute(params![id, last - 1]))
            .map_err(map_err)?;
            Ok(TakeBack::Taken(taken))
        })
    }
}
