//! Rolling up the timeline: the episodes closed (per the change log) mark their day and its
//! week, month and year; each marked period that is over is written again from its children,
//! days first, a node at a time (its write and its mark's removal in one transaction, so a
//! crash resumes where it stopped).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{Datelike, Duration};
use epimem_core::{
    EpisodeId, LlmStage, NodeSummary, Scope, TimelineNode, TocLevel, TocNode, extractive_rollup,
    llm::{parse_rollup, rollup_prompt},
    timeline_of, top_nodes,
};

use crate::engine::{Engine, EngineError, consolidation::model_failure_apart};

/// Changes read from the change log at a time.
const CHANGES_PER_READ: usize = 1000;

/// What a rollup did.
#[derive(Debug, Default)]
pub struct RollupReport {
    /// Nodes marked by episodes closed since the last rollup.
    pub marked: usize,
    /// Nodes written (a node whose children say nothing new keeps its version).
    pub written: usize,
    /// Marked nodes whose period is not over yet.
    pub waiting: usize,
    /// Nodes that could not be written, with why; they stay marked and are tried again, and
    /// every other node is written meanwhile.
    pub failed: Vec<(TocNode, EngineError)>,
}

impl Engine {
    /// Brings `tenant`'s timeline up to its episodes: the periods that are over are written
    /// from their children (LLM-free: the extractive rollup); the others wait, marked.
    pub(crate) fn roll_up_timeline(&self, tenant: &str) -> Result<RollupReport, EngineError> {
        let mut report =
            RollupReport { marked: self.mark_changed_periods(tenant)?, ..Default::default() };
        let now = self.clock.now();
        let mut marked = self.store.marked_timeline_nodes(tenant)?;
        // Children before parents: days, then weeks, months, years.
        marked.sort_by_key(|node| std::cmp::Reverse(node.level()));
        for node in marked {
            if !node.is_closed(now, self.config.timeline.grace_ms(node.level())) {
                report.waiting += 1;
                continue;
            }
            // One period that cannot be written (a model's or the store's failure) must not
            // stop the others: its parents are written from the children that are.
            let written = self.build_node(tenant, node).and_then(|built| {
                self.crash.point("rollup.before_put");
                let put = self.store.put_timeline_node(tenant, &built)?;
                self.crash.point("rollup.after_put");
                Ok(put)
            });
            match written {
                Ok(_) => report.written += 1,
                Err(e) => report.failed.push((node, e)),
            }
        }
        Ok(report)
    }

    /// Writes every period of `tenant`'s timeline that is over again from its children, as
    /// the episodes stand (after an upgrade that tells periods better, say). A node told as
    /// before keeps its version; a changed one gets a new version, the old staying readable.
    pub(crate) fn retell_timeline(&self, tenant: &str) -> Result<RollupReport, EngineError> {
        // The change log first, so the checkpoint kept below is the current one.
        let newly = self.mark_changed_periods(tenant)?;
        let mut written: Vec<TocNode> = Vec::new();
        for level in [TocLevel::Day, TocLevel::Week, TocLevel::Month, TocLevel::Year] {
            written.extend(self.store.timeline_nodes(tenant, level)?);
        }
        let checkpoint = self.store.timeline_checkpoint(tenant)?;
        self.store.mark_timeline(tenant, &written, checkpoint)?;
        let report = self.roll_up_timeline(tenant)?;
        Ok(RollupReport { marked: newly + written.len(), ..report })
    }

    /// A node of the timeline as last written (or `version`).
    pub(crate) fn timeline_node(
        &self,
        tenant: &str,
        node: &TocNode,
        version: Option<u32>,
    ) -> Result<Option<TimelineNode>, EngineError> {
        Ok(self.store.timeline_node(tenant, node, version)?)
    }

    /// The top of `tenant`'s timeline: every written node whose parent is not written yet
    /// (past years, then the months of the year still running, and so on), in time order.
    pub(crate) fn timeline_top(&self, tenant: &str) -> Result<Vec<TimelineNode>, EngineError> {
        let mut written: Vec<TocNode> = Vec::new();
        for level in [TocLevel::Year, TocLevel::Month, TocLevel::Week, TocLevel::Day] {
            written.extend(self.store.timeline_nodes(tenant, level)?);
        }
        let top = top_nodes(written);
        let mut nodes = Vec::with_capacity(top.len());
        for id in top {
            nodes.extend(self.store.timeline_node(tenant, &id, None)?);
        }
        Ok(nodes)
    }

    /// The timeline of what `user` said in `tenant`, told on the spot from their episodes
    /// without a model (the tenant's stored timeline tells everyone's): every period that is
    /// over, by node.
    pub(crate) fn user_timeline(
        &self,
        tenant: &str,
        user: &str,
    ) -> Result<BTreeMap<TocNode, TimelineNode>, EngineError> {
        let scope = Scope { user: Some(user.to_owned()), ..Scope::tenant(tenant) };
        let episodes = self.store.episodes(&scope, None, None)?;
        let timeline = &self.config.timeline;
        Ok(timeline_of(
            &episodes,
            self.clock.now(),
            |level| timeline.grace_ms(level),
            timeline.bullets,
        ))
    }

    /// `scope` narrowed to the period `within` names: a node id, or a phrase ("last week", "in
    /// March") read against the scoped conversation's time (its newest message, else now).
    pub(crate) fn scope_within(&self, scope: Scope, within: &str) -> Result<Scope, EngineError> {
        let now = self.conversation_now(&scope)?;
        let period = epimem_core::period_named(within, now).ok_or_else(|| {
            EngineError::Invalid(format!(
                "within: {within:?} names no period (a node id such as toc:week:2026:W09, or today, yesterday, this/last week, this/last month, this/last year, in March, in 2025)"
            ))
        })?;
        let (start, end) = period.span();
        Ok(Scope { since: Some(start), until: Some(end.plus_millis(-1)), ..scope })
    }

    /// Marks the periods of the episodes closed since the timeline's checkpoint.
    fn mark_changed_periods(&self, tenant: &str) -> Result<usize, EngineError> {
        let target = self.store.change_generation(tenant)?;
        let mut at = self.store.timeline_checkpoint(tenant)?;
        let mut marked = 0;
        while at < target {
            let changes = self.store.episode_changes(tenant, at, CHANGES_PER_READ)?;
            let Some(last) = changes.last().map(|c| c.seq) else { break };
            let closed: Vec<EpisodeId> = changes
                .into_iter()
                .filter(|c| !c.forgotten && !c.restated)
                .map(|c| c.episode)
                .collect();
            let mut nodes: BTreeSet<TocNode> = BTreeSet::new();
            for episode in self.store.episodes_by_id(&Scope::tenant(tenant), &closed)? {
                let mut node = TocNode::day_of(episode.start);
                nodes.insert(node);
                while let Some(parent) = node.parent() {
                    nodes.insert(parent);
                    node = parent;
                }
            }
            marked += nodes.len();
            self.store.mark_timeline(tenant, &nodes.into_iter().collect::<Vec<_>>(), last)?;
            at = last;
        }
        Ok(marked)
    }

    /// A node from its children as they stand: a day from its episodes (by when they began),
    /// a week, month or year from its child nodes already written.
    fn build_node(&self, tenant: &str, node: TocNode) -> Result<TimelineNode, EngineError> {
        let (children, ids): (Vec<NodeSummary>, Vec<String>) = match node {
            TocNode::Day(_) => {
                let (start, end) = node.span();
                let scope = epimem_core::Scope {
                    since: Some(start),
                    until: Some(end),
                    ..Scope::tenant(tenant)
                };
                let mut episodes = self.store.episodes(&scope, None, None)?;
                episodes.retain(|e| e.start >= start && e.start < end);
                episodes.sort_by(|a, b| (a.start, &a.id).cmp(&(b.start, &b.id)));
                episodes.iter().map(|e| (NodeSummary::of_episode(e), e.id.0.clone())).unzip()
            }
            _ => {
                let mut found = (Vec::new(), Vec::new());
                for child in child_periods(node) {
                    if let Some(written) = self.store.timeline_node(tenant, &child, None)? {
                        found.0.push(written.summary);
                        found.1.push(child.to_string());
                    }
                }
                found
            }
        };
        let mut summary = extractive_rollup(&children, self.config.timeline.bullets);
        // With a model, it tells the period; without one, or when it fails, the words stay
        // the extractive rollup's.
        if let (Some(chat), false) = (&self.chat, children.is_empty()) {
            let (first, end) = (node.first_day(), node.end_day() - Duration::days(1));
            let period = format!("{:?} {} ({first} to {end})", node.level(), node).to_lowercase();
            let prompt = rollup_prompt(&period, &children);
            let key = epimem_core::ConversationKey::new(tenant, "");
            let asked = self.ask_model(chat.as_ref(), &key, LlmStage::Summary, &prompt, |text| {
                parse_rollup(text, &summary)
            });
            if let Ok(told) = model_failure_apart(asked)? {
                summary = told;
            }
        }
        Ok(TimelineNode { id: node, version: 0, summary, children: ids })
    }
}

/// The periods one level below `node`, in time order (none below a day).
fn child_periods(node: TocNode) -> Vec<TocNode> {
    let (first, end) = (node.first_day(), node.end_day());
    match node {
        TocNode::Day(_) => Vec::new(),
        TocNode::Week(..) => (0..7).map(|d| TocNode::Day(first + Duration::days(d))).collect(),
        TocNode::Month(..) => {
            let mut weeks = Vec::new();
            let mut monday = first;
            while monday < end {
                let week = monday.iso_week();
                weeks.push(TocNode::Week(week.year(), week.week()));
                monday += Duration::days(7);
            }
            weeks
        }
        TocNode::Year(year) => (1..=12).map(|m| TocNode::Month(year, m)).collect(),
    }
}
