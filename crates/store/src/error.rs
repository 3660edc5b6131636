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
            Self::Unavailable(_) => ErrorKind::Unavailable,
            Self::Internal(_) => ErrorKind::Internal,
        }
    }
}
