//! API keys, kept by hash.

use epimem_core::Timestamp;
use epimem_store::{ApiKey, StoreError};
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::map_err;

pub(crate) fn create(
    tx: &Transaction<'_>,
    tenant: &str,
    name: &str,
    hash: &str,
    at: Timestamp,
) -> Result<ApiKey, StoreError> {
    tx.execute(
        "INSERT INTO api_keys (tenant, name, hash, created) VALUES (?1, ?2, ?3, ?4)",
        params![tenant, name, hash, at.millis()],
    )
    .map_err(map_err)?;
    let id = tx.last_insert_rowid() as u64;
    Ok(ApiKey { id, tenant: tenant.into(), name: name.into(), created: at, revoked: None })
}

pub(crate) fn list(conn: &Connection, tenant: Option<&str>) -> Result<Vec<ApiKey>, StoreError> {
    let mut statement = conn
        .prepare_cached(
            "SELECT id, tenant, name, created, revoked FROM api_keys
             WHERE ?1 IS NULL OR tenant = ?1 ORDER BY id",
        )
        .map_err(map_err)?;
    let rows = statement
        .query_map(params![tenant], |r| {
            Ok(ApiKey {
                id: r.get::<_, i64>(0)? as u64,
                tenant: r.get(1)?,
                name: r.get(2)?,
                created: Timestamp(r.get(3)?),
                revoked: r.get::<_, Option<i64>>(4)?.map(Timestamp),
            })
        })
        .map_err(map_err)?;
    rows.collect::<Result<_, _>>().map_err(map_err)
}

pub(crate) fn revoke(tx: &Transaction<'_>, id: u64, at: Timestamp) -> Result<bool, StoreError> {
    let changed = tx
        .execute(
            "UPDATE api_keys SET revoked = ?2 WHERE id = ?1 AND revoked IS NULL",
            params![id as i64, at.millis()],
        )
        .map_err(map_err)?;
    Ok(changed == 1)
}

pub(crate) fn tenant_of(conn: &Connection, hash: &str) -> Result<Option<String>, StoreError> {
    conn.query_row(
        "SELECT tenant FROM api_keys WHERE hash = ?1 AND revoked IS NULL",
        params![hash],
        |r| r.get(0),
    )
    .optional()
    .map_err(map_err)
}
