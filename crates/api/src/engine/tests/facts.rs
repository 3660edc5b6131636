//! Consolidation into facts with the scripted model: when it runs, what it writes, what it
//! refuses, and that its failures cost a retry, never the run.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::engine::{Engine, EngineConfig, FixedClock, RecallQuery};
use epimem_core::{LlmStage, Scope, Timestamp};
use epimem_llm::scripted::{ScriptedReply, ScriptedServer};
use serde_json::{Value, json};

use super::common::{T0, remember};

type Answers = Arc<Mutex<VecDeque<ScriptedReply>>>;

fn engine(surprise: &'static str) -> (Engine, ScriptedServer, Answers) {
    let (engine, server, answers, _) = engine_on_clock(surprise);
    (engine, server, answers)
}

/// An engine whose model cuts every window as one episode (surprise `surprise`) and answers
/// consolidations with the queued answers (HTTP 500 once they run out), on a clock the test
/// moves.
fn engine_on_clock(surprise: &'static str) -> (Engine, ScriptedServer, Answers, Arc<FixedClock>) {
    let server = ScriptedServer::start([]);
    let answers: Answers = Arc::default();
    let queued = Arc::clone(&answers);
    server.otherwise(move |asked| {
        if asked.message("system").starts_with("You keep a list of lasting facts") {
            let next = queued.lock().unwrap().pop_front();
            return next.unwrap_or(ScriptedReply::Status { status: 500, body: "no answer".into(), retry_after: None });
        }
        let n = asked.message("user").lines().filter(|l| l.starts_with('[')).count();
        ScriptedReply::Answer(json!({"segments": [{"start_message_index": 0, "end_message_index": n - 1, "num_messages": n,
            "title": "Ana talks about her life", "summary": "Ana talks.", "surprise_level": surprise}]}).to_string())
    });
    let clock = Arc::new(FixedClock::new(Timestamp(T0)));
    let engine =
        super::model::engine_on_clock(server.url(), EngineConfig::default(), Arc::clone(&clock));
    (engine, server, answers, clock)
}

fn actions(actions: Value) -> ScriptedReply {
    ScriptedReply::Answer(json!({ "actions": actions }).to_string())
}

fn facts(engine: &Engine, with_invalid: bool) -> Vec<(String, bool)> {
    let mut all: Vec<(String, bool)> = engine
        .facts(&Scope::tenant("t"), with_invalid, None)
        .unwrap()
        .into_iter()
        .map(|f| (f.text.clone(), f.is_valid()))
        .collect();
    all.sort();
    all
}

fn own(pairs: &[(&str, bool)]) -> Vec<(String, bool)> {
    pairs.iter().map(|(t, v)| ((*t).to_owned(), *v)).collect()
}

#[test]
fn every_third_episode_is_consolidated_and_invented_ids_are_refused() {
    let (engine, server, answers) = engine("low");
    answers.lock().unwrap().push_back(actions(json!([
        {"action": "new", "fact_id": "", "text": "Ana lives in Porto", "episode_ids": ["e1"]},
        {"action": "new", "fact_id": "", "text": "Ana has a dog named Rui", "episode_ids": ["e2", "e3"]},
        {"action": "new", "fact_id": "", "text": "Invented source", "episode_ids": ["ep_0123"]},
        {"action": "reinforce", "fact_id": "f4", "text": "", "episode_ids": ["e1"]}
    ])));
    remember(&engine, "t", "c", 0, &["I live in Porto, near the river", "It is lovely there"]);
    remember(&engine, "t", "c", 1, &["Rui, my dog, chewed my shoes", "Bad dog"]);
    assert!(facts(&engine, true).is_empty(), "two episodes wait");
    remember(&engine, "t", "c", 2, &["Took Rui to the vet today", "He is fine"]);
    assert_eq!(
        facts(&engine, false),
        own(&[("Ana has a dog named Rui", true), ("Ana lives in Porto", true)])
    );
    let stored = engine.facts(&Scope::tenant("t"), false, None).unwrap();
    let dog = stored.iter().find(|f| f.text.contains("dog")).unwrap();
    assert_eq!(dog.sources.len(), 2, "provenance: the episodes it came from");

    // The next call sees the known facts and may change them.
    answers.lock().unwrap().push_back(actions(json!([
        {"action": "update", "fact_id": "f2", "text": "Ana lives in Lisbon", "episode_ids": ["e1"]}
    ])));
    for day in 3..6 {
        remember(
            &engine,
            "t",
            "c",
            day,
            &["We moved to Lisbon, Rui loves it", "The beach is close"],
        );
    }
    let known = server
        .received()
        .into_iter()
        .filter(|r| r.message("system").starts_with("You keep"))
        .nth(1)
        .unwrap();
    assert!(known.message("user").contains("f2: Ana lives in Porto"), "{}", known.message("user"));
    assert_eq!(
        facts(&engine, true),
        own(&[
            ("Ana has a dog named Rui", true),
            ("Ana lives in Lisbon", true),
            ("Ana lives in Porto", false)
        ]),
        "update = invalidate + insert; nothing deleted"
    );

    // Recall hands back the facts that bear on the query.
    let query = RecallQuery::new(Scope::tenant("t"), "where does Ana live now?", 3);
    let recalled: Vec<String> =
        engine.recall_facts(&query).unwrap().into_iter().map(|h| h.fact.text).collect();
    assert_eq!(recalled.first().map(String::as_str), Some("Ana lives in Lisbon"), "{recalled:?}");
    assert!(!recalled.iter().any(|t| t == "Ana lives in Porto"), "invalid facts are not recalled");
}

#[test]
fn a_flashbulb_episode_is_consolidated_at_once() {
    let (engine, _server, answers) = engine("extremely_high");
    answers.lock().unwrap().push_back(actions(json!([
        {"action": "new", "fact_id": "", "text": "Ana's sister got married", "episode_ids": ["e1"]}
    ])));
    remember(&engine, "t", "c", 0, &["My sister just got married!", "To Rui, in Porto"]);
    assert_eq!(facts(&engine, false), own(&[("Ana's sister got married", true)]));
}

#[test]
fn a_failing_model_costs_a_retry_never_the_run() {
    let (engine, _server, answers, clock) = engine_on_clock("extremely_high");
    // No answer queued: the consolidation call fails (after the client's retry).
    remember(&engine, "t", "c", 0, &["My sister just got married!", "To Rui, in Porto"]);
    assert!(facts(&engine, true).is_empty());
    let jobs = engine.jobs("t", None, 10).unwrap();
    assert_eq!((jobs.len(), jobs[0].kind), (1, Some("consolidate")), "{jobs:?}");
    assert!(jobs[0].last_error.as_deref().unwrap_or("").contains("consolidation"), "{jobs:?}");
    let usage = engine.store().llm_usage(Some("t")).unwrap();
    let consolidation = usage.iter().find(|(s, _)| *s == LlmStage::Consolidation).unwrap().1;
    assert!(
        consolidation.calls >= 2 && consolidation.failures == consolidation.calls,
        "{consolidation:?}"
    );

    // Once its wait is over, the job runs again and the model answers.
    answers.lock().unwrap().push_back(actions(json!([
        {"action": "new", "fact_id": "", "text": "Ana's sister got married", "episode_ids": ["e1"]}
    ])));
    clock.set(Timestamp(T0 + 60_000));
    engine.run_jobs().unwrap();
    assert_eq!(facts(&engine, false), own(&[("Ana's sister got married", true)]));
    assert!(engine.jobs("t", None, 10).unwrap().is_empty());

    // Forgetting the episode forgets the fact that came from it.
    let episode = engine.episodes(&Scope::tenant("t"), None).unwrap()[0].id.clone();
    engine.delete_episode(&Scope::tenant("t"), &episode).unwrap();
    assert!(facts(&engine, true).is_empty());
}
