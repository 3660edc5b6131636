//! Full-text (BM25) recall without an embedder: what the words alone find.

use std::sync::Arc;

use crate::engine::{Engine, EngineConfig, EngineError, FixedClock, MessageInput, RecallQuery};
use epimem_core::{ConversationKey, Role, Scope, Timestamp};
use epimem_search_local::LocalSearch;
use epimem_store_sqlite::SqliteStore;

const T0: i64 = 1_767_225_600_000;
const DAY: i64 = 86_400_000;

fn engine() -> Engine {
    let clock = Arc::new(FixedClock::new(Timestamp(T0)));
    let config = EngineConfig::default();
    Engine::new(
        std::sync::Arc::new(SqliteStore::open_in_memory().unwrap()),
        Box::new(LocalSearch::in_memory(&config.ranking)),
        config,
        Box::new(clock),
        "t:1".into(),
    )
}

/// One closed episode of `lines` on `day`, spoken by Caroline (user) and the assistant.
fn remember(engine: &Engine, conversation: &str, day: i64, lines: &[&str]) {
    let msgs: Vec<MessageInput> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| MessageInput {
            conversation: ConversationKey::new("t", conversation),
            user: None,
            agent: None,
            key: format!("{day}-{i}"),
            role: if i % 2 == 0 { Role::User } else { Role::Assistant },
            speaker: (i % 2 == 0).then(|| "Caroline".to_owned()),
            content: (*l).into(),
            timestamp: Some(Timestamp(T0 + day * DAY + i as i64 * 60_000)),
            metadata: serde_json::Value::Null,
        })
        .collect();
    engine.ingest(msgs).unwrap();
    engine.flush(&Scope::tenant("t").with_conversation(Some(conversation.into()))).unwrap();
}

fn firsts(engine: &Engine, scope: &Scope, text: &str) -> Vec<u64> {
    let query =
        RecallQuery { at: Some(Timestamp(T0)), ..RecallQuery::new(scope.clone(), text, 10) };
    engine.recall(&query).unwrap().iter().map(|h| h.episode.first_seq).collect()
}

#[test]
fn words_find_titles_raw_lines_speakers_and_stems() {
    let e = engine();
    remember(&e, "c", 0, &["I planted tomatoes in the garden", "They need plenty of sun"]);
    remember(&e, "c", 5, &["My guitar needs new strings", "Try nylon strings"]);
    let scope = Scope::tenant("t");
    assert_eq!(firsts(&e, &scope, "guitar strings")[0], 3);
    assert_eq!(firsts(&e, &scope, "sun"), [1], "a word of a raw line");
    assert_eq!(firsts(&e, &scope, "caroline").len(), 2, "speaker names are searchable");
    assert_eq!(firsts(&e, &scope, "planting"), [1], "stems: planting finds planted");
    assert!(firsts(&e, &scope, "submarine").is_empty());
    let other = scope.clone().with_conversation(Some("elsewhere".into()));
    assert!(firsts(&e, &other, "guitar").is_empty());
    // Time ranges select by overlap with the episode.
    let late = Scope { since: Some(Timestamp(T0 + 2 * DAY)), ..scope.clone() };
    assert_eq!(firsts(&e, &late, "caroline"), [3]);
    let early = Scope { until: Some(Timestamp(T0 + 2 * DAY)), ..scope.clone() };
    assert_eq!(firsts(&e, &early, "caroline"), [1]);
    // Without vectors to fall back on, a query of punctuation is an error, not "nothing".
    let err = e.recall(&RecallQuery::new(scope.clone(), "?!", 5)).unwrap_err();
    assert!(matches!(err, EngineError::Invalid(_)), "{err}");
    // Single messages: the right turn of the right episode.
    let turns =
        e.measure().recall_messages(&RecallQuery::new(scope.clone(), "nylon strings", 10)).unwrap();
    assert_eq!(turns[0].seq, 4);
    assert!(turns.iter().all(|t| t.seq == 3 || t.seq == 4), "{turns:?}");
}

#[test]
fn episodes_closed_after_the_index_loaded_are_found_and_forgotten() {
    let e = engine();
    remember(&e, "c", 0, &["we painted the fence green", "green is a calm colour"]);
    let scope = Scope::tenant("t");
    assert_eq!(firsts(&e, &scope, "fence"), [1]); // loads the index
    remember(&e, "c", 1, &["the zebra at the zoo had stripes", "zebras are great"]);
    assert_eq!(firsts(&e, &scope, "zebra stripes"), [3]);
    let zebra = e.episodes(&scope, None).unwrap()[0].id.clone(); // the newest
    e.delete_episode(&scope, &zebra).unwrap();
    assert!(firsts(&e, &scope, "zebra stripes").is_empty());
    let turns = e.measure().recall_messages(&RecallQuery::new(scope.clone(), "zebra", 10)).unwrap();
    assert!(turns.is_empty(), "{turns:?}");
}

#[test]
fn a_name_selects_the_speakers_own_lines_not_every_mention() {
    let e = engine();
    remember(
        &e,
        "c",
        0,
        &[
            "lovely weather today",
            "Caroline, Caroline, Caroline! How was the trip, Caroline?",
            "I finally adopted the puppy from the shelter",
        ],
    );
    let scope = Scope::tenant("t");
    let turns = e
        .measure()
        .recall_messages(&RecallQuery::new(scope, "what did Caroline adopt?", 10))
        .unwrap();
    let seqs: Vec<u64> = turns.iter().map(|t| t.seq).collect();
    // Caroline (the user) spoke lines 1 and 3; line 2 only names her, many times, and comes
    // (if at all) only as the neighbour of the best line.
    assert_eq!(seqs[..2], [3, 1], "{turns:?}");
}

#[test]
fn chinese_and_japanese_are_searchable_by_a_few_characters() {
    let e = engine();
    remember(&e, "zh", 0, &["我们讨论了数据库连接池的配置问题", "需要把超时时间调大"]);
    remember(&e, "ja", 1, &["東京タワーに行きました", "夜景がとてもきれいでした"]);
    remember(&e, "en", 2, &["the garden needs water", "tomatoes are ripe"]);
    let found = |text: &str| -> Vec<String> {
        let query = RecallQuery::new(Scope::tenant("t"), text, 10);
        let hits = e.recall(&query).unwrap();
        hits.into_iter().map(|h| h.episode.conversation.conversation).collect()
    };
    assert_eq!(found("数据库"), ["zh"]);
    assert_eq!(found("超时"), ["zh"]);
    assert_eq!(found("東京タワー"), ["ja"]);
    assert_eq!(found("tomatoes"), ["en"]);
}
