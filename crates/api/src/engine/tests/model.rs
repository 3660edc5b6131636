//! Cutting episodes with a language model, against the scripted OpenAI-compatible server over
//! real HTTP: what it proposes becomes the episodes, and whatever fails, every message ends in
//! exactly one episode or is still pending.

use std::sync::Arc;
use std::time::Duration;

use crate::engine::{Engine, EngineConfig, FixedClock, MessageInput};
use epimem_core::{BoundaryReason, ConversationKey, LlmStage, Role, Scope, Timestamp, ToldBy};
use epimem_llm::scripted::{ScriptedReply, ScriptedServer, dead_url};
use epimem_llm::{LlmConfig, OpenAiChat};
use epimem_store_sqlite::SqliteStore;
use serde_json::json;

use super::common::T0;

/// The default configuration, without consolidation (these tests script segmentation only).
fn cutting_only() -> EngineConfig {
    let mut config = EngineConfig::default();
    config.consolidation.every_episodes = u32::MAX;
    config.consolidation.flashbulb_surprise = 2.0;
    config
}

pub(crate) fn engine(url: String, config: EngineConfig) -> Engine {
    engine_on_clock(url, config, Arc::new(FixedClock::new(Timestamp(T0))))
}

/// The same on a clock the test moves.
pub(crate) fn engine_on_clock(url: String, config: EngineConfig, clock: Arc<FixedClock>) -> Engine {
    let llm = LlmConfig {
        url,
        model: "small".into(),
        timeout_seconds: 1.0,
        max_retries: 1,
        retry_base_ms: 5,
        ..LlmConfig::default()
    };
    super::common::engine_on(SqliteStore::open_in_memory().unwrap(), config, clock, 64)
        .with_chat_model(Arc::new(OpenAiChat::new(llm).unwrap()))
}

fn conversation() -> ConversationKey {
    ConversationKey::new("t", "c")
}

/// Messages `from..from + n` (1-based), a minute apart, five per subject.
fn messages(from: u64, n: u64) -> Vec<MessageInput> {
    (from..from + n)
        .map(|i| MessageInput {
            conversation: conversation(),
            user: None,
            agent: None,
            key: format!("m{i}"),
            role: if i % 2 == 0 { Role::Assistant } else { Role::User },
            speaker: None,
            content: format!("message {i} on subject {}", i / 5),
            timestamp: Some(Timestamp(T0 + i as i64 * 60_000)),
            metadata: serde_json::Value::Null,
        })
        .collect()
}

/// An answer cutting the window into episodes of these lengths and surprise levels.
fn cut(segments: &[(usize, &str)]) -> ScriptedReply {
    let mut start = 0;
    let segments: Vec<_> = segments
        .iter()
        .enumerate()
        .map(|(i, &(n, surprise))| {
            start += n;
            json!({"start_message_index": start - n, "end_message_index": start - 1, "num_messages": n,
                   "title": format!("Episode number {i} of the window"), "summary": format!("Summary {i}."),
                   "surprise_level": surprise})
        })
        .collect();
    ScriptedReply::Answer(json!({ "segments": segments }).to_string())
}

/// (first, last, title) of each episode, oldest first.
fn episodes(engine: &Engine) -> Vec<(u64, u64, String)> {
    let mut all = engine.episodes(&Scope::tenant("t"), None).unwrap();
    all.sort_by_key(|e| e.first_seq);
    all.into_iter().map(|e| (e.first_seq, e.last_seq, e.title)).collect()
}

/// Episodes tile `1..=watermark` and the rest is pending.
fn assert_tiled(engine: &Engine, total: u64) {
    let queue = engine.store().queue(&conversation()).unwrap().unwrap();
    assert_eq!(queue.last_seq, total);
    let mut next = 1;
    for (first, last, _) in episodes(engine) {
        assert_eq!(first, next, "no gap, no overlap");
        assert!(last >= first);
        next = last + 1;
    }
    assert_eq!(next - 1, queue.watermark);
}

fn windows_asked(server: &ScriptedServer) -> Vec<usize> {
    server
        .received()
        .iter()
        .map(|r| r.message("user").lines().filter(|l| l.starts_with('[')).count())
        .collect()
}

#[test]
fn the_models_segments_become_the_episodes() {
    let server = ScriptedServer::start([
        cut(&[(8, "low"), (7, "extremely_high"), (5, "low")]),
        cut(&[(5, "high")]),
    ]);
    let engine = engine(server.url(), cutting_only());
    engine.ingest(messages(1, 20)).unwrap();
    let got = episodes(&engine);
    assert_eq!(
        got,
        [
            (1, 8, "Episode number 0 of the window".into()),
            (9, 15, "Episode number 1 of the window".into())
        ],
        "the last segment stays open"
    );
    let stored = engine.episodes(&Scope::tenant("t"), None).unwrap();
    let second = stored.iter().find(|e| e.first_seq == 9).unwrap();
    assert_eq!((second.summary.as_str(), second.surprise), ("Summary 1.", 0.9));
    assert_eq!(second.boundary_reason, BoundaryReason::ModelJudged);
    assert_eq!((second.told_by, second.told_note.as_deref()), (ToldBy::Llm, None));
    assert_eq!(engine.store().queue(&conversation()).unwrap().unwrap().pending(), 5);

    engine.flush(&Scope::tenant("t")).unwrap();
    assert_tiled(&engine, 20);
    assert_eq!(episodes(&engine).len(), 3);
    assert_eq!(windows_asked(&server), [20, 5]);
    let second_prompt = server.received()[1].message("user").to_owned();
    assert!(
        second_prompt.starts_with("The episode just before these messages: Summary 1."),
        "{second_prompt}"
    );
    assert!(
        second_prompt.contains("[0] 2026-01-01 00:16 [assistant] message 16 on subject 3"),
        "{second_prompt}"
    );

    // What the server reported is what the store counted.
    let usage = engine.store().llm_usage(Some("t")).unwrap();
    let (prompt_tokens, completion_tokens) = server.reported_tokens();
    assert_eq!(usage.len(), 1);
    let (stage, usage) = usage[0];
    assert_eq!(stage, LlmStage::Segmentation);
    assert_eq!((usage.calls, usage.failures), (2, 0));
    assert_eq!((usage.prompt_tokens, usage.completion_tokens), (prompt_tokens, completion_tokens));
}

#[test]
fn one_segment_doubles_the_window_and_the_doubled_one_closes() {
    let server = ScriptedServer::start([cut(&[(20, "low")]), cut(&[(40, "low")])]);
    let engine = engine(server.url(), cutting_only());
    engine.ingest(messages(1, 20)).unwrap();
    assert!(episodes(&engine).is_empty());
    let queue = engine.store().queue(&conversation()).unwrap().unwrap();
    assert!(queue.window_doubled && queue.pending() == 20);
    engine.ingest(messages(21, 20)).unwrap();
    assert_eq!(episodes(&engine), [(1, 40, "Episode number 0 of the window".into())]);
    let stored = engine.episodes(&Scope::tenant("t"), None).unwrap();
    assert_eq!(stored[0].boundary_reason, BoundaryReason::WindowFull);
    assert_eq!(windows_asked(&server), [20, 40]);
}

#[test]
fn a_long_flush_is_cut_window_by_window() {
    let server = ScriptedServer::start([]);
    // Every window in episodes of 15 (the last one shorter).
    server.otherwise(|asked| {
        let n = asked.message("user").lines().filter(|l| l.starts_with('[')).count();
        let lengths: Vec<(usize, &str)> =
            (0..n).step_by(15).map(|s| ((n - s).min(15), "low")).collect();
        cut(&lengths)
    });
    let mut config = cutting_only();
    config.triggers.window = 1000;
    config.triggers.window_max = 40;
    let engine = engine(server.url(), config);
    engine.ingest(messages(1, 100)).unwrap();
    engine.flush(&Scope::tenant("t")).unwrap();
    assert_tiled(&engine, 100);
    let lengths: Vec<u64> = episodes(&engine).iter().map(|(f, l, _)| l - f + 1).collect();
    assert_eq!(
        lengths,
        [15, 15, 15, 15, 15, 15, 10],
        "each window's last segment carried into the next"
    );
    assert!(windows_asked(&server).iter().all(|&n| n <= 40), "{:?}", windows_asked(&server));
}

#[test]
fn counts_that_do_not_add_up_are_repaired_and_said_so() {
    let server = ScriptedServer::start([cut(&[(3, "low"), (2, "low")])]);
    let engine = engine(server.url(), cutting_only());
    engine.ingest(messages(1, 8)).unwrap();
    engine.flush(&Scope::tenant("t")).unwrap();
    let lengths: Vec<u64> = episodes(&engine).iter().map(|(f, l, _)| l - f + 1).collect();
    assert_eq!(lengths, [3, 5], "the last episode takes the rest");
    let all = engine.episodes(&Scope::tenant("t"), None).unwrap();
    assert!(all.iter().all(|e| e.told_by == ToldBy::Llm));
    assert!(all[0].told_note.as_deref().unwrap().contains("5 of 8"), "{all:?}");
}

#[test]
fn a_single_message_is_told_without_the_model() {
    let server = ScriptedServer::start([]);
    let engine = engine(server.url(), cutting_only());
    engine.ingest(messages(1, 1)).unwrap();
    engine.flush(&Scope::tenant("t")).unwrap();
    let all = engine.episodes(&Scope::tenant("t"), None).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].told_by, ToldBy::Fallback);
    assert!(all[0].told_note.as_deref().unwrap().contains("single message"), "{all:?}");
    assert!(server.received().is_empty(), "nothing to cut, nothing asked");
}

#[test]
fn an_unreadable_answer_is_asked_again_once() {
    let server = ScriptedServer::start([
        ScriptedReply::Answer("{\"segments\": [".into()),
        cut(&[(5, "low")]),
    ]);
    let engine = engine(server.url(), cutting_only());
    engine.ingest(messages(1, 5)).unwrap();
    engine.flush(&Scope::tenant("t")).unwrap();
    assert_eq!(episodes(&engine), [(1, 5, "Episode number 0 of the window".into())]);
    let usage = engine.store().llm_usage(Some("t")).unwrap()[0].1;
    assert_eq!((usage.calls, usage.failures), (2, 1));
}

#[test]
fn whatever_the_model_does_wrong_every_message_ends_in_one_episode() {
    let broken = |body: &str| ScriptedReply::Answer(body.into());
    let error =
        |status| ScriptedReply::Status { status, body: "scripted".into(), retry_after: None };
    let slow = || {
        ScriptedReply::Slow(
            Duration::from_millis(1500),
            Box::new(ScriptedReply::Answer("{}".into())),
        )
    };
    let cases: Vec<(&str, Vec<ScriptedReply>)> = vec![
        ("invalid JSON", vec![broken("not json"), broken("{\"segments\": [")]),
        (
            "JSON that breaks the schema",
            vec![broken(r#"{"segments": [{"num_messages": 3}]}"#), broken(r#"{"episodes": []}"#)],
        ),
        ("server errors", vec![error(500), error(503)]),
        ("a refused key", vec![error(401)]),
        ("replies slower than the timeout", vec![slow(), slow()]),
        ("hang-ups", vec![ScriptedReply::HangUp, ScriptedReply::HangUp]),
    ];
    for (case, script) in cases {
        let server = ScriptedServer::start(script);
        check_fallback(case, engine(server.url(), cutting_only()));
    }
    check_fallback("a dead port", engine(dead_url(), cutting_only()));
}

/// 30 messages arrive (the count trigger runs at 20) and the model fails throughout: the
/// LLM-free segmenters cut instead, and a flush closes the rest (so no fence was left held).
fn check_fallback(case: &str, engine: Engine) {
    engine.ingest(messages(1, 30)).unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_tiled(&engine, 30);
    engine.flush(&Scope::tenant("t")).unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_tiled(&engine, 30);
    assert_eq!(engine.store().queue(&conversation()).unwrap().unwrap().pending(), 0, "{case}");
    let all = engine.episodes(&Scope::tenant("t"), None).unwrap();
    assert!(
        all.iter().all(|e| e.boundary_reason != BoundaryReason::ModelJudged
            && !e.title.starts_with("Episode number")),
        "{case}"
    );
    let usage = engine.store().llm_usage(Some("t")).unwrap();
    assert!(usage[0].1.calls >= 1 && usage[0].1.failures >= 1, "{case}: {usage:?}");
}

#[test]
fn agent_work_is_told_as_a_story_and_chat_is_not() {
    let server = ScriptedServer::start([]);
    server.otherwise(|asked| {
        if asked.message("system").starts_with("You write down an episode of work") {
            return ScriptedReply::Answer(
                json!({"title": "Fixing the refund webhook test", "intent": "Make the test pass",
                       "what_happened": "The agent made the test wait for the mock server's port",
                       "learned": "The mock server starts asynchronously", "completed": "The test passes", "notes": ""})
                .to_string(),
            );
        }
        let n = asked.message("user").lines().filter(|l| l.starts_with('[')).count();
        cut(&[(n, "low")])
    });
    let engine = engine(server.url(), cutting_only());
    let said = |i: i64, role: Role, text: &str, conversation: &str| MessageInput {
        conversation: ConversationKey::new("t", conversation),
        user: None,
        agent: None,
        key: format!("k{i}"),
        role,
        speaker: None,
        content: text.into(),
        timestamp: Some(Timestamp(T0 + i * 60_000)),
        metadata: serde_json::Value::Null,
    };
    engine
        .ingest(vec![
            said(1, Role::User, "The refund webhook test fails since the merge", "work"),
            said(2, Role::Tool, "cargo test refund_webhook: FAILED (timeout on port 8081)", "work"),
            said(
                3,
                Role::Assistant,
                "Fixed: the test now waits for the mock server's port",
                "work",
            ),
            said(4, Role::User, "Shall we have lunch at noon?", "chat"),
            said(5, Role::Assistant, "Noon works", "chat"),
        ])
        .unwrap();
    engine.flush(&Scope::tenant("t")).unwrap();
    let work =
        engine.episodes(&Scope::tenant("t").with_conversation(Some("work".into())), None).unwrap();
    assert_eq!(work[0].title, "Fixing the refund webhook test");
    assert!(
        work[0].summary.starts_with("Intent: Make the test pass. What happened:"),
        "{}",
        work[0].summary
    );
    assert_eq!(work[0].told_by, ToldBy::Llm);
    let chat =
        engine.episodes(&Scope::tenant("t").with_conversation(Some("chat".into())), None).unwrap();
    assert_eq!(chat[0].title, "Episode number 0 of the window", "chat keeps the cut's telling");
    let stories = server
        .received()
        .iter()
        .filter(|r| r.message("system").starts_with("You write down"))
        .count();
    assert_eq!(stories, 1, "only the episode where tools ran");
    // The agent's session is cut at its user's intents; the model cuts only the chat.
    let cuts: Vec<String> = server
        .received()
        .iter()
        .filter(|r| !r.message("system").starts_with("You write down"))
        .map(|r| r.message("user").to_owned())
        .collect();
    assert!(!cuts.is_empty() && cuts.iter().all(|c| !c.contains("refund")), "{cuts:#?}");
    let usage = engine.store().llm_usage(Some("t")).unwrap();
    assert!(usage.iter().any(|(s, u)| *s == LlmStage::Summary && u.calls == 1), "{usage:?}");
}
