//! The durable job table: claimed with leases, retired in the transaction that does the work.

use epimem_core::{ConversationKey, Job, JobId, JobKind, Timestamp};
use epimem_store::StoreError;
use rusqlite::{OptionalExtension, Transaction, params};

use crate::map_err;

pub(crate) fn claim(
    tx: &Transaction<'_>,
    worker: &str,
    now: Timestamp,
    lease_ms: i64,
) -> Result<Option<Job>, StoreError> {
    loop {
        let next: Option<(i64, String, u32)> = tx
            .prepare_cached(
                "SELECT id, payload, attempts FROM jobs
                 WHERE state = 'queued' AND (lease_until IS NULL OR lease_until <= ?1)
                 ORDER BY id LIMIT 1",
            )
            .and_then(|mut s| {
                s.query_row([now.millis()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).optional()
            })
            .map_err(map_err)?;
        let Some((id, payload, attempts)) = next else { return Ok(None) };
        match serde_json::from_str::<JobKind>(&payload) {
            Ok(kind) => {
                tx.execute(
                    "UPDATE jobs SET lease_owner = ?2, lease_until = ?3, attempts = attempts + 1
                     WHERE id = ?1",
                    params![id, worker, now.plus_millis(lease_ms).millis()],
                )
                .map_err(map_err)?;
                return Ok(Some(Job { id: JobId(id), kind, attempts: attempts + 1 }));
            }
            Err(e) => {
                // A job this version cannot read must not block the ones behind it.
                tx.execute(
                    "UPDATE jobs SET state = 'failed', last_error = ?2 WHERE id = ?1",
                    params![id, format!("unreadable job: {e}")],
                )
                .map_err(map_err)?;
            }
        }
    }
}

pub(crate) fn abandon(
    tx: &Transaction<'_>,
    job: JobId,
    conversation: Option<&ConversationKey>,
    error: &str,
    retry: bool,
) -> Result<(), StoreError> {
    if retry {
        // The fence stays with the job, which will run again.
        tx.execute(
            "UPDATE jobs SET lease_owner = NULL, lease_until = NULL, last_error = ?2
             WHERE id = ?1 AND state = 'queued'",
            params![job.0, error],
        )
        .map_err(map_err)?;
        return Ok(());
    }
    if let Some(key) = conversation {
        tx.execute(
            "UPDATE conversations SET fence_job = NULL, fence_upto = NULL, fence_since = NULL
             WHERE tenant = ?1 AND external_id = ?2 AND fence_job = ?3",
            params![key.tenant, key.conversation, job.0],
        )
        .map_err(map_err)?;
    }
    tx.execute(
        "UPDATE jobs SET state = 'failed', last_error = ?2, lease_owner = NULL, lease_until = NULL
         WHERE id = ?1",
        params![job.0, error],
    )
    .map_err(map_err)?;
    Ok(())
}
