//! epimem's use cases over any [`Store`]: ingest messages, segment them into episodes,
//! recall episodes. The engine owns the order of operations; the pure decisions come from
//! `epimem-core`, the durable state from the store.

mod clock;
mod config;
mod consolidation;
mod context;
mod crash;
mod engine;
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
mod process;
mod recall;
mod retell;
mod review;
mod segmentation;
mod tail;
mod timeline;
mod wakeup;
mod work;

pub use clock::{Clock, FixedClock, SystemClock};
pub use config::{ConsolidationConfig, EngineConfig, JobsConfig, TimelineConfig};
pub use consolidation::FactHit;
pub use context::{EpisodeContext, RecalledContext};
pub use crash::{CRASH_POINTS, CrashAt};
pub use engine::Engine;
pub use error::EngineError;
pub use indexing::{Freshness, IndexTask, RepairLog};
pub use ingest::{IngestReport, MessageInput};
pub use measure::Measure;
pub use next_turn::{NextTurn, NextTurnQuery};
pub use process::process_name;
pub use recall::{MessageHit, RecallHit, RecallQuery};
pub use retell::RetellReport;
pub use segmentation::RunReport;
pub use tail::TAIL_REFRESH;
pub use timeline::RollupReport;
pub use work::{Patterns, WorkContextConfig, project_scope};
