//! At most so many calls in flight at once, whichever threads make them.

use std::sync::{Condvar, Mutex, PoisonError};

#[derive(Debug)]
pub(crate) struct CallLimit {
    free: Mutex<usize>,
    freed: Condvar,
}

/// A call in flight; it frees its place when dropped.
#[derive(Debug)]
pub(crate) struct Permit<'a>(&'a CallLimit);

impl CallLimit {
    pub(crate) fn new(max: usize) -> Self {
        Self { free: Mutex::new(max.max(1)), freed: Condvar::new() }
    }

    pub(crate) fn acquire(&self) -> Permit<'_> {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(PoisonError::into_inner);
        }
        *free -= 1;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn no_more_calls_than_the_limit_are_in_flight() {
        let limit = CallLimit::new(2);
        let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    let _permit = limit.acquire();
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    running.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        assert_eq!(most.load(Ordering::SeqCst), 2);
    }
}
