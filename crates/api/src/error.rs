//! Why a call to [`crate::Memory`] failed: a stable kind (mapped to an HTTP status or an MCP
//! error by each transport, in one place there) and a message naming what was wrong.

use crate::engine::EngineError;
use epimem_core::ErrorKind;

/// A failed call: its kind and what was wrong (`query: must not be empty`).
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", kind.code())]
pub struct MemoryError {
    kind: ErrorKind,
    message: String,
}

impl MemoryError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }

    /// The request itself is wrong (a field, a value).
    pub fn bad_input(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::BadInput, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    /// The request contradicts the state it works on.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Conflict, message)
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The stable code (`bad_input`, `not_found`, …).
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

/// What the store refused, for the calls that reach it directly (export, import, a queue).
impl From<epimem_store::StoreError> for MemoryError {
    fn from(e: epimem_store::StoreError) -> Self {
        EngineError::from(e).into()
    }
}

impl From<EngineError> for MemoryError {
    fn from(e: EngineError) -> Self {
        Self::new(e.kind(), e.to_string())
    }
}
