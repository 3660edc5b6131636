//! What a command says while a tenant's search index is brought up to date: why a saved index is
//! built again, and how far the work is, so that minutes of rebuilding over a large store never
//! pass without a word.

use std::time::{Duration, Instant};

use epimem_api::{IndexTask, MemoryError};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Builds of fewer changes than this finish before anyone would look: not announced.
const ANNOUNCE_FROM: u64 = 1_000;
/// How often a server's log says how far a long opening is.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// One sentence on what bringing `tenant`'s index up to date takes.
pub fn describe(tenant: &str, task: &IndexTask, total: u64) -> String {
    match task {
        IndexTask::Build { why: Some(why) } => format!(
            "building the search index of tenant {tenant} again from the database ({total} \
             changes): the saved one could not be used ({why})"
        ),
        IndexTask::Build { why: None } => format!(
            "building the search index of tenant {tenant} from the database ({total} changes)"
        ),
        IndexTask::AwaitSave => format!(
            "waiting for the process holding the search index of tenant {tenant} (a server or \
             worker on this database) to save the index it is building, to read it rather than \
             build a copy of {total} changes"
        ),
        IndexTask::Copy => format!(
            "building a copy of the search index of tenant {tenant} in memory from the database \
             ({total} changes): another process (a server or worker on this database) holds the \
             saved one, and what it saved cannot be read here (it is still building it, or built \
             it with another embedder)"
        ),
        IndexTask::CatchUp => format!(
            "catching up the search index of tenant {tenant} with {total} change(s) made since \
             it last ran"
        ),
    }
}

/// What a server tells its owner about opening the search index.
#[derive(Debug)]
pub enum IndexEvent<'a> {
    /// Work under way: the task, then changes done of all (`done` 0 when it starts).
    Progress { task: &'a IndexTask, done: u64, total: u64 },
    /// Open and current, after this long.
    Ready(Duration),
    /// It could not be opened; it is tried again after the wait.
    Failed { error: &'a MemoryError, retry_in: Duration },
}

/// Receives [`IndexEvent`]s (the binary writes them to its log).
pub type IndexReport = Box<dyn FnMut(IndexEvent<'_>) + Send>;

/// Whether a command says what it does: a rebuild always (something went wrong), anything
/// else only when it is large enough to take a while (a copy beside a server is routine).
fn announced(task: &IndexTask, total: u64) -> bool {
    matches!(task, IndexTask::Build { why: Some(_) }) || total >= ANNOUNCE_FROM
}

/// What `serve` and `mcp` log (on standard error) while they open the tenant's index: what it
/// takes and why, how far it is every ten seconds, when it is ready (if it took any work), and
/// at once when it fails.
pub fn server_report(tenant: &str) -> IndexReport {
    let tenant = tenant.to_owned();
    let mut last_logged: Option<Instant> = None;
    Box::new(move |event| match event {
        IndexEvent::Progress { task, done, total } => {
            if done == 0 {
                eprintln!("epimem: {}", describe(&tenant, task, total));
                last_logged = Some(Instant::now());
            } else if last_logged.is_some_and(|at| at.elapsed() >= LOG_EVERY) && done < total {
                eprintln!("epimem: indexing tenant {tenant}: {done} of {total} changes");
                last_logged = Some(Instant::now());
            }
        }
        IndexEvent::Ready(took) if last_logged.is_some() => eprintln!(
            "epimem: the search index of tenant {tenant} is ready ({:.1} s)",
            took.as_secs_f64()
        ),
        IndexEvent::Ready(_) => {}
        IndexEvent::Failed { error, retry_in } => eprintln!(
            "epimem: the search index of tenant {tenant} could not be opened: {error}; trying \
             again in {} s",
            retry_in.as_secs()
        ),
    })
}

/// What a process says when a search finds a tenant's index damaged and it is built again
/// from the database: why, at once, then how far every ten seconds.
pub fn repair_log() -> epimem_api::RepairLog {
    let last_logged = std::sync::Mutex::new(Instant::now());
    Box::new(move |tenant, task, done, total| {
        let mut last = last_logged.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if done == 0 {
            eprintln!("epimem: {}", describe(tenant, task, total));
            *last = Instant::now();
        } else if last.elapsed() >= LOG_EVERY && done < total {
            eprintln!("epimem: indexing tenant {tenant}: {done} of {total} changes");
            *last = Instant::now();
        }
    })
}

/// A command's view of the work: a line on standard error when a saved index is built again or
/// a large build starts (on a terminal or in a log alike), and a progress bar while it runs
/// (drawn on a terminal only).
#[derive(Debug)]
pub struct IndexProgress {
    tenant: String,
    bar: ProgressBar,
    /// The last task told, if any.
    task: Option<IndexTask>,
}

impl IndexProgress {
    pub fn new(tenant: &str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} indexing [{bar:30}] {pos}/{len} changes ({eta})",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        Self { tenant: tenant.to_owned(), bar, task: None }
    }

    /// What [`epimem_api::Memory::load_search_index`] tells.
    pub fn update(&mut self, task: &IndexTask, done: u64, total: u64) {
        if self.task.as_ref() != Some(task) {
            self.task = Some(task.clone());
            if announced(task, total) {
                self.bar.suspend(|| eprintln!("epimem: {}", describe(&self.tenant, task, total)));
            }
        }
        self.bar.set_length(total);
        self.bar.set_position(done);
    }

    /// Clears the bar; what was done last, if anything.
    pub fn finish(self) -> Option<IndexTask> {
        self.bar.finish_and_clear();
        self.task
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rebuild_says_why_and_a_build_how_large() {
        let why = IndexTask::Build { why: Some("built with the embedder a, not b".into()) };
        let line = describe("acme", &why, 1200);
        assert!(line.contains("tenant acme") && line.contains("again"), "{line}");
        assert!(line.contains("(built with the embedder a, not b)"), "{line}");
        assert!(line.contains("1200 changes"), "{line}");
        let new = describe("acme", &IndexTask::Build { why: None }, 7);
        assert!(!new.contains("again") && new.contains("7 changes"), "{new}");
        assert!(describe("acme", &IndexTask::CatchUp, 3).contains("3 change(s)"));
        let copy = describe("acme", &IndexTask::Copy, 5000);
        assert!(copy.contains("in memory") && copy.contains("another process"), "{copy}");
        let wait = describe("acme", &IndexTask::AwaitSave, 500_000);
        assert!(wait.contains("waiting") && wait.contains("500000 changes"), "{wait}");
    }

    #[test]
    fn only_a_rebuild_or_a_long_task_is_announced() {
        let rebuilt = IndexTask::Build { why: Some("damaged".into()) };
        assert!(announced(&rebuilt, 3));
        let tasks = [IndexTask::Build { why: None }, IndexTask::Copy, IndexTask::CatchUp];
        for task in tasks {
            assert!(!announced(&task, ANNOUNCE_FROM - 1), "{task:?}");
            assert!(announced(&task, ANNOUNCE_FROM), "{task:?}");
        }
    }

    #[test]
    fn it_remembers_the_last_task_and_nothing_when_nothing_ran() {
        assert_eq!(IndexProgress::new("t").finish(), None);
        let mut progress = IndexProgress::new("t");
        progress.update(&IndexTask::CatchUp, 0, 10);
        progress.update(&IndexTask::CatchUp, 10, 10);
        assert_eq!(progress.finish(), Some(IndexTask::CatchUp));
        // A wait for the holder's save that ended in a copy.
        let mut progress = IndexProgress::new("t");
        progress.update(&IndexTask::AwaitSave, 0, 200_000);
        progress.update(&IndexTask::Copy, 0, 200_000);
        assert_eq!(progress.finish(), Some(IndexTask::Copy));
    }
}
