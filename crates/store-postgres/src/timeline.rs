//! The timeline: versioned nodes, the marks of nodes waiting for a rollup, the checkpoint.

use std::collections::BTreeSet;

use epimem_core::{EpisodeId, TimelineNode, TocLevel, TocNode};
use epimem_store::{StoreError, Timeline};

use crate::{
    Failure, PostgresStore, Tx,
    rows::{self, int, uint},
};

fn parse(id: &str) -> Result<TocNode, StoreError> {
    id.parse().map_err(|e| StoreError::Internal(format!("stored timeline node: {e}")))
}

pub(crate) fn tenants(tx: &mut Tx<'_>) -> Result<Vec<String>, Failure> {
    Ok(tx
        .query("SELECT DISTINCT tenant FROM conversations ORDER BY tenant", &[])?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

pub(crate) fn checkpoint(tx: &mut Tx<'_>, tenant: &str) -> Result<u64, Failure> {
    Ok(tx
        .query_opt("SELECT through FROM timeline_checkpoints WHERE tenant = $1", &[&tenant])?
        .map_or(0, |r| uint(&r, 0)))
}

pub(crate) fn mark(
    tx: &mut Tx<'_>,
    tenant: &str,
    nodes: &[TocNode],
    through: u64,
) -> Result<(), Failure> {
    for node in nodes {
        tx.execute(
            "INSERT INTO timeline_marks (tenant, node) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[&tenant, &node.to_string()],
        )?;
    }
    tx.execute(
        "INSERT INTO timeline_checkpoints (tenant, through) VALUES ($1, $2)
         ON CONFLICT (tenant) DO UPDATE
             SET through = greatest(timeline_checkpoints.through, excluded.through)",
        &[&tenant, &int(through)],
    )?;
    Ok(())
}

/// Whether every child `node` names is still there: a day's episodes in the tenant's, a
/// longer period's nodes written.
fn children_present(tx: &mut Tx<'_>, tenant: &str, node: &TimelineNode) -> Result<bool, Failure> {
    let sql = match node.id.level() {
        TocLevel::Day => {
            "SELECT count(DISTINCT e.id) FROM episodes e
             JOIN conversations c ON c.id = e.conversation_id AND c.tenant = $1
             WHERE e.id = ANY($2)"
        }
        _ => "SELECT count(DISTINCT node) FROM timeline_nodes WHERE tenant = $1 AND node = ANY($2)",
    };
    let present: i64 = tx.query_one(sql, &[&tenant, &node.children])?.get(0);
    let named: std::collections::HashSet<&String> = node.children.iter().collect();
    Ok(present as usize == named.len())
}

/// Forgetting episodes reaches the timeline: every version of the days that list any of them,
/// and of those days' weeks, months and years (whose words came partly from them), goes, and
/// they are marked to be written again from what remains.
pub(crate) fn forget_episodes(
    tx: &mut Tx<'_>,
    tenant: &str,
    episodes: &[EpisodeId],
) -> Result<(), Failure> {
    let ids: Vec<&str> = episodes.iter().map(|e| e.0.as_str()).collect();
    let days = tx.query(
        "SELECT DISTINCT node FROM timeline_nodes
         WHERE tenant = $1 AND starts_with(node, 'toc:day:') AND children ?| $2",
        &[&tenant, &ids],
    )?;
    let mut nodes = BTreeSet::new();
    for day in &days {
        let mut node = parse(day.get(0))?;
        nodes.insert(node);
        while let Some(parent) = node.parent() {
            nodes.insert(parent);
            node = parent;
        }
    }
    let nodes: Vec<TocNode> = nodes.into_iter().collect();
    let names: Vec<String> = nodes.iter().map(ToString::to_string).collect();
    tx.execute(
        "DELETE FROM timeline_nodes WHERE tenant = $1 AND node = ANY($2)",
        &[&tenant, &names],
    )?;
    let through = checkpoint(tx, tenant)?;
    mark(tx, tenant, &nodes, through)
}

impl Timeline for PostgresStore {
    fn tenants(&self) -> Result<Vec<String>, StoreError> {
        self.read(tenants)
    }

    fn timeline_nodes(&self, tenant: &str, level: TocLevel) -> Result<Vec<TocNode>, StoreError> {
        self.read(|tx| {
            let prefix = match level {
                TocLevel::Year => "toc:year:",
                TocLevel::Month => "toc:month:",
                TocLevel::Week => "toc:week:",
                TocLevel::Day => "toc:day:",
            };
            let rows = tx.query(
        "SELECT DISTINCT node FROM timeline_nodes WHERE tenant = $1 AND starts_with(node, $2)",
        &[&tenant, &prefix],
    )?;
            let mut nodes =
                rows.iter().map(|r| parse(r.get(0))).collect::<Result<Vec<TocNode>, _>>()?;
            nodes.sort_by_key(|n| n.first_day());
            Ok(nodes)
        })
    }

    fn timeline_checkpoint(&self, tenant: &str) -> Result<u64, StoreError> {
        self.read(|tx| checkpoint(tx, tenant))
    }

    fn mark_timeline(
        &self,
        tenant: &str,
        nodes: &[TocNode],
        through_change: u64,
    ) -> Result<(), StoreError> {
        self.write(|tx| mark(tx, tenant, nodes, through_change))
    }

    fn marked_timeline_nodes(&self, tenant: &str) -> Result<Vec<TocNode>, StoreError> {
        self.read(|tx| {
            let rows = tx.query(
                "SELECT node FROM timeline_marks WHERE tenant = $1 ORDER BY node",
                &[&tenant],
            )?;
            // A mark no node can be read from (written by an earlier version) can never be rolled
            // up; it is passed over so that it stops no other period.
            Ok(rows.iter().filter_map(|r| r.get::<_, &str>(0).parse().ok()).collect())
        })
    }

    fn put_timeline_node(&self, tenant: &str, node: &TimelineNode) -> Result<u32, StoreError> {
        self.write(|tx| {
            let id = node.id.to_string();
            if node.children.is_empty() {
                // Nothing under it (its episodes were forgotten): no node, only the mark cleared.
                tx.execute(
                    "DELETE FROM timeline_marks WHERE tenant = $1 AND node = $2",
                    &[&tenant, &id],
                )?;
                return Ok(0);
            }
            if !children_present(tx, tenant, node)? {
                // Told from children gone since they were read (an episode forgotten, the tenant
                // deleted): written, it would put their words back. Left as marked, if it is.
                return Ok(0);
            }
            tx.execute(
                "DELETE FROM timeline_marks WHERE tenant = $1 AND node = $2",
                &[&tenant, &id],
            )?;
            let summary = rows::json(&node.summary, "a node")?;
            let children = serde_json::to_value(&node.children)
                .map_err(|e| StoreError::Internal(format!("encoding a node: {e}")))?;
            let newest = tx.query_opt(
                "SELECT version, summary, children FROM timeline_nodes
                 WHERE tenant = $1 AND node = $2 ORDER BY version DESC LIMIT 1",
                &[&tenant, &id],
            )?;
            let newest = newest.map(|r| {
                (uint(&r, 0) as u32, r.get::<_, String>(1), r.get::<_, serde_json::Value>(2))
            });
            Ok(match newest {
                Some((version, s, c)) if s == summary && c == children => version,
                newest => {
                    let version = newest.map_or(1, |(v, ..)| v + 1);
                    tx.execute(
                        "INSERT INTO timeline_nodes (tenant, node, version, summary, children)
                         VALUES ($1, $2, $3, $4, $5)",
                        &[&tenant, &id, &i64::from(version), &summary, &children],
                    )?;
                    version
                }
            })
        })
    }

    fn timeline_node(
        &self,
        tenant: &str,
        id: &TocNode,
        version: Option<u32>,
    ) -> Result<Option<TimelineNode>, StoreError> {
        self.read(|tx| {
            let found = tx.query_opt(
                "SELECT version, summary, children FROM timeline_nodes
                 WHERE tenant = $1 AND node = $2 AND ($3::bigint IS NULL OR version = $3)
                 ORDER BY version DESC LIMIT 1",
                &[&tenant, &id.to_string(), &version.map(i64::from)],
            )?;
            let Some(r) = found else { return Ok(None) };
            let summary: String = r.get(1);
            let children = serde_json::from_value(r.get(2))
                .map_err(|e| StoreError::Internal(format!("stored node: {e}")))?;
            Ok(Some(TimelineNode {
                id: *id,
                version: uint(&r, 0) as u32,
                summary: rows::from_json(&summary, "node")?,
                children,
            }))
        })
    }
}
