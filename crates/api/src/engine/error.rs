//! Engine errors.

use epimem_core::ErrorKind;
use epimem_store::StoreError;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    #[error("invalid input: {0}")]
    Invalid(String),
    /// A message of a batch is outside what a message may be (nothing of the batch is stored).
    #[error("invalid input: message {index} of the batch: {problem}")]
    InvalidMessage { index: usize, problem: epimem_core::MessageProblem },
    #[error("not found: {0}")]
    NotFound(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] epimem_embed::EmbedError),
    /// The search index failed (derived state: rebuilt from the store).
    #[error(transparent)]
    Search(#[from] epimem_search::SearchError),
    /// The language model gave no usable answer (after its retries).
    #[error("{0}")]
    Model(String),
    /// The tenant's search index is still being built from the store (after a recall waited
    /// a while for it): a recall now would miss much of what is stored.
    #[error(
        "the search index of tenant {0} is being built from the database; recall once it is \
         ready (see /readyz or the server's log)"
    )]
    IndexBuilding(String),
    /// A period of the timeline could not be rolled up (the others were).
    #[error("timeline: {0}")]
    Timeline(String),
}

impl EngineError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Invalid(_) | Self::InvalidMessage { .. } => ErrorKind::BadInput,
            Self::NotFound(_) => ErrorKind::NotFound,
            Self::Store(e) => e.kind(),
            Self::Embed(epimem_embed::EmbedError::Inference(_)) => ErrorKind::Internal,
            Self::Embed(_) => ErrorKind::Unavailable,
            Self::Search(e) => e.kind(),
            Self::Model(_) | Self::IndexBuilding(_) => ErrorKind::Unavailable,
            Self::Timeline(_) => ErrorKind::Internal,
        }
    }
}
