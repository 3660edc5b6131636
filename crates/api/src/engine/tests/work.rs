//! What a prompt is told of a project's earlier work: by recall where the engine has an
//! embedder, by shared keywords where it has none.

use std::sync::Arc;

use crate::engine::{Engine, EngineConfig, FixedClock, MessageInput};
use epimem_core::{ConversationKey, Role, Scope, Timestamp};
use epimem_search_local::LocalSearch;
use epimem_store_sqlite::SqliteStore;

use super::common::{T0, engine_on};

/// One closed session of `project`: a prompt, the tool's output and the agent's finding.
fn session(engine: &Engine, project: &str, session: &str, hour: i64, lines: [&str; 3]) {
    let roles = [Role::User, Role::Tool, Role::Assistant];
    let msgs: Vec<MessageInput> = lines
        .iter()
        .zip(roles)
        .enumerate()
        .map(|(i, (text, role))| MessageInput {
            conversation: ConversationKey::new("t", session),
            user: None,
            agent: Some(project.into()),
            key: format!("{i}"),
            role,
            speaker: None,
            content: (*text).into(),
            timestamp: Some(Timestamp(T0 + hour * 3_600_000 + i as i64 * 60_000)),
            metadata: serde_json::Value::Null,
        })
        .collect();
    engine.ingest(msgs).unwrap();
    engine.flush(&Scope::tenant("t").with_conversation(Some(session.into()))).unwrap();
}

fn project_history(engine: &Engine) {
    session(
        engine,
        "/src/shop",
        "s1",
        0,
        [
            "The invoice PDF renders without the company logo, find out why",
            "$ make test [failed]\nlogo.png not found in templates/invoice",
            "The invoice template loads the logo from a path relative to the wrong folder.",
        ],
    );
    session(
        engine,
        "/src/shop",
        "s2",
        5,
        [
            "Add dark mode to the settings page",
            "Edit web/settings.css",
            "Dark mode now follows the system theme on the settings page.",
        ],
    );
    session(
        engine,
        "/src/blog",
        "b1",
        9,
        [
            "The RSS feed shows posts twice",
            "$ curl localhost:8080/feed.xml",
            "Drafts were listed with the published posts; the feed now skips drafts.",
        ],
    );
}

const PROMPT: &str = "The invoice PDF is missing its logo again";

#[test]
fn recall_tells_a_prompt_of_the_work_words_and_meaning_agree_on() {
    let clock = Arc::new(FixedClock::new(Timestamp(T0 + 86_400_000)));
    let engine =
        engine_on(SqliteStore::open_in_memory().unwrap(), EngineConfig::default(), clock, 256);
    project_history(&engine);
    let told = |project: &str, current: &str, prompt: &str| {
        let ids = engine.measure().prompt_episodes("t", project, current, prompt).unwrap();
        let found = engine.episodes(&Scope::tenant("t"), None).unwrap();
        ids.iter()
            .map(|id| found.iter().find(|e| &e.id == id).unwrap().conversation.conversation.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(told("/src/shop", "s3", PROMPT), ["s1"]);
    // The prompt's own session is not told of itself, and nothing else is close enough.
    assert!(told("/src/shop", "s1", PROMPT).is_empty());
    // Another project never did that work; an unrelated prompt matches nothing.
    assert!(told("/src/blog", "b2", PROMPT).is_empty());
    assert!(told("/src/shop", "s3", "Bump the version number for the release").is_empty());
    // A word in common is not enough: BM25 ranks the invoice work first for "logo", but its
    // lines mean something else.
    assert!(told("/src/shop", "s3", "Draw a new logo for the mobile app splash screen").is_empty());
    assert!(told("/src/shop", "s3", "   ").is_empty());
    let context = engine.prompt_context("t", "/src/shop", "s3", PROMPT).unwrap();
    assert!(
        context.contains("wrong folder") || context.to_lowercase().contains("invoice"),
        "{context}"
    );
}

#[test]
fn without_an_embedder_a_prompt_is_matched_by_its_keywords() {
    let config = EngineConfig::default();
    let search = Box::new(LocalSearch::in_memory(&config.ranking));
    let clock = FixedClock::new(Timestamp(T0 + 86_400_000));
    let engine = Engine::new(
        std::sync::Arc::new(SqliteStore::open_in_memory().unwrap()),
        search,
        config,
        Box::new(clock),
        "t:1".into(),
    );
    project_history(&engine);
    let by_words =
        engine.measure().prompt_episodes_by_words("t", "/src/shop", "s3", PROMPT).unwrap();
    assert_eq!(by_words.len(), 1);
    assert_eq!(engine.measure().prompt_episodes("t", "/src/shop", "s3", PROMPT).unwrap(), by_words);
}
