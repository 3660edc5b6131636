//! The durable job table: claimed with leases (`FOR UPDATE SKIP LOCKED`: workers claiming at
//! once take different jobs instead of waiting on each other), retired in the transaction that
//! does the work.

use epimem_core::{ConversationKey, Job, JobId, JobKind, Timestamp};
use epimem_store::{
    JobState, JobStatus, Jobs, JobsOf, StoreError,
    rules::{self, Abandonment},
};

use crate::{PostgresStore, rows::uint};

impl Jobs for PostgresStore {
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
                    .query_opt(
                        "SELECT fence_job FROM conversations WHERE tenant = $1 AND external_id = $2
                         FOR UPDATE",
                        &[&key.tenant, &key.conversation],
                    )?
                    .and_then(|r| r.get::<_, Option<i64>>(0))
                    .map(JobId),
                None => None,
            };
            let release_fence = match rules::abandonment(job, fence_job, retry_at) {
                Abandonment::Retry { at } => {
                    // No owner and a lease end in the future: it waits until then.
                    tx.execute(
                        "UPDATE jobs SET lease_owner = NULL, lease_until = $3, last_error = $2
                         WHERE id = $1 AND state = 'queued'",
                        &[&job.0, &error, &at.millis()],
                    )?;
                    return Ok(());
                }
                Abandonment::Park { release_fence } => release_fence,
            };
            if let (true, Some(key)) = (release_fence, conversation) {
                tx.execute(
            "UPDATE conversations SET fence_job = NULL, fence_upto = NULL, fence_since = NULL
             WHERE tenant = $1 AND external_id = $2",
            &[&key.tenant, &key.conversation],
        )?;
            }
            tx.execute(
        "UPDATE jobs SET state = 'failed', last_error = $2, lease_owner = NULL, lease_until = NULL
         WHERE id = $1",
        &[&job.0, &error],
    )?;
            Ok(())
        })
    }

    fn renew_lease(&self, job: JobId, worker: &str, until: Timestamp) -> Result<bool, StoreError> {
        self.write(|tx| {
            let renewed = tx.execute(
        "UPDATE jobs SET lease_until = $3 WHERE id = $1 AND state = 'queued' AND lease_owner = $2",
        &[&job.0, &worker, &until.millis()],
    )?;
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
        self.read(|tx| {
            let rows = tx.query(
        "SELECT id, payload, state, attempts, last_error, lease_owner, lease_until FROM jobs
         WHERE payload -> 'conversation' ->> 'tenant' = $1
           AND ($2::text IS NULL OR payload -> 'conversation' ->> 'conversation' = $2)
         ORDER BY id LIMIT $3",
        &[&tenant, &conversation, &(limit.min(i64::MAX as usize) as i64)],
    )?;
            Ok(rows
                .iter()
                .map(|r| {
                    let payload: serde_json::Value = r.get(1);
                    let state: String = r.get(2);
                    let owner: Option<String> = r.get(5);
                    let until: Option<i64> = r.get(6);
                    let leased = until.is_some_and(|u| u > now.millis());
                    let state = match (state.as_str(), leased, owner.is_some()) {
                        ("failed", _, _) => JobState::Parked,
                        (_, true, true) => JobState::Running,
                        (_, true, false) => JobState::Retrying,
                        _ => JobState::Queued,
                    };
                    let kind = serde_json::from_value::<JobKind>(payload).ok();
                    JobStatus {
                        id: JobId(r.get(0)),
                        kind: kind.as_ref().map(JobKind::name),
                        conversation: kind.as_ref().map(|k| k.conversation().clone()),
                        state,
                        attempts: u32::try_from(uint(r, 3)).unwrap_or(u32::MAX),
                        last_error: r.get(4),
                        worker: if leased { owner } else { None },
                        until: if leased { until.map(Timestamp) } else { None },
                    }
                })
                .collect())
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
                let Some(row) = tx.query_opt(
                    "SELECT id, payload, attempts FROM jobs
                     WHERE state = 'queued' AND (lease_until IS NULL OR lease_until <= $1)
                       AND ($2::text IS NULL OR payload -> 'conversation' ->> 'tenant' = $2)
                       AND ($3::text IS NULL OR payload -> 'conversation' ->> 'conversation' = $3)
                     ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
                    &[&now.millis(), &tenant, &conversation],
                )?
                else {
                    return Ok(None);
                };
                let (id, payload): (i64, serde_json::Value) = (row.get(0), row.get(1));
                let attempts = u32::try_from(uint(&row, 2)).unwrap_or(u32::MAX);
                match serde_json::from_value::<JobKind>(payload) {
                    Ok(kind) => {
                        tx.execute(
                    "UPDATE jobs SET lease_owner = $2, lease_until = $3, attempts = attempts + 1
                     WHERE id = $1",
                    &[&id, &worker, &now.plus_millis(lease_ms).millis()],
                )?;
                        return Ok(Some(Job { id: JobId(id), kind, attempts: attempts + 1 }));
                    }
                    Err(e) => {
                        // A job this version cannot read must not block the ones behind it.
                        tx.execute(
                            "UPDATE jobs SET state = 'failed', last_error = $2 WHERE id = $1",
                            &[&id, &format!("unreadable job: {e}")],
                        )?;
                    }
                }
            }
        })
    }
}
