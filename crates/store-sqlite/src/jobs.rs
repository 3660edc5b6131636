//! The durable job table: claimed with leases, retired in the transaction that does the work.

use epimem_core::{ConversationKey, Job, JobId, JobKind, Timestamp};
use epimem_store::{
    JobState, JobStatus, Jobs, JobsOf, StoreError,
    rules::{self, Abandonment},
};
use rusqlite::{OptionalExtension, params};

use crate::{SqliteStore, map_err};

impl Jobs for SqliteStore {
    fn abandon_job(
        &self,
        job: JobId,
        conversation: Option<&ConversationKey>,
        error: &str,
        retry_at: Option<Timestamp>,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            let fence_job = match conversation {
        Some(key) => tx
            .query_row(
                "SELECT fence_job FROM conversations WHERE tenant = ?1 AND external_id = ?2",
                params![key.tenant, key.conversation],
                |r| r.get::<_, Option<i64>>(0),
            )
            .optional()
            .map_err(map_err)?
            .flatten()
            .map(JobId),
        None => None,
    };
            let release_fence = match rules::abandonment(job, fence_job, retry_at) {
                Abandonment::Retry { at } => {
                    // No owner and a lease end in the future: it waits until then.
                    tx.execute(
                        "UPDATE jobs SET lease_owner = NULL, lease_until = ?3, last_error = ?2
                         WHERE id = ?1 AND state = 'queued'",
                        params![job.0, error, at.millis()],
                    )
                    .map_err(map_err)?;
                    return Ok(());
                }
                Abandonment::Park { release_fence } => release_fence,
            };
            if let (true, Some(key)) = (release_fence, conversation) {
                tx.execute(
            "UPDATE conversations SET fence_job = NULL, fence_upto = NULL, fence_since = NULL
             WHERE tenant = ?1 AND external_id = ?2",
            params![key.tenant, key.conversation],
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
        })
    }

    fn renew_lease(&self, job: JobId, worker: &str, until: Timestamp) -> Result<bool, StoreError> {
        self.write(|tx| {
            let renewed = tx
                .execute(
                    "UPDATE jobs SET lease_until = ?3
                     WHERE id = ?1 AND state = 'queued' AND lease_owner = ?2",
                    params![job.0, worker, until.millis()],
                )
                .map_err(map_err)?;
            Ok(renewed == 1)
        })
    }

    fn jobs(
        &self,
        tenant: &str,
        conversation: Option<&str>,
        now: Timestamp,
        limit: usize,
    ) -> Result<Vec<JobStatus>, StoreError> {
        self.read(|conn| {
            let mut statement = conn
        .prepare_cached(
            "SELECT id, payload, state, attempts, last_error, lease_owner, lease_until FROM jobs
             WHERE json_extract(payload, '$.conversation.tenant') = ?1
               AND (?2 IS NULL OR json_extract(payload, '$.conversation.conversation') = ?2)
             ORDER BY id LIMIT ?3",
        )
        .map_err(map_err)?;
            let rows = statement
                .query_map(params![tenant, conversation, limit as i64], |r| {
                    let payload: String = r.get(1)?;
                    let state: String = r.get(2)?;
                    let owner: Option<String> = r.get(5)?;
                    let until: Option<i64> = r.get(6)?;
                    let leased = until.is_some_and(|u| u > now.millis());
                    let state = match (state.as_str(), leased, owner.is_some()) {
                        ("failed", _, _) => JobState::Parked,
                        (_, true, true) => JobState::Running,
                        (_, true, false) => JobState::Retrying,
                        _ => JobState::Queued,
                    };
                    let kind = serde_json::from_str::<JobKind>(&payload).ok();
                    let conversation = kind.as_ref().map(|k| k.conversation().clone());
                    Ok(JobStatus {
                        id: JobId(r.get(0)?),
                        kind: kind.as_ref().map(JobKind::name),
                        conversation,
                        state,
                        attempts: r.get(3)?,
                        last_error: r.get(4)?,
                        worker: if leased { owner } else { None },
                        until: if leased { until.map(Timestamp) } else { None },
                    })
                })
                .map_err(map_err)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(map_err)
        })
    }

    fn claim_job_of(
        &self,
        worker: &str,
        now: Timestamp,
        lease_ms: i64,
        of: JobsOf<'_>,
    ) -> Result<Option<Job>, StoreError> {
        self.write(|tx| {
            let (tenant, conversation) = of.filter();
            loop {
                let next: Option<(i64, String, u32)> = tx
                    .prepare_cached(
                        "SELECT id, payload, attempts FROM jobs
                         WHERE state = 'queued' AND (lease_until IS NULL OR lease_until <= ?1)
                           AND (?2 IS NULL OR json_extract(payload, '$.conversation.tenant') = ?2)
                           AND (?3 IS NULL
                                OR json_extract(payload, '$.conversation.conversation') = ?3)
                         ORDER BY id LIMIT 1",
                    )
                    .and_then(|mut s| {
                        s.query_row(params![now.millis(), tenant, conversation], |r| {
                            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                        })
                        .optional()
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
        })
    }
}
