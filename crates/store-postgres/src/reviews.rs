//! Pending reviews: what recall returned, waiting for the review job.

use epimem_core::{ConversationKey, EpisodeId, JobId, JobKind, Timestamp};
use epimem_store::{PendingReview, ReviewedMemory, Reviews, StoreError};

use crate::{Failure, PostgresStore, Tx, changes, rows};

fn decode(value: serde_json::Value) -> Result<PendingReview, StoreError> {
    serde_json::from_value(value).map_err(|e| StoreError::Internal(format!("stored review: {e}")))
}

pub(crate) fn record(
    tx: &mut Tx<'_>,
    conversation: &ConversationKey,
    review: &PendingReview,
) -> Result<(), Failure> {
    let id = rows::conversation_id(tx, conversation)?
        .ok_or_else(|| StoreError::NotFound(format!("conversation {conversation}")))?;
    let json = serde_json::to_value(review)
        .map_err(|e| StoreError::Internal(format!("encoding a review: {e}")))?;
    tx.execute(
        "INSERT INTO pending_reviews (conversation_id, review) VALUES ($1, $2)",
        &[&id, &json],
    )?;
    Ok(())
}

/// Queues a review job for the conversation's pending reviews, if it has any, and holds them
/// for it; `following` are the episodes just closed after them.
pub(crate) fn queue_review(
    tx: &mut Tx<'_>,
    conversation_id: i64,
    conversation: &ConversationKey,
    following: Vec<EpisodeId>,
) -> Result<(), Failure> {
    let pending: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pending_reviews
                            WHERE conversation_id = $1 AND job_id IS NULL)",
            &[&conversation_id],
        )?
        .get(0);
    if !pending || following.is_empty() {
        return Ok(());
    }
    let kind = JobKind::Review { conversation: conversation.clone(), following };
    let job = rows::insert_job(tx, &kind)?;
    tx.execute(
        "UPDATE pending_reviews SET job_id = $2 WHERE conversation_id = $1 AND job_id IS NULL",
        &[&conversation_id, &job],
    )?;
    Ok(())
}

impl Reviews for PostgresStore {
    fn record_pending_review(
        &self,
        conversation: &ConversationKey,
        review: &PendingReview,
    ) -> Result<(), StoreError> {
        self.write(|tx| record(tx, conversation, review))
    }

    fn reviews_of_job(&self, job: JobId) -> Result<Vec<PendingReview>, StoreError> {
        self.read(|tx| {
            let rows = tx.query(
                "SELECT review FROM pending_reviews WHERE job_id = $1 ORDER BY id",
                &[&job.0],
            )?;
            Ok(rows.iter().map(|r| decode(r.get(0))).collect::<Result<_, _>>()?)
        })
    }

    fn finish_review(
        &self,
        job: JobId,
        tenant: &str,
        reviewed: &[ReviewedMemory],
    ) -> Result<usize, StoreError> {
        self.write(|tx| {
            let exists: bool =
                tx.query_one("SELECT EXISTS (SELECT 1 FROM jobs WHERE id = $1)", &[&job.0])?.get(0);
            if !exists {
                return Err(StoreError::Conflict(format!("review job {} is gone", job.0)).into());
            }
            let mut changed = Vec::new();
            for r in reviewed {
                let n = tx.execute(
            "UPDATE episodes SET stability = $3, difficulty = $4, last_review = $5, due = $6
             WHERE id = $1 AND last_review IS NOT DISTINCT FROM $2
               AND conversation_id IN (SELECT id FROM conversations WHERE tenant = $7)",
            &[
                &r.id.0,
                &r.reviewed_against.map(Timestamp::millis),
                &r.state.stability,
                &r.state.difficulty,
                &r.state.last_review.map(Timestamp::millis),
                &r.state.due.map(Timestamp::millis),
                &tenant,
            ],
        )?;
                if n > 0 {
                    tx.execute(
                "INSERT INTO episode_reviews (episode_id, conversation_id, reviewed_at, stability,
                   difficulty, due)
                 SELECT id, conversation_id, last_review, stability, difficulty, due
                 FROM episodes WHERE id = $1",
                &[&r.id.0],
            )?;
                    changed.push(r.id.clone());
                }
            }
            changes::append(tx, tenant, &changed, changes::Change::Restated)?;
            tx.execute("DELETE FROM pending_reviews WHERE job_id = $1", &[&job.0])?;
            tx.execute("DELETE FROM jobs WHERE id = $1", &[&job.0])?;
            Ok(changed.len())
        })
    }

    fn take_pending_reviews(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Vec<PendingReview>, StoreError> {
        self.write(|tx| {
            let Some(id) = rows::conversation_id(tx, conversation)? else { return Ok(Vec::new()) };
            let rows = tx.query(
                "DELETE FROM pending_reviews WHERE conversation_id = $1 AND job_id IS NULL
                 RETURNING id, review",
                &[&id],
            )?;
            let mut taken: Vec<(i64, serde_json::Value)> =
                rows.iter().map(|r| (r.get(0), r.get(1))).collect();
            taken.sort_by_key(|(id, _)| *id);
            Ok(taken.into_iter().map(|(_, r)| decode(r)).collect::<Result<_, _>>()?)
        })
    }
}
