//! Reading episodes.

use std::collections::HashMap;

use epimem_core::{Episode, EpisodeId, Message, Scope, Timestamp};
use epimem_store::{EpisodeCursor, EpisodeDetail, Episodes, IndexedMessage, StoreError};
use postgres::types::ToSql;

use crate::{
    Failure, PostgresStore, Tx,
    rows::{self, uint},
};

/// The scope filter every episode query applies, over `c` (conversations) and `e` (episodes),
/// parameters $1–$6 (see [`scope_params`]).
pub(crate) const SCOPE_FILTER: &str = "c.tenant = $1 AND ($2::text IS NULL OR c.user_id = $2) \
     AND ($3::text IS NULL OR c.agent_id = $3) AND ($4::text IS NULL OR c.external_id = $4) \
     AND ($5::bigint IS NULL OR e.end_ts >= $5) AND ($6::bigint IS NULL OR e.start_ts <= $6)";

/// The values of $1–$6 of [`SCOPE_FILTER`].
pub(crate) struct ScopeParams<'a> {
    scope: &'a Scope,
    since: Option<i64>,
    until: Option<i64>,
}

pub(crate) fn scope_params(scope: &Scope) -> ScopeParams<'_> {
    ScopeParams {
        scope,
        since: scope.since.map(Timestamp::millis),
        until: scope.until.map(Timestamp::millis),
    }
}

impl<'a> ScopeParams<'a> {
    /// $1–$6 followed by `rest` ($7, $8, …).
    pub(crate) fn with(&'a self, rest: &[&'a (dyn ToSql + Sync)]) -> Vec<&'a (dyn ToSql + Sync)> {
        let mut all: Vec<&(dyn ToSql + Sync)> = vec![
            &self.scope.tenant,
            &self.scope.user,
            &self.scope.agent,
            &self.scope.conversation,
            &self.since,
            &self.until,
        ];
        all.extend_from_slice(rest);
        all
    }
}

/// Reads in one snapshot: call it in a transaction.
pub(crate) fn detail(
    tx: &mut Tx<'_>,
    scope: &Scope,
    id: &EpisodeId,
) -> Result<Option<EpisodeDetail>, Failure> {
    let params = scope_params(scope);
    let found = tx.query_opt(
        &format!(
            "SELECT {}, c.id FROM episodes e JOIN conversations c ON c.id = e.conversation_id
             WHERE {SCOPE_FILTER} AND e.id = $7",
            rows::EPISODE_COLUMNS
        ),
        &params.with(&[&id.0]),
    )?;
    let Some(row) = found else { return Ok(None) };
    let episode = rows::episode(&row)?;
    let conversation_id: i64 = row.get(rows::EPISODE_COLUMN_COUNT);
    let messages = rows::messages(tx, conversation_id, episode.first_seq, episode.last_seq)?;
    let context = match episode.context_first_seq {
        Some(from) => rows::messages(tx, conversation_id, from, episode.first_seq - 1)?,
        None => Vec::new(),
    };
    Ok(Some(EpisodeDetail { episode, context, messages }))
}

pub(crate) fn indexed_messages(
    tx: &mut Tx<'_>,
    tenant: &str,
    only: &[EpisodeId],
    fingerprint: Option<&str>,
) -> Result<Vec<IndexedMessage>, Failure> {
    let only: Vec<&str> = only.iter().map(|i| i.0.as_str()).collect();
    let rows = tx.query(
        &format!(
            "SELECT {}, m.seq, coalesce(m.speaker, m.role), m.content, mv.vector, m.role
             FROM episodes e
             JOIN conversations c ON c.id = e.conversation_id
             JOIN messages m ON m.conversation_id = e.conversation_id
                 AND m.seq BETWEEN e.first_seq AND e.last_seq
             LEFT JOIN vector_models vm ON vm.fingerprint = $1
             LEFT JOIN message_vectors mv ON mv.conversation_id = m.conversation_id
                 AND mv.model_id = vm.id AND mv.seq = m.seq
             WHERE c.tenant = $2 AND e.id = ANY($3)
             ORDER BY e.serial, m.seq",
            rows::EPISODE_COLUMNS
        ),
        &[&fingerprint, &tenant, &only],
    )?;
    let own = rows::EPISODE_COLUMN_COUNT;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let seq = uint(r, own);
        let vector = r.get::<_, Option<&[u8]>>(own + 3).map(crate::vectors::decode).transpose()?;
        let role: String = r.get(own + 4);
        let role = role.parse().map_err(|e| StoreError::Internal(format!("message {seq}: {e}")))?;
        out.push(IndexedMessage {
            episode: rows::episode(r)?,
            seq,
            role,
            author: r.get(own + 1),
            content: r.get(own + 2),
            vector,
        });
    }
    Ok(out)
}

/// Episodes whose rows one query reads.
const INDEXED_PER_QUERY: usize = 500;

impl Episodes for PostgresStore {
    fn episodes(
        &self,
        scope: &Scope,
        after: Option<&EpisodeCursor>,
        limit: Option<usize>,
    ) -> Result<Vec<Episode>, StoreError> {
        self.read(|tx| {
            let limit: Option<i64> = limit.map(|l| i64::try_from(l).unwrap_or(i64::MAX));
            let (after_start, after_id) = match after {
                Some(c) => (Some(c.start.millis()), Some(c.id.0.as_str())),
                None => (None, None),
            };
            let params = scope_params(scope);
            let rows = tx.query(
                &format!(
                    "SELECT {} FROM episodes e JOIN conversations c ON c.id = e.conversation_id
                     WHERE {SCOPE_FILTER} AND ($8::bigint IS NULL OR e.start_ts < $8
                         OR (e.start_ts = $8 AND e.id < $9))
                     ORDER BY e.start_ts DESC, e.id DESC LIMIT $7",
                    rows::EPISODE_COLUMNS
                ),
                &params.with(&[&limit, &after_start, &after_id]),
            )?;
            Ok(rows.iter().map(rows::episode).collect::<Result<_, _>>()?)
        })
    }

    fn episode_details(
        &self,
        scope: &Scope,
        ids: &[EpisodeId],
    ) -> Result<Vec<EpisodeDetail>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.read(|tx| {

    let wanted: Vec<&str> = ids.iter().map(|i| i.0.as_str()).collect();
    let params = scope_params(scope);
    let rows = tx.query(
        &format!(
            "SELECT {}, c.id FROM unnest($7::text[]) WITH ORDINALITY AS wanted (id, place)
             JOIN episodes e ON e.id = wanted.id
             JOIN conversations c ON c.id = e.conversation_id
             WHERE {SCOPE_FILTER} ORDER BY wanted.place",
            rows::EPISODE_COLUMNS
        ),
        &params.with(&[&wanted]),
    )?;
    let mut found = Vec::with_capacity(rows.len());
    for row in &rows {
        let episode = rows::episode(row)?;
        let conversation: i64 = row.get(rows::EPISODE_COLUMN_COUNT);
        found.push((episode, conversation));
    }
    // Every message of every episode found, its context included, in one query.
    let (mut conversations, mut from, mut to) = (Vec::new(), Vec::new(), Vec::new());
    for (e, conversation) in &found {
        conversations.push(*conversation);
        from.push(rows::int(e.context_first_seq.unwrap_or(e.first_seq)));
        to.push(rows::int(e.last_seq));
    }
    let mut messages: HashMap<(i64, u64), Message> = HashMap::new();
    for row in tx.query(
        &format!(
            "SELECT {}, m.conversation_id
             FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS span (conversation, first, last)
             JOIN messages m ON m.conversation_id = span.conversation
                 AND m.seq BETWEEN span.first AND span.last",
            rows::MESSAGE_COLUMNS
                .split(", ")
                .map(|c| format!("m.{c}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        &[&conversations, &from, &to],
    )? {
        let message = rows::message(&row)?;
        messages.insert((row.get(8), message.seq), message);
    }
    let take = |conversation: i64, seqs: std::ops::RangeInclusive<u64>| -> Vec<Message> {
        seqs.filter_map(|seq| messages.get(&(conversation, seq)).cloned()).collect()
    };
    Ok(found
        .into_iter()
        .map(|(episode, conversation)| {
            let context = match episode.context_first_seq {
                Some(first) => take(conversation, first..=episode.first_seq - 1),
                None => Vec::new(),
            };
            let messages = take(conversation, episode.first_seq..=episode.last_seq);
            EpisodeDetail { episode, context, messages }
        })
        .collect())
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
        // A few hundred episodes a query: the statement's generic plan is made for a handful
        // and turned seconds-long for the thousands a search index's catch-up asks for.
        self.read(|tx| {
            let mut rows = Vec::new();
            for chunk in ids.chunks(INDEXED_PER_QUERY) {
                rows.extend(indexed_messages(tx, tenant, chunk, fingerprint)?);
            }
            Ok(rows)
        })
    }

    fn episodes_by_id(&self, scope: &Scope, ids: &[EpisodeId]) -> Result<Vec<Episode>, StoreError> {
        self.read(|tx| {
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let ids: Vec<&str> = ids.iter().map(|i| i.0.as_str()).collect();
            let params = scope_params(scope);
            let rows = tx.query(
                &format!(
                    // The ids first: a statement's generic plan would otherwise walk the tenant's
                    // conversations and their episodes to find a handful (7 ms against 0.4 at 100,000).
                    "SELECT {} FROM unnest($7::text[]) AS wanted (id)
                     JOIN episodes e ON e.id = wanted.id
                     JOIN conversations c ON c.id = e.conversation_id
                     WHERE {SCOPE_FILTER}",
                    rows::EPISODE_COLUMNS
                ),
                &params.with(&[&ids]),
            )?;
            Ok(rows.iter().map(rows::episode).collect::<Result<_, _>>()?)
        })
    }
}
