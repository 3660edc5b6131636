//! Loading the configuration once, at the entry point: defaults < file < env < flags.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use epimem_api::{
    ConsolidationConfig, EngineConfig, JobsConfig, TimelineConfig, WorkContextConfig,
};
use epimem_core::{
    SegmentationPolicy, TriggerConfig,
    fsrs::MemoryConfig,
    recall::{Profile, RankingConfig, RelevanceConfig},
    telling::SummaryConfig,
};
use epimem_embed::{Embedder, EmbedderName, load_embedder};
use epimem_llm::{ChatModel, LlmConfig, OpenAiChat};
use serde::Deserialize;

mod sections;

pub use crate::hook_config::{Hand, HookConfig};
pub use sections::{SearchBackend, SearchConfig, ServerSettings, Serving, TelemetryConfig};

/// The reference configuration, which is also the compiled-in default.
pub const REFERENCE: &str = include_str!("epimem.toml");

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppConfig {
    pub db: Option<PathBuf>,
    pub tenant: String,
    /// potion, minilm, hash or none.
    pub embedder: String,
    pub models: Option<PathBuf>,
    #[serde(default)]
    triggers: TriggerConfig,
    #[serde(default)]
    segmentation: SegmentationPolicy,
    #[serde(default)]
    summary: SummaryConfig,
    #[serde(default)]
    memory: MemoryConfig,
    #[serde(default)]
    ranking: RankingConfig,
    #[serde(default)]
    relevance: RelevanceConfig,
    #[serde(default)]
    next_turn: epimem_core::recall::NextTurnConfig,
    #[serde(default)]
    jobs: JobsConfig,
    #[serde(default)]
    consolidation: ConsolidationConfig,
    #[serde(default)]
    timeline: TimelineConfig,
    #[serde(default)]
    work: WorkContextConfig,
    #[serde(default)]
    pub hooks: HookConfig,
    #[serde(default)]
    pub search: SearchConfig,
    #[serde(default)]
    pub server: ServerSettings,
    #[serde(default)]
    pub llm: LlmConfig,
    #[serde(default)]
    pub telemetry: TelemetryConfig,
    /// Where to crash, in a fault-injection test (`EPIMEM_CRASH_AT`; a build of the tests'
    /// only: see `epimem_api::CRASH_POINTS`).
    #[serde(skip)]
    pub crash_at: Option<epimem_api::CrashAt>,
    /// The time the clock reads, always (`EPIMEM_CLOCK`, RFC 3339): for runs that must answer
    /// the same each time, such as a test comparing two processes' answers. Conversation
    /// time is the data's; this is the time of messages sent without one, of leases and of
    /// how strong a memory is now.
    #[serde(skip)]
    pub fixed_clock: Option<epimem_core::Timestamp>,
}

/// The flags that say where a command reads and writes, shared by `epimem` (for every
/// command) and `epimem-hook`.
#[derive(Debug, clap::Args)]
pub struct PlaceArgs {
    /// The database: a SQLite file, or a PostgreSQL server as postgres://user:password@host/db
    /// (shared by many servers and workers) [default: epimem.db under the user's data
    /// directory].
    #[arg(long, global = true, env = "EPIMEM_DB", value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    /// A configuration file (TOML); see `epimem config` for every setting.
    #[arg(long, global = true, env = "EPIMEM_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The tenant whose records to read and write.
    #[arg(long, global = true, env = "EPIMEM_TENANT", value_name = "NAME")]
    pub tenant: Option<String>,
}

impl PlaceArgs {
    /// These flags, and the keys only the environment gives (a key on the command line is
    /// visible to every user of the machine).
    pub fn overrides(self) -> Overrides {
        Overrides {
            config: self.config,
            db: self.db,
            tenant: self.tenant,
            ..Overrides::environment_only()
        }
    }
}

/// What the command line (flags, with their environment fallbacks) says.
#[derive(Debug, Default)]
pub struct Overrides {
    pub config: Option<PathBuf>,
    pub db: Option<PathBuf>,
    pub tenant: Option<String>,
    pub embedder: Option<String>,
    pub models: Option<PathBuf>,
    pub llm_url: Option<String>,
    pub llm_model: Option<String>,
    pub llm_api_key: Option<String>,
    pub hooks_server_key: Option<String>,
    pub crash_at: Option<String>,
    pub fixed_clock: Option<String>,
}

impl Overrides {
    /// What only the environment gives: keys (one on a command line is visible to every user
    /// of the machine), the fault-injection point and the fixed clock.
    pub fn environment_only() -> Self {
        let var = |name: &str| std::env::var(name).ok();
        Overrides {
            llm_api_key: var("EPIMEM_LLM_API_KEY"),
            hooks_server_key: var("EPIMEM_HOOKS_SERVER_KEY"),
            crash_at: var("EPIMEM_CRASH_AT"),
            fixed_clock: var("EPIMEM_CLOCK"),
            ..Overrides::default()
        }
    }

    /// Everything `epimem` reads from the environment when no flag says it (`EPIMEM_DB`,
    /// `EPIMEM_TENANT`, `EPIMEM_EMBEDDER`, …), for a program that embeds the engine and has
    /// no command line. An empty variable says nothing.
    pub fn from_environment() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Overrides {
            config: var("EPIMEM_CONFIG").map(PathBuf::from),
            db: var("EPIMEM_DB").map(PathBuf::from),
            tenant: var("EPIMEM_TENANT"),
            embedder: var("EPIMEM_EMBEDDER"),
            models: var("EPIMEM_MODELS").map(PathBuf::from),
            llm_url: var("EPIMEM_LLM_URL"),
            llm_model: var("EPIMEM_LLM_MODEL"),
            ..Overrides::environment_only()
        }
    }
}

impl AppConfig {
    pub fn load(overrides: &Overrides) -> Result<Self> {
        let explicit = overrides.config.clone();
        let file = explicit.clone().or_else(|| {
            dirs::config_dir().map(|d| d.join("epimem/config.toml")).filter(|p| p.exists())
        });
        let mut config = match &file {
            Some(path) => Self::from_file(path, explicit.is_some())?,
            None => Self::parse(REFERENCE).context("the built-in reference configuration")?,
        };
        if let Some(db) = &overrides.db {
            config.db = Some(db.clone());
        }
        if let Some(tenant) = &overrides.tenant {
            config.tenant = tenant.clone();
        }
        if let Some(embedder) = &overrides.embedder {
            config.embedder = embedder.clone();
        }
        if let Some(models) = &overrides.models {
            config.models = Some(models.clone());
        }
        if let Some(url) = &overrides.llm_url {
            config.llm.url = url.clone();
        }
        if let Some(model) = &overrides.llm_model {
            config.llm.model = model.clone();
        }
        if let Some(key) = &overrides.llm_api_key {
            config.llm.api_key = key.clone();
        }
        if let Some(key) = &overrides.hooks_server_key {
            config.hooks.server_key = Some(key.clone());
        }
        if let Some(at) = &overrides.crash_at {
            anyhow::ensure!(
                epimem_api::CRASH_POINTS,
                "EPIMEM_CRASH_AT is set, but this build has no crash points (they are for \
                 fault-injection tests)"
            );
            config.crash_at = Some(at.parse().map_err(anyhow::Error::msg)?);
        }
        if let Some(at) = &overrides.fixed_clock {
            let at = epimem_core::Timestamp::parse_rfc3339(at)
                .map_err(|e| anyhow::anyhow!("EPIMEM_CLOCK: {e}"))?;
            config.fixed_clock = Some(at);
        }
        anyhow::ensure!(!config.tenant.trim().is_empty(), "the tenant must not be empty");
        Ok(config)
    }

    fn from_file(path: &Path, explicit: bool) -> Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| {
            let origin = if explicit { "--config" } else { "the default config file" };
            format!("cannot read {} ({origin})", path.display())
        })?;
        // The file overrides the reference: start from it and lay the file's keys over.
        let mut base: toml::Table = toml::from_str(REFERENCE).context("reference config")?;
        let mut over: toml::Table = toml::from_str(&text)
            .with_context(|| format!("{} is not valid TOML", path.display()))?;
        // A ranking profile replaces the reference's ranking weights; the file's own ranking
        // keys still go over it.
        let profile = match over.get_mut("ranking") {
            Some(toml::Value::Table(ranking)) => ranking.remove("profile"),
            _ => None,
        };
        if let Some(profile) = profile {
            let name = profile.as_str().unwrap_or_default();
            let profile: Profile = name.parse().map_err(|e: String| {
                anyhow::anyhow!("invalid configuration in {}: {e}", path.display())
            })?;
            let weights = toml::Table::try_from(RankingConfig::for_profile(profile))
                .context("ranking profile")?;
            base.insert("ranking".into(), toml::Value::Table(weights));
        }
        merge(&mut base, over);
        Self::deserialize(base)
            .with_context(|| format!("invalid configuration in {}", path.display()))
    }

    fn parse(text: &str) -> Result<Self> {
        Ok(toml::from_str(text)?)
    }

    /// The clock the engine reads: the system's, or the fixed time `EPIMEM_CLOCK` gives.
    pub fn clock(&self) -> Box<dyn epimem_api::Clock> {
        match self.fixed_clock {
            Some(at) => Box::new(epimem_api::FixedClock::new(at)),
            None => Box::new(epimem_api::SystemClock),
        }
    }

    pub fn engine(&self) -> EngineConfig {
        EngineConfig {
            triggers: self.triggers.clone(),
            segmentation: self.segmentation.clone(),
            summary: self.summary.clone(),
            memory: self.memory.clone(),
            ranking: self.ranking.clone(),
            relevance: self.relevance,
            next_turn: self.next_turn,
            jobs: self.jobs.clone(),
            consolidation: self.consolidation.clone(),
            timeline: self.timeline.clone(),
            work: self.work.clone(),
        }
    }

    /// The configured embedder, loaded; `None` for `none`.
    pub fn embedder(&self) -> Result<Option<Box<dyn Embedder>>> {
        if self.embedder.trim().eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        let name: EmbedderName = self.embedder.parse()?;
        let dir = match &self.models {
            Some(dir) => dir.clone(),
            None => dirs::cache_dir()
                .context("no cache directory is known for this user: pass --models DIR or set EPIMEM_MODELS")?
                .join("epimem/models"),
        };
        Ok(Some(load_embedder(name, &dir)?))
    }

    /// The configured language model, or `None` when `llm.url` is empty (LLM-free).
    pub fn chat_model(&self) -> Result<Option<std::sync::Arc<dyn ChatModel>>> {
        if !self.llm.is_enabled() {
            return Ok(None);
        }
        let chat = OpenAiChat::new(self.llm.clone()).map_err(anyhow::Error::msg)?;
        Ok(Some(std::sync::Arc::new(chat)))
    }

    /// The database path: configured, or under the user's data directory.
    pub fn db_path(&self) -> Result<PathBuf> {
        if let Some(db) = &self.db {
            return Ok(db.clone());
        }
        let dir = dirs::data_dir()
            .context("no data directory is known for this user: pass --db PATH or set EPIMEM_DB")?;
        Ok(dir.join("epimem").join("epimem.db"))
    }

    /// The configured database: a SQLite file, or a PostgreSQL server named by its URL.
    pub fn database(&self) -> Result<Database> {
        Ok(Database::from(self.db_path()?))
    }
}

/// Where memory is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// A SQLite file (its search index saved beside it).
    Sqlite(PathBuf),
    /// A PostgreSQL server, by URL (`postgres://…` or `postgresql://…`).
    Postgres(String),
}

impl From<PathBuf> for Database {
    fn from(path: PathBuf) -> Self {
        match path.to_str() {
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                Self::Postgres(url.to_owned())
            }
            _ => Self::Sqlite(path),
        }
    }
}

impl Database {
    /// `sqlite` or `postgres`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Sqlite(_) => "sqlite",
            Self::Postgres(_) => "postgres",
        }
    }
}

impl std::fmt::Display for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Sqlite(path) => write!(f, "{}", path.display()),
            // The URL may hold a password: only where it points.
            Self::Postgres(url) => {
                let at = url.rfind('@').map_or(url.find("://").map_or(0, |i| i + 3), |i| i + 1);
                write!(f, "PostgreSQL at {}", &url[at..])
            }
        }
    }
}

/// Lays `over` onto `base`, table by table.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_file_is_the_default() {
        let reference = AppConfig::parse(REFERENCE).unwrap();
        assert_eq!(reference.engine(), EngineConfig::default());
        assert_eq!(reference.search, SearchConfig::default());
        assert_eq!(reference.llm, LlmConfig::default());
        assert_eq!(reference.hooks, HookConfig::default());
        assert_eq!(reference.server, ServerSettings::default());
        assert!(reference.chat_model().unwrap().is_none(), "LLM-free by default");
        assert_eq!((reference.db, reference.tenant.as_str()), (None, "default"));
    }

    #[test]
    fn a_recall_may_be_told_not_to_wait_for_a_build_but_not_to_wait_less_than_nothing() {
        let wait = |seconds: f64| {
            ServerSettings { build_wait_seconds: seconds, ..ServerSettings::default() }.build_wait()
        };
        assert_eq!(wait(0.0).unwrap(), std::time::Duration::ZERO);
        assert_eq!(wait(2.5).unwrap(), std::time::Duration::from_millis(2_500));
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            let e = wait(bad).unwrap_err().to_string();
            assert!(e.contains("server.build_wait_seconds"), "{e}");
        }
    }

    #[test]
    fn the_language_model_is_set_by_file_then_environment_and_flags() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        let file = "[llm]\nurl = \"http://127.0.0.1:8080/v1\"\nmodel = \"qwen\"\n[llm.models]\nreview = \"big\"\n";
        std::fs::write(&path, file).unwrap();
        let c = AppConfig::load(&Overrides { config: Some(path.clone()), ..Default::default() })
            .unwrap();
        assert_eq!(
            (c.llm.url.as_str(), c.llm.model.as_str(), c.llm.models.review.as_str()),
            ("http://127.0.0.1:8080/v1", "qwen", "big")
        );
        assert!(c.chat_model().unwrap().is_some());
        let c = AppConfig::load(&Overrides {
            config: Some(path),
            llm_model: Some("other".into()),
            llm_api_key: Some("sk-env".into()),
            llm_url: Some("localhost:8080".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!((c.llm.model.as_str(), c.llm.api_key.as_str()), ("other", "sk-env"));
        let error = c.chat_model().unwrap_err().to_string();
        assert!(error.contains("llm.url") && error.contains("localhost:8080"), "{error}");
    }

    #[test]
    fn file_overrides_defaults_and_flags_override_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "tenant = \"acme\"\n[triggers]\nwindow = 8\n").unwrap();
        let c = AppConfig::load(&Overrides { config: Some(path.clone()), ..Default::default() })
            .unwrap();
        assert_eq!((c.tenant.as_str(), c.triggers.window, c.triggers.window_max), ("acme", 8, 40));
        let c = AppConfig::load(&Overrides {
            config: Some(path),
            tenant: Some("flag".into()),
            db: Some("x.db".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!((c.tenant.as_str(), c.db_path().unwrap()), ("flag", PathBuf::from("x.db")));
    }

    #[test]
    fn a_ranking_profile_sets_the_weights_the_file_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "[ranking]\nprofile = \"dialogue\"\ncandidates = 7\n").unwrap();
        let c = AppConfig::load(&Overrides { config: Some(path.clone()), ..Default::default() })
            .unwrap();
        let dialogue = RankingConfig::for_profile(Profile::Dialogue);
        assert_eq!(c.ranking, RankingConfig { candidates: 7, ..dialogue });
        std::fs::write(&path, "[ranking]\nprofile = \"chitchat\"\n").unwrap();
        let err =
            AppConfig::load(&Overrides { config: Some(path), ..Default::default() }).unwrap_err();
        assert!(format!("{err:#}").contains("chitchat"), "{err:#}");
    }

    #[test]
    fn unknown_keys_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "[triggers]\nwindw = 8\n").unwrap();
        let err =
            AppConfig::load(&Overrides { config: Some(path), ..Default::default() }).unwrap_err();
        assert!(format!("{err:#}").contains("windw"), "{err:#}");
    }
}
