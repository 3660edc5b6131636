//! The timeline over a month of conversations, on a clock the test moves: which periods are
//! rolled up when, what each node covers, and what a late episode does.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::engine::{Engine, EngineConfig, FixedClock};
use epimem_core::{Scope, Timestamp, TocNode};
use epimem_store_sqlite::SqliteStore;

use super::common::{DAY, T0, engine_on, remember};

fn engine(clock: Arc<FixedClock>) -> Engine {
    engine_on(SqliteStore::open_in_memory().unwrap(), EngineConfig::default(), clock, 64)
}

fn node(id: &str) -> TocNode {
    id.parse().unwrap()
}

/// The episodes under a node, down through its children as written.
fn episodes_under(engine: &Engine, id: &str) -> BTreeSet<String> {
    let Some(written) = engine.timeline_node("t", &node(id), None).unwrap() else {
        return BTreeSet::new();
    };
    if id.starts_with("toc:day:") {
        return written.children.into_iter().collect();
    }
    written.children.iter().flat_map(|child| episodes_under(engine, child)).collect()
}

#[test]
fn periods_roll_up_once_over_and_cover_exactly_their_episodes() {
    // 2026-01-01 (T0) is a Thursday; an episode every other day through January.
    let clock = Arc::new(FixedClock::new(Timestamp(T0)));
    let engine = engine(Arc::clone(&clock));
    for day in (0..31).step_by(2) {
        remember(
            &engine,
            "t",
            "c",
            day,
            &[&format!("Day {day}: we planned the garden beds"), "Tomatoes along the fence"],
        );
    }
    clock.set(Timestamp(T0 + 10 * DAY + 1_800_000)); // 2026-01-11 00:30
    let first = engine.roll_up_timeline("t").unwrap();
    assert!(first.written > 0 && first.waiting > 0, "{first:?}");
    let day0 = engine.timeline_node("t", &node("toc:day:2026-01-01"), None).unwrap().unwrap();
    assert_eq!((day0.version, day0.children.len(), day0.summary.episodes), (1, 1, 1));
    assert!(
        engine.timeline_node("t", &node("toc:day:2026-01-11"), None).unwrap().is_none(),
        "today is open"
    );
    let w01 = engine.timeline_node("t", &node("toc:week:2026:W01"), None).unwrap().unwrap();
    assert_eq!(
        w01.children,
        ["toc:day:2026-01-01", "toc:day:2026-01-03"],
        "the days of the week with episodes"
    );
    assert!(
        engine.timeline_node("t", &node("toc:week:2026:W02"), None).unwrap().is_none(),
        "ended within its grace"
    );
    assert!(engine.timeline_node("t", &node("toc:month:2026:01"), None).unwrap().is_none());

    clock.set(Timestamp(T0 + 50 * DAY));
    // The worker's tick rolls up every tenant's timeline.
    let ticked = engine.tick().unwrap();
    assert!(ticked.timeline_written > 0, "{ticked:?}");
    let top: Vec<String> =
        engine.timeline_top("t").unwrap().iter().map(|n| n.id.to_string()).collect();
    assert_eq!(top, ["toc:month:2026:01"], "the year is open: its month is the top");
    let all: BTreeSet<String> =
        engine.episodes(&Scope::tenant("t"), None).unwrap().into_iter().map(|e| e.id.0).collect();
    assert_eq!(all.len(), 16);
    assert_eq!(
        episodes_under(&engine, "toc:month:2026:01"),
        all,
        "the month covers exactly its episodes"
    );
    let month = engine.timeline_node("t", &node("toc:month:2026:01"), None).unwrap().unwrap();
    assert_eq!(month.summary.episodes, 16);
    assert!(month.summary.keywords.iter().any(|k| k == "garden"), "{:?}", month.summary);
    assert!(
        engine.timeline_node("t", &node("toc:year:2026"), None).unwrap().is_none(),
        "the year is not over"
    );
    let again = engine.roll_up_timeline("t").unwrap();
    assert_eq!((again.marked, again.written), (0, 0), "nothing new, nothing written");
}

#[test]
fn a_late_episode_adds_versions_and_keeps_the_old_ones() {
    let clock = Arc::new(FixedClock::new(Timestamp(T0)));
    let engine = engine(Arc::clone(&clock));
    remember(&engine, "t", "c", 4, &["We chose the seeds", "Basil and thyme"]);
    clock.set(Timestamp(T0 + 20 * DAY));
    engine.roll_up_timeline("t").unwrap();
    let before = engine.timeline_node("t", &node("toc:week:2026:W02"), None).unwrap().unwrap();
    assert_eq!((before.version, before.children.len()), (1, 1));

    // A conversation imported later tells of a day in that week.
    remember(&engine, "t", "d", 6, &["The basil seedlings came up", "Thin them next week"]);
    let report = engine.roll_up_timeline("t").unwrap();
    // Its day and its week; January and 2026 are not over yet.
    assert_eq!((report.written, report.waiting), (2, 2), "{report:?}");
    let after = engine.timeline_node("t", &node("toc:week:2026:W02"), None).unwrap().unwrap();
    assert_eq!((after.version, after.children.len()), (2, 2));
    let old = engine.timeline_node("t", &node("toc:week:2026:W02"), Some(1)).unwrap().unwrap();
    assert_eq!(old, before, "the old version stays readable");
    let day = engine.timeline_node("t", &node("toc:day:2026-01-07"), None).unwrap().unwrap();
    assert_eq!(day.version, 1);
}

#[test]
fn a_forgotten_episode_leaves_every_node() {
    let clock = Arc::new(FixedClock::new(Timestamp(T0)));
    let engine = engine(Arc::clone(&clock));
    remember(
        &engine,
        "t",
        "c",
        4,
        &["Zanzibar spice order for the garden party", "Zanzibar cloves"],
    );
    remember(&engine, "t", "c", 6, &["The basil seedlings came up", "Thin them next week"]);
    clock.set(Timestamp(T0 + 60 * DAY));
    engine.roll_up_timeline("t").unwrap();
    let said = |engine: &Engine| -> String {
        ["toc:day:2026-01-05", "toc:day:2026-01-07", "toc:week:2026:W02", "toc:month:2026:01"]
            .iter()
            .filter_map(|id| engine.timeline_node("t", &node(id), None).unwrap())
            .map(|n| format!("{:?}", n.summary).to_lowercase())
            .collect()
    };
    assert!(said(&engine).contains("zanzibar"));

    let zanzibar = engine
        .episodes(&Scope::tenant("t"), None)
        .unwrap()
        .into_iter()
        .find(|e| {
            e.title.to_lowercase().contains("zanzibar")
                || e.keywords.iter().any(|k| k == "zanzibar")
        })
        .unwrap();
    engine.delete_episode(&Scope::tenant("t"), &zanzibar.id).unwrap();
    engine.roll_up_timeline("t").unwrap();
    assert!(!said(&engine).contains("zanzibar"), "{}", said(&engine));
    assert!(
        engine.timeline_node("t", &node("toc:day:2026-01-05"), None).unwrap().is_none(),
        "nothing left that day"
    );
    let week = engine.timeline_node("t", &node("toc:week:2026:W02"), None).unwrap().unwrap();
    assert_eq!(week.children, ["toc:day:2026-01-07"]);
}

#[test]
fn with_a_model_the_periods_are_told_by_it_and_without_an_answer_by_their_words() {
    use epimem_core::LlmStage;
    use epimem_llm::scripted::{ScriptedReply, ScriptedServer};
    use serde_json::json;

    let server = ScriptedServer::start([]);
    let told = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let answering = std::sync::Arc::clone(&told);
    server.otherwise(move |asked| {
        let system = asked.message("system");
        if system.starts_with("You sum up a period") {
            if !answering.load(std::sync::atomic::Ordering::SeqCst) {
                return ScriptedReply::Status { status: 500, body: "down".into(), retry_after: None };
            }
            return ScriptedReply::Answer(json!({"title": "Getting the garden ready", "bullets": ["Beds dug"], "keywords": ["Garden"]}).to_string());
        }
        let n = asked.message("user").lines().filter(|l| l.starts_with('[')).count();
        ScriptedReply::Answer(json!({"segments": [{"start_message_index": 0, "end_message_index": n - 1, "num_messages": n,
            "title": "Garden work", "summary": "They work.", "surprise_level": "low"}]}).to_string())
    });
    let clock = Arc::new(FixedClock::new(Timestamp(T0)));
    let mut config = EngineConfig::default();
    config.consolidation.every_episodes = u32::MAX;
    config.consolidation.flashbulb_surprise = 2.0;
    let engine = super::model::engine_on_clock(server.url(), config, Arc::clone(&clock));
    remember(&engine, "t", "c", 4, &["We dug the garden beds", "Compost next"]);
    clock.set(Timestamp(T0 + 60 * DAY));
    let report = engine.roll_up_timeline("t").unwrap();
    let week = engine.timeline_node("t", &node("toc:week:2026:W02"), None).unwrap().unwrap();
    assert_eq!(
        (week.summary.title.as_str(), week.summary.keywords.as_slice()),
        ("Getting the garden ready", &["garden".to_owned()][..])
    );
    assert_eq!(week.summary.episodes, 1, "counts are counted, not told");
    let usage = engine.store().llm_usage(Some("t")).unwrap();
    let summary = usage.iter().find(|(s, _)| *s == LlmStage::Summary).unwrap().1;
    assert_eq!(summary.calls as usize, report.written, "one call per node written");

    // The model down: a late episode's day is told by its words.
    told.store(false, std::sync::atomic::Ordering::SeqCst);
    remember(&engine, "t", "d", 6, &["Basil seedlings came up", "Thin them soon"]);
    engine.roll_up_timeline("t").unwrap();
    let day = engine.timeline_node("t", &node("toc:day:2026-01-07"), None).unwrap().unwrap();
    assert_ne!(day.summary.title, "Getting the garden ready");
    assert!(!day.summary.title.is_empty());
}

#[test]
fn a_rollup_stopped_between_two_levels_resumes_without_duplicate_or_missing_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let clock = Arc::new(FixedClock::new(Timestamp(T0)));
    let on_file = |config: EngineConfig| {
        engine_on(SqliteStore::open(&path).unwrap(), config, Arc::clone(&clock), 64)
    };
    // The first process writes days and weeks, then stops before the months: the state a crash
    // between two parents leaves (its months and year still marked in the file).
    let mut stops_early = EngineConfig::default();
    stops_early.timeline.month_grace_hours = 1e9;
    stops_early.timeline.year_grace_days = 1e9;
    let first = on_file(stops_early);
    for day in (0..31).step_by(3) {
        remember(&first, "t", "c", day, &[&format!("Day {day} in the garden"), "Weeding"]);
    }
    clock.set(Timestamp(T0 + 400 * DAY));
    let partial = first.roll_up_timeline("t").unwrap();
    assert_eq!(partial.waiting, 2, "January and 2026 left marked: {partial:?}");
    assert!(first.timeline_node("t", &node("toc:month:2026:01"), None).unwrap().is_none());
    drop(first);

    // The next process resumes from the marks in the file.
    let second = on_file(EngineConfig::default());
    let resumed = second.roll_up_timeline("t").unwrap();
    assert_eq!((resumed.marked, resumed.written, resumed.waiting), (0, 2, 0), "{resumed:?}");
    let month = second.timeline_node("t", &node("toc:month:2026:01"), None).unwrap().unwrap();
    assert_eq!(month.version, 1);
    let all: BTreeSet<String> =
        second.episodes(&Scope::tenant("t"), None).unwrap().into_iter().map(|e| e.id.0).collect();
    assert_eq!(episodes_under(&second, "toc:year:2026"), all, "none missing");
    for week in &month.children {
        assert_eq!(
            second.timeline_node("t", &node(week), Some(2)).unwrap(),
            None,
            "{week}: written once"
        );
    }
}

#[test]
fn a_message_dated_9999_is_refused_and_one_stored_before_stops_no_other_period() {
    let clock = Arc::new(FixedClock::new(Timestamp(T0)));
    let engine = engine(Arc::clone(&clock));
    let far = epimem_core::Timestamp::parse_rfc3339("9999-12-31T12:00:00Z").unwrap();
    let message = |key: &str| crate::engine::MessageInput {
        conversation: epimem_core::ConversationKey::new("t", "future"),
        user: None,
        agent: None,
        key: key.into(),
        role: epimem_core::Role::User,
        speaker: None,
        content: "A note from the far future".into(),
        timestamp: Some(far),
        metadata: serde_json::Value::Null,
    };
    let refused = engine.ingest(vec![message("refused")]).unwrap_err();
    assert!(refused.to_string().contains("timestamp"), "{refused}");
    // What an earlier version stored unchecked: straight into the store.
    let stored = epimem_core::NewMessage {
        conversation: epimem_core::ConversationKey::new("t", "future"),
        user: None,
        agent: None,
        key: "old".into(),
        role: epimem_core::Role::User,
        speaker: None,
        content: "A note from the far future".into(),
        timestamp: far,
        metadata: serde_json::Value::Null,
        tokens: 6,
    };
    epimem_store::Ingest::push_messages(engine.store(), &[stored]).unwrap();
    engine.flush(&Scope::tenant("t")).unwrap();
    for day in [0, 1, 2] {
        remember(&engine, "t", "c", day, &["We planned the garden beds", "Tomatoes by the fence"]);
    }
    clock.set(Timestamp(T0 + 40 * DAY));
    let report = engine.roll_up_timeline("t").unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert!(report.waiting >= 4, "the far future's periods wait: {report:?}");
    assert_eq!(episodes_under(&engine, "toc:month:2026:01").len(), 3);
    engine.tick().unwrap();
}

#[test]
fn a_retold_timeline_is_told_as_this_version_tells_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let clock = Arc::new(FixedClock::new(Timestamp(T0)));
    let engine = engine_on(
        SqliteStore::open(&path).unwrap(),
        EngineConfig::default(),
        Arc::clone(&clock),
        64,
    );
    for day in 0..3 {
        remember(&engine, "t", "c", day, &["We planned the garden beds", "Tomatoes by the fence"]);
    }
    clock.set(Timestamp(T0 + 40 * DAY));
    engine.roll_up_timeline("t").unwrap();
    let day = node("toc:day:2026-01-01");
    let told = engine.timeline_node("t", &day, None).unwrap().unwrap();
    // As an older version told it, written by another process on the same database.
    let other = SqliteStore::open(&path).unwrap();
    let old =
        epimem_core::NodeSummary { title: "photo, great and share".into(), ..told.summary.clone() };
    epimem_store::Timeline::put_timeline_node(
        &other,
        "t",
        &epimem_core::TimelineNode { summary: old, ..told.clone() },
    )
    .unwrap();
    assert_eq!(
        engine.timeline_node("t", &day, None).unwrap().unwrap().summary.title,
        "photo, great and share"
    );

    let report = engine.retell_timeline("t").unwrap();
    assert!(report.failed.is_empty() && report.written >= 5, "{report:?}");
    let retold = engine.timeline_node("t", &day, None).unwrap().unwrap();
    assert_eq!(retold.summary, told.summary, "told as before the old telling");
    assert_eq!(retold.version, 3, "a new version; the old ones stay readable");
    let old = engine.timeline_node("t", &day, Some(2)).unwrap().unwrap();
    assert_eq!(old.summary.title, "photo, great and share");
    // Told again with nothing new, nothing changes.
    engine.retell_timeline("t").unwrap();
    assert_eq!(engine.timeline_node("t", &day, None).unwrap().unwrap().version, 3);
}
