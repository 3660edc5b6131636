//! What the store holds and what language-model calls cost: counts, and running totals of
//! tokens by stage.

use epimem_core::{LlmStage, LlmUsage};
use epimem_store::{Stats, StoreError, Usage};

use crate::{
    PostgresStore,
    rows::{int, uint},
};

impl Usage for PostgresStore {
    fn record_llm_usage(
        &self,
        tenant: &str,
        stage: LlmStage,
        usage: &LlmUsage,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute(
                "INSERT INTO llm_usage
                     (tenant, stage, calls, failures, prompt_tokens, completion_tokens, latency_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)
                 ON CONFLICT (tenant, stage) DO UPDATE SET
                     calls = llm_usage.calls + excluded.calls,
                     failures = llm_usage.failures + excluded.failures,
                     prompt_tokens = llm_usage.prompt_tokens + excluded.prompt_tokens,
                     completion_tokens = llm_usage.completion_tokens + excluded.completion_tokens,
                     latency_ms = llm_usage.latency_ms + excluded.latency_ms",
                &[
                    &tenant,
                    &stage.as_str(),
                    &int(usage.calls),
                    &int(usage.failures),
                    &int(usage.prompt_tokens),
                    &int(usage.completion_tokens),
                    &int(usage.latency_ms),
                ],
            )?;
            Ok(())
        })
    }

    fn llm_usage(&self, tenant: Option<&str>) -> Result<Vec<(LlmStage, LlmUsage)>, StoreError> {
        self.read(|tx| {
            let rows = tx.query(
        "SELECT stage, sum(calls)::bigint, sum(failures)::bigint, sum(prompt_tokens)::bigint,
                sum(completion_tokens)::bigint, sum(latency_ms)::bigint
         FROM llm_usage WHERE $1::text IS NULL OR tenant = $1 GROUP BY stage",
        &[&tenant],
    )?;
            let mut totals = Vec::with_capacity(rows.len());
            for r in &rows {
                let n = |i: usize| r.get::<_, i64>(i).max(0) as u64;
                let stage: String = r.get(0);
                let stage = stage.parse().map_err(StoreError::Internal)?;
                totals.push((
                    stage,
                    LlmUsage {
                        calls: n(1),
                        failures: n(2),
                        prompt_tokens: n(3),
                        completion_tokens: n(4),
                        latency_ms: n(5),
                    },
                ));
            }
            totals.sort_by_key(|(stage, _)| *stage);
            Ok(totals)
        })
    }

    fn stats(&self, tenant: Option<&str>) -> Result<Stats, StoreError> {
        self.read(|tx| {
            let r = tx.query_one(
                "SELECT
                 (SELECT count(*) FROM conversations c WHERE $1::text IS NULL OR c.tenant = $1),
                 (SELECT coalesce(sum(last_seq), 0)::bigint FROM conversations c
                     WHERE $1::text IS NULL OR c.tenant = $1),
                 (SELECT coalesce(sum(last_seq - watermark), 0)::bigint FROM conversations c
                     WHERE $1::text IS NULL OR c.tenant = $1),
                 (SELECT count(*) FROM episodes e JOIN conversations c ON c.id = e.conversation_id
                     WHERE $1::text IS NULL OR c.tenant = $1),
                 (SELECT count(*) FROM jobs WHERE state = 'queued'),
                 (SELECT count(*) FROM jobs WHERE state = 'failed')",
                &[&tenant],
            )?;
            Ok(Stats {
                conversations: uint(&r, 0),
                messages: uint(&r, 1),
                pending_messages: uint(&r, 2),
                episodes: uint(&r, 3),
                queued_jobs: uint(&r, 4),
                failed_jobs: uint(&r, 5),
            })
        })
    }
}
