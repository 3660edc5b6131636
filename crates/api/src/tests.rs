//! The front door over a real engine (in-memory SQLite and index): what it refuses, and that
//! answers keep to their scope.

use std::sync::Arc;

use crate::engine::{Engine, EngineConfig, FixedClock};
use epimem_core::{ErrorKind, Timestamp};
use epimem_search_local::LocalSearch;
use epimem_store_sqlite::SqliteStore;

use crate::{
    Memory, parse_messages,
    wire::{EpisodesQuery, FactsQuery, RecallIn, TimelineQuery, VersionQuery},
};

fn engine() -> Engine {
    let config = EngineConfig::default();
    let search = Box::new(LocalSearch::in_memory(&config.ranking));
    let store = Arc::new(SqliteStore::open_in_memory().unwrap());
    let clock =
        Box::new(FixedClock::new(Timestamp::parse_rfc3339("2026-04-01T00:00:00Z").unwrap()));
    Engine::new(store, search, config, clock, "test".into())
}

/// Two people's conversations, closed into episodes.
fn remembered(memory: &Memory) {
    let body = r#"[
        {"conversation": "a", "user": "alice", "role": "user", "id": "1",
         "content": "The quoxtulip bulbs go in before the frost", "timestamp": "2026-03-02T09:00:00Z"},
        {"conversation": "b", "user": "bob", "role": "user", "id": "1",
         "content": "The zephyrsail needs a new halyard", "timestamp": "2026-03-03T09:00:00Z"}
    ]"#;
    memory.remember(parse_messages("t", body.as_bytes()).unwrap()).unwrap();
    memory.flush("t", "a").unwrap();
    memory.flush("t", "b").unwrap();
}

fn recall(query: &str) -> RecallIn {
    RecallIn { query: query.into(), ..RecallIn::default() }
}

#[test]
fn bad_requests_are_refused_naming_the_field() {
    let engine = engine();
    let memory = Memory::new(engine);
    let refused = |request: RecallIn, field: &str| {
        let e = memory.recall("t", request).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadInput, "{e}");
        assert!(e.message().starts_with(field), "{e}");
    };
    refused(recall(" "), "query");
    refused(RecallIn { budget: Some(0), ..recall("x") }, "budget");
    refused(RecallIn { episodes: true, ..recall("x") }, "episodes");
    refused(RecallIn { fill: true, ..recall("x") }, "fill");
    refused(
        RecallIn { budget: Some(10), min_relevance: Some(2.0), ..recall("x") },
        "min_relevance",
    );
    refused(RecallIn { since: Some("yesterday".into()), ..recall("x") }, "since");
    refused(RecallIn { user: Some(String::new()), ..recall("x") }, "user");
    refused(RecallIn { limit: Some(0), ..recall("x") }, "limit");
    let within = RecallIn {
        within: Some("last week".into()),
        until: Some("2026-03-01T00:00:00Z".into()),
        ..recall("x")
    };
    refused(within, "within");
    let e = memory.timeline_node("t", "toc:fortnight:1", VersionQuery::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadInput);
    let e = memory.conversation("t", "nobody").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
}

#[test]
fn a_person_scope_keeps_to_that_persons_conversations() {
    let engine = engine();
    let memory = Memory::new(engine);
    remembered(&memory);
    let as_user = |user: &str| Some(user.to_owned());
    let hits = memory.recall("t", RecallIn { user: as_user("alice"), ..recall("quoxtulip bulbs") });
    assert_eq!(
        hits.unwrap().hits.iter().map(|h| h.conversation.as_str()).collect::<Vec<_>>(),
        ["a"]
    );
    let none = memory.recall("t", RecallIn { user: as_user("bob"), ..recall("quoxtulip bulbs") });
    assert!(none.unwrap().hits.is_empty());
    let page = memory.episodes("t", EpisodesQuery { user: as_user("bob"), ..Default::default() });
    assert_eq!(
        page.unwrap().episodes.iter().map(|e| e.conversation.as_str()).collect::<Vec<_>>(),
        ["b"]
    );
    let facts = memory.facts("t", FactsQuery { user: as_user("bob"), ..Default::default() });
    assert!(facts.unwrap().facts.is_empty(), "no model, no facts");
    // Their days are over at the clock's time: each person's timeline holds their day only.
    let top = memory.timeline("t", TimelineQuery { user: as_user("alice") }).unwrap();
    let days: Vec<String> = top.nodes.iter().map(|n| n.id.clone()).collect();
    assert!(!days.is_empty());
    let theirs = |user: &str, node: &str| {
        memory.timeline_node("t", node, VersionQuery { version: None, user: as_user(user) })
    };
    assert!(theirs("alice", "toc:day:2026-03-02").is_ok());
    assert_eq!(theirs("alice", "toc:day:2026-03-03").unwrap_err().kind(), ErrorKind::NotFound);
    assert_eq!(memory.forget_user("t", "alice").unwrap().episodes, 1);
    assert_eq!(memory.episodes("t", EpisodesQuery::default()).unwrap().episodes.len(), 1);
}

#[test]
fn a_recall_asked_in_a_conversation_leaves_its_messages_out() {
    let memory = Memory::new(engine());
    let body = r#"[
        {"conversation": "a", "role": "user", "id": "1", "content": "The quoxtulip bulbs go in before the frost"},
        {"conversation": "now", "role": "user", "id": "1", "content": "When do the quoxtulip bulbs go in?"}
    ]"#;
    memory.remember(parse_messages("t", body.as_bytes()).unwrap()).unwrap();
    memory.flush("t", "a").unwrap();
    let asked = |asked_in: Option<&str>| {
        let request = RecallIn {
            budget: Some(300),
            asked_in: asked_in.map(str::to_owned),
            ..recall("quoxtulip bulbs")
        };
        memory.recall("t", request).unwrap().context.unwrap_or_default()
    };
    let everywhere = asked(None);
    assert!(everywhere.contains("When do the quoxtulip"), "{everywhere}");
    // The caller holds "now" already: only what it does not hold is told.
    let elsewhere = asked(Some("now"));
    assert!(elsewhere.contains("go in before the frost"), "{elsewhere}");
    assert!(!elsewhere.contains("When do the quoxtulip"), "{elsewhere}");
    // Asked in the only conversation that speaks of it, nothing is left to tell.
    let memory_only = asked(Some("a"));
    assert!(!memory_only.contains("before the frost"), "{memory_only}");
    // A session's first turn is asked in a conversation not stored yet.
    let first_turn = asked(Some("new session"));
    assert!(first_turn.contains("before the frost"), "{first_turn}");
}
