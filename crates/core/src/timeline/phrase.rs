//! Periods named in words ("last week", "in March"), resolved against a moment of
//! conversation time.

use chrono::{Datelike, Duration};

use super::TocNode;
use crate::{Timestamp, recall::dates::MONTHS};

/// The period `text` names at `now`: a node id (`toc:week:2026:W09`), or one of "today",
/// "yesterday", "this/last week", "this/last month", "this/last year", "in March" (the latest
/// March not after `now`), "in 2025". `None` if it names none of these.
pub fn period_named(text: &str, now: Timestamp) -> Option<TocNode> {
    let text = text.trim();
    if text.starts_with("toc:") {
        return text.parse().ok();
    }
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let today = now.to_datetime().date_naive();
    let week_of = |day: chrono::NaiveDate| {
        let w = day.iso_week();
        TocNode::Week(w.year(), w.week())
    };
    let month_back = |back: u32| {
        let months = today.year() * 12 + today.month0() as i32 - back as i32;
        TocNode::Month(months.div_euclid(12), months.rem_euclid(12) as u32 + 1)
    };
    Some(match words.as_slice() {
        ["today"] => TocNode::Day(today),
        ["yesterday"] => TocNode::Day(today - Duration::days(1)),
        ["this", "week"] => week_of(today),
        ["last", "week"] => week_of(today - Duration::days(7)),
        ["this", "month"] => month_back(0),
        ["last", "month"] => month_back(1),
        ["this", "year"] => TocNode::Year(today.year()),
        ["last", "year"] => TocNode::Year(today.year() - 1),
        ["in", name] => {
            if let Ok(year) = name.parse::<i32>() {
                return (1..=9998).contains(&year).then_some(TocNode::Year(year));
            }
            let month = MONTHS
                .iter()
                .position(|m| m == name || (name.len() >= 3 && m.starts_with(name)))?;
            let month = month as u32 + 1;
            let year = if month <= today.month() { today.year() } else { today.year() - 1 };
            TocNode::Month(year, month)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_name_periods_relative_to_now() {
        // Wednesday 2026-03-11, 15:00.
        let now = Timestamp::parse_rfc3339("2026-03-11T15:00:00Z").unwrap();
        let named = |text: &str| period_named(text, now).map(|n| n.to_string());
        assert_eq!(named("today").as_deref(), Some("toc:day:2026-03-11"));
        assert_eq!(named("Yesterday").as_deref(), Some("toc:day:2026-03-10"));
        assert_eq!(named("this week").as_deref(), Some("toc:week:2026:W11"));
        assert_eq!(named("last week").as_deref(), Some("toc:week:2026:W10"));
        assert_eq!(named("last month").as_deref(), Some("toc:month:2026:02"));
        assert_eq!(named("in March").as_deref(), Some("toc:month:2026:03"));
        assert_eq!(named("in dec").as_deref(), Some("toc:month:2025:12"), "the latest December");
        assert_eq!(named("in 2024").as_deref(), Some("toc:year:2024"));
        assert_eq!(named("last year").as_deref(), Some("toc:year:2025"));
        assert_eq!(named(" toc:week:2026:W09 ").as_deref(), Some("toc:week:2026:W09"));
        assert_eq!(named("someday"), None);
        assert_eq!(named("toc:week:2026:W99"), None);
        let january = Timestamp::parse_rfc3339("2026-01-05T00:00:00Z").unwrap();
        assert_eq!(
            period_named("last month", january).map(|n| n.to_string()).as_deref(),
            Some("toc:month:2025:12")
        );
    }
}
