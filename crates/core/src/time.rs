//! Conversation time: milliseconds since the Unix epoch, given by the caller.

use std::fmt;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

/// A point in conversation time, in milliseconds since the Unix epoch (UTC).
///
/// Kept as an integer so segmentation and storage never pay for calendar arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(pub i64);

/// An RFC 3339 timestamp that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("invalid RFC 3339 timestamp {input:?}: {reason}")]
pub struct TimestampParseError {
    input: String,
    reason: String,
}

impl Timestamp {
    pub const MINUTE_MS: i64 = 60_000;
    pub const HOUR_MS: i64 = 60 * Self::MINUTE_MS;

    pub fn from_millis(ms: i64) -> Self {
        Self(ms)
    }

    pub fn millis(self) -> i64 {
        self.0
    }

    /// Parses an RFC 3339 date-time such as `2026-01-30T09:15:00Z`.
    pub fn parse_rfc3339(input: &str) -> Result<Self, TimestampParseError> {
        DateTime::parse_from_rfc3339(input.trim())
            .map(|dt| Self(dt.timestamp_millis()))
            .map_err(|e| TimestampParseError { input: input.to_owned(), reason: e.to_string() })
    }

    pub fn to_datetime(self) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(self.0).unwrap_or(DateTime::<Utc>::MIN_UTC)
    }

    /// Renders as RFC 3339 in UTC, to the second unless milliseconds are present.
    pub fn to_rfc3339(self) -> String {
        let format = if self.0 % 1000 == 0 { SecondsFormat::Secs } else { SecondsFormat::Millis };
        self.to_datetime().to_rfc3339_opts(format, true)
    }

    /// Milliseconds from `earlier` to `self` (negative if `self` is earlier).
    pub fn since(self, earlier: Timestamp) -> i64 {
        self.0.saturating_sub(earlier.0)
    }

    pub fn plus_millis(self, ms: i64) -> Self {
        Self(self.0.saturating_add(ms))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips_with_offsets() {
        let t = Timestamp::parse_rfc3339("2026-01-30T10:15:00+01:00").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-01-30T09:15:00Z");
        let ms = Timestamp::parse_rfc3339("2026-01-30T09:15:00.250Z").unwrap();
        assert_eq!(ms.since(t), 250);
        assert_eq!(ms.to_rfc3339(), "2026-01-30T09:15:00.250Z");
    }

    #[test]
    fn bad_timestamp_names_the_input() {
        let err = Timestamp::parse_rfc3339("yesterday").unwrap_err();
        assert!(err.to_string().contains("\"yesterday\""), "{err}");
    }
}
