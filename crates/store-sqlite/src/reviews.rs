//! Pending reviews: what recall returned, waiting for the review job.

use epimem_core::{ConversationKey, EpisodeId, JobId, JobKind, Timestamp};
use epimem_store::{PendingReview, ReviewedMemory, Reviews, StoreError};
use rusqlite::{Transaction, params};

use crate::{SqliteStore, map_err, rows};

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

/// Queues a review job for the conversation's pending reviews, if it has any, and holds them
/// for it; `following` are the episodes just closed after them.
pub(crate) fn queue_review(
    tx: &Transaction<'_>,
    conversation_id: i64,
    conversation: &ConversationKey,
    following: Vec<EpisodeId>,
) -> Result<(), StoreError> {
    let pending: bool = tx
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM pending_reviews
                            WHERE conversation_id = ?1 AND job_id IS NULL)",
        )
        .and_then(|mut s| s.query_row([conversation_id], |r| r.get(0)))
        .map_err(map_err)?;
    if !pending || following.is_empty() {
        return Ok(());
    }
    let kind = JobKind::Review { conversation: conversation.clone(), following };
    let payload = serde_json::to_string(&kind)
        .map_err(|e| StoreError::Internal(format!("encoding a job: {e}")))?;
    tx.execute("INSERT INTO jobs (payload) VALUES (?1)", [payload]).map_err(map_err)?;
    let job = tx.last_insert_rowid();
    tx.execute(
        "UPDATE pending_reviews SET job_id = ?2 WHERE conversation_id = ?1 AND job_id IS NULL",
        params![conversation_id, job],
    )
    .map_err(map_err)?;
    Ok(())
}

impl Reviews for SqliteStore {
    fn record_pending_review(
        &self,
        conversation: &ConversationKey,
        review: &PendingReview,
    ) -> Result<(), StoreError> {
        self.write(|tx| record(tx, conversation, review))
    }

    fn reviews_of_job(&self, job: JobId) -> Result<Vec<PendingReview>, StoreError> {
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached("SELECT review FROM pending_reviews WHERE job_id = ?1 ORDER BY id")
                .map_err(map_err)?;
            let raw: Vec<String> = stmt
                .query_map([job.0], |r| r.get(0))
                .and_then(Iterator::collect)
                .map_err(map_err)?;
            raw.iter()
                .map(|r| {
                    serde_json::from_str(r)
                        .map_err(|e| StoreError::Internal(format!("stored review: {e}")))
                })
                .collect()
        })
    }

    fn finish_review(
        &self,
        job: JobId,
        tenant: &str,
        reviewed: &[ReviewedMemory],
    ) -> Result<usize, StoreError> {
        self.write(|tx| {
            let exists: bool = tx
                .query_row("SELECT EXISTS (SELECT 1 FROM jobs WHERE id = ?1)", [job.0], |r| {
                    r.get(0)
                })
                .map_err(map_err)?;
            if !exists {
                return Err(StoreError::Conflict(format!("review job {} is gone", job.0)));
            }
            let mut update = tx
        .prepare_cached(
            "UPDATE episodes SET stability = ?3, difficulty = ?4, last_review = ?5, due = ?6
             WHERE id = ?1 AND last_review IS ?2
               AND conversation_id IN (SELECT id FROM conversations WHERE tenant = ?7)",
        )
        .map_err(map_err)?;
            let mut changed = tx
                .prepare_cached(
                    "INSERT INTO episode_changes (tenant, episode_id, restated) VALUES (?1, ?2, 1)",
                )
                .map_err(map_err)?;
            let mut count = 0;
            for r in reviewed {
                let n = update
                    .execute(params![
                        r.id.0,
                        r.reviewed_against.map(Timestamp::millis),
                        r.state.stability,
                        r.state.difficulty,
                        r.state.last_review.map(Timestamp::millis),
                        r.state.due.map(Timestamp::millis),
                        tenant,
                    ])
                    .map_err(map_err)?;
                if n > 0 {
                    changed.execute(params![tenant, r.id.0]).map_err(map_err)?;
                    tx.execute(
                "INSERT INTO episode_reviews (episode_id, conversation_id, reviewed_at, stability,
                   difficulty, due)
                 SELECT id, conversation_id, last_review, stability, difficulty, due
                 FROM episodes WHERE id = ?1",
                [&r.id.0],
            )
            .map_err(map_err)?;
                    count += 1;
                }
            }
            tx.execute("DELETE FROM pending_reviews WHERE job_id = ?1", [job.0])
                .map_err(map_err)?;
            tx.execute("DELETE FROM jobs WHERE id = ?1", [job.0]).map_err(map_err)?;
            Ok(count)
        })
    }

    fn take_pending_reviews(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Vec<PendingReview>, StoreError> {
        self.write(|tx| {
            let Some(id) = rows::conversation_id(tx, conversation)? else { return Ok(Vec::new()) };
            let mut stmt = tx
        .prepare_cached(
            "SELECT review FROM pending_reviews WHERE conversation_id = ?1 AND job_id IS NULL
             ORDER BY id",
        )
        .map_err(map_err)?;
            let raw: Vec<String> =
                stmt.query_map([id], |r| r.get(0)).and_then(Iterator::collect).map_err(map_err)?;
            let reviews = raw
                .iter()
                .map(|r| {
                    serde_json::from_str(r)
                        .map_err(|e| StoreError::Internal(format!("stored review: {e}")))
                })
                .collect::<Result<Vec<PendingReview>, _>>()?;
            tx.execute(
                "DELETE FROM pending_reviews WHERE conversation_id = ?1 AND job_id IS NULL",
                [id],
            )
            .map_err(map_err)?;
            Ok(reviews)
        })
    }
}
