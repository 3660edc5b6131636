//! Storage errors.

use epimem_core::ErrorKind;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The request cannot be stored as given.
    #[error("invalid: {0}")]
    Invalid(String),
    #[error("not found: {0}")]
    NotFound(String),
    /// Another writer got there first (a fence or lease was lost).
    #[error("conflict: {0}")]
    Conflict(String),
    /// The database is busy, locked or unreachable.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// The disk (or the database's quota) is full: nothing more can be written until space
    /// is freed. What was stored before stays.
    #[error("storage full: {0}")]
    Full(String),
    /// Corruption, a schema from the future, or a defect.
    #[error("storage failure: {0}")]
    Internal(String),
}

impl StoreError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Invalid(_) => ErrorKind::BadInput,
            Self::NotFound(_) => ErrorKind::NotFound,
            Self::Conflict(_) => ErrorKind::Conflict,
            Self::Unavailable(_) | Self::Full(_) => ErrorKind::Unavailable,
            Self::Internal(_) => ErrorKind::Internal,
        }
    }
}

/// Whether writes fail for lack of space: the last write that did, until one goes through.
/// Every backend keeps one ([`crate::Store::out_of_space`]), so a server can say it is not
/// ready while the disk is full rather than only fail each write.
#[derive(Debug, Default)]
pub struct SpaceWatch(std::sync::Mutex<Option<String>>);

impl SpaceWatch {
    /// Notes how a write went: `Ok(true)` when it stored something (which takes space), and
    /// `Ok(false)` when it changed nothing, which says nothing of the space left.
    pub fn note<T>(&self, write: &Result<(T, bool), StoreError>) {
        let mut full = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match write {
            Err(StoreError::Full(why)) => *full = Some(why.clone()),
            Ok((_, true)) => *full = None,
            _ => {}
        }
    }

    pub fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}
