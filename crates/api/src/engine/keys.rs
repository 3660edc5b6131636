//! API keys: 256 random bits shown once, kept only as their SHA-256.

use epimem_store::ApiKey;
use sha2::{Digest, Sha256};

use crate::engine::{Engine, EngineError};

/// What every key starts with, so a leaked one is recognisable (secret scanners, logs).
const PREFIX: &str = "epm_";

impl Engine {
    /// Makes a key for `tenant`; the key is returned this once and never stored.
    pub(crate) fn create_api_key(
        &self,
        tenant: &str,
        name: &str,
    ) -> Result<(ApiKey, String), EngineError> {
        if tenant.trim().is_empty() {
            return Err(EngineError::Invalid("tenant must not be empty".into()));
        }
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)
            .map_err(|e| EngineError::Invalid(format!("no randomness for a key: {e}")))?;
        let key = format!("{PREFIX}{}", hex(&bytes));
        let stored = self.store.create_api_key(tenant, name, &hash(&key), self.clock.now())?;
        Ok((stored, key))
    }

    /// The keys (of `tenant`, if given), revoked ones too.
    pub(crate) fn api_keys(&self, tenant: Option<&str>) -> Result<Vec<ApiKey>, EngineError> {
        Ok(self.store.api_keys(tenant)?)
    }

    /// Whether any key not revoked exists: then every request to a server needs one.
    pub(crate) fn api_keys_exist(&self) -> Result<bool, EngineError> {
        Ok(self.store.api_keys(None)?.iter().any(|k| k.revoked.is_none()))
    }

    /// Revokes key `id`: requests with it are refused from now on.
    pub(crate) fn revoke_api_key(&self, id: u64) -> Result<(), EngineError> {
        if !self.store.revoke_api_key(id, self.clock.now())? {
            return Err(EngineError::NotFound(format!("an active API key with id {id}")));
        }
        Ok(())
    }

    /// The tenant `key` works in, or `None` for a key that is unknown or revoked.
    pub(crate) fn tenant_of_api_key(&self, key: &str) -> Result<Option<String>, EngineError> {
        if !key.starts_with(PREFIX) {
            return Ok(None);
        }
        Ok(self.store.tenant_of_api_key(&hash(key))?)
    }
}

fn hash(key: &str) -> String {
    hex(&Sha256::digest(key.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_sha256_in_hex() {
        // The SHA-256 of "abc", from FIPS 180-2.
        assert_eq!(hash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
