//! The timeline of an evaluated data set: rolled up, timed, and checked node by node against
//! the episodes (each node's children must cover exactly the episodes that began in its span).

use std::{collections::BTreeSet, time::Instant};

use anyhow::{Result, ensure};
use epimem_api::Memory;
use epimem_core::{Scope, TimelineNode, TocNode};
use serde::Serialize;

#[derive(Debug, Default, Serialize)]
pub(super) struct TimelineCheck {
    pub(super) nodes: usize,
    pub(super) seconds: f64,
}

/// Rolls up each tenant's timeline and checks every node written.
pub(super) fn roll_up_and_check(memory: &Memory, tenants: &[String]) -> Result<TimelineCheck> {
    let started = Instant::now();
    let mut check = TimelineCheck::default();
    for tenant in tenants {
        memory.roll_up_timeline(tenant)?;
    }
    check.seconds = started.elapsed().as_secs_f64();
    for tenant in tenants {
        for top in memory.measure().timeline_top(tenant)? {
            check.nodes += check_node(memory, tenant, &top)?;
        }
    }
    Ok(check)
}

/// Checks `node` and the nodes below it; returns how many it checked.
fn check_node(memory: &Memory, tenant: &str, node: &TimelineNode) -> Result<usize> {
    let (start, end) = node.id.span();
    let scope = Scope { since: Some(start), until: Some(end), ..Scope::tenant(tenant) };
    let expected: BTreeSet<String> = memory
        .measure()
        .episodes(&scope, None)?
        .into_iter()
        .filter(|e| e.start >= start && e.start < end)
        .map(|e| e.id.0)
        .collect();
    let (covered, checked) = under(memory, tenant, node)?;
    ensure!(
        covered == expected,
        "timeline node {} covers {} episodes, not the {} that began in it",
        node.id,
        covered.len(),
        expected.len()
    );
    ensure!(
        node.summary.episodes as usize == expected.len(),
        "timeline node {} counts {} episodes, not {}",
        node.id,
        node.summary.episodes,
        expected.len()
    );
    Ok(checked)
}

/// The episodes under `node` through its children as written, and how many nodes it visited.
fn under(memory: &Memory, tenant: &str, node: &TimelineNode) -> Result<(BTreeSet<String>, usize)> {
    if matches!(node.id, TocNode::Day(_)) {
        return Ok((node.children.iter().cloned().collect(), 1));
    }
    let mut episodes = BTreeSet::new();
    let mut visited = 1;
    for child in &node.children {
        let id: TocNode = child.parse()?;
        let Some(written) = memory.measure().timeline_node(tenant, &id)? else {
            anyhow::bail!("timeline node {} lists {child}, which is not written", node.id);
        };
        let (below, count) = under(memory, tenant, &written)?;
        episodes.extend(below);
        visited += count;
    }
    Ok((episodes, visited))
}
