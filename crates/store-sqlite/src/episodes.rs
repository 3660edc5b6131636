//! Reading episodes.

use epimem_core::{Episode, EpisodeId, Scope};
use epimem_store::{EpisodeDetail, StoreError};
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::{map_err, rows};

/// The scope filter every episode query applies, over `c` (conversations), parameters ?1–?4.
pub(crate) const SCOPE_FILTER: &str = "c.tenant = ?1 AND (?2 IS NULL OR c.user_id = ?2) \
     AND (?3 IS NULL OR c.agent_id = ?3) AND (?4 IS NULL OR c.external_id = ?4)";

pub(crate) fn list(
    conn: &Connection,
    scope: &Scope,
    limit: Option<usize>,
) -> Result<Vec<Episode>, StoreError> {
    let limit = limit.map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX));
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {} FROM episodes e JOIN conversations c ON c.id = e.conversation_id
             WHERE {SCOPE_FILTER} ORDER BY c.id, e.first_seq LIMIT ?5",
            rows::EPISODE_COLUMNS
        ))
        .map_err(map_err)?;
    let rows = stmt
        .query_map(
            params![scope.tenant, scope.user, scope.agent, scope.conversation, limit],
            rows::episode,
        )
        .map_err(map_err)?;
    let mut out = Vec::new();
    for row in rows {
        out.push(row.map_err(map_err)??);
    }
    Ok(out)
}

pub(crate) fn detail(
    tx: &Transaction<'_>,
    scope: &Scope,
    id: &EpisodeId,
) -> Result<Option<EpisodeDetail>, StoreError> {
    let found = tx
        .prepare_cached(&format!(
            "SELECT {}, c.id FROM episodes e JOIN conversations c ON c.id = e.conversation_id
             WHERE {SCOPE_FILTER} AND e.id = ?5",
            rows::EPISODE_COLUMNS
        ))
        .and_then(|mut s| {
            s.query_row(
                params![scope.tenant, scope.user, scope.agent, scope.conversation, id.0],
                |r| Ok((rows::episode(r)?, r.get::<_, i64>(19)?)),
            )
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
