//! Reading episodes.

use epimem_core::{Episode, EpisodeId, Scope, Timestamp};
use epimem_store::{EpisodeCursor, EpisodeDetail, Episodes, IndexedMessage, StoreError};
use rusqlite::{Connection, OptionalExtension};

use crate::{SqliteStore, map_err, rows};

/// The scope filter every episode query applies, over `c` (conversations) and `e` (episodes),
/// parameters ?1–?6 (see [`scope_params`]).
pub(crate) const SCOPE_FILTER: &str = "c.tenant = ?1 AND (?2 IS NULL OR c.user_id = ?2) \
     AND (?3 IS NULL OR c.agent_id = ?3) AND (?4 IS NULL OR c.external_id = ?4) \
     AND (?5 IS NULL OR e.end_ts >= ?5) AND (?6 IS NULL OR e.start_ts <= ?6)";

/// The values of ?1–?6 of [`SCOPE_FILTER`].
pub(crate) fn scope_params(scope: &Scope) -> [Box<dyn rusqlite::ToSql + '_>; 6] {
    [
        Box::new(&scope.tenant),
        Box::new(&scope.user),
        Box::new(&scope.agent),
        Box::new(&scope.conversation),
        Box::new(scope.since.map(Timestamp::millis)),
        Box::new(scope.until.map(Timestamp::millis)),
    ]
}

/// [`scope_params`] followed by `rest` (?7, ?8, …).
pub(crate) fn with_scope<'a>(
    scope: &'a Scope,
    rest: Vec<Box<dyn rusqlite::ToSql + 'a>>,
) -> Vec<Box<dyn rusqlite::ToSql + 'a>> {
    let mut all: Vec<Box<dyn rusqlite::ToSql + 'a>> = scope_params(scope).into_iter().collect();
    all.extend(rest);
    all
}

/// Runs an episode query (columns [`rows::EPISODE_COLUMNS`]) and collects its episodes.
fn collect<'a>(
    stmt: &mut rusqlite::CachedStatement<'_>,
    params: Vec<Box<dyn rusqlite::ToSql + 'a>>,
) -> Result<Vec<Episode>, StoreError> {
    let rows =
        stmt.query_map(rusqlite::params_from_iter(params), rows::episode).map_err(map_err)?;
    let mut out = Vec::new();
    for row in rows {
        out.push(row.map_err(map_err)??);
    }
    Ok(out)
}

/// Reads in one snapshot: call it in a transaction.
pub(crate) fn detail(
    tx: &Connection,
    scope: &Scope,
    id: &EpisodeId,
) -> Result<Option<EpisodeDetail>, StoreError> {
    let found = tx
        .prepare_cached(&format!(
            "SELECT {}, c.id FROM episodes e JOIN conversations c ON c.id = e.conversation_id
             WHERE {SCOPE_FILTER} AND e.id = ?7",
            rows::EPISODE_COLUMNS
        ))
        .and_then(|mut s| {
            s.query_row(rusqlite::params_from_iter(with_scope(scope, vec![Box::new(&id.0)])), |r| {
                Ok((rows::episode(r)?, r.get::<_, i64>(rows::EPISODE_COLUMN_COUNT)?))
            })
            .optional()
        })
        .map_err(map_err)?;
    let Some((episode, conversation_id)) = found else { return Ok(None) };
    let episode = episode?;
    let messages = rows::messages(tx, conversation_id, episode.first_seq, episode.last_seq)?;
    let context = match episode.context_first_seq {
        Some(from) => rows::messages(tx, conversation_id, from, episode.first_seq - 1)?,
        None => Vec::new(),
    };
    Ok(Some(EpisodeDetail { episode, context, messages }))
}

/// The messages of episodes `ids` with their vectors of `fingerprint`. CROSS JOIN fixes the
/// order: the ids are looked up first, then checked against the tenant; left to the planner
/// (with `?3 IS NULL OR e.id IN …`), each catch-up read every episode of the tenant, 0.3 s
/// of every segmentation job at a million episodes.
fn indexed_messages_sql() -> String {
    format!(
        "SELECT {}, m.seq, coalesce(m.speaker, m.role), m.content, mv.vector, m.role
         FROM json_each(?3) j
         CROSS JOIN episodes e ON e.id = j.value
         CROSS JOIN conversations c ON c.id = e.conversation_id
         JOIN messages m ON m.conversation_id = e.conversation_id
             AND m.seq BETWEEN e.first_seq AND e.last_seq
         LEFT JOIN vector_models vm ON vm.fingerprint = ?1
         LEFT JOIN message_vectors mv ON mv.conversation_id = m.conversation_id
             AND mv.model_id = vm.id AND mv.seq = m.seq
         WHERE c.tenant = ?2
         ORDER BY e.rowid, m.seq",
        rows::EPISODE_COLUMNS
    )
}

/// Episode ids as a JSON array, for `json_each`.
fn ids_json(ids: &[EpisodeId]) -> Result<String, StoreError> {
    serde_json::to_string(&ids.iter().map(|i| i.0.as_str()).collect::<Vec<_>>())
        .map_err(|e| StoreError::Internal(format!("encoding ids: {e}")))
}

impl Episodes for SqliteStore {
    fn episodes(
        &self,
        scope: &Scope,
        after: Option<&EpisodeCursor>,
        limit: Option<usize>,
    ) -> Result<Vec<Episode>, StoreError> {
        self.read(|conn| {
            let limit = limit.map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX));
            let (after_start, after_id) = match after {
                Some(c) => (Some(c.start.millis()), Some(c.id.0.as_str())),
                None => (None, None),
            };
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {} FROM episodes e JOIN conversations c ON c.id = e.conversation_id
                     WHERE {SCOPE_FILTER} AND (?8 IS NULL OR e.start_ts < ?8
                         OR (e.start_ts = ?8 AND e.id < ?9))
                     ORDER BY e.start_ts DESC, e.id DESC LIMIT ?7",
                    rows::EPISODE_COLUMNS
                ))
                .map_err(map_err)?;
            let rest: Vec<Box<dyn rusqlite::ToSql>> =
                vec![Box::new(limit), Box::new(after_start), Box::new(after_id)];
            collect(&mut stmt, with_scope(scope, rest))
        })
    }

    fn episode_details(
        &self,
        scope: &Scope,
        ids: &[EpisodeId],
    ) -> Result<Vec<EpisodeDetail>, StoreError> {
        self.read(|tx| {
            let mut found = Vec::with_capacity(ids.len());
            for id in ids {
                found.extend(detail(tx, scope, id)?);
            }
            Ok(found)
        })
    }

    fn indexed_messages_of(
        &self,
        tenant: &str,
        ids: &[EpisodeId],
        fingerprint: Option<&str>,
    ) -> Result<Vec<IndexedMessage>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.read(|conn| {
            let ids = ids_json(ids)?;
            let mut stmt = conn.prepare_cached(&indexed_messages_sql()).map_err(map_err)?;
            let rows = stmt
                .query_map(rusqlite::params![fingerprint, tenant, ids], |r| {
                    let own = rows::EPISODE_COLUMN_COUNT;
                    Ok((
                        rows::episode(r)?,
                        r.get::<_, u64>(own)?,
                        r.get::<_, String>(own + 1)?,
                        r.get::<_, String>(own + 2)?,
                        r.get::<_, Option<Vec<u8>>>(own + 3)?,
                        r.get::<_, String>(own + 4)?,
                    ))
                })
                .map_err(map_err)?;
            let mut out = Vec::new();
            for row in rows {
                let (episode, seq, author, content, bytes, role) = row.map_err(map_err)?;
                let vector = bytes.as_deref().map(crate::vectors::decode).transpose()?;
                let role = role
                    .parse()
                    .map_err(|e| StoreError::Internal(format!("message {seq}: {e}")))?;
                out.push(IndexedMessage { episode: episode?, seq, role, author, content, vector });
            }
            Ok(out)
        })
    }

    fn episodes_by_id(&self, scope: &Scope, ids: &[EpisodeId]) -> Result<Vec<Episode>, StoreError> {
        self.read(|conn| {
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let ids = ids_json(ids)?;
            let mut stmt = conn
                .prepare_cached(&format!(
                    // CROSS JOIN fixes the order: look the ids up first, then check the scope of each,
                    // instead of scanning the tenant's episodes for the ids.
                    "SELECT {} FROM json_each(?7) j
                     CROSS JOIN episodes e ON e.id = j.value
                     CROSS JOIN conversations c ON c.id = e.conversation_id
                     WHERE {SCOPE_FILTER}",
                    rows::EPISODE_COLUMNS
                ))
                .map_err(map_err)?;
            collect(&mut stmt, with_scope(scope, vec![Box::new(ids)]))
        })
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::StatementStatus;

    use super::*;

    /// Catching a search index up reads the episodes it is told of, whatever the tenant holds:
    /// every table is looked up by key, only the list of ids is read through.
    #[test]
    fn indexed_messages_look_the_episodes_up_by_id() {
        let store = crate::SqliteStore::open_in_memory().unwrap();
        let plan = store
            .with_conn(|conn| {
                let mut stmt = conn
                    .prepare(&format!("EXPLAIN QUERY PLAN {}", indexed_messages_sql()))
                    .map_err(map_err)?;
                let details = stmt
                    .query_map(rusqlite::params![None::<String>, "t", "[]"], |r| {
                        r.get::<_, String>(3)
                    })
                    .map_err(map_err)?;
                details.collect::<Result<Vec<_>, _>>().map_err(map_err)
            })
            .unwrap();
        let scans: Vec<&String> = plan.iter().filter(|d| d.starts_with("SCAN")).collect();
        assert!(
            scans.len() == 1 && scans[0].starts_with("SCAN j"),
            "only the ids are scanned: {plan:?}"
        );
        assert!(plan.iter().any(|d| d.contains("SEARCH e") && d.contains("(id=?)")), "{plan:?}");
    }

    /// A scoped query runs with new values each time; planning it anew on each run cost more
    /// than the query.
    #[test]
    fn a_scoped_query_is_planned_once() {
        let store = crate::SqliteStore::open_in_memory().unwrap();
        let sql = format!(
            "SELECT count(*) FROM episodes e JOIN conversations c ON c.id = e.conversation_id
             WHERE {SCOPE_FILTER} AND e.id = ?7"
        );
        let conversations = [None, Some("a"), Some("b"), None];
        store
            .with_conn(|conn| {
                for (run, conversation) in conversations.into_iter().enumerate() {
                    let scope = Scope {
                        conversation: conversation.map(Into::into),
                        ..Scope::tenant(format!("t{run}"))
                    };
                    let params = with_scope(&scope, vec![Box::new(format!("e{run}"))]);
                    let mut stmt = conn.prepare_cached(&sql).map_err(map_err)?;
                    let n: i64 = stmt
                        .query_row(rusqlite::params_from_iter(params), |r| r.get(0))
                        .map_err(map_err)?;
                    assert_eq!(n, 0);
                    assert_eq!(stmt.get_status(StatementStatus::RePrepare), 0, "run {run}");
                }
                Ok(())
            })
            .unwrap();
    }
}
