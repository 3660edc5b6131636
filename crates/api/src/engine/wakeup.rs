//! How a write tells this process's worker that jobs wait, so it runs them now rather than at
//! its next tick (jobs other processes queue are found by the tick).

use std::{
    sync::{Condvar, Mutex, PoisonError},
    time::Duration,
};

#[derive(Debug, Default)]
pub(crate) struct Wakeup {
    queued: Mutex<bool>,
    signal: Condvar,
}

impl Wakeup {
    pub(crate) fn wake(&self) {
        *self.queued.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.signal.notify_all();
    }

    /// Waits until woken or `timeout` passes; true if woken (the signal is then cleared).
    pub(crate) fn wait(&self, timeout: Duration) -> bool {
        let queued = self.queued.lock().unwrap_or_else(PoisonError::into_inner);
        let (mut queued, _) = self
            .signal
            .wait_timeout_while(queued, timeout, |queued| !*queued)
            .unwrap_or_else(PoisonError::into_inner);
        std::mem::take(&mut *queued)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wake_is_kept_until_waited_for_once() {
        let wakeup = Wakeup::default();
        assert!(!wakeup.wait(Duration::from_millis(1)));
        wakeup.wake();
        assert!(wakeup.wait(Duration::from_secs(5)));
        assert!(!wakeup.wait(Duration::from_millis(1)), "cleared by the first wait");
    }

    #[test]
    fn a_wake_from_another_thread_ends_the_wait() {
        let wakeup = std::sync::Arc::new(Wakeup::default());
        let waker = wakeup.clone();
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            waker.wake();
        });
        let started = std::time::Instant::now();
        assert!(wakeup.wait(Duration::from_secs(30)));
        assert!(started.elapsed() < Duration::from_secs(30));
        thread.join().unwrap();
    }
}
