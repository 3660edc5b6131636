//! The timeline: versioned nodes, the marks of nodes waiting for a rollup, the checkpoint.

use epimem_core::{TimelineNode, TocLevel, TocNode};
use epimem_store::{StoreError, Timeline};
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::{SqliteStore, map_err};

pub(crate) fn tenants(conn: &Connection) -> Result<Vec<String>, StoreError> {
    conn.prepare_cached("SELECT DISTINCT tenant FROM conversations ORDER BY tenant")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(map_err)
}

pub(crate) fn checkpoint(conn: &Connection, tenant: &str) -> Result<u64, StoreError> {
    conn.query_row("SELECT through FROM timeline_checkpoints WHERE tenant = ?1", [tenant], |r| {
        r.get(0)
    })
    .optional()
    .map(Option::unwrap_or_default)
    .map_err(map_err)
}

pub(crate) fn mark(
    tx: &Transaction<'_>,
    tenant: &str,
    nodes: &[TocNode],
    through: u64,
) -> Result<(), StoreError> {
    let mut insert = tx
        .prepare_cached("INSERT OR IGNORE INTO timeline_marks (tenant, node) VALUES (?1, ?2)")
        .map_err(map_err)?;
    for node in nodes {
        insert.execute(params![tenant, node.to_string()]).map_err(map_err)?;
    }
    tx.execute(
        "INSERT INTO timeline_checkpoints (tenant, through) VALUES (?1, ?2)
         ON CONFLICT (tenant) DO UPDATE SET through = max(through, excluded.through)",
        params![tenant, through],
    )
    .map_err(map_err)?;
    Ok(())
}

/// Whether every child `node` names (`children`, as JSON) is still there: a day's episodes in
/// the tenant's, a longer period's nodes written.
fn children_present(
    tx: &Transaction<'_>,
    tenant: &str,
    node: &TimelineNode,
    children: &str,
) -> Result<bool, StoreError> {
    let sql = match node.id.level() {
        TocLevel::Day => {
            "SELECT count(DISTINCT e.id) FROM json_each(?2) j
             JOIN episodes e ON e.id = j.value
             JOIN conversations c ON c.id = e.conversation_id AND c.tenant = ?1"
        }
        _ => {
            "SELECT count(DISTINCT n.node) FROM json_each(?2) j
             JOIN timeline_nodes n ON n.tenant = ?1 AND n.node = j.value"
        }
    };
    let present: usize =
        tx.query_row(sql, params![tenant, children], |r| r.get(0)).map_err(map_err)?;
    let named: std::collections::HashSet<&String> = node.children.iter().collect();
    Ok(present == named.len())
}

pub(crate) fn encode<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Internal(format!("encoding a node: {e}")))
}

pub(crate) fn decode<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Internal(format!("stored node: {e}")))
}

/// Forgetting episodes reaches the timeline: every version of the days that list any of them,
/// and of those days' weeks, months and years (whose words came partly from them), goes, and
/// they are marked to be written again from what remains.
pub(crate) fn forget_episodes(
    tx: &Transaction<'_>,
    tenant: &str,
    episodes: &[epimem_core::EpisodeId],
) -> Result<(), StoreError> {
    let mut citing = tx
        .prepare_cached(
            "SELECT DISTINCT node FROM timeline_nodes
             WHERE tenant = ?1 AND node LIKE 'toc:day:%'
               AND EXISTS (SELECT 1 FROM json_each(children) WHERE value = ?2)",
        )
        .map_err(map_err)?;
    let mut nodes: std::collections::BTreeSet<TocNode> = std::collections::BTreeSet::new();
    for episode in episodes {
        let days: Vec<String> = citing
            .query_map(params![tenant, episode.0], |r| r.get(0))
            .and_then(Iterator::collect)
            .map_err(map_err)?;
        for day in days {
            let mut node: TocNode = day
                .parse()
                .map_err(|e| StoreError::Internal(format!("stored timeline node: {e}")))?;
            nodes.insert(node);
            while let Some(parent) = node.parent() {
                nodes.insert(parent);
                node = parent;
            }
        }
    }
    let nodes: Vec<TocNode> = nodes.into_iter().collect();
    for node in &nodes {
        tx.execute(
            "DELETE FROM timeline_nodes WHERE tenant = ?1 AND node = ?2",
            params![tenant, node.to_string()],
        )
        .map_err(map_err)?;
    }
    let through = checkpoint(tx, tenant)?;
    mark(tx, tenant, &nodes, through)
}

impl Timeline for SqliteStore {
    fn tenants(&self) -> Result<Vec<String>, StoreError> {
        self.read(tenants)
    }

    fn timeline_nodes(&self, tenant: &str, level: TocLevel) -> Result<Vec<TocNode>, StoreError> {
        self.read(|conn| {
            let prefix = match level {
                TocLevel::Year => "toc:year:",
                TocLevel::Month => "toc:month:",
                TocLevel::Week => "toc:week:",
                TocLevel::Day => "toc:day:",
            };
            let ids: Vec<String> = conn
        .prepare_cached(
            "SELECT DISTINCT node FROM timeline_nodes WHERE tenant = ?1 AND node LIKE ?2 || '%'",
        )
        .and_then(|mut s| s.query_map(params![tenant, prefix], |r| r.get(0))?.collect())
        .map_err(map_err)?;
            let mut nodes = ids
                .iter()
                .map(|id| {
                    id.parse()
                        .map_err(|e| StoreError::Internal(format!("stored timeline node: {e}")))
                })
                .collect::<Result<Vec<TocNode>, _>>()?;
            nodes.sort_by_key(|n| n.first_day());
            Ok(nodes)
        })
    }

    fn timeline_checkpoint(&self, tenant: &str) -> Result<u64, StoreError> {
        self.read(|conn| checkpoint(conn, tenant))
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
        self.read(|conn| {
            let ids: Vec<String> = conn
                .prepare_cached("SELECT node FROM timeline_marks WHERE tenant = ?1 ORDER BY node")
                .and_then(|mut s| s.query_map([tenant], |r| r.get(0))?.collect())
                .map_err(map_err)?;
            // A mark no node can be read from (written by an earlier version) can never be rolled
            // up; it is passed over so that it stops no other period.
            Ok(ids.iter().filter_map(|id| id.parse().ok()).collect())
        })
    }

    fn put_timeline_node(&self, tenant: &str, node: &TimelineNode) -> Result<u32, StoreError> {
        self.write(|tx| {
            let id = node.id.to_string();
            if node.children.is_empty() {
                // Nothing under it (its episodes were forgotten): no node, only the mark cleared.
                tx.execute(
                    "DELETE FROM timeline_marks WHERE tenant = ?1 AND node = ?2",
                    params![tenant, id],
                )
                .map_err(map_err)?;
                return Ok(0);
            }
            let children = encode(&node.children)?;
            if !children_present(tx, tenant, node, &children)? {
                // Told from children gone since they were read (an episode forgotten, the tenant
                // deleted): written, it would put their words back. Left as marked, if it is.
                return Ok(0);
            }
            let summary = encode(&node.summary)?;
            let newest: Option<(u32, String, String)> = tx
                .query_row(
                    "SELECT version, summary, children FROM timeline_nodes
                     WHERE tenant = ?1 AND node = ?2 ORDER BY version DESC LIMIT 1",
                    params![tenant, id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()
                .map_err(map_err)?;
            let version = match newest {
                Some((version, s, c)) if s == summary && c == children => version,
                newest => {
                    let version = newest.map_or(1, |(v, ..)| v + 1);
                    tx.execute(
                        "INSERT INTO timeline_nodes (tenant, node, version, summary, children)
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                        params![tenant, id, version, summary, children],
                    )
                    .map_err(map_err)?;
                    version
                }
            };
            tx.execute(
                "DELETE FROM timeline_marks WHERE tenant = ?1 AND node = ?2",
                params![tenant, id],
            )
            .map_err(map_err)?;
            Ok(version)
        })
    }

    fn timeline_node(
        &self,
        tenant: &str,
        id: &TocNode,
        version: Option<u32>,
    ) -> Result<Option<TimelineNode>, StoreError> {
        self.read(|conn| {
            let found: Option<(u32, String, String)> = conn
                .query_row(
                    "SELECT version, summary, children FROM timeline_nodes
                     WHERE tenant = ?1 AND node = ?2 AND (?3 IS NULL OR version = ?3)
                     ORDER BY version DESC LIMIT 1",
                    params![tenant, id.to_string(), version],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()
                .map_err(map_err)?;
            found
                .map(|(version, summary, children)| {
                    Ok(TimelineNode {
                        id: *id,
                        version,
                        summary: decode(&summary)?,
                        children: decode(&children)?,
                    })
                })
                .transpose()
        })
    }
}
