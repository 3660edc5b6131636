//! Review ≠ retrieval: a recall moves no memory strength; the review job that runs when the
//! conversation next closes episodes does, by the model's rating or LLM-free.

use std::sync::{Arc, Mutex};

use crate::engine::{Engine, EngineConfig, RecallQuery};
use epimem_core::{EpisodeId, FsrsState, LlmStage, Scope, Timestamp};
use epimem_llm::scripted::{ScriptedReply, ScriptedServer};
use serde_json::json;

use super::common::{DAY, T0, engine, remember};

const TRIP: &[&str] = &[
    "We planned the Sintra day trip with the travel card",
    "The travel card covers the Sintra train",
];

fn state(engine: &Engine, id: &EpisodeId) -> FsrsState {
    engine.store().episodes_by_id(&Scope::tenant("t"), std::slice::from_ref(id)).unwrap()[0].fsrs
}

/// Recalls the trip in conversation "c" at `at`, and returns its episode.
fn recall_trip(engine: &Engine, at: i64) -> EpisodeId {
    let scope = Scope::tenant("t").with_conversation(Some("c".into()));
    let query =
        RecallQuery { at: Some(Timestamp(at)), ..RecallQuery::new(scope, "sintra travel card", 3) };
    let hits = engine.recall(&query).unwrap();
    hits.iter()
        .find(|h| h.episode.title.to_lowercase().contains("sintra") || h.episode.first_seq == 1)
        .unwrap()
        .episode
        .id
        .clone()
}

#[test]
fn a_memory_used_after_its_recall_is_strengthened_once_a_day_llm_free() {
    let engine = engine();
    remember(&engine, "t", "c", 0, TRIP);
    let trip = recall_trip(&engine, T0 + 3 * DAY);
    let before = state(&engine, &trip);
    assert_eq!(state(&engine, &trip), before, "a recall alone changes nothing");

    remember(&engine, "t", "c", 3, &["So the travel card works on the Sintra train, great"]);
    let after = state(&engine, &trip);
    assert!(after.stability.unwrap() > before.stability.unwrap(), "{before:?} → {after:?}");
    assert_eq!(after.last_review, Some(Timestamp(T0 + 3 * DAY)), "reviewed at the recall's time");
    assert!(engine.jobs("t", None, 10).unwrap().is_empty(), "the review job is done");

    // Recalled again the same (conversation) day: not reviewed again.
    recall_trip(&engine, T0 + 3 * DAY + 3_600_000);
    remember(&engine, "t", "c", 4, &["The Sintra travel card again"]);
    assert_eq!(state(&engine, &trip), after);
}

#[test]
fn a_memory_the_conversation_did_not_use_is_left_alone_llm_free() {
    let engine = engine();
    remember(&engine, "t", "c", 0, TRIP);
    let trip = recall_trip(&engine, T0 + 3 * DAY);
    let before = state(&engine, &trip);
    remember(&engine, "t", "c", 3, &["What should we cook for dinner tonight?"]);
    assert_eq!(state(&engine, &trip), before);
}

/// An engine whose model cuts every window as one episode and rates with `rating`.
fn with_reviewer(rating: &'static str) -> (Engine, ScriptedServer) {
    let server = ScriptedServer::start([]);
    let ratings = Arc::new(Mutex::new(rating));
    server.otherwise(move |asked| {
        let system = asked.message("system");
        if system.starts_with("You judge") {
            let rating = *ratings.lock().unwrap();
            return ScriptedReply::Answer(json!({"ratings": [{"memory_id": rating.split(':').next().unwrap(), "rating": rating.split(':').nth(1).unwrap()}]}).to_string());
        }
        let n = asked.message("user").lines().filter(|l| l.starts_with('[')).count();
        ScriptedReply::Answer(json!({"segments": [{"start_message_index": 0, "end_message_index": n - 1, "num_messages": n,
            "title": "Talking about the trip plans", "summary": "They talk.", "surprise_level": "low"}]}).to_string())
    });
    (super::model::engine(server.url(), EngineConfig::default()), server)
}

fn reviewed_by_model(rating: &'static str) -> (FsrsState, FsrsState, Engine) {
    let (engine, _server) = with_reviewer(rating);
    remember(&engine, "t", "c", 0, TRIP);
    let trip = recall_trip(&engine, T0 + 3 * DAY);
    let before = state(&engine, &trip);
    remember(&engine, "t", "c", 3, &["What should we cook for dinner tonight?"]);
    (before, state(&engine, &trip), engine)
}

#[test]
fn the_models_rating_moves_stability_its_way() {
    let (before, again, engine) = reviewed_by_model("m1:again");
    assert!(again.stability.unwrap() < before.stability.unwrap(), "again: {before:?} → {again:?}");
    let usage = engine.store().llm_usage(Some("t")).unwrap();
    assert!(
        usage
            .iter()
            .any(|(stage, u)| *stage == LlmStage::Review && u.calls == 1 && u.failures == 0),
        "{usage:?}"
    );
    let (_, hard, _) = reviewed_by_model("m1:hard");
    let (_, good, _) = reviewed_by_model("m1:good");
    let (_, easy, _) = reviewed_by_model("m1:easy");
    let s = |state: &FsrsState| state.stability.unwrap();
    assert!(
        s(&again) < s(&hard) && s(&hard) < s(&good) && s(&good) < s(&easy),
        "{again:?} {hard:?} {good:?} {easy:?}"
    );
    assert!(s(&before) < s(&good));
    assert!(hard.difficulty.unwrap() > good.difficulty.unwrap(), "hard makes it harder");
    // An id the prompt never gave rates nothing.
    let (before, invented, _) = reviewed_by_model("m7:easy");
    assert_eq!(invented, before);
}

#[test]
fn recall_ranks_with_the_reviewed_strength() {
    let engine = engine();
    remember(&engine, "t", "c", 0, TRIP);
    // Judged a month on, without a conversation (no review is recorded).
    let later = |engine: &Engine| {
        let query = RecallQuery {
            at: Some(Timestamp(T0 + 30 * DAY)),
            ..RecallQuery::new(Scope::tenant("t"), "sintra travel card", 3)
        };
        engine.recall(&query).unwrap()[0].retrievability
    };
    let before = later(&engine);
    recall_trip(&engine, T0 + 3 * DAY);
    remember(&engine, "t", "c", 3, &["So the travel card works on the Sintra train, great"]);
    let after = later(&engine);
    assert!(after > before, "the index took the new strength: {before} → {after}");
}
