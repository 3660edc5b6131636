//! The engine end to end on a real SQLite store, with a fixed clock.

use std::sync::Arc;

use crate::engine::{Engine, EngineConfig, FixedClock, MessageInput, RecallQuery};
use epimem_core::{BoundaryReason, ConversationKey, Role, Scope, Timestamp, Trigger, TriggerKind};
use epimem_search_local::LocalSearch;
use epimem_store_sqlite::SqliteStore;

const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const MIN: i64 = 60_000;

fn search() -> Box<LocalSearch> {
    Box::new(LocalSearch::in_memory(&EngineConfig::default().ranking))
}

fn engine() -> (Engine, Arc<FixedClock>) {
    let clock = Arc::new(FixedClock::new(Timestamp(T0)));
    let store = SqliteStore::open_in_memory().unwrap();
    let engine = Engine::new(
        std::sync::Arc::new(store),
        search(),
        EngineConfig::default(),
        Box::new(clock.clone()),
        "test:1".into(),
    );
    (engine, clock)
}

fn conv() -> ConversationKey {
    ConversationKey::new("default", "c1")
}

fn input(n: usize, role: Role, content: &str, minute: i64) -> MessageInput {
    MessageInput {
        conversation: conv(),
        user: None,
        agent: None,
        key: format!("m{n}"),
        role,
        speaker: None,
        content: content.into(),
        timestamp: Some(Timestamp(T0 + minute * MIN)),
        metadata: serde_json::Value::Null,
    }
}

/// `n` messages on one subject, a minute apart, from `start` minutes.
fn same_topic(from: usize, n: usize, start: i64) -> Vec<MessageInput> {
    (0..n)
        .map(|i| {
            let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
            input(from + i, role, "tomato garden watering schedule question", start + i as i64)
        })
        .collect()
}

/// Every message is in exactly one episode or still pending; episodes tile the conversation.
fn assert_tiled(engine: &Engine) {
    let q = engine.store().queue(&conv()).unwrap().unwrap();
    let mut episodes = engine.episodes(&Scope::tenant("default"), None).unwrap();
    episodes.sort_by_key(|e| e.first_seq);
    let mut next = 1;
    for e in &episodes {
        assert_eq!(e.first_seq, next, "episodes must tile without gap or overlap");
        next = e.last_seq + 1;
    }
    assert_eq!(next - 1, q.watermark);
    assert!(q.watermark <= q.last_seq);
}

#[test]
fn a_lone_segment_doubles_the_window_then_closes() {
    let (engine, _) = engine();
    let report = engine.ingest(same_topic(0, 20, 0)).unwrap();
    assert_eq!(report.inserted, 20);
    assert_eq!(report.segmentation.episodes_closed, 0);
    assert!(engine.store().queue(&conv()).unwrap().unwrap().window_doubled);
    let report = engine.ingest(same_topic(20, 20, 20)).unwrap();
    assert_eq!(report.segmentation.episodes_closed, 1);
    let episodes = engine.episodes(&Scope::tenant("default"), None).unwrap();
    assert_eq!((episodes[0].first_seq, episodes[0].last_seq), (1, 40));
    assert_eq!(episodes[0].boundary_reason, BoundaryReason::WindowFull);
    assert_tiled(&engine);
}

#[test]
fn topics_split_and_the_last_one_stays_open() {
    let (engine, _) = engine();
    let mut msgs = same_topic(0, 8, 0);
    // An hour later, another subject.
    msgs.extend(
        (8..20)
            .map(|i| input(i, Role::User, "guitar chords practice routine tonight", 68 + i as i64)),
    );
    let report = engine.ingest(msgs).unwrap();
    assert_eq!(report.segmentation.episodes_closed, 1);
    let episodes = engine.episodes(&Scope::tenant("default"), None).unwrap();
    assert_eq!((episodes[0].first_seq, episodes[0].last_seq), (1, 8));
    assert_eq!(episodes[0].boundary_reason, BoundaryReason::TimeGap);
    assert_eq!(engine.store().queue(&conv()).unwrap().unwrap().pending(), 12);
    // Flush closes the open tail.
    let report = engine.flush(&Scope::tenant("default")).unwrap();
    assert_eq!((report.episodes_closed, report.messages_closed), (1, 12));
    let episodes = engine.episodes(&Scope::tenant("default"), None).unwrap();
    assert_eq!(episodes.len(), 2);
    assert_eq!(episodes[0].boundary_reason, BoundaryReason::Flush, "newest first");
    assert_eq!(engine.stats(None).unwrap().pending_messages, 0);
    assert_tiled(&engine);
}

#[test]
fn duplicates_are_skipped_on_reingest() {
    let (engine, _) = engine();
    engine.ingest(same_topic(0, 7, 0)).unwrap();
    let again = engine.ingest(same_topic(0, 9, 0)).unwrap();
    assert_eq!((again.inserted, again.duplicates), (2, 7));
    assert_eq!(engine.stats(None).unwrap().messages, 9);
}

#[test]
fn idle_conversations_are_flushed_by_the_tick() {
    let (engine, clock) = engine();
    engine.ingest(same_topic(0, 6, 0)).unwrap();
    // The last message was at minute 5; four minutes later nothing happens.
    clock.set(Timestamp(T0 + 9 * MIN));
    assert_eq!(engine.tick().unwrap().episodes_closed, 0);
    clock.set(Timestamp(T0 + 10 * MIN));
    assert_eq!(engine.tick().unwrap().episodes_closed, 1);
    let e = &engine.episodes(&Scope::tenant("default"), None).unwrap()[0];
    assert_eq!((e.last_seq, e.boundary_reason), (6, BoundaryReason::Idle));
}

#[test]
fn the_floor_holds_back_tiny_batches_until_flushed_or_silent() {
    let (engine, clock) = engine();
    // Four messages, one every minute for three hours: the oldest pending is past the age
    // trigger, but four are too few to cut while the conversation goes on.
    let mut spread = same_topic(0, 4, 0);
    for (i, m) in spread.iter_mut().enumerate() {
        m.timestamp = Some(Timestamp(T0 + i as i64 * 60 * MIN));
    }
    engine.ingest(spread).unwrap();
    clock.set(Timestamp(T0 + 181 * MIN));
    assert_eq!(engine.tick().unwrap().episodes_closed, 0);
    // Five minutes of silence: the short exchange is over and is remembered (the hours
    // between its messages cut it in two).
    clock.set(Timestamp(T0 + 185 * MIN));
    assert!(engine.tick().unwrap().episodes_closed >= 1);
    assert_eq!(engine.store().queue(&conv()).unwrap().unwrap().pending(), 0);
    // A flush closes even fewer at once.
    engine.ingest(same_topic(4, 2, 300)).unwrap();
    assert_eq!(engine.flush(&Scope::tenant("default")).unwrap().episodes_closed, 1);
}

#[test]
fn late_arrivals_never_join_a_pinned_batch() {
    let (engine, _) = engine();
    let store = engine.store();
    // Push 25, fence at 25 as a trigger would, then 10 more arrive before the job runs.
    let mut msgs = same_topic(0, 12, 0);
    msgs.extend(
        (12..25)
            .map(|i| input(i, Role::User, "guitar chords practice routine tonight", 60 + i as i64)),
    );
    engine.ingest(msgs).unwrap();
    let closed_before = engine.store().queue(&conv()).unwrap().unwrap().watermark;
    assert_eq!(closed_before, 12);
    let trigger = Trigger { kind: TriggerKind::Flush, upto_seq: 25 };
    store.open_segmentation(&conv(), trigger, Timestamp(T0), 60 * MIN).unwrap().unwrap();
    let late: Vec<_> =
        (25..35).map(|i| input(i, Role::User, "late message", 200 + i as i64)).collect();
    // Ingest the late ones without running jobs (push straight to the store).
    let new: Vec<_> = late
        .into_iter()
        .map(|m| epimem_core::NewMessage {
            conversation: m.conversation,
            user: None,
            agent: None,
            key: m.key,
            role: m.role,
            speaker: None,
            content: m.content,
            timestamp: m.timestamp.unwrap(),
            metadata: m.metadata,
            tokens: 2,
        })
        .collect();
    store.push_messages(&new).unwrap();
    engine.run_jobs().unwrap();
    let q = store.queue(&conv()).unwrap().unwrap();
    assert_eq!((q.watermark, q.last_seq), (25, 35));
    assert_tiled(&engine);
}

#[test]
fn a_dead_workers_job_is_rerun_after_its_lease() {
    let (engine, clock) = engine();
    engine.ingest(same_topic(0, 6, 0)).unwrap();
    let store = engine.store();
    let trigger = Trigger { kind: TriggerKind::Flush, upto_seq: 6 };
    store.open_segmentation(&conv(), trigger, clock.now_ts(), 120 * MIN).unwrap().unwrap();
    // Another worker claims the job and dies.
    store.claim_job("dead:99", clock.now_ts(), 60_000).unwrap().unwrap();
    assert_eq!(engine.run_jobs().unwrap().jobs_run, 0);
    clock.set(Timestamp(T0 + 2 * MIN));
    let report = engine.run_jobs().unwrap();
    assert_eq!((report.jobs_run, report.episodes_closed), (1, 1));
    assert_tiled(&engine);
}

#[test]
fn recall_finds_the_episode_and_respects_scope() {
    let (engine, _) = engine();
    let mut msgs = same_topic(0, 8, 0);
    msgs.extend(
        (8..16)
            .map(|i| input(i, Role::User, "guitar chords practice routine tonight", 68 + i as i64)),
    );
    engine.ingest(msgs).unwrap();
    engine.flush(&Scope::tenant("default")).unwrap();
    let recall =
        |tenant: &str, text: &str| engine.recall(&RecallQuery::new(Scope::tenant(tenant), text, 5));
    let hits = recall("default", "which guitar chords?").unwrap();
    assert_eq!(hits[0].episode.first_seq, 9);
    assert_eq!(hits[0].lexical_rank, Some(1));
    assert!(recall("other", "guitar").unwrap().is_empty());
    assert!(recall("default", "  ").is_err());
}

#[test]
fn empty_conversation_ids_are_rejected_before_anything_is_stored() {
    let (engine, _) = engine();
    let mut bad = same_topic(0, 3, 0);
    bad[2].conversation = ConversationKey::new("default", " ");
    let err = engine.ingest(bad).unwrap_err();
    assert!(err.to_string().contains("conversation"), "{err}");
    assert_eq!(engine.stats(None).unwrap().messages, 0);
}

trait NowTs {
    fn now_ts(&self) -> Timestamp;
}

impl NowTs for FixedClock {
    fn now_ts(&self) -> Timestamp {
        crate::engine::Clock::now(self)
    }
}

/// Counts the texts it embeds, to see what the engine caches.
struct Counting {
    inner: epimem_embed::HashEmbedder,
    texts: std::sync::atomic::AtomicUsize,
}

impl epimem_embed::Embedder for Counting {
    fn fingerprint(&self) -> &str {
        self.inner.fingerprint()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, epimem_embed::EmbedError> {
        self.texts.fetch_add(texts.len(), std::sync::atomic::Ordering::SeqCst);
        self.inner.embed(texts)
    }
}

#[test]
fn message_vectors_are_cached_per_model_and_reused() {
    let clock = Arc::new(FixedClock::new(Timestamp(T0)));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.db");
    let counting = Arc::new(Counting {
        inner: epimem_embed::HashEmbedder::new(64),
        texts: std::sync::atomic::AtomicUsize::new(0),
    });
    let engine = Engine::new(
        std::sync::Arc::new(SqliteStore::open(&path).unwrap()),
        search(),
        EngineConfig::default(),
        Box::new(clock.clone()),
        "test:1".into(),
    )
    .with_embedder(Box::new(counting.clone()));
    // One topic: the first window doubles (20 embedded), the second run embeds only the new 20.
    engine.ingest(same_topic(0, 20, 0)).unwrap();
    assert_eq!(counting.texts.load(std::sync::atomic::Ordering::SeqCst), 20);
    engine.ingest(same_topic(20, 20, 20)).unwrap();
    assert_eq!(counting.texts.load(std::sync::atomic::Ordering::SeqCst), 40);
    assert_eq!(engine.stats(None).unwrap().episodes, 1);
    drop(engine);

    // Another model over the same store re-embeds instead of mixing vector spaces.
    let other = Arc::new(Counting {
        inner: epimem_embed::HashEmbedder::new(32),
        texts: std::sync::atomic::AtomicUsize::new(0),
    });
    let engine = Engine::new(
        std::sync::Arc::new(SqliteStore::open(&path).unwrap()),
        search(),
        EngineConfig::default(),
        Box::new(clock.clone()),
        "test:2".into(),
    )
    .with_embedder(Box::new(other.clone()));
    engine.ingest(same_topic(40, 5, 40)).unwrap();
    engine.flush(&Scope::tenant("default")).unwrap();
    // The 5 new messages and the overlap context before them, all with the new model.
    let embedded = other.texts.load(std::sync::atomic::Ordering::SeqCst);
    assert!(embedded >= 5, "{embedded}");
    let stored = engine.store().message_vectors(&conv(), 1, 45, "hash:v1:32").unwrap();
    assert_eq!(stored.len(), embedded);
    assert!(stored.iter().all(|(_, v)| v.len() == 32));
}
