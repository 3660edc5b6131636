//! Fixtures shared by the recall tests: an engine over an in-memory SQLite store with the
//! model-free embedder, and closed episodes made from a few lines.

use std::sync::Arc;

use crate::engine::{Engine, EngineConfig, FixedClock, MessageInput};
use epimem_core::{ConversationKey, Role, Scope, Timestamp};
use epimem_embed::HashEmbedder;
use epimem_search_local::LocalSearch;
use epimem_store_sqlite::SqliteStore;

pub(crate) const T0: i64 = 1_767_225_600_000;
pub(crate) const DAY: i64 = 86_400_000;

pub(crate) fn engine() -> Engine {
    engine_with(EngineConfig::default())
}

pub(crate) fn engine_with(config: EngineConfig) -> Engine {
    on_store(SqliteStore::open_in_memory().unwrap(), config)
}

/// An engine on the database file at `path`: several of them stand for several processes.
pub(crate) fn engine_at(path: &std::path::Path) -> Engine {
    on_store(SqliteStore::open(path).unwrap(), EngineConfig::default())
}

fn on_store(store: SqliteStore, config: EngineConfig) -> Engine {
    engine_on(store, config, Arc::new(FixedClock::new(Timestamp(T0))), 256)
}

/// An engine over `store` on `clock` (which the test may move), with an in-memory search index
/// and the model-free embedder of `dimensions`.
pub(crate) fn engine_on(
    store: SqliteStore,
    config: EngineConfig,
    clock: Arc<FixedClock>,
    dimensions: usize,
) -> Engine {
    let search = Box::new(LocalSearch::in_memory(&config.ranking));
    Engine::new(std::sync::Arc::new(store), search, config, Box::new(clock), "t:1".into())
        .with_embedder(Box::new(HashEmbedder::new(dimensions)))
}

/// One closed episode per (conversation, text), a day apart, said by Caroline.
pub(crate) fn remember(
    engine: &Engine,
    tenant: &str,
    conversation: &str,
    day: i64,
    lines: &[&str],
) {
    remember_as(engine, tenant, conversation, day, "Caroline", lines);
}

/// One closed episode in tenant "t", conversation "c", of `lines` a minute apart: (role,
/// speaker, text).
pub(crate) fn say(engine: &Engine, lines: &[(Role, Option<&str>, &str)]) {
    let msgs: Vec<MessageInput> = lines
        .iter()
        .enumerate()
        .map(|(i, &(role, speaker, text))| MessageInput {
            conversation: ConversationKey::new("t", "c"),
            user: None,
            agent: None,
            key: format!("{i}"),
            role,
            speaker: speaker.map(Into::into),
            content: text.into(),
            timestamp: Some(Timestamp(T0 + i as i64 * 60_000)),
            metadata: serde_json::Value::Null,
        })
        .collect();
    engine.ingest(msgs).unwrap();
    engine.flush(&Scope::tenant("t")).unwrap();
}

/// One closed episode of `lines`, said by `speaker` on `day`.
pub(crate) fn remember_as(
    engine: &Engine,
    tenant: &str,
    conversation: &str,
    day: i64,
    speaker: &str,
    lines: &[&str],
) {
    let msgs: Vec<MessageInput> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| MessageInput {
            conversation: ConversationKey::new(tenant, conversation),
            user: None,
            agent: None,
            key: format!("{day}-{i}"),
            role: Role::User,
            speaker: Some(speaker.into()),
            content: (*l).into(),
            timestamp: Some(Timestamp(T0 + day * DAY + i as i64 * 60_000)),
            metadata: serde_json::Value::Null,
        })
        .collect();
    engine.ingest(msgs).unwrap();
    engine.flush(&Scope::tenant(tenant).with_conversation(Some(conversation.into()))).unwrap();
}
