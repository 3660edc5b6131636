//! API keys, kept by hash.

use epimem_core::Timestamp;
use epimem_store::ApiKey;

use crate::{Failure, Tx};

pub(crate) fn create(
    tx: &mut Tx<'_>,
    tenant: &str,
    name: &str,
    hash: &str,
    at: Timestamp,
) -> Result<ApiKey, Failure> {
    let id: i64 = tx
        .query_one(
            "INSERT INTO api_keys (tenant, name, hash, created) VALUES ($1, $2, $3, $4)
             RETURNING id",
            &[&tenant, &name, &hash, &at.millis()],
        )?
        .get(0);
    Ok(ApiKey {
        id: id as u64,
        tenant: tenant.into(),
        name: name.into(),
        created: at,
        revoked: None,
    })
}

pub(crate) fn list(tx: &mut Tx<'_>, tenant: Option<&str>) -> Result<Vec<ApiKey>, Failure> {
    let rows = tx.query(
        "SELECT id, tenant, name, created, revoked FROM api_keys
         WHERE $1::text IS NULL OR tenant = $1 ORDER BY id",
        &[&tenant],
    )?;
    Ok(rows
        .iter()
        .map(|r| ApiKey {
            id: r.get::<_, i64>(0) as u64,
            tenant: r.get(1),
            name: r.get(2),
            created: Timestamp(r.get(3)),
            revoked: r.get::<_, Option<i64>>(4).map(Timestamp),
        })
        .collect())
}

pub(crate) fn revoke(tx: &mut Tx<'_>, id: u64, at: Timestamp) -> Result<bool, Failure> {
    let changed = tx.execute(
        "UPDATE api_keys SET revoked = $2 WHERE id = $1 AND revoked IS NULL",
        &[&i64::try_from(id).unwrap_or(-1), &at.millis()],
    )?;
    Ok(changed == 1)
}

pub(crate) fn tenant_of(tx: &mut Tx<'_>, hash: &str) -> Result<Option<String>, Failure> {
    Ok(tx
        .query_opt("SELECT tenant FROM api_keys WHERE hash = $1 AND revoked IS NULL", &[&hash])?
        .map(|r| r.get(0)))
}
