//! The kinds of failure every epimem library reports, with stable codes for callers.

use std::fmt;

/// What kind of failure an error is. Transports map kinds to statuses in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The caller sent something invalid; retrying the same request will fail again.
    BadInput,
    NotFound,
    /// Someone else changed the state first (a fence, a lease); retry later.
    Conflict,
    /// A resource is busy or unreachable; retrying may succeed.
    Unavailable,
    /// A defect or corruption.
    Internal,
}

impl ErrorKind {
    /// A stable, machine-readable code.
    pub fn code(self) -> &'static str {
        match self {
            Self::BadInput => "bad_input",
            Self::NotFound => "not_found",
            Self::Conflict => "conflict",
            Self::Unavailable => "unavailable",
            Self::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}
