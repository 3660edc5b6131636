//! Job leases between two engines on one database file, as two processes would hold them.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use crate::engine::{Engine, EngineConfig, MessageInput, SystemClock};
use epimem_core::{ConversationKey, Role, Scope, Timestamp};
use epimem_embed::{EmbedError, Embedder, HashEmbedder};
use epimem_search_local::LocalSearch;
use epimem_store::JobState;
use epimem_store_sqlite::SqliteStore;

/// An embedder that takes its time, as a large model on a busy machine does.
struct SlowEmbedder {
    inner: HashEmbedder,
    delay: Duration,
}

impl Embedder for SlowEmbedder {
    fn fingerprint(&self) -> &str {
        self.inner.fingerprint()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        std::thread::sleep(self.delay);
        self.inner.embed(texts)
    }
}

fn worker(path: &std::path::Path, name: &str, embedder: Box<dyn Embedder>) -> Engine {
    let mut config = EngineConfig::default();
    config.jobs.lease_seconds = 1;
    let search = Box::new(LocalSearch::in_memory(&config.ranking));
    let store = SqliteStore::open(path).unwrap();
    Engine::new(std::sync::Arc::new(store), search, config, Box::new(SystemClock), name.into())
        .with_embedder(embedder)
}

/// Four lines of a user's about a garden, a minute apart, in `tenant`'s `conversation`.
fn garden_lines(tenant: &str, conversation: &str) -> Vec<MessageInput> {
    (0..4)
        .map(|i| MessageInput {
            conversation: ConversationKey::new(tenant, conversation),
            user: None,
            agent: None,
            key: format!("{conversation}{i}"),
            role: Role::User,
            speaker: None,
            content: format!("a line about the {conversation} garden, number {i}"),
            timestamp: Some(Timestamp(1_767_225_600_000 + i * 60_000)),
            metadata: serde_json::Value::Null,
        })
        .collect()
}

#[test]
fn a_job_slower_than_its_lease_is_not_taken_over_while_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.db");
    let delay = Duration::from_millis(2500);
    let slow =
        worker(&path, "slow", Box::new(SlowEmbedder { inner: HashEmbedder::new(64), delay }));
    let other = worker(&path, "other", Box::new(HashEmbedder::new(64)));
    slow.enqueue(garden_lines("t", "c")).unwrap();
    let slow = Arc::new(slow);
    let flushing = {
        let slow = slow.clone();
        std::thread::spawn(move || slow.flush(&Scope::tenant("t")).unwrap())
    };
    let started = Instant::now();
    let running = loop {
        let jobs = other.jobs("t", None, 10).unwrap();
        if let Some(job) = jobs.into_iter().find(|j| j.state == JobState::Running) {
            break job;
        }
        assert!(started.elapsed() < delay, "the slow worker never started its job");
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(running.worker.as_deref(), Some("slow"));
    // Past two lease lengths, the other worker still finds nothing to take.
    while started.elapsed() < delay - Duration::from_millis(300) {
        assert_eq!(other.run_jobs().unwrap().episodes_closed, 0, "the job was taken over");
        std::thread::sleep(Duration::from_millis(100));
    }
    let report = flushing.join().unwrap();
    assert_eq!(report.episodes_closed, 1, "the slow worker finished its own job");
    assert_eq!(other.episodes(&Scope::tenant("t"), None).unwrap().len(), 1);
}

/// A flush runs the jobs of what it closes only: another conversation's or another tenant's
/// (a backlog after a burst) are left to the workers, not run in the flushing caller's time.
#[test]
fn a_flush_runs_only_the_jobs_of_what_it_closes() {
    let dir = tempfile::tempdir().unwrap();
    let engine = worker(&dir.path().join("e.db"), "w", Box::new(HashEmbedder::new(64)));
    let scope = |t: &str, c: &str| Scope::tenant(t).with_conversation(Some(c.to_owned()));
    // Queued and not run: what a worker would run next.
    for (t, c) in [("t", "a"), ("u", "b")] {
        engine.enqueue(garden_lines(t, c)).unwrap();
        assert_eq!(engine.queue_flush(&scope(t, c)).unwrap(), 1);
    }
    engine.enqueue(garden_lines("t", "c")).unwrap();
    assert_eq!(engine.flush(&scope("t", "c")).unwrap().episodes_closed, 1);
    for (t, c) in [("t", "a"), ("u", "b")] {
        let jobs = engine.jobs(t, Some(c), 10).unwrap();
        assert_eq!(jobs.iter().map(|j| j.state).collect::<Vec<_>>(), [JobState::Queued], "{c}");
    }
    // A flush of the whole tenant runs its own and leaves the other tenant's.
    assert_eq!(engine.flush(&Scope::tenant("t")).unwrap().episodes_closed, 1);
    assert!(engine.jobs("t", None, 10).unwrap().is_empty());
    assert_eq!(engine.jobs("u", None, 10).unwrap().len(), 1);
}
