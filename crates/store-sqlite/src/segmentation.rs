//! Fences, segmentation batches and the one-transaction commit.

use epimem_core::{ConversationKey, Episode, JobId, JobKind, Timestamp, Trigger};
use epimem_store::{
    Segmentation, SegmentationBatch, SegmentationCommit, StoreError,
    rules::{self, FenceRow, Opening},
};
use rusqlite::{Connection, Transaction, params};

use crate::{SqliteStore, map_err, rows};

fn conversation_id(tx: &Connection, key: &ConversationKey) -> Result<i64, StoreError> {
    rows::conversation_id(tx, key)?
        .ok_or_else(|| StoreError::NotFound(format!("conversation {key}")))
}

/// The queue and fence of conversation `id`.
fn fence_row(tx: &Connection, id: i64) -> Result<FenceRow, StoreError> {
    tx.query_row(
        "SELECT last_seq, watermark, fence_job, fence_upto, fence_since
         FROM conversations WHERE id = ?1",
        [id],
        |r| {
            Ok(FenceRow {
                last_seq: r.get(0)?,
                watermark: r.get(1)?,
                fence_job: r.get::<_, Option<i64>>(2)?.map(JobId),
                fence_upto: r.get(3)?,
                fence_since: r.get::<_, Option<i64>>(4)?.map(Timestamp),
            })
        },
    )
    .map_err(map_err)
}

/// Stores an episode of the conversation with internal id `conversation_id` and logs it as
/// closed for the search indexes.
pub(crate) fn insert_episode(
    tx: &Transaction<'_>,
    tenant: &str,
    conversation_id: i64,
    e: &Episode,
) -> Result<(), StoreError> {
    tx.prepare_cached("INSERT INTO episode_changes (tenant, episode_id) VALUES (?1, ?2)")
        .and_then(|mut s| s.execute(params![tenant, e.id.0]))
        .map_err(map_err)?;
    let keywords = serde_json::to_string(&e.keywords)
        .map_err(|err| StoreError::Internal(format!("encoding keywords: {err}")))?;
    tx.prepare_cached(
        "INSERT INTO episodes (id, conversation_id, first_seq, last_seq, context_first_seq,
             start_ts, end_ts, title, summary, keywords, surprise, boundary_reason,
             stability, difficulty, last_review, due, told_by, told_note)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
    )
    .and_then(|mut s| {
        s.execute(params![
            e.id.0,
            conversation_id,
            e.first_seq,
            e.last_seq,
            e.context_first_seq,
            e.start.millis(),
            e.end.millis(),
            e.title,
            e.summary,
            keywords,
            e.surprise,
            e.boundary_reason.as_str(),
            e.fsrs.stability,
            e.fsrs.difficulty,
            e.fsrs.last_review.map(Timestamp::millis),
            e.fsrs.due.map(Timestamp::millis),
            e.told_by.as_str(),
            e.told_note,
        ])
    })
    .map_err(map_err)?;
    Ok(())
}

impl Segmentation for SqliteStore {
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
                    "UPDATE jobs SET state = 'failed', last_error = 'fence expired' WHERE id = ?1",
                    [old.0],
                )
                .map_err(map_err)?;
            }
            let kind = JobKind::Segment {
                conversation: key.clone(),
                upto_seq: trigger.upto_seq,
                trigger: trigger.kind,
            };
            let payload = serde_json::to_string(&kind)
                .map_err(|e| StoreError::Internal(format!("encoding job: {e}")))?;
            tx.execute("INSERT INTO jobs (payload) VALUES (?1)", [payload]).map_err(map_err)?;
            let job = tx.last_insert_rowid();
            tx.execute(
        "UPDATE conversations SET fence_job = ?2, fence_upto = ?3, fence_since = ?4 WHERE id = ?1",
        params![id, job, trigger.upto_seq, now.millis()],
    )
    .map_err(map_err)?;
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
    let (watermark, window_doubled, user, agent): (u64, bool, Option<String>, Option<String>) = tx
        .query_row(
            "SELECT watermark, window_doubled, user_id, agent_id FROM conversations WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .map_err(map_err)?;
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
            for e in &commit.episodes {
                insert_episode(tx, &key.tenant, id, e)?;
            }
            tx.execute(
                "UPDATE conversations SET watermark = ?2, window_doubled = ?3,
                     fence_job = NULL, fence_upto = NULL, fence_since = NULL
                 WHERE id = ?1",
                params![id, new_watermark, commit.window_doubled],
            )
            .map_err(map_err)?;
            tx.execute("DELETE FROM jobs WHERE id = ?1", [commit.job.0]).map_err(map_err)?;
            let closed: Vec<_> = commit.episodes.iter().map(|e| e.id.clone()).collect();
            if let Some(rule) = commit.consolidate.filter(|_| !closed.is_empty()) {
                crate::facts::queue_if_due(tx, id, key, new_watermark, rule)?;
            }
            crate::reviews::queue_review(tx, id, key, closed)
        })
    }
}
