//! The background worker: the engine's heartbeat on a thread of its own, so conversations that
//! fall silent close into episodes and jobs whose worker died are taken over, with no
//! external `epimem tick`.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

use epimem_engine::{Engine, EngineError, RunReport};
use epimem_store::Store;

/// A running worker; [`Worker::stop`] lets its current run finish, then joins it.
#[derive(Debug)]
pub struct Worker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// What the worker tells its owner after each run that did something or failed.
pub type Report = Box<dyn Fn(Result<RunReport, EngineError>) + Send>;

impl Worker {
    /// Ticks `engine` every `every` until stopped.
    pub fn spawn<S: Store + 'static>(
        engine: Arc<Engine<S>>,
        every: Duration,
        report: Report,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::Builder::new()
            .name("epimem-worker".into())
            .spawn(move || {
                while !stopped.load(Ordering::Acquire) {
                    match engine.tick() {
                        Ok(run) if run.jobs_run == 0 => {}
                        outcome => report(outcome),
                    }
                    sleep_unless(&stopped, every);
                }
            })
            .expect("the worker thread starts");
        Self { stop, thread: Some(thread) }
    }

    /// Waits for the run under way (a segmentation commits or not at all) and ends the thread.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

/// Sleeps `total`, waking early when `stop` is set.
fn sleep_unless(stop: &AtomicBool, total: Duration) {
    let until = Instant::now() + total;
    while !stop.load(Ordering::Acquire) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}
