//! Dates named in a query ("on 25 May, 2022", "in July 2023", "2023-05-25"), read as the
//! stretch of conversation time they cover, so recall can favour what was said then.
//!
//! Only calendar dates with a year are read: "yesterday" needs a clock and "May" alone
//! is as likely a verb. Dates are UTC days, as conversation time is.

use std::ops::Range;

use chrono::NaiveDate;

use crate::Timestamp;

/// A date named in a text: the time it covers and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DateMention {
    /// First millisecond of the day (or month).
    pub start: Timestamp,
    /// First millisecond after it.
    pub end: Timestamp,
    /// Byte range of the mention in the text.
    pub span: Range<usize>,
}

/// English month names, in order (also read by the timeline's phrases).
pub(crate) const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Months and days of the week: capitalized, but when, not who or what. Never a name: a
/// rollup does not title a period by them, and a query's "June" is not read as "Jun".
pub fn is_calendar_word(word: &str) -> bool {
    const DAYS: [&str; 7] =
        ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
    let lower = word.to_lowercase();
    MONTHS.contains(&lower.as_str()) || DAYS.contains(&lower.as_str())
}

impl DateMention {
    /// Whether something from `start` to `end` falls in the mention's time or up to
    /// `after_ms` later (people tell of a day in the days that follow).
    pub fn covers(&self, start: Timestamp, end: Timestamp, after_ms: i64) -> bool {
        start.0 < self.end.0.saturating_add(after_ms) && end.0 >= self.start.0
    }
}

/// The first date with a year named in `text`.
pub fn date_mention(text: &str) -> Option<DateMention> {
    let words = words(text);
    for i in 0..words.len() {
        if let Some(found) = mention_at(&words, i) {
            return Some(found);
        }
    }
    None
}

/// A word and its byte range.
type Word<'a> = (&'a str, Range<usize>);

/// Runs of letters or digits; `2023-05-25` stays one word.
fn words(text: &str) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let mut start = None;
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        let iso_dash = c == '-'
            && start.is_some()
            && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
            && bytes.get(i.wrapping_sub(1)).is_some_and(u8::is_ascii_digit);
        if c.is_alphanumeric() || iso_dash {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            out.push((&text[s..i], s..i));
        }
    }
    if let Some(s) = start {
        out.push((&text[s..], s..text.len()));
    }
    out
}

fn mention_at(words: &[Word<'_>], i: usize) -> Option<DateMention> {
    let word = |j: usize| words.get(j).map(|(w, _)| *w);
    let span = |first: usize, last: usize| words[first].1.start..words[last].1.end;
    if let Some(date) = iso(words[i].0) {
        return Some(day(date, words[i].1.clone()));
    }
    // "25 May 2022", "25th of May, 2022"
    if let Some(d) = day_number(words[i].0) {
        let m_at =
            if word(i + 1).is_some_and(|w| w.eq_ignore_ascii_case("of")) { i + 2 } else { i + 1 };
        if let (Some(m), Some(y)) = (word(m_at).and_then(month), word(m_at + 1).and_then(year))
            && let Some(date) = NaiveDate::from_ymd_opt(y, m, d)
        {
            return Some(day(date, span(i, m_at + 1)));
        }
        return None;
    }
    let m = month(words[i].0)?;
    // "May 25, 2022", "October 13th 2023"
    if let (Some(d), Some(y)) = (word(i + 1).and_then(day_number), word(i + 2).and_then(year)) {
        let date = NaiveDate::from_ymd_opt(y, m, d)?;
        return Some(day(date, span(i, i + 2)));
    }
    // "July 2023"
    let y = word(i + 1).and_then(year)?;
    let first = NaiveDate::from_ymd_opt(y, m, 1)?;
    let next = if m == 12 {
        NaiveDate::from_ymd_opt(y + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(y, m + 1, 1)
    }?;
    Some(DateMention { start: midnight(first), end: midnight(next), span: span(i, i + 1) })
}

fn day(date: NaiveDate, span: Range<usize>) -> DateMention {
    let next = date.succ_opt().unwrap_or(date);
    DateMention { start: midnight(date), end: midnight(next), span }
}

fn midnight(date: NaiveDate) -> Timestamp {
    Timestamp(date.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc().timestamp_millis())
}

/// "january" … "december", or their first three letters ("sept" too).
fn month(word: &str) -> Option<u32> {
    let w = word.to_ascii_lowercase();
    if w.len() < 3 {
        return None;
    }
    let found = MONTHS.iter().position(|m| *m == w || (w.len() == 3 && m.starts_with(&w)));
    let found = found.or_else(|| (w == "sept").then_some(8))?;
    u32::try_from(found + 1).ok()
}

/// 1 to 31, optionally with st/nd/rd/th.
fn day_number(word: &str) -> Option<u32> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !matches!(suffix.to_ascii_lowercase().as_str(), "" | "st" | "nd" | "rd" | "th") {
        return None;
    }
    (1..=2)
        .contains(&digits.len())
        .then(|| digits.parse().ok())
        .flatten()
        .filter(|d| (1..=31).contains(d))
}

/// Four digits from 1900 to 2199.
fn year(word: &str) -> Option<i32> {
    (word.len() == 4 && word.bytes().all(|b| b.is_ascii_digit()))
        .then(|| word.parse().ok())
        .flatten()
        .filter(|y| (1900..2200).contains(y))
}

/// `2023-05-25`.
fn iso(word: &str) -> Option<NaiveDate> {
    let mut parts = word.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || m.len() != 2 || d.len() != 2 {
        return None;
    }
    NaiveDate::from_ymd_opt(year(y)?, m.parse().ok()?, d.parse().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<(String, String, &str)> {
        date_mention(text).map(|m| {
            let show = |t: Timestamp| t.to_rfc3339()[..10].to_owned();
            (show(m.start), show(m.end), &text[m.span])
        })
    }

    #[test]
    fn days_months_and_iso_dates() {
        let q = "What did Nate do for Joanna on 25 May, 2022?";
        assert_eq!(read(q), Some(("2022-05-25".into(), "2022-05-26".into(), "25 May, 2022")));
        let q = "What painting did Melanie show on October 13, 2023?";
        assert_eq!(read(q), Some(("2023-10-13".into(), "2023-10-14".into(), "October 13, 2023")));
        let q = "What did she start in December 2023?";
        assert_eq!(read(q), Some(("2023-12-01".into(), "2024-01-01".into(), "December 2023")));
        let q = "the 3rd of Sept 2021 was fun";
        assert_eq!(read(q), Some(("2021-09-03".into(), "2021-09-04".into(), "3rd of Sept 2021")));
        let q = "deploy log from 2024-02-29, please";
        assert_eq!(read(q), Some(("2024-02-29".into(), "2024-03-01".into(), "2024-02-29")));
        let q = "What did we decide on Dec 31 1999?";
        assert_eq!(read(q), Some(("1999-12-31".into(), "2000-01-01".into(), "Dec 31 1999")));
    }

    #[test]
    fn no_date_without_a_year_or_with_an_impossible_day() {
        for q in [
            "May I ask what we said in May?",
            "What happened in 2023?",
            "the 2023-13-01 release",
            "2023 may be the year",
            "march on",
            "",
        ] {
            assert_eq!(read(q), None, "{q}");
        }
    }

    #[test]
    fn a_mention_covers_its_day_and_the_days_after() {
        let m = date_mention("on 25 May 2022").unwrap();
        let at = |text: &str| Timestamp::parse_rfc3339(text).unwrap();
        let day = 24 * Timestamp::HOUR_MS;
        let (noon, t) = (at("2022-05-25T12:00:00Z"), at("2022-05-25T12:30:00Z"));
        assert!(m.covers(noon, t, 0));
        assert!(m.covers(at("2022-05-24T23:00:00Z"), at("2022-05-25T00:10:00Z"), 0), "overlap");
        assert!(!m.covers(at("2022-05-26T10:00:00Z"), at("2022-05-26T11:00:00Z"), 0));
        assert!(m.covers(at("2022-05-26T10:00:00Z"), at("2022-05-26T11:00:00Z"), 2 * day));
        assert!(!m.covers(at("2022-05-24T10:00:00Z"), at("2022-05-24T11:00:00Z"), 2 * day));
    }

    proptest::proptest! {
        #[test]
        fn written_dates_are_read_back(
            y in 1900i32..2200,
            m in 1u32..=12,
            d in 1u32..=28,
            style in 0usize..4,
            before in "[a-z ]{0,12}",
            after in "[a-z ?]{0,12}",
        ) {
            let name = MONTHS[m as usize - 1];
            let date = match style {
                0 => format!("{d} {name}, {y}"),
                1 => format!("{} {d} {y}", &name[..3]),
                2 => format!("{y:04}-{m:02}-{d:02}"),
                _ => format!("{name} {d}th {y}"),
            };
            let text = format!("{before} {date} {after}");
            let found = date_mention(&text).expect("a date");
            let want = midnight(NaiveDate::from_ymd_opt(y, m, d).unwrap());
            proptest::prop_assert_eq!(found.start, want);
            proptest::prop_assert_eq!(found.end.0 - found.start.0, 24 * Timestamp::HOUR_MS);
            proptest::prop_assert_eq!(&text[found.span], date.as_str());
        }
    }

    #[test]
    fn an_impossible_day_leaves_its_month() {
        assert_eq!(read("on 31 April, 2023").unwrap().2, "April, 2023");
    }

    #[test]
    fn the_first_date_wins_and_words_touching_digits_are_not_days() {
        let q = "between 1 June 2023 and 2 July 2023";
        assert_eq!(read(q).unwrap().2, "1 June 2023");
        assert_eq!(read("version v2 May 2024").unwrap().2, "May 2024");
    }
}
