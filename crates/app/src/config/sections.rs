//! The sections of the configuration that say how a process serves: `[server]`, `[search]`
//! and `[telemetry]`, each with the checks that turn it into what the process runs with.

use anyhow::{Context, Result};
use serde::Deserialize;

/// Traces. Where they go is OpenTelemetry's standard variables' (`OTEL_EXPORTER_OTLP_ENDPOINT`
/// and the others), read at the entry point; this file only says what they may hold.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TelemetryConfig {
    /// Keep the query's and the messages' text on spans.
    pub capture_content: bool,
}

/// `epimem serve`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerSettings {
    pub listen: String,
    pub body_limit_bytes: usize,
    pub request_timeout_seconds: u64,
    pub tick_seconds: f64,
    pub index_refresh_seconds: f64,
    pub build_wait_seconds: f64,
    pub allowed_origins: Vec<String>,
}

/// `[server]` checked: what a server and the worker beside it run with.
#[derive(Debug, Clone, PartialEq)]
pub struct Serving {
    /// Larger request bodies are refused with 413.
    pub body_limit: usize,
    /// A request that takes longer is answered 408 (its engine work still finishes).
    pub request_timeout: std::time::Duration,
    /// How often the worker looks for silent conversations and runnable jobs.
    pub tick_every: std::time::Duration,
    /// How often the search indexes catch up with what other processes wrote (a recall does
    /// not wait for it: the engine is in `Freshness::Background`).
    pub index_refresh: std::time::Duration,
    /// Pages (`https://app.example.com`, lower case) that may call from a browser besides the
    /// server's own; a request with another `Origin` is refused.
    pub allowed_origins: Vec<String>,
}

impl ServerSettings {
    /// The settings checked, or what is wrong with them.
    pub fn checked(&self) -> Result<Serving> {
        Ok(Serving {
            body_limit: self.body_limit_bytes,
            request_timeout: std::time::Duration::from_secs(self.request_timeout_seconds.max(1)),
            tick_every: self.tick_every()?,
            index_refresh: self.index_refresh()?,
            allowed_origins: self.allowed_origins()?,
        })
    }

    /// How often the worker runs.
    pub fn tick_every(&self) -> Result<std::time::Duration> {
        positive_seconds(self.tick_seconds, "server.tick_seconds")
    }

    /// How often the search indexes catch up with other processes' writes.
    pub fn index_refresh(&self) -> Result<std::time::Duration> {
        positive_seconds(self.index_refresh_seconds, "server.index_refresh_seconds")
    }

    /// The allowed origins as a browser sends them (`scheme://host[:port]`, lower case).
    pub fn allowed_origins(&self) -> Result<Vec<String>> {
        self.allowed_origins
            .iter()
            .map(|origin| {
                let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
                let rest =
                    origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"));
                match rest {
                    Some(host) if !host.is_empty() && !host.contains('/') => Ok(origin),
                    _ => anyhow::bail!(
                        "server.allowed_origins: {origin:?} is not an origin such as \
                         \"https://app.example.com\" (a scheme and a host, no path)"
                    ),
                }
            })
            .collect()
    }

    /// How long a recall waits for the search index being built (zero: not at all).
    pub fn build_wait(&self) -> Result<std::time::Duration> {
        std::time::Duration::try_from_secs_f64(self.build_wait_seconds)
            .ok()
            .context("server.build_wait_seconds must be zero or a positive number of seconds")
    }
}

fn positive_seconds(seconds: f64, name: &str) -> Result<std::time::Duration> {
    std::time::Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|t| !t.is_zero())
        .with_context(|| format!("{name} must be a positive number of seconds"))
}

impl Default for ServerSettings {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:7878".into(),
            body_limit_bytes: 4 << 20,
            request_timeout_seconds: 30,
            tick_seconds: 5.0,
            index_refresh_seconds: 1.0,
            build_wait_seconds: 2.0,
            allowed_origins: Vec::new(),
        }
    }
}

/// The search index.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// Where the index lives.
    pub backend: SearchBackend,
    /// Message vectors of a tenant from which vector search scans the groups of vectors
    /// nearest the query instead of every vector.
    pub approximate_from: usize,
    /// How often a serving process checks its saved index's files (0: on open only).
    pub check_minutes: f64,
}

impl SearchConfig {
    /// How often the files are checked while serving, if at all.
    pub fn check_every(&self) -> Result<Option<std::time::Duration>> {
        let every = std::time::Duration::try_from_secs_f64(self.check_minutes * 60.0)
            .ok()
            .context("search.check_minutes must be zero or a positive number of minutes")?;
        Ok((!every.is_zero()).then_some(every))
    }
}

impl Default for SearchConfig {
    fn default() -> Self {
        Self {
            backend: SearchBackend::default(),
            approximate_from: epimem_search_local::APPROXIMATE_FROM,
            check_minutes: 10.0,
        }
    }
}

/// Where the search index lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchBackend {
    /// In the database when it is PostgreSQL, else beside it.
    #[default]
    Auto,
    /// The embedded index: saved beside a SQLite file; for PostgreSQL, in each process's
    /// memory, filled from the database on first use.
    Local,
    /// In the PostgreSQL database (full-text search and pgvector), shared by every process.
    Database,
}
