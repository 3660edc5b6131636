//! The engine's parts and how it is put together: the store, the search index and its
//! upkeep, the models, the clock, the open tails, and this process as a runner of jobs.

use epimem_core::{TokenCounter, fsrs::MemoryStrength};
use epimem_embed::Embedder;
use epimem_llm::ChatModel;
use epimem_search::Search;
use epimem_store::Store;

use crate::engine::{Clock, CrashAt, EngineConfig, Freshness, crash, indexing, segmentation, tail};

/// The engine: a store, a configuration and a clock.
pub struct Engine {
    pub(crate) store: std::sync::Arc<dyn Store>,
    pub(crate) config: EngineConfig,
    pub(crate) clock: Box<dyn Clock>,
    pub(crate) tokens: TokenCounter,
    pub(crate) embedder: Option<Box<dyn Embedder>>,
    /// Cuts and titles episodes when configured; the LLM-free segmenters stand in without it
    /// and whenever it fails.
    pub(crate) chat: Option<std::sync::Arc<dyn ChatModel>>,
    pub(crate) memory: MemoryStrength,
    /// The search index and its upkeep.
    pub(crate) index: indexing::Indexes,
    /// The open tail of each tenant this process recalls in.
    pub(crate) tail_cache: tail::TailCache,
    /// Where to crash, in a fault-injection test.
    pub(crate) crash: crash::Crash,
    /// This process as a runner of jobs.
    pub(crate) runner: segmentation::Runner,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("worker", &self.runner.worker).finish_non_exhaustive()
    }
}

impl Engine {
    /// `search` is the index recall asks (kept current from the store's change log);
    /// `worker` names this process in job leases (say, `host:pid`).
    pub fn new(
        store: std::sync::Arc<dyn Store>,
        search: Box<dyn Search>,
        config: EngineConfig,
        clock: Box<dyn Clock>,
        worker: String,
    ) -> Self {
        let memory = MemoryStrength::new(config.memory.clone());
        let tail_cache = tail::TailCache::for_lines(config.ranking.open_tail_lines);
        Self {
            store,
            config,
            clock,
            tokens: TokenCounter::cl100k(),
            embedder: None,
            chat: None,
            memory,
            index: indexing::Indexes::new(search),
            tail_cache,
            crash: Default::default(),
            runner: segmentation::Runner::new(worker),
        }
    }

    /// Checks the files of every index it keeps current every `every` (the owner's refresh:
    /// a server, a worker), besides when each is opened: a file changed behind a running
    /// process's back is then caught and the index built again.
    #[must_use]
    pub fn with_index_checks(mut self, every: std::time::Duration) -> Self {
        self.index.verify_every = Some(every);
        self
    }

    /// Aborts the process at the point `at` names, in a build with crash points
    /// ([`CRASH_POINTS`]: fault-injection tests); in any other, does nothing.
    #[must_use]
    pub fn with_crash_at(mut self, at: CrashAt) -> Self {
        self.crash = crash::Crash::at(at);
        self
    }

    /// Tells `log` (tenant, task, done, total) how a rebuild goes when a search finds a
    /// tenant's index damaged and the engine builds it again from the store, before it
    /// answers.
    #[must_use]
    pub fn with_repair_log(mut self, log: indexing::RepairLog) -> Self {
        self.index.repair_log = Some(log);
        self
    }

    /// When recall catches a tenant's search index up (before every recall by default).
    #[must_use]
    pub fn with_freshness(mut self, freshness: Freshness) -> Self {
        self.index.freshness = freshness;
        self
    }

    /// How long a recall waits for a build of its tenant's index under way (2 s by default)
    /// before it is refused as unavailable; zero refuses at once.
    #[must_use]
    pub fn with_build_wait(mut self, wait: std::time::Duration) -> Self {
        self.index.build_wait = wait;
        self
    }

    /// Beside a process that holds the saved search index but has saved none this process can
    /// read (it is building it), a build of a copy of `from_changes` changes or more first
    /// waits up to `wait` for the holder to save, and reads what it saved instead (by default
    /// from 100,000 changes, up to 25 s).
    #[cfg(test)]
    #[must_use]
    pub(crate) fn with_holder_save_wait(
        mut self,
        from_changes: u64,
        wait: std::time::Duration,
    ) -> Self {
        self.index.holder_save = indexing::HolderSave { from_changes, wait };
        self
    }

    /// Counts tokens with `tokens` instead of cl100k_base's tables (whose first use costs
    /// tens of milliseconds): [`TokenCounter::estimate`] for a process that must answer at once.
    #[must_use]
    pub fn with_token_counter(mut self, tokens: TokenCounter) -> Self {
        self.tokens = tokens;
        self
    }

    /// Embeds messages for semantic segmentation (without one, only the lexical and time
    /// signals are used).
    pub fn with_embedder(mut self, embedder: Box<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// Cuts episodes with a language model (its title, summary and surprise too), falling back
    /// to the LLM-free segmenters for a batch whenever the model fails.
    pub fn with_chat_model(mut self, chat: std::sync::Arc<dyn ChatModel>) -> Self {
        self.chat = Some(chat);
        self
    }

    pub(crate) fn store(&self) -> &dyn Store {
        &*self.store
    }

    pub(crate) fn config(&self) -> &EngineConfig {
        &self.config
    }

    pub(crate) fn tokens(&self) -> &TokenCounter {
        &self.tokens
    }
}
