//! Pending reviews: what recall returned, waiting for the review job.

use epimem_core::ConversationKey;
use epimem_store::{PendingReview, StoreError};
use rusqlite::{Transaction, params};

use crate::{map_err, rows};

pub(crate) fn record(
    tx: &Transaction<'_>,
    conversation: &ConversationKey,
    review: &PendingReview,
) -> Result<(), StoreError> {
    let id = rows::conversation_id(tx, conversation)?
        .ok_or_else(|| StoreError::NotFound(format!("conversation {conversation}")))?;
    let json = serde_json::to_string(review)
        .map_err(|e| StoreError::Internal(format!("encoding a review: {e}")))?;
    tx.execute(
        "INSERT INTO pending_reviews (conversation_id, review) VALUES (?1, ?2)",
        params![id, json],
    )
    .map_err(map_err)?;
    Ok(())
}

pub(crate) fn take(
    tx: &Transaction<'_>,
    conversation: &ConversationKey,
) -> Result<Vec<PendingReview>, StoreError> {
    let Some(id) = rows::conversation_id(tx, conversation)? else { return Ok(Vec::new()) };
    let mut stmt = tx
        .prepare_cached("SELECT review FROM pending_reviews WHERE conversation_id = ?1 ORDER BY id")
        .map_err(map_err)?;
    let raw: Vec<String> =
        stmt.query_map([id], |r| r.get(0)).and_then(Iterator::collect).map_err(map_err)?;
    let reviews = raw
        .iter()
        .map(|r| {
            serde_json::from_str(r).map_err(|e| StoreError::Internal(format!("stored review: {e}")))
        })
        .collect::<Result<Vec<PendingReview>, _>>()?;
    tx.execute("DELETE FROM pending_reviews WHERE conversation_id = ?1", [id]).map_err(map_err)?;
    Ok(reviews)
}
