//! Memory strength (FSRS): how an episode's stability starts and fades, and the reviews that
//! strengthen it when recall shows it.

pub(crate) mod review;
pub(crate) mod strength;

pub use review::{PendingReview, Rating, ReviewItem, aggregate_reviews, may_review, rate_by_use};
pub use strength::{MemoryConfig, MemoryStrength};
