//! The engine behind [`crate::Memory`]: the order of operations over any store (store,
//! trigger, claim, segment, commit; recall: sync the index, search, rank, render). The pure
//! decisions come from `epimem-core`, the durable state from the store. Its use cases are
//! crate-private: a program builds an [`Engine`] (a constructor and its options) and asks
//! `Memory`; the evaluation harness measures beneath it through [`Engine::measure`].

mod clock;
mod config;
mod consolidation;
mod context;
mod crash;
mod episodes;
mod error;
mod forget;
mod index_repair;
mod indexing;
mod ingest;
mod keys;
mod measure;
mod model_segmentation;
mod next_turn;
mod parts;
mod process;
mod recall;
mod retell;
mod review;
mod segmentation;
mod tail;
mod timeline;
mod wakeup;
mod work;

#[cfg(test)]
mod tests;

pub use clock::{Clock, FixedClock, SystemClock};
pub use config::{ConsolidationConfig, EngineConfig, JobsConfig, TimelineConfig};
pub use consolidation::FactHit;
pub use context::{EpisodeContext, RecalledContext};
pub use crash::{CRASH_POINTS, CrashAt};
pub use error::EngineError;
pub use indexing::{Freshness, IndexTask, RepairLog};
pub use ingest::{IngestReport, MessageInput};
pub use measure::Measure;
pub use next_turn::{NextTurn, NextTurnQuery};
pub use parts::Engine;
pub use process::process_name;
pub use recall::{MessageHit, RecallHit, RecallQuery};
pub use retell::RetellReport;
pub use segmentation::RunReport;
pub use tail::TAIL_REFRESH;
pub use timeline::RollupReport;
pub use work::{Patterns, WorkContextConfig, project_scope};
