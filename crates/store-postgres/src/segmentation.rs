//! Fences, segmentation batches and the one-transaction commit.

use epimem_core::{ConversationKey, Episode, JobId, JobKind, Timestamp, Trigger};
use epimem_store::{
    Segmentation, SegmentationBatch, SegmentationCommit, StoreError,
    rules::{self, FenceRow, Opening},
};

use crate::{
    Failure, PostgresStore, Tx,
    rows::{self, int, opt_uint, uint},
};

fn conversation_id(tx: &mut Tx<'_>, key: &ConversationKey) -> Result<i64, Failure> {
    rows::conversation_id(tx, key)?
        .ok_or_else(|| StoreError::NotFound(format!("conversation {key}")).into())
}

/// The queue and fence of conversation `id`, locked for this transaction.
fn fence_row(tx: &mut Tx<'_>, id: i64) -> Result<FenceRow, Failure> {
    let row = tx.query_one(
        "SELECT last_seq, watermark, fence_job, fence_upto, fence_since
         FROM conversations WHERE id = $1 FOR UPDATE",
        &[&id],
    )?;
    Ok(FenceRow {
        last_seq: uint(&row, 0),
        watermark: uint(&row, 1),
        fence_job: row.get::<_, Option<i64>>(2).map(JobId),
        fence_upto: opt_uint(&row, 3),
        fence_since: row.get::<_, Option<i64>>(4).map(Timestamp),
    })
}

/// Stores an episode of the conversation with internal id `conversation_id` (the caller logs
/// it as closed).
pub(crate) fn insert_episode(
    tx: &mut Tx<'_>,
    conversation_id: i64,
    e: &Episode,
) -> Result<(), Failure> {
    let id = conversation_id;
    let keywords = rows::json(&e.keywords, "keywords")?;
    tx.execute(
        "INSERT INTO episodes (id, conversation_id, first_seq, last_seq, context_first_seq,
             start_ts, end_ts, title, summary, keywords, surprise, boundary_reason,
             stability, difficulty, last_review, due, told_by, told_note)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
             $18)",
        &[
            &e.id.0,
            &id,
            &int(e.first_seq),
            &int(e.last_seq),
            &e.context_first_seq.map(int),
            &e.start.millis(),
            &e.end.millis(),
            &e.title,
            &e.summary,
            &keywords,
            &e.surprise,
            &e.boundary_reason.as_str(),
            &e.fsrs.stability,
            &e.fsrs.difficulty,
            &e.fsrs.last_review.map(Timestamp::millis),
            &e.fsrs.due.map(Timestamp::millis),
            &e.told_by.as_str(),
            &e.told_note,
        ],
    )?;
    Ok(())
}

impl Segmentation for PostgresStore {
    fn open_segmentation(
        &self,
        key: &ConversationKey,
        trigger: Trigger,
        now: Timestamp,
        fence_ttl_ms: i64,
    ) -> Result<Option<JobId>, StoreError> {
        self.write(|tx| {
            let id = conversation_id(tx, key)?;
            let Opening::Open { stale } =
                rules::opening(key, &fence_row(tx, id)?, trigger, now, fence_ttl_ms)?
            else {
                return Ok(None);
            };
            if let Some(old) = stale {
                tx.execute(
                    "UPDATE jobs SET state = 'failed', last_error = 'fence expired' WHERE id = $1",
                    &[&old.0],
                )?;
            }
            let kind = JobKind::Segment {
                conversation: key.clone(),
                upto_seq: trigger.upto_seq,
                trigger: trigger.kind,
            };
            let job = rows::insert_job(tx, &kind)?;
            tx.execute(
        "UPDATE conversations SET fence_job = $2, fence_upto = $3, fence_since = $4 WHERE id = $1",
        &[&id, &job, &int(trigger.upto_seq), &now.millis()],
    )?;
            Ok(Some(JobId(job)))
        })
    }

    fn segmentation_batch(
        &self,
        key: &ConversationKey,
        upto_seq: u64,
        context: usize,
    ) -> Result<SegmentationBatch, StoreError> {
        self.read(|tx| {
            let id = conversation_id(tx, key)?;
            let row = tx.query_one(
        "SELECT watermark, window_doubled, user_id, agent_id FROM conversations WHERE id = $1",
        &[&id],
    )?;
            let (watermark, window_doubled) = (uint(&row, 0), row.get(1));
            let (user, agent) = (row.get(2), row.get(3));
            let pending = rows::messages(tx, id, watermark + 1, upto_seq)?;
            let from = watermark.saturating_sub(context as u64) + 1;
            let context =
                if watermark == 0 { Vec::new() } else { rows::messages(tx, id, from, watermark)? };
            Ok(SegmentationBatch { user, agent, watermark, window_doubled, context, pending })
        })
    }

    fn commit_segmentation(&self, commit: &SegmentationCommit) -> Result<(), StoreError> {
        self.write(|tx| {
            let key = &commit.conversation;
            let id = conversation_id(tx, key)?;
            let new_watermark = rules::committed_watermark(&fence_row(tx, id)?, commit)?;
            let ids: Vec<_> = commit.episodes.iter().map(|e| e.id.clone()).collect();
            crate::changes::append(tx, &key.tenant, &ids, crate::changes::Change::Closed)?;
            for e in &commit.episodes {
                insert_episode(tx, id, e)?;
            }
            tx.execute(
                "UPDATE conversations SET watermark = $2, window_doubled = $3,
                     fence_job = NULL, fence_upto = NULL, fence_since = NULL
                 WHERE id = $1",
                &[&id, &int(new_watermark), &commit.window_doubled],
            )?;
            tx.execute("DELETE FROM jobs WHERE id = $1", &[&commit.job.0])?;
            if let Some(rule) = commit.consolidate.filter(|_| !ids.is_empty()) {
                crate::facts::queue_if_due(tx, id, key, new_watermark, rule)?;
            }
            crate::reviews::queue_review(tx, id, key, ids)
        })
    }
}
