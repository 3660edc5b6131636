//! The change log of episodes: every episode closed, forgotten or restated, numbered in
//! commit order per tenant. The tenant's counter row is updated first and stays locked until
//! the transaction ends, so a later number is never visible before an earlier one (a search
//! index that has read up to a number has missed nothing below it).

use epimem_core::EpisodeId;
use epimem_store::{ChangeLog, EpisodeChange, StoreError};

use crate::{
    Failure, PostgresStore, Tx,
    rows::{int, uint},
};

/// What happened to the episodes of one append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    Closed,
    Forgotten,
    Restated,
}

/// Appends one change per episode of `ids` to `tenant`'s log.
pub(crate) fn append(
    tx: &mut Tx<'_>,
    tenant: &str,
    ids: &[EpisodeId],
    change: Change,
) -> Result<(), Failure> {
    if ids.is_empty() {
        return Ok(());
    }
    let count = ids.len() as i64;
    let last: i64 = tx
        .query_one(
            "INSERT INTO change_counters (tenant, last) VALUES ($1, $2)
             ON CONFLICT (tenant) DO UPDATE SET last = change_counters.last + excluded.last
             RETURNING last",
            &[&tenant, &count],
        )?
        .get(0);
    let (forgotten, restated) = (change == Change::Forgotten, change == Change::Restated);
    for (i, id) in ids.iter().enumerate() {
        let seq = last - count + 1 + i as i64;
        tx.execute(
            "INSERT INTO episode_changes (tenant, seq, episode_id, forgotten, restated)
             VALUES ($1, $2, $3, $4, $5)",
            &[&tenant, &seq, &id.0, &forgotten, &restated],
        )?;
    }
    Ok(())
}

/// The number of `tenant`'s newest change (0 before any).
pub(crate) fn generation(tx: &mut Tx<'_>, tenant: &str) -> Result<u64, Failure> {
    let row = tx.query_one(
        "SELECT coalesce(max(seq), 0) FROM episode_changes WHERE tenant = $1",
        &[&tenant],
    )?;
    Ok(uint(&row, 0))
}

impl ChangeLog for PostgresStore {
    fn change_generation(&self, tenant: &str) -> Result<u64, StoreError> {
        self.read(|tx| generation(tx, tenant))
    }

    fn episode_changes(
        &self,
        tenant: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<EpisodeChange>, StoreError> {
        self.read(|tx| {
            let rows = tx.query(
                "SELECT seq, episode_id, forgotten, restated FROM episode_changes
                 WHERE tenant = $1 AND seq > $2 ORDER BY seq LIMIT $3",
                &[&tenant, &int(after), &int(limit as u64)],
            )?;
            Ok(rows
                .iter()
                .map(|r| EpisodeChange {
                    seq: uint(r, 0),
                    episode: EpisodeId(r.get(1)),
                    forgotten: r.get(2),
                    restated: r.get(3),
                })
                .collect())
        })
    }
}
