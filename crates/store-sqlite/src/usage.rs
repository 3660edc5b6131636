//! What the store holds and what language-model calls cost: counts, and running totals of
//! tokens by stage.

use epimem_core::{LlmStage, LlmUsage};
use epimem_store::{Stats, StoreError, Usage};
use rusqlite::params;

use crate::{SqliteStore, map_err};

impl Usage for SqliteStore {
    fn record_llm_usage(
        &self,
        tenant: &str,
        stage: LlmStage,
        usage: &LlmUsage,
    ) -> Result<(), StoreError> {
        self.write(|tx| {

    let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    tx.execute(
        "INSERT INTO llm_usage (tenant, stage, calls, failures, prompt_tokens, completion_tokens, latency_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (tenant, stage) DO UPDATE SET
             calls = calls + excluded.calls,
             failures = failures + excluded.failures,
             prompt_tokens = prompt_tokens + excluded.prompt_tokens,
             completion_tokens = completion_tokens + excluded.completion_tokens,
             latency_ms = latency_ms + excluded.latency_ms",
        params![
            tenant,
            stage.as_str(),
            count(usage.calls),
            count(usage.failures),
            count(usage.prompt_tokens),
            count(usage.completion_tokens),
            count(usage.latency_ms),
        ],
    )
    .map_err(map_err)?;
    Ok(())
        })
    }

    fn llm_usage(&self, tenant: Option<&str>) -> Result<Vec<(LlmStage, LlmUsage)>, StoreError> {
        self.read(|conn| {
            let mut statement = conn
        .prepare_cached(
            "SELECT stage, sum(calls), sum(failures), sum(prompt_tokens), sum(completion_tokens),
                    sum(latency_ms)
             FROM llm_usage WHERE ?1 IS NULL OR tenant = ?1 GROUP BY stage",
        )
        .map_err(map_err)?;
            let rows = statement
                .query_map(params![tenant], |r| {
                    let n = |i: usize| r.get::<_, i64>(i).map(|v| v.max(0) as u64);
                    Ok((
                        r.get::<_, String>(0)?,
                        LlmUsage {
                            calls: n(1)?,
                            failures: n(2)?,
                            prompt_tokens: n(3)?,
                            completion_tokens: n(4)?,
                            latency_ms: n(5)?,
                        },
                    ))
                })
                .map_err(map_err)?;
            let mut totals = Vec::new();
            for row in rows {
                let (stage, usage) = row.map_err(map_err)?;
                let stage = stage.parse().map_err(StoreError::Internal)?;
                totals.push((stage, usage));
            }
            totals.sort_by_key(|(stage, _)| *stage);
            Ok(totals)
        })
    }

    fn stats(&self, tenant: Option<&str>) -> Result<Stats, StoreError> {
        self.read(|conn| {

    conn.query_row(
        "SELECT
             (SELECT count(*) FROM conversations c WHERE ?1 IS NULL OR c.tenant = ?1),
             (SELECT coalesce(sum(last_seq), 0) FROM conversations c WHERE ?1 IS NULL OR c.tenant = ?1),
             (SELECT coalesce(sum(last_seq - watermark), 0) FROM conversations c
                 WHERE ?1 IS NULL OR c.tenant = ?1),
             (SELECT count(*) FROM episodes e JOIN conversations c ON c.id = e.conversation_id
                 WHERE ?1 IS NULL OR c.tenant = ?1),
             (SELECT count(*) FROM jobs WHERE state = 'queued'),
             (SELECT count(*) FROM jobs WHERE state = 'failed')",
        params![tenant],
        |r| {
            Ok(Stats {
                conversations: r.get(0)?,
                messages: r.get(1)?,
                pending_messages: r.get(2)?,
                episodes: r.get(3)?,
                queued_jobs: r.get(4)?,
                failed_jobs: r.get(5)?,
            })
        },
    )
    .map_err(map_err)
        })
    }
}
