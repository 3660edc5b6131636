//! The storage port of epimem.
//!
//! [`Store`] is shaped by what the engine does ("push these messages", "open a segmentation",
//! "commit these episodes and advance the watermark"), not by tables. Every backend passes the
//! same conformance suite (feature `conformance`).

#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
mod edits;
pub mod encoding;
mod error;
mod roles;
pub mod rules;
pub mod trace;
mod transfer;
mod types;

pub use edits::{EpisodeEdit, EpisodeVersion};
pub use epimem_core::fsrs::PendingReview;
pub use error::{SpaceWatch, StoreError};
pub use roles::{
    ApiKeys, ChangeLog, Edits, Episodes, Facts, Forgetting, Ingest, Jobs, Reviews, Segmentation,
    Store, Timeline, Transfer, Usage, Vectors,
};
pub use transfer::{
    ConversationExport, ExportedFact, ExportedReview, ExportedVectors, ExportedVersion,
};
pub use types::{
    ApiKey, ConsolidationBatch, ConsolidationCommit, ConsolidationRule, EpisodeChange,
    EpisodeCursor, EpisodeDetail, HeldMessage, IndexedMessage, JobState, JobStatus, PushOutcome,
    PushedMessage, ReviewedMemory, SegmentationBatch, SegmentationCommit, Stats, StoredFact,
    TakeBack,
};

/// Whose jobs a claim takes ([`Store::claim_job_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobsOf<'a> {
    /// Anyone's: a worker's.
    Everyone,
    /// One tenant's, of one conversation if given: a flush's, which runs what it closes and
    /// leaves everyone else's work to the workers.
    Tenant { tenant: &'a str, conversation: Option<&'a str> },
}

impl<'a> JobsOf<'a> {
    /// The tenant and conversation to match, `None` for any.
    pub fn filter(self) -> (Option<&'a str>, Option<&'a str>) {
        match self {
            Self::Everyone => (None, None),
            Self::Tenant { tenant, conversation } => (Some(tenant), conversation),
        }
    }
}
