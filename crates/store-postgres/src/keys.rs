//! API keys, kept by hash.

use epimem_core::Timestamp;
use epimem_store::{ApiKey, ApiKeys, StoreError};

use crate::PostgresStore;

impl ApiKeys for PostgresStore {
    fn create_api_key(
        &self,
        tenant: &str,
        name: &str,
        hash: &str,
        at: Timestamp,
    ) -> Result<ApiKey, StoreError> {
        self.write(|tx| {
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
        })
    }

    fn api_keys(&self, tenant: Option<&str>) -> Result<Vec<ApiKey>, StoreError> {
        self.read(|tx| {
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
        })
    }

    fn revoke_api_key(&self, id: u64, at: Timestamp) -> Result<bool, StoreError> {
        self.write(|tx| {
            let changed = tx.execute(
                "UPDATE api_keys SET revoked = $2 WHERE id = $1 AND revoked IS NULL",
                &[&i64::try_from(id).unwrap_or(-1), &at.millis()],
            )?;
            Ok(changed == 1)
        })
    }

    fn tenant_of_api_key(&self, hash: &str) -> Result<Option<String>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .query_opt(
                    "SELECT tenant FROM api_keys WHERE hash = $1 AND revoked IS NULL",
                    &[&hash],
                )?
                .map(|r| r.get(0)))
        })
    }
}
