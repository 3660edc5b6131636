//! Counts.

use epimem_store::{Stats, StoreError};
use rusqlite::{Connection, params};

use crate::map_err;

pub(crate) fn stats(conn: &Connection, tenant: Option<&str>) -> Result<Stats, StoreError> {
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
}
