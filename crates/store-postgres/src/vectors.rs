//! Cached embeddings, tagged with the model that made them.

use epimem_core::ConversationKey;
use epimem_store::{StoreError, Vectors};

use crate::{
    Failure, PostgresStore, Tx,
    rows::{self, int, uint},
};

pub(crate) use epimem_store::encoding::{vector_bytes as encode, vector_from_bytes as decode};

fn model_id(tx: &mut Tx<'_>, fingerprint: &str) -> Result<Option<i64>, Failure> {
    Ok(tx
        .query_opt("SELECT id FROM vector_models WHERE fingerprint = $1", &[&fingerprint])?
        .map(|r| r.get(0)))
}

pub(crate) fn put_message_vectors(
    tx: &mut Tx<'_>,
    conversation: &ConversationKey,
    fingerprint: &str,
    vectors: &[(u64, Vec<f32>)],
) -> Result<(), Failure> {
    let conv = rows::conversation_id(tx, conversation)?
        .ok_or_else(|| StoreError::NotFound(format!("conversation {conversation}")))?;
    let model: i64 = match model_id(tx, fingerprint)? {
        Some(id) => id,
        None => tx
            .query_one(
                "INSERT INTO vector_models (fingerprint) VALUES ($1) RETURNING id",
                &[&fingerprint],
            )?
            .get(0),
    };
    for (seq, v) in vectors {
        tx.execute(
            "INSERT INTO message_vectors (conversation_id, seq, model_id, vector)
             VALUES ($1, $2, $3, $4)
             ON CONFLICT (conversation_id, model_id, seq) DO UPDATE SET vector = excluded.vector",
            &[&conv, &int(*seq), &model, &encode(v)],
        )?;
    }
    Ok(())
}

impl Vectors for PostgresStore {
    fn message_vectors(
        &self,
        conversation: &ConversationKey,
        from: u64,
        to: u64,
        fingerprint: &str,
    ) -> Result<Vec<(u64, Vec<f32>)>, StoreError> {
        self.read(|tx| {
            let (Some(conv), Some(model)) =
                (rows::conversation_id(tx, conversation)?, model_id(tx, fingerprint)?)
            else {
                return Ok(Vec::new());
            };
            let rows = tx.query(
                "SELECT seq, vector FROM message_vectors
                 WHERE conversation_id = $1 AND model_id = $2 AND seq BETWEEN $3 AND $4 ORDER BY seq",
                &[&conv, &model, &int(from), &int(to)],
            )?;
            rows.iter().map(|r| Ok((uint(r, 0), decode(r.get::<_, &[u8]>(1))?))).collect()
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
