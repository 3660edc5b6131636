//! Counts.

use epimem_store::Stats;

use crate::{Failure, Tx, rows::uint};

pub(crate) fn stats(tx: &mut Tx<'_>, tenant: Option<&str>) -> Result<Stats, Failure> {
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
}
