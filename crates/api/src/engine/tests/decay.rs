//! Memory strength in recall, on a conversation replayed over months: when two episodes
//! answer a query about equally well, the one from months ago yields to the recent one; when
//! the old one answers clearly better, it stays first.

use super::common::{DAY, T0, engine_with, remember};
use crate::engine::{Engine, EngineConfig, RecallQuery};
use epimem_core::{Scope, Timestamp, fsrs::MemoryConfig};

/// Episodes in conversation "c", months apart, as (day, lines).
const REPLAY: [(i64, [&str; 2]); 6] = [
    (0, ["we picked postgres for the billing database", "it has good json support"]),
    (1, ["the standup meets at nine in the morning", "keep it under fifteen minutes"]),
    (
        2,
        [
            "the billing service crashed because redis evicted the session keys under memory pressure",
            "we raised maxmemory and set an eviction policy for volatile keys only",
        ],
    ),
    (150, ["the billing database moved to postgres sixteen", "json support got faster"]),
    (151, ["the standup now meets at ten in the morning", "still under fifteen minutes"]),
    (152, ["redis looks healthy today", "no alerts overnight"]),
];

fn replayed(floor: f64) -> Engine {
    let config = EngineConfig {
        memory: MemoryConfig { retrievability_floor: floor, ..MemoryConfig::default() },
        ..EngineConfig::default()
    };
    let e = engine_with(config);
    for (day, lines) in REPLAY {
        remember(&e, "t", "c", day, &lines);
    }
    e
}

/// The day of the first episode and of the first turn recalled for `text`, judged the day
/// after the last episode.
fn first_days(e: &Engine, text: &str) -> (i64, i64) {
    let query = RecallQuery {
        at: Some(Timestamp(T0 + 153 * DAY)),
        ..RecallQuery::new(Scope::tenant("t").with_conversation(Some("c".into())), text, 5)
    };
    let day = |ts: Timestamp| (ts.millis() - T0) / DAY;
    let episode = e.recall(&query).unwrap()[0].episode.start;
    let turn = &e.measure().recall_messages(&query).unwrap()[0];
    let detail = e.episode(&query.scope, &turn.episode).unwrap();
    (day(episode), day(detail.episode.start))
}

/// (query, the day whose episode should come first): close matches go to the recent one, a
/// clearly better match stays with the old one.
const CASES: [(&str, i64); 3] = [
    ("postgres billing database json support", 150),
    ("when does the standup meet in the morning", 151),
    ("why did the billing service crash when redis evicted the session keys", 2),
];

#[test]
fn old_memories_yield_when_relevance_is_close_but_a_clearly_better_match_stays_first() {
    let e = replayed(MemoryConfig::default().retrievability_floor);
    for (text, day) in CASES {
        assert_eq!(first_days(&e, text), (day, day), "{text}");
    }
}

#[test]
fn without_memory_strength_the_old_episodes_win_the_close_calls() {
    // What the default is measured against: relevance alone puts the old episodes first in
    // the close cases (their words are nearer the query's), so the test above shows memory
    // strength at work, not an accident of wording.
    let e = replayed(1.0);
    let old_first = CASES[..2].iter().filter(|(text, _)| first_days(&e, text).0 < 100).count();
    assert!(old_first >= 1, "{:?}", CASES.map(|(t, _)| first_days(&e, t)));
}
