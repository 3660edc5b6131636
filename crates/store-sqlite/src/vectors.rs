//! Cached embeddings, tagged with the model that made them.

use epimem_core::ConversationKey;
use epimem_store::{StoreError, Vectors};
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::{SqliteStore, map_err, rows};

pub(crate) use epimem_store::encoding::{vector_bytes as encode, vector_from_bytes as decode};

fn model_id(conn: &Connection, fingerprint: &str) -> Result<Option<i64>, StoreError> {
    conn.prepare_cached("SELECT id FROM vector_models WHERE fingerprint = ?1")
        .and_then(|mut s| s.query_row([fingerprint], |r| r.get(0)).optional())
        .map_err(map_err)
}

pub(crate) fn put_message_vectors(
    tx: &Transaction<'_>,
    conversation: &ConversationKey,
    fingerprint: &str,
    vectors: &[(u64, Vec<f32>)],
) -> Result<(), StoreError> {
    let conv = rows::conversation_id(tx, conversation)?
        .ok_or_else(|| StoreError::NotFound(format!("conversation {conversation}")))?;
    let model = match model_id(tx, fingerprint)? {
        Some(id) => id,
        None => {
            tx.execute("INSERT INTO vector_models (fingerprint) VALUES (?1)", [fingerprint])
                .map_err(map_err)?;
            tx.last_insert_rowid()
        }
    };
    let mut insert = tx
        .prepare_cached(
            "INSERT OR REPLACE INTO message_vectors (conversation_id, seq, model_id, vector)
             VALUES (?1, ?2, ?3, ?4)",
        )
        .map_err(map_err)?;
    for (seq, v) in vectors {
        insert.execute(params![conv, seq, model, encode(v)]).map_err(map_err)?;
    }
    Ok(())
}

impl Vectors for SqliteStore {
    fn message_vectors(
        &self,
        conversation: &ConversationKey,
        from: u64,
        to: u64,
        fingerprint: &str,
    ) -> Result<Vec<(u64, Vec<f32>)>, StoreError> {
        self.read(|conn| {
            let (Some(conv), Some(model)) =
                (rows::conversation_id(conn, conversation)?, model_id(conn, fingerprint)?)
            else {
                return Ok(Vec::new());
            };
            let mut stmt = conn
                .prepare_cached(
                    "SELECT seq, vector FROM message_vectors
                     WHERE conversation_id = ?1 AND model_id = ?2 AND seq BETWEEN ?3 AND ?4 ORDER BY seq",
                )
                .map_err(map_err)?;
            let rows = stmt
                .query_map(params![conv, model, from, to], |r| {
                    Ok((r.get::<_, u64>(0)?, r.get::<_, Vec<u8>>(1)?))
                })
                .map_err(map_err)?;
            rows.map(|row| {
                let (seq, bytes) = row.map_err(map_err)?;
                Ok((seq, decode(&bytes)?))
            })
            .collect()
        })
    }

    fn put_message_vectors(
        &self,
        conversation: &ConversationKey,
        fingerprint: &str,
        vectors: &[(u64, Vec<f32>)],
    ) -> Result<(), StoreError> {
        if vectors.is_empty() {
            return Ok(());
        }
        self.write(|tx| put_message_vectors(tx, conversation, fingerprint, vectors))
    }
}
