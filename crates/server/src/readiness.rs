//! Opening the served tenant's search index when the server starts, and what `/readyz` says
//! meanwhile. Requests are served while it opens (a recall waits a little for a build, then is
//! refused as unavailable); a failure (the database out of reach, say) is told at once and the
//! opening tried again, with a doubling wait, until it succeeds or the server stops.

use std::{
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use epimem_api::Memory;
use epimem_app::index_progress::{IndexEvent, IndexReport};

/// The first wait before the opening is tried again; it doubles up to [`MAX_RETRY_WAIT`].
const FIRST_RETRY_WAIT: Duration = Duration::from_secs(1);
const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);
/// How often a wait looks whether the server is stopping.
const STOP_CHECK: Duration = Duration::from_millis(50);

/// Whether the search index is open, as `/readyz` tells it.
#[derive(Debug, Default)]
pub(crate) struct Readiness(Mutex<State>);

#[derive(Debug, Default, Clone, PartialEq)]
enum State {
    #[default]
    Opening,
    Ready,
    /// The last attempt's error; another attempt follows.
    Failed(String),
}

impl Readiness {
    /// Ready from the start (the MCP tools, which answer no `/readyz`).
    pub(crate) fn ready() -> Self {
        Self(Mutex::new(State::Ready))
    }

    /// `Ok` when ready; else why not, for `/readyz`.
    pub(crate) fn check(&self) -> Result<(), String> {
        match &*self.lock() {
            State::Ready => Ok(()),
            State::Opening => Err("opening the search index".into()),
            State::Failed(e) => {
                Err(format!("the search index could not be opened ({e}); trying again"))
            }
        }
    }

    fn set(&self, state: State) {
        *self.lock() = state;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A plain value: one a panicking thread left is still whole.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Opens (builds, catches up) `tenant`'s search index, telling `report` as it goes (and
/// `readiness`, for `/readyz`), and tries again after a failure until it succeeds or `stop` is
/// set. Blocking: run it on its own thread.
fn open_index(
    memory: &Memory,
    tenant: &str,
    readiness: Option<&Readiness>,
    report: &mut IndexReport,
    stop: &AtomicBool,
) {
    // Ready means answering at full speed: the token tables a context block is counted with
    // are decoded first (tens of milliseconds, or a tenth of a second on a busy machine).
    memory.prepare_tokens();
    let mut wait = FIRST_RETRY_WAIT;
    while !stop.load(Ordering::Acquire) {
        let started = Instant::now();
        let opened = memory.load_search_index(tenant, &mut |task, done, total| {
            report(IndexEvent::Progress { task, done, total });
        });
        match opened {
            Ok(()) => {
                readiness.inspect(|r| r.set(State::Ready));
                report(IndexEvent::Ready(started.elapsed()));
                return;
            }
            Err(error) => {
                readiness.inspect(|r| r.set(State::Failed(error.to_string())));
                report(IndexEvent::Failed { error: &error, retry_in: wait });
                let until = Instant::now() + wait;
                while Instant::now() < until && !stop.load(Ordering::Acquire) {
                    std::thread::sleep(STOP_CHECK);
                }
                wait = (wait * 2).min(MAX_RETRY_WAIT);
            }
        }
    }
}

/// Runs [`open_index`] on the blocking pool; setting the returned flag stops its retries.
pub(crate) fn spawn_open_index(
    memory: Memory,
    tenant: String,
    readiness: Option<Arc<Readiness>>,
    mut report: IndexReport,
) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = stop.clone();
    tokio::task::spawn_blocking(move || {
        open_index(&memory, &tenant, readiness.as_deref(), &mut report, &stopping);
    });
    stop
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readyz_says_opening_then_why_it_failed_then_ready() {
        let readiness = Readiness::default();
        assert_eq!(readiness.check(), Err("opening the search index".into()));
        readiness.set(State::Failed("the database is out of reach".into()));
        let why = readiness.check().unwrap_err();
        assert!(why.contains("(the database is out of reach)") && why.contains("trying again"));
        readiness.set(State::Ready);
        assert_eq!(readiness.check(), Ok(()));
        assert_eq!(Readiness::ready().check(), Ok(()));
    }
}
