//! What a tenant holds, and API keys: for the people who run epimem, not for agents.

use crate::{
    Memory, MemoryError,
    wire::{KeyOut, KeysOut, StatsOut},
};

impl Memory {
    /// Counts of what the tenant holds, and what its language model calls cost.
    pub fn stats(&self, tenant: &str) -> Result<StatsOut, MemoryError> {
        let stats = self.engine.stats(Some(tenant))?;
        Ok(StatsOut::new(stats, &self.engine.llm_usage(Some(tenant))?))
    }

    /// Makes an API key for `tenant`; the answer holds the key, which is never shown again.
    pub fn create_key(&self, tenant: &str, name: &str) -> Result<KeyOut, MemoryError> {
        let (stored, key) = self.engine.create_api_key(tenant, name)?;
        Ok(KeyOut { key: Some(key), ..KeyOut::from(&stored) })
    }

    /// Every tenant's keys (never the keys themselves), revoked ones too, oldest first.
    pub fn keys(&self) -> Result<KeysOut, MemoryError> {
        Ok(KeysOut { keys: self.engine.api_keys(None)?.iter().map(KeyOut::from).collect() })
    }

    /// Revokes key `id`: requests with it are refused from then on.
    pub fn revoke_key(&self, id: u64) -> Result<(), MemoryError> {
        Ok(self.engine.revoke_api_key(id)?)
    }
}
