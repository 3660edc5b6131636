//! Appending messages and reading queue state.

use std::collections::HashMap;

use epimem_core::{
    ConversationKey, EpisodeId, Message, NewMessage, QueueSnapshot, Scope, Timestamp,
};
use epimem_store::{
    HeldMessage, Ingest, PushOutcome, PushedMessage, StoreError, TakeBack,
    encoding::with_given_time,
};

use crate::{
    Failure, PostgresStore, Tx,
    rows::{MESSAGE_COLUMNS, int, message, uint},
};

struct Touched {
    id: i64,
    last_seq: u64,
    newest: Option<i64>,
    inserted: u64,
    messages: Vec<PushedMessage>,
}

/// The message a key already holds.
enum Held {
    Stored(String, String),
    /// Taken by the message at this index of the same push.
    Pushed(usize),
}

/// The columns of the messages one push inserts.
#[derive(Default)]
struct NewRows<'a> {
    seq: Vec<i64>,
    key: Vec<&'a str>,
    role: Vec<&'static str>,
    speaker: Vec<Option<&'a str>>,
    content: Vec<&'a str>,
    ts: Vec<i64>,
    metadata: Vec<Option<String>>,
    tokens: Vec<i64>,
}

impl<'a> NewRows<'a> {
    fn add(&mut self, m: &'a NewMessage, seq: u64, ts: i64, metadata: Option<String>) {
        self.seq.push(int(seq));
        self.key.push(&m.key);
        self.role.push(m.role.as_str());
        self.speaker.push(m.speaker.as_deref());
        self.content.push(&m.content);
        self.ts.push(ts);
        self.metadata.push(metadata);
        self.tokens.push(i64::from(m.tokens));
    }
}

fn ensure_conversation(tx: &mut Tx<'_>, m: &NewMessage) -> Result<Touched, Failure> {
    let key = &m.conversation;
    // Locks the row: another push to the conversation waits, then retries on a fresh snapshot.
    let existing = tx.query_opt(
        "SELECT id, last_seq, newest_ts FROM conversations
         WHERE tenant = $1 AND external_id = $2 FOR UPDATE",
        &[&key.tenant, &key.conversation],
    )?;
    let row = match existing {
        Some(row) => row,
        None => tx.query_one(
            "INSERT INTO conversations (tenant, external_id, user_id, agent_id)
             VALUES ($1, $2, $3, $4) RETURNING id, last_seq, newest_ts",
            &[&key.tenant, &key.conversation, &m.user, &m.agent],
        )?,
    };
    Ok(Touched {
        id: row.get(0),
        last_seq: uint(&row, 1),
        newest: row.get(2),
        inserted: 0,
        messages: Vec::new(),
    })
}

/// The queue of the conversation with internal id `id`.
pub(crate) fn snapshot(tx: &mut Tx<'_>, id: i64) -> Result<QueueSnapshot, Failure> {
    let row = tx.query_one(
        "SELECT c.last_seq, c.watermark, c.newest_ts, c.window_doubled,
                (SELECT ts FROM messages m WHERE m.conversation_id = c.id AND m.seq = c.watermark + 1)
         FROM conversations c WHERE c.id = $1",
        &[&id],
    )?;
    Ok(QueueSnapshot {
        last_seq: uint(&row, 0),
        watermark: uint(&row, 1),
        newest: row.get::<_, Option<i64>>(2).map(Timestamp),
        window_doubled: row.get(3),
        oldest_pending: row.get::<_, Option<i64>>(4).map(Timestamp),
    })
}

/// `columns` (a comma-separated list) each prefixed with `alias.`.
fn prefixed(alias: &str, columns: &str) -> String {
    columns.split(", ").map(|c| format!("{alias}.{c}")).collect::<Vec<_>>().join(", ")
}

impl Ingest for PostgresStore {
    fn out_of_space(&self) -> Option<String> {
        self.space.get()
    }

    fn pending_messages(
        &self,
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<(ConversationKey, Message)>, StoreError> {
        self.read(|tx| {
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let rows = tx.query(
                &format!(
                    "SELECT {}, c.external_id FROM conversations c
                     JOIN messages m ON m.conversation_id = c.id AND m.seq > c.watermark
                     WHERE c.tenant = $1 AND c.last_seq > c.watermark
                       AND ($2::text IS NULL OR c.external_id = $2) AND ($3::text IS NULL OR c.user_id = $3)
                       AND ($4::text IS NULL OR c.agent_id = $4)
                       AND ($5::bigint IS NULL OR m.ts >= $5) AND ($6::bigint IS NULL OR m.ts <= $6)
                     ORDER BY m.ts DESC, c.id, m.seq DESC LIMIT $7",
                    prefixed("m", MESSAGE_COLUMNS)
                ),
                &[
                    &scope.tenant,
                    &scope.conversation,
                    &scope.user,
                    &scope.agent,
                    &scope.since.map(Timestamp::millis),
                    &scope.until.map(Timestamp::millis),
                    &limit,
                ],
            )?;
            let mut out = Vec::with_capacity(rows.len());
            for row in &rows {
                let conversation: String = row.get(8);
                out.push((ConversationKey::new(scope.tenant.clone(), conversation), message(row)?));
            }
            Ok(out)
        })
    }

    fn push_messages(&self, messages: &[NewMessage]) -> Result<Vec<PushOutcome>, StoreError> {
        if messages.is_empty() {
            return Ok(Vec::new());
        }
        self.write(|tx| {
            // Per conversation, in order of first appearance: its messages' indices.
            let mut order: Vec<(&ConversationKey, Vec<usize>)> = Vec::new();
            let mut at: HashMap<&ConversationKey, usize> = HashMap::new();
            for (index, m) in messages.iter().enumerate() {
                let slot = *at.entry(&m.conversation).or_insert_with(|| {
                    order.push((&m.conversation, Vec::new()));
                    order.len() - 1
                });
                order[slot].1.push(index);
            }
            let mut out = Vec::with_capacity(order.len());
            for (key, indices) in order {
                let mut t = ensure_conversation(tx, &messages[indices[0]])?;
                // The keys already stored, read at once; then one insert of all the new messages.
                let keys: Vec<&str> = indices.iter().map(|&i| messages[i].key.as_str()).collect();
                // What a key holds: a stored row's seq, role and text, or the message of this push
                // that took it.
                let mut known: HashMap<String, (u64, Held)> = tx
                    .query(
                        "SELECT key, seq, role, content FROM messages
                         WHERE conversation_id = $1 AND key = ANY($2)",
                        &[&t.id, &keys],
                    )?
                    .iter()
                    .map(|r| (r.get(0), (uint(r, 1), Held::Stored(r.get(2), r.get(3)))))
                    .collect();
                let mut rows = NewRows::default();
                for &index in &indices {
                    let m = &messages[index];
                    if let Some((seq, held)) = known.get(&m.key) {
                        let held = match held {
                            Held::Stored(role, content) => (role.as_str(), content.as_str()),
                            Held::Pushed(i) => {
                                (messages[*i].role.as_str(), messages[*i].content.as_str())
                            }
                        };
                        t.messages.push(PushedMessage::already_held(index, *seq, held, m));
                        continue;
                    }
                    // Conversation time only moves forward (as on SQLite: see its backend).
                    let (ts, metadata) = match t.newest.filter(|&n| m.timestamp.millis() < n) {
                        Some(newest) => {
                            (newest, Some(with_given_time(&m.metadata, m.timestamp).to_string()))
                        }
                        None => (
                            m.timestamp.millis(),
                            (!m.metadata.is_null()).then(|| m.metadata.to_string()),
                        ),
                    };
                    t.last_seq += 1;
                    t.inserted += 1;
                    t.newest = Some(t.newest.map_or(ts, |n| n.max(ts)));
                    known.insert(m.key.clone(), (t.last_seq, Held::Pushed(index)));
                    t.messages.push(PushedMessage::stored(index, t.last_seq));
                    rows.add(m, t.last_seq, ts, metadata);
                }
                if t.inserted > 0 {
                    tx.execute(
                        "INSERT INTO messages
                             (conversation_id, seq, key, role, speaker, content, ts, metadata, tokens)
                         SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[],
                             $6::text[], $7::bigint[], $8::text[], $9::bigint[])",
                        &[
                            &t.id,
                            &rows.seq,
                            &rows.key,
                            &rows.role,
                            &rows.speaker,
                            &rows.content,
                            &rows.ts,
                            &rows.metadata,
                            &rows.tokens,
                        ],
                    )?;
                    tx.execute(
                        "UPDATE conversations SET last_seq = $2, newest_ts = $3 WHERE id = $1",
                        &[&t.id, &int(t.last_seq), &t.newest],
                    )?;
                }
                let queue = snapshot(tx, t.id)?;
                out.push(PushOutcome {
                    conversation: key.clone(),
                    inserted: t.inserted,
                    queue,
                    messages: t.messages,
                });
            }
            Ok(out)
        })
    }

    fn queue(&self, key: &ConversationKey) -> Result<Option<QueueSnapshot>, StoreError> {
        self.read(|tx| match crate::rows::conversation_id(tx, key)? {
            Some(id) => snapshot(tx, id).map(Some),
            None => Ok(None),
        })
    }

    fn pending_queues(
        &self,
        tenant: Option<&str>,
    ) -> Result<Vec<(ConversationKey, QueueSnapshot)>, StoreError> {
        self.read(|tx| {
            let rows = tx.query(
                "SELECT id, tenant, external_id FROM conversations
                 WHERE last_seq > watermark AND ($1::text IS NULL OR tenant = $1) ORDER BY id",
                &[&tenant],
            )?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let key = ConversationKey::new(row.get::<_, String>(1), row.get::<_, String>(2));
                out.push((key, snapshot(tx, row.get(0))?));
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
        self.read(|tx| {
            let Some(id) = crate::rows::conversation_id(tx, key)? else {
                return Ok(None);
            };
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            // A message of the open tail is in no episode: only a closed one looks for its own.
            let rows = tx.query(
                &format!(
                    "SELECT {},
                        CASE WHEN m.seq > c.watermark THEN NULL ELSE
                            (SELECT e.id FROM episodes e
                             WHERE e.conversation_id = c.id AND e.first_seq <= m.seq
                               AND e.last_seq >= m.seq
                             ORDER BY e.first_seq DESC LIMIT 1) END
                     FROM messages m JOIN conversations c ON c.id = m.conversation_id
                     WHERE m.conversation_id = $1 AND ($2::bigint IS NULL OR m.seq < $2)
                     ORDER BY m.seq DESC LIMIT $3",
                    prefixed("m", MESSAGE_COLUMNS)
                ),
                &[&id, &before.map(int), &limit],
            )?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows.iter().rev() {
                out.push((message(row)?, row.get::<_, Option<String>>(8).map(EpisodeId)));
            }
            Ok(Some(out))
        })
    }

    fn take_back_newest(&self, key: &ConversationKey) -> Result<TakeBack, StoreError> {
        self.write(|tx| {
            // Locks the row: a push to the conversation waits for the take-back.
            let state = tx.query_opt(
                "SELECT id, last_seq, watermark,
                        fence_job IS NOT NULL AND fence_upto >= last_seq
                 FROM conversations WHERE tenant = $1 AND external_id = $2 FOR UPDATE",
                &[&key.tenant, &key.conversation],
            )?;
            let Some(state) = state.filter(|row| uint(row, 1) > 0) else {
                return Ok(TakeBack::Nothing);
            };
            let (id, last, watermark): (i64, u64, u64) =
                (state.get(0), uint(&state, 1), uint(&state, 2));
            if last <= watermark {
                let episode = tx.query_opt(
                    "SELECT id FROM episodes WHERE conversation_id = $1 AND first_seq <= $2
                       AND last_seq >= $2 ORDER BY first_seq DESC LIMIT 1",
                    &[&id, &int(last)],
                )?;
                return Ok(TakeBack::Closed(episode.map(|row| EpisodeId(row.get(0)))));
            }
            if state.get::<_, bool>(3) {
                return Ok(TakeBack::Closed(None));
            }
            let Some(taken) = crate::rows::messages(tx, id, last, last)?.pop() else {
                let missing = format!("message {last} of conversation {id} is missing");
                return Err(StoreError::Internal(missing).into());
            };
            for delete in [
                "DELETE FROM messages WHERE conversation_id = $1 AND seq = $2",
                "DELETE FROM message_vectors WHERE conversation_id = $1 AND seq = $2",
            ] {
                tx.execute(delete, &[&id, &int(last)])?;
            }
            // Times only move forward, so the message before is the newest left.
            tx.execute(
                "UPDATE conversations SET last_seq = $2,
                     newest_ts = (SELECT ts FROM messages WHERE conversation_id = $1 AND seq = $2)
                 WHERE id = $1",
                &[&id, &int(last - 1)],
            )?;
            Ok(TakeBack::Taken(taken))
        })
    }
}
