//! The background worker: the engine's heartbeat on a thread of its own, so conversations that
//! fall silent close into episodes and jobs whose worker died are taken over, with no
//! external `epimem tick`; and between beats, the search indexes caught up with what other
//! processes wrote to the database.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

use crate::engine::{RunReport, TAIL_REFRESH};

use crate::{Memory, MemoryError};

/// How long the worker waits at most before it looks whether it was asked to stop.
const STOP_CHECK: Duration = Duration::from_millis(50);

/// A running worker; [`Worker::stop`] lets its current run finish, then joins it.
#[derive(Debug)]
pub struct Worker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// Reads the open tails kept for recall again, apart from the jobs (a run of jobs can
    /// take seconds, and a recall would then read a stale tail itself).
    tails: Option<JoinHandle<()>>,
}

/// What the worker tells its owner after each run that did something or failed.
pub type Report = Box<dyn Fn(Result<RunReport, MemoryError>) + Send>;

impl Worker {
    /// Ticks `memory` every `every`, runs the jobs its requests queue as soon as they do, and
    /// refreshes its search indexes after each run and every `refresh`, until stopped.
    pub fn spawn(memory: Memory, every: Duration, refresh: Duration, report: Report) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let memory_for_tails = memory.clone();
        let thread = std::thread::Builder::new()
            .name("epimem-worker".into())
            .spawn(move || {
                let (mut next_tick, mut next_refresh) = (Instant::now(), Instant::now());
                let mut woken = false;
                while !stopped.load(Ordering::Acquire) {
                    let run = if Instant::now() >= next_tick {
                        next_tick = Instant::now() + every;
                        Some(memory.tick())
                    } else if woken {
                        Some(memory.run_jobs())
                    } else {
                        None
                    };
                    let ran = match run {
                        None | Some(Ok(RunReport { jobs_run: 0, .. })) => false,
                        Some(outcome) => {
                            report(outcome);
                            true
                        }
                    };
                    if ran || Instant::now() >= next_refresh {
                        if let Err(e) = memory.refresh_indexes() {
                            report(Err(e));
                        }
                        next_refresh = Instant::now() + refresh;
                    }
                    woken = false;
                    let until = next_tick.min(next_refresh);
                    while !woken && !stopped.load(Ordering::Acquire) {
                        let left = until.saturating_duration_since(Instant::now());
                        if left.is_zero() {
                            break;
                        }
                        woken = memory.wait_for_jobs(left.min(STOP_CHECK));
                    }
                }
            })
            .expect("the worker thread starts");
        let tails = {
            let (memory, stopped) = (memory_for_tails, stop.clone());
            std::thread::Builder::new()
                .name("epimem-tails".into())
                .spawn(move || {
                    while !stopped.load(Ordering::Acquire) {
                        // A failed read is the recall's to meet and report.
                        let _ = memory.refresh_tails();
                        std::thread::sleep(STOP_CHECK.min(TAIL_REFRESH / 4));
                    }
                })
                .expect("the tail thread starts")
        };
        Self { stop, thread: Some(thread), tails: Some(tails) }
    }

    /// Waits for the run under way (a segmentation commits or not at all) and ends the thread.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Release);
        for thread in [self.thread.take(), self.tails.take()].into_iter().flatten() {
            let _ = thread.join();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}
