//! A timeline told on the spot from a set of episodes (one person's, say), without a model and
//! without storing it: the same periods, children and extractive rollups as the tenant's
//! stored timeline, for any subset of its episodes.

use std::collections::{BTreeMap, BTreeSet};

use crate::{Episode, Timestamp};

use super::{NodeSummary, TimelineNode, TocLevel, TocNode, extractive_rollup};

/// Every period of `episodes` that is over at `now` (a level's period closes `grace_ms(level)`
/// after it ends), each rolled up from its children: a day from its episodes, a week from its
/// days, a month from its weeks, a year from its months. Each node is version 1.
pub fn timeline_of(
    episodes: &[Episode],
    now: Timestamp,
    grace_ms: impl Fn(TocLevel) -> i64,
    max_bullets: usize,
) -> BTreeMap<TocNode, TimelineNode> {
    let closed = |node: &TocNode| node.is_closed(now, grace_ms(node.level()));
    let mut days: BTreeMap<TocNode, Vec<&Episode>> = BTreeMap::new();
    for e in episodes {
        days.entry(TocNode::day_of(e.start)).or_default().push(e);
    }
    let mut told = BTreeMap::new();
    for (day, mut under) in days.into_iter().filter(|(day, _)| closed(day)) {
        under.sort_by(|a, b| (a.start, &a.id).cmp(&(b.start, &b.id)));
        let children: Vec<NodeSummary> = under.iter().map(|e| NodeSummary::of_episode(e)).collect();
        let ids = under.iter().map(|e| e.id.0.clone()).collect();
        told.insert(day, node(day, &children, ids, max_bullets));
    }
    for level in [TocLevel::Week, TocLevel::Month, TocLevel::Year] {
        let mut parents: BTreeMap<TocNode, Vec<TocNode>> = BTreeMap::new();
        for child in told.keys().filter(|n| n.level() == child_level(level)) {
            if let Some(parent) = child.parent().filter(|p| closed(p)) {
                parents.entry(parent).or_default().push(*child);
            }
        }
        for (parent, mut children) in parents {
            children.sort_by_key(|c| c.first_day());
            let summaries: Vec<NodeSummary> =
                children.iter().map(|c| told[c].summary.clone()).collect();
            let ids = children.iter().map(TocNode::to_string).collect();
            told.insert(parent, node(parent, &summaries, ids, max_bullets));
        }
    }
    told
}

/// The nodes among `written` whose parent is not among them (past years, then the months of
/// a year still running, and so on), in time order.
pub fn top_nodes(written: impl IntoIterator<Item = TocNode>) -> Vec<TocNode> {
    let ids: BTreeSet<TocNode> = written.into_iter().collect();
    let mut top: Vec<TocNode> =
        ids.iter().copied().filter(|n| n.parent().is_none_or(|p| !ids.contains(&p))).collect();
    top.sort_by_key(|n| (n.first_day(), n.level()));
    top
}

fn child_level(level: TocLevel) -> TocLevel {
    match level {
        TocLevel::Year => TocLevel::Month,
        TocLevel::Month => TocLevel::Week,
        TocLevel::Week | TocLevel::Day => TocLevel::Day,
    }
}

fn node(id: TocNode, children: &[NodeSummary], ids: Vec<String>, bullets: usize) -> TimelineNode {
    TimelineNode { id, version: 1, summary: extractive_rollup(children, bullets), children: ids }
}
