//! Crash points, for fault-injection tests: a process told to crash at the nth pass of a named
//! point (`EPIMEM_CRASH_AT=segment.after_commit:2`, read by the binary) aborts there, as a kill
//! would stop it: no unwinding, no destructor, nothing flushed. Compiled in only with the
//! feature `fault-injection`; without it every point is nothing.
//!
//! The points: `push.before` and `push.after` (a request's messages stored), `job.claimed`,
//! `segment.before_commit` and `segment.after_commit`, `consolidate.before_commit` and
//! `consolidate.after_commit`, `rollup.before_put` and `rollup.after_put`.

/// Where to crash: a point's name and which pass of it (1 for the first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrashAt {
    pub point: String,
    pub nth: u64,
}

impl std::str::FromStr for CrashAt {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (point, nth) = text.rsplit_once(':').unwrap_or((text, "1"));
        let nth =
            nth.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                format!("{text:?} is not a crash point (NAME or NAME:N, N from 1)")
            })?;
        Ok(Self { point: point.to_owned(), nth })
    }
}

/// Whether this build has crash points (the feature `fault-injection`).
pub const CRASH_POINTS: bool = cfg!(feature = "fault-injection");

/// The crash an engine was told of, and how often its point was passed.
#[derive(Debug, Default)]
pub(crate) struct Crash {
    #[cfg(feature = "fault-injection")]
    at: Option<CrashAt>,
    #[cfg(feature = "fault-injection")]
    passed: std::sync::atomic::AtomicU64,
}

impl Crash {
    /// A crash at `at` (nothing, in a build without crash points).
    pub(crate) fn at(at: CrashAt) -> Self {
        #[cfg(feature = "fault-injection")]
        return Self { at: Some(at), passed: Default::default() };
        #[cfg(not(feature = "fault-injection"))]
        {
            let _ = at;
            Self::default()
        }
    }

    /// Passes `point`: aborts the process if it is the one, for the nth time.
    #[inline(always)]
    pub(crate) fn point(&self, point: &str) {
        #[cfg(feature = "fault-injection")]
        if let Some(at) = &self.at
            && at.point == point
        {
            let passed = self.passed.fetch_add(1, std::sync::atomic::Ordering::AcqRel) + 1;
            if passed == at.nth {
                eprintln!("epimem: crashing at {point} (pass {passed}), as told");
                std::process::abort();
            }
        }
        #[cfg(not(feature = "fault-injection"))]
        let _ = point;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crash_points_read_as_name_and_pass() {
        let at: CrashAt = "segment.after_commit:3".parse().unwrap();
        assert_eq!((at.point.as_str(), at.nth), ("segment.after_commit", 3));
        assert_eq!("job.claimed".parse::<CrashAt>().unwrap().nth, 1);
        assert!("job.claimed:0".parse::<CrashAt>().is_err());
        assert!("job.claimed:x".parse::<CrashAt>().is_err());
    }
}
