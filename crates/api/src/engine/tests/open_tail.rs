//! What was just said is found at once: messages not yet closed into an episode (the open
//! tail) are recalled beside the episodes, say that they are new, are told once when they
//! close, stay in their tenant and are gone when forgotten.

use crate::engine::{Engine, MessageInput, RecallQuery};
use epimem_core::{ConversationKey, Role, Scope, Timestamp};

use super::common::{T0, engine, engine_at};

/// Stores one message and closes nothing.
fn tell(e: &Engine, tenant: &str, key: &str, minute: i64, text: &str) {
    let message = MessageInput {
        conversation: ConversationKey::new(tenant, "c"),
        user: None,
        agent: None,
        key: key.into(),
        role: Role::User,
        speaker: Some("Caroline".into()),
        content: text.into(),
        timestamp: Some(Timestamp(T0 + minute * 60_000)),
        metadata: serde_json::Value::Null,
    };
    e.ingest(vec![message]).unwrap();
}

fn recall(e: &Engine, tenant: &str, text: &str) -> String {
    let context =
        e.recall_context(&RecallQuery::new(Scope::tenant(tenant), text, 5), 1000).unwrap();
    assert_eq!(context.text.is_empty(), !context.relevant, "{context:?}");
    context.text
}

#[test]
fn a_message_is_recalled_before_its_conversation_closes_and_once_after() {
    let e = engine();
    tell(&e, "t", "1", 0, "My locker code at the climbing gym is 4471");
    let text = recall(&e, "t", "What is my locker code at the gym?");
    assert!(text.contains("4471"), "{text}");
    assert!(text.contains("· c · not yet an episode"), "{text}");

    e.flush(&Scope::tenant("t")).unwrap();
    let text = recall(&e, "t", "What is my locker code at the gym?");
    assert_eq!(text.matches("4471").count(), 1, "{text}");
    assert!(!text.contains("not yet an episode"), "{text}");

    // A newer message in the same conversation: the episode and the tail, each line once.
    tell(&e, "t", "2", 30, "The gym changed my locker code to 9902 today");
    let text = recall(&e, "t", "What is my locker code at the gym?");
    assert_eq!((text.matches("4471").count(), text.matches("9902").count()), (1, 1), "{text}");
    assert_eq!(text.matches("not yet an episode").count(), 1, "{text}");
}

#[test]
fn another_process_on_the_same_database_finds_the_message_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let writer = engine_at(&path);
    let reader = engine_at(&path);
    tell(&writer, "t", "1", 0, "The spare house key is under the blue flower pot");
    let text = recall(&reader, "t", "Where is the spare house key?");
    assert!(text.contains("blue flower pot") && text.contains("not yet an episode"), "{text}");
}

#[test]
fn the_open_tail_stays_in_its_tenant_and_is_gone_once_forgotten() {
    let e = engine();
    tell(&e, "t", "1", 0, "My locker code at the climbing gym is 4471");
    tell(&e, "u", "1", 0, "Our office wifi password is pelican-42");
    assert!(!recall(&e, "u", "What is my locker code at the gym?").contains("4471"));
    assert!(!recall(&e, "t", "What is the office wifi password?").contains("pelican"));

    let conversation = ConversationKey::new("t", "c");
    e.delete_conversation(&conversation).unwrap();
    assert_eq!(recall(&e, "t", "What is my locker code at the gym?"), "");
    assert!(recall(&e, "u", "What is the office wifi password?").contains("pelican-42"));
}

#[test]
fn another_processs_forgetting_is_never_quoted_and_its_new_messages_come_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let (writer, reader) = (engine_at(&path), engine_at(&path));
    tell(&writer, "t", "1", 0, "The spare house key is under the blue flower pot");
    assert!(recall(&reader, "t", "Where is the spare house key?").contains("blue flower pot"));
    // The reader keeps the tail it read; what the writer forgets is still not quoted.
    writer.delete_conversation(&ConversationKey::new("t", "c")).unwrap();
    assert_eq!(recall(&reader, "t", "Where is the spare house key?"), "");
    // What the writer stores, the reader finds once its kept tail is a second old.
    tell(&writer, "t", "2", 1, "The garage code is 7203");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert!(recall(&reader, "t", "What is the garage code?").contains("7203"));
}

#[test]
fn with_no_tail_lines_what_was_just_said_waits_for_its_episode() {
    let mut config = crate::engine::EngineConfig::default();
    config.ranking.open_tail_lines = 0;
    let e = super::common::engine_with(config);
    tell(&e, "t", "1", 0, "My locker code at the climbing gym is 4471");
    assert_eq!(recall(&e, "t", "What is my locker code at the gym?"), "");
    e.flush(&Scope::tenant("t")).unwrap();
    assert!(recall(&e, "t", "What is my locker code at the gym?").contains("4471"));
}
