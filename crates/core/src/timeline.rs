//! The timeline's time hierarchy: year → month → ISO week → day → episode. Pure arithmetic on
//! conversation time (UTC): which period holds a moment, what a node's id is, which node is its
//! parent, and when a period is closed enough to roll up.
//!
//! ISO weeks cross month and year ends, so a week belongs to the month (and year) of its
//! Thursday, as ISO 8601 assigns weeks to years: every day is in exactly one week, every week
//! in one month, every month in one year, and a month spans its weeks' days (a few of which may
//! fall in the next or previous calendar month).

mod phrase;
mod rollup;
mod told;

use std::fmt;

use chrono::{Datelike, Duration, NaiveDate, TimeZone, Utc, Weekday};
use serde::{Deserialize, Serialize};

use crate::Timestamp;

pub use phrase::period_named;
pub use rollup::{NodeSummary, extractive_rollup, session_summary};
pub use told::{timeline_of, top_nodes};

/// One version of a timeline node as stored: what it says, its span, and its children (the
/// nodes below, or the episodes of a day), in time order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineNode {
    pub id: TocNode,
    /// 1 for the first rollup; a late episode in a closed period adds a version.
    pub version: u32,
    pub summary: NodeSummary,
    /// Ids of its children: `toc:…` nodes, or a day's episode ids.
    pub children: Vec<String>,
}

/// A level of the hierarchy, from the top.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TocLevel {
    Year,
    Month,
    Week,
    Day,
}

/// A node of the time hierarchy: `toc:year:2026`, `toc:month:2026:03`, `toc:week:2026:W09`
/// (an ISO week of its ISO year), `toc:day:2026-03-01`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TocNode {
    Year(i32),
    Month(i32, u32),
    Week(i32, u32),
    Day(NaiveDate),
}

/// Why a node id could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{input:?} is not a timeline node ({why}); ids read toc:year:2026, toc:month:2026:03, toc:week:2026:W09 or toc:day:2026-03-01"
)]
pub struct TocNodeParseError {
    input: String,
    why: &'static str,
}

impl TocNode {
    /// The day holding `at`, in UTC.
    pub fn day_of(at: Timestamp) -> Self {
        Self::Day(at.to_datetime().date_naive())
    }

    pub fn level(self) -> TocLevel {
        match self {
            Self::Year(_) => TocLevel::Year,
            Self::Month(..) => TocLevel::Month,
            Self::Week(..) => TocLevel::Week,
            Self::Day(_) => TocLevel::Day,
        }
    }

    /// The node above: a day's ISO week, a week's month (that of its Thursday), a month's
    /// year; `None` for a year.
    pub fn parent(self) -> Option<Self> {
        match self {
            Self::Day(day) => {
                let week = day.iso_week();
                Some(Self::Week(week.year(), week.week()))
            }
            Self::Week(..) => {
                let thursday = self.first_day() + Duration::days(3);
                Some(Self::Month(thursday.year(), thursday.month()))
            }
            Self::Month(year, _) => Some(Self::Year(year)),
            Self::Year(_) => None,
        }
    }

    /// The first day the node covers.
    pub fn first_day(self) -> NaiveDate {
        match self {
            Self::Day(day) => day,
            Self::Week(year, week) => {
                NaiveDate::from_isoywd_opt(year, week, Weekday::Mon).expect("weeks are built valid")
            }
            Self::Month(year, month) => {
                // The Monday of the week holding the month's first Thursday.
                let first =
                    NaiveDate::from_ymd_opt(year, month, 1).expect("months are built valid");
                let to_thursday = (Weekday::Thu.num_days_from_monday() + 7
                    - first.weekday().num_days_from_monday())
                    % 7;
                first + Duration::days(i64::from(to_thursday)) - Duration::days(3)
            }
            Self::Year(year) => Self::Month(year, 1).first_day(),
        }
    }

    /// The day after the last day the node covers.
    pub fn end_day(self) -> NaiveDate {
        match self {
            Self::Day(day) => day + Duration::days(1),
            Self::Week(..) => self.first_day() + Duration::days(7),
            Self::Month(year, 12) => Self::Month(year + 1, 1).first_day(),
            Self::Month(year, month) => Self::Month(year, month + 1).first_day(),
            Self::Year(year) => Self::Year(year + 1).first_day(),
        }
    }

    /// The span the node covers, `start..end` in conversation time.
    pub fn span(self) -> (Timestamp, Timestamp) {
        let at = |day: NaiveDate| {
            let midnight = day.and_hms_opt(0, 0, 0).expect("midnight exists");
            Timestamp::from_millis(Utc.from_utc_datetime(&midnight).timestamp_millis())
        };
        (at(self.first_day()), at(self.end_day()))
    }

    /// Whether the node's period is over at `now` by at least `grace_ms` (late messages of a
    /// period that just ended still have time to arrive before it is rolled up).
    pub fn is_closed(self, now: Timestamp, grace_ms: i64) -> bool {
        now.since(self.span().1) >= grace_ms
    }
}

impl Serialize for TocNode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TocNode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for TocNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Year(year) => write!(f, "toc:year:{year}"),
            Self::Month(year, month) => write!(f, "toc:month:{year}:{month:02}"),
            Self::Week(year, week) => write!(f, "toc:week:{year}:W{week:02}"),
            Self::Day(day) => write!(f, "toc:day:{}", day.format("%Y-%m-%d")),
        }
    }
}

impl std::str::FromStr for TocNode {
    type Err = TocNodeParseError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let fail = |why| TocNodeParseError { input: input.to_owned(), why };
        let rest = input.strip_prefix("toc:").ok_or_else(|| fail("it does not start with toc:"))?;
        let (level, value) = rest.split_once(':').ok_or_else(|| fail("it names no level"))?;
        let number = |s: &str| s.parse::<u32>().map_err(|_| fail("a number is not a number"));
        let year = |s: &str| {
            s.parse::<i32>()
                .ok()
                .filter(|y| (1..=9999).contains(y))
                .ok_or_else(|| fail("the year is not one from 1 to 9999"))
        };
        let node = match level {
            "year" => Self::Year(year(value)?),
            "month" => {
                let (y, m) = value.split_once(':').ok_or_else(|| fail("a month reads YEAR:MM"))?;
                let m = number(m)?;
                if !(1..=12).contains(&m) {
                    return Err(fail("the month is not 01 to 12"));
                }
                Self::Month(year(y)?, m)
            }
            "week" => {
                let (y, w) = value.split_once(":W").ok_or_else(|| fail("a week reads YEAR:Www"))?;
                let (y, w) = (year(y)?, number(w)?);
                NaiveDate::from_isoywd_opt(y, w, Weekday::Mon)
                    .ok_or_else(|| fail("that ISO year has no such week"))?;
                Self::Week(y, w)
            }
            "day" => {
                let day = NaiveDate::parse_from_str(value, "%Y-%m-%d")
                    .map_err(|_| fail("a day reads YYYY-MM-DD"))?;
                year(&day.year().to_string())?;
                Self::Day(day)
            }
            _ => return Err(fail("the level is not year, month, week or day")),
        };
        // Only the canonical spelling (zero-padded) is an id.
        if node.to_string() != input {
            return Err(fail("it is not written the canonical way"));
        }
        Ok(node)
    }
}

#[cfg(test)]
mod tests;
