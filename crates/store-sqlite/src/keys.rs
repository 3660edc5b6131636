//! API keys, kept by hash.

use epimem_core::Timestamp;
use epimem_store::{ApiKey, ApiKeys, StoreError};
use rusqlite::{OptionalExtension, params};

use crate::{SqliteStore, map_err};

impl ApiKeys for SqliteStore {
    fn create_api_key(
        &self,
        tenant: &str,
        name: &str,
        hash: &str,
        at: Timestamp,
    ) -> Result<ApiKey, StoreError> {
        self.write(|tx| {
            tx.execute(
                "INSERT INTO api_keys (tenant, name, hash, created) VALUES (?1, ?2, ?3, ?4)",
                params![tenant, name, hash, at.millis()],
            )
            .map_err(map_err)?;
            let id = tx.last_insert_rowid() as u64;
            Ok(ApiKey { id, tenant: tenant.into(), name: name.into(), created: at, revoked: None })
        })
    }

    fn api_keys(&self, tenant: Option<&str>) -> Result<Vec<ApiKey>, StoreError> {
        self.read(|conn| {
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
        })
    }

    fn revoke_api_key(&self, id: u64, at: Timestamp) -> Result<bool, StoreError> {
        self.write(|tx| {
            let changed = tx
                .execute(
                    "UPDATE api_keys SET revoked = ?2 WHERE id = ?1 AND revoked IS NULL",
                    params![id as i64, at.millis()],
                )
                .map_err(map_err)?;
            Ok(changed == 1)
        })
    }

    fn tenant_of_api_key(&self, hash: &str) -> Result<Option<String>, StoreError> {
        self.read(|conn| {
            conn.query_row(
                "SELECT tenant FROM api_keys WHERE hash = ?1 AND revoked IS NULL",
                params![hash],
                |r| r.get(0),
            )
            .optional()
            .map_err(map_err)
        })
    }
}
