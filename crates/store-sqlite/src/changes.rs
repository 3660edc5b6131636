//! The change log of episodes: every episode closed or forgotten, numbered in commit order,
//! per tenant. Search indexes remember the last change they applied and catch up from it, so
//! episodes another process closed or forgot reach every index.

use epimem_core::EpisodeId;
use epimem_store::{ChangeLog, EpisodeChange, StoreError};
use rusqlite::{Connection, Transaction, params};

use crate::{SqliteStore, map_err};

/// Records that the episodes `ids` of `tenant` were forgotten.
pub(crate) fn forgotten(
    tx: &Transaction<'_>,
    tenant: &str,
    ids: &[EpisodeId],
) -> Result<(), StoreError> {
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO episode_changes (tenant, episode_id, forgotten) VALUES (?1, ?2, 1)",
        )
        .map_err(map_err)?;
    for id in ids {
        insert.execute(params![tenant, id.0]).map_err(map_err)?;
    }
    Ok(())
}

/// The number of `tenant`'s newest change (0 before any).
pub(crate) fn generation(conn: &Connection, tenant: &str) -> Result<u64, StoreError> {
    conn.prepare_cached("SELECT coalesce(max(seq), 0) FROM episode_changes WHERE tenant = ?1")
        .and_then(|mut s| s.query_row([tenant], |r| r.get(0)))
        .map_err(map_err)
}

impl ChangeLog for SqliteStore {
    fn change_generation(&self, tenant: &str) -> Result<u64, StoreError> {
        self.read(|conn| generation(conn, tenant))
    }

    fn episode_changes(
        &self,
        tenant: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<EpisodeChange>, StoreError> {
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT seq, episode_id, forgotten, restated FROM episode_changes
                     WHERE tenant = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
                )
                .map_err(map_err)?;
            stmt.query_map(params![tenant, after, limit as i64], |r| {
                Ok(EpisodeChange {
                    seq: r.get(0)?,
                    episode: EpisodeId(r.get(1)?),
                    forgotten: r.get(2)?,
                    restated: r.get(3)?,
                })
            })
            .and_then(|rows| rows.collect())
            .map_err(map_err)
        })
    }
}
