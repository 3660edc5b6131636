use proptest::prelude::*;

use super::*;

fn day(y: i32, m: u32, d: u32) -> TocNode {
    TocNode::Day(NaiveDate::from_ymd_opt(y, m, d).unwrap())
}

#[test]
fn ids_read_as_the_seed_writes_them() {
    let cases = [
        (TocNode::Year(2026), "toc:year:2026"),
        (TocNode::Month(2026, 3), "toc:month:2026:03"),
        (TocNode::Week(2026, 9), "toc:week:2026:W09"),
        (day(2026, 3, 1), "toc:day:2026-03-01"),
    ];
    for (node, id) in cases {
        assert_eq!(node.to_string(), id);
        assert_eq!(id.parse::<TocNode>().unwrap(), node);
    }
}

#[test]
fn ids_that_are_not_nodes_say_why() {
    for (input, why) in [
        ("year:2026", "toc:"),
        ("toc:decade:2020", "year, month, week or day"),
        ("toc:month:2026:13", "01 to 12"),
        ("toc:month:2026:3", "canonical"),
        ("toc:week:2026:W54", "no such week"),
        ("toc:week:2026-09", "YEAR:Www"),
        ("toc:day:2026-02-30", "YYYY-MM-DD"),
        ("toc:year:0", "1 to 9999"),
    ] {
        let error = input.parse::<TocNode>().unwrap_err().to_string();
        assert!(error.contains(why), "{input}: {error}");
    }
}

#[test]
fn the_last_day_of_9999_is_a_node() {
    // Stored before conversation times were held to 1900-2199: its marks must still be read,
    // or they stop every other period's rollup.
    let mut node: TocNode = "toc:day:9999-12-31".parse().unwrap();
    while let Some(parent) = node.parent() {
        assert_eq!(parent.to_string().parse::<TocNode>(), Ok(parent));
        let (start, end) = parent.span();
        assert!(start < end);
        node = parent;
    }
    assert_eq!(node, TocNode::Year(9999));
}

#[test]
fn a_day_climbs_to_its_week_month_and_year() {
    // 2026-03-01 is a Sunday: the last day of ISO week 9, whose Thursday is 2026-02-26.
    let sunday = day(2026, 3, 1);
    assert_eq!(sunday.parent(), Some(TocNode::Week(2026, 9)));
    assert_eq!(TocNode::Week(2026, 9).parent(), Some(TocNode::Month(2026, 2)));
    assert_eq!(TocNode::Month(2026, 2).parent(), Some(TocNode::Year(2026)));
    assert_eq!(TocNode::Year(2026).parent(), None);
    // 2027-01-01 is a Friday in ISO week 53 of 2026, which belongs to December 2026.
    let new_year = day(2027, 1, 1);
    assert_eq!(new_year.parent(), Some(TocNode::Week(2026, 53)));
    assert_eq!(TocNode::Week(2026, 53).parent(), Some(TocNode::Month(2026, 12)));
}

#[test]
fn a_period_is_closed_only_after_its_grace() {
    let d = day(2026, 3, 1);
    let (_, end) = d.span();
    let hour = 3_600_000;
    assert!(!d.is_closed(Timestamp(end.0 - 1), hour), "still open");
    assert!(!d.is_closed(Timestamp(end.0 + hour - 1), hour), "ended, but late messages may come");
    assert!(d.is_closed(Timestamp(end.0 + hour), hour));
}

fn any_day() -> impl Strategy<Value = TocNode> {
    (0i64..(300 * 366)).prop_map(|n| {
        TocNode::Day(NaiveDate::from_ymd_opt(1900, 1, 1).unwrap() + Duration::days(n))
    })
}

proptest! {
    #[test]
    fn every_level_covers_its_children_without_gap_or_overlap(d in any_day()) {
        // Each node's span holds its child's, and the spans of a level tile time.
        let mut node = d;
        while let Some(parent) = node.parent() {
            let ((cs, ce), (ps, pe)) = (node.span(), parent.span());
            prop_assert!(ps <= cs && ce <= pe, "{node} in {parent}");
            let next = TocNode::Day(parent.end_day());
            let mut climbed = next;
            while climbed.level() != parent.level() {
                climbed = climbed.parent().unwrap();
            }
            prop_assert_eq!(climbed.span().0, pe, "the next {:?} starts where {} ends", parent.level(), parent);
            node = parent;
        }
        prop_assert_eq!(node.level(), TocLevel::Year);
    }

    #[test]
    fn ids_read_back(d in any_day()) {
        let mut node = d;
        loop {
            prop_assert_eq!(node.to_string().parse::<TocNode>().unwrap(), node);
            match node.parent() {
                Some(p) => node = p,
                None => break,
            }
        }
    }
}
