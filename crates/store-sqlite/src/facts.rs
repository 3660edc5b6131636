//! Facts distilled from episodes, their sources, and when consolidation runs.

use epimem_core::{
    ConversationKey, EpisodeId, JobKind, Scope, Timestamp,
    facts::{Fact, FactId},
};
use epimem_store::{
    ConsolidationBatch, ConsolidationCommit, ConsolidationRule, Facts, StoreError, StoredFact,
    rules::{self, ConsolidationRows, FactWrite},
};
use rusqlite::{Connection, Transaction, params};

use crate::{SqliteStore, episodes, map_err, rows, vectors};

/// Queues a consolidation of the conversation (closing episodes up to `upto_seq` just now) if
/// `rule` says it is time and none is queued or running.
pub(crate) fn queue_if_due(
    tx: &Transaction<'_>,
    conversation_id: i64,
    conversation: &ConversationKey,
    upto_seq: u64,
    rule: ConsolidationRule,
) -> Result<(), StoreError> {
    let (waiting, flashbulb): (u32, bool) = tx
        .query_row(
            "SELECT count(*), coalesce(max(e.surprise >= ?2), 0) FROM episodes e
             JOIN conversations c ON c.id = e.conversation_id
             WHERE e.conversation_id = ?1 AND e.last_seq > c.consolidated_upto",
            params![conversation_id, rule.flashbulb],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(map_err)?;
    if waiting == 0 || (waiting < rule.every.max(1) && !flashbulb) {
        return Ok(());
    }
    let queued: bool = tx
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM jobs WHERE state = 'queued'
                 AND json_extract(payload, '$.kind') = 'consolidate'
                 AND json_extract(payload, '$.conversation.tenant') = ?1
                 AND json_extract(payload, '$.conversation.conversation') = ?2)",
            params![conversation.tenant, conversation.conversation],
            |r| r.get(0),
        )
        .map_err(map_err)?;
    if queued {
        return Ok(());
    }
    let kind = JobKind::Consolidate { conversation: conversation.clone(), upto_seq };
    let payload = serde_json::to_string(&kind)
        .map_err(|e| StoreError::Internal(format!("encoding a job: {e}")))?;
    tx.execute("INSERT INTO jobs (payload) VALUES (?1)", [payload]).map_err(map_err)?;
    Ok(())
}

pub(crate) fn batch(
    conn: &Connection,
    conversation: &ConversationKey,
    upto_seq: u64,
    max_episodes: usize,
    max_facts: usize,
    fingerprint: Option<&str>,
) -> Result<ConsolidationBatch, StoreError> {
    let Some(id) = rows::conversation_id(conn, conversation)? else {
        return Ok(ConsolidationBatch { episodes: Vec::new(), facts: Vec::new() });
    };
    let ids: Vec<EpisodeId> = conn
        .prepare_cached(
            "SELECT e.id FROM episodes e JOIN conversations c ON c.id = e.conversation_id
             WHERE e.conversation_id = ?1 AND e.last_seq > c.consolidated_upto
               AND e.last_seq <= ?2
             ORDER BY e.first_seq LIMIT ?3",
        )
        .and_then(|mut s| {
            s.query_map(params![id, upto_seq, max_episodes as i64], |r| r.get(0).map(EpisodeId))?
                .collect()
        })
        .map_err(map_err)?;
    let scope = Scope::tenant(&conversation.tenant)
        .with_conversation(Some(conversation.conversation.clone()));
    let mut details = Vec::with_capacity(ids.len());
    for id in &ids {
        details.extend(episodes::detail(conn, &scope, id)?);
    }
    let facts = list(conn, &scope, false, Some(max_facts), fingerprint)?;
    Ok(ConsolidationBatch { episodes: details, facts })
}

/// Stores `fact` (with its sources) unless it is there already.
pub(crate) fn insert(
    tx: &Transaction<'_>,
    conversation_id: i64,
    fact: &Fact,
    fingerprint: Option<&str>,
    vector: Option<&[f32]>,
) -> Result<(), StoreError> {
    let inserted = tx
        .execute(
            "INSERT OR IGNORE INTO facts (id, conversation_id, text, valid_at,
                 invalid_at, reinforced, fingerprint, vector)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                fact.id.0,
                conversation_id,
                fact.text,
                fact.valid_at.millis(),
                fact.invalid_at.map(Timestamp::millis),
                fact.reinforced,
                fingerprint,
                vector.map(vectors::encode),
            ],
        )
        .map_err(map_err)?;
    if inserted > 0 {
        add_sources(tx, &fact.id, &fact.sources)?;
    }
    Ok(())
}

fn add_sources(
    tx: &Transaction<'_>,
    fact: &FactId,
    sources: &[EpisodeId],
) -> Result<(), StoreError> {
    let mut insert = tx
        .prepare_cached("INSERT OR IGNORE INTO fact_sources (fact_id, episode_id) VALUES (?1, ?2)")
        .map_err(map_err)?;
    for source in sources {
        insert.execute(params![fact.0, source.0]).map_err(map_err)?;
    }
    Ok(())
}

/// Facts of conversations `scope` may see; valid during its time range, if it has one.
const FACT_FILTER: &str = "c.tenant = ?1 AND (?2 IS NULL OR c.user_id = ?2) \
     AND (?3 IS NULL OR c.agent_id = ?3) AND (?4 IS NULL OR c.external_id = ?4) \
     AND (?5 IS NULL OR f.invalid_at IS NULL OR f.invalid_at >= ?5) \
     AND (?6 IS NULL OR f.valid_at <= ?6)";

pub(crate) fn list(
    conn: &Connection,
    scope: &Scope,
    with_invalid: bool,
    limit: Option<usize>,
    fingerprint: Option<&str>,
) -> Result<Vec<StoredFact>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT f.id, c.tenant, c.external_id, f.text, f.valid_at, f.invalid_at, f.reinforced,
                    CASE WHEN f.fingerprint = ?9 THEN f.vector END
             FROM facts f JOIN conversations c ON c.id = f.conversation_id
             WHERE {FACT_FILTER} AND (?7 OR f.invalid_at IS NULL)
             ORDER BY f.valid_at DESC, f.id DESC LIMIT ?8"
        ))
        .map_err(map_err)?;
    let limit = limit.map_or(-1, |l| l as i64);
    let rest: Vec<Box<dyn rusqlite::ToSql>> =
        vec![Box::new(with_invalid), Box::new(limit), Box::new(fingerprint)];
    let found: Vec<(Fact, Option<Vec<u8>>)> = stmt
        .query_map(rusqlite::params_from_iter(episodes::with_scope(scope, rest)), |r| {
            Ok((
                Fact {
                    id: FactId(r.get(0)?),
                    conversation: ConversationKey::new(
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                    ),
                    text: r.get(3)?,
                    valid_at: Timestamp(r.get(4)?),
                    invalid_at: r.get::<_, Option<i64>>(5)?.map(Timestamp),
                    sources: Vec::new(),
                    reinforced: r.get(6)?,
                },
                r.get(7)?,
            ))
        })
        .and_then(Iterator::collect)
        .map_err(map_err)?;
    let mut sources = conn
        .prepare_cached("SELECT episode_id FROM fact_sources WHERE fact_id = ?1 ORDER BY rowid")
        .map_err(map_err)?;
    found
        .into_iter()
        .map(|(mut fact, vector)| {
            fact.sources = sources
                .query_map([&fact.id.0], |r| r.get(0).map(EpisodeId))
                .and_then(Iterator::collect)
                .map_err(map_err)?;
            let vector = vector.map(|v| vectors::decode(&v)).transpose()?;
            Ok(StoredFact { fact, vector })
        })
        .collect()
}

/// Forgets the facts that came from any of `episodes` (their text may repeat it).
pub(crate) fn forget_from(tx: &Transaction<'_>, episodes: &[EpisodeId]) -> Result<(), StoreError> {
    let mut find = tx
        .prepare_cached("SELECT fact_id FROM fact_sources WHERE episode_id = ?1")
        .map_err(map_err)?;
    let mut facts: Vec<String> = Vec::new();
    for episode in episodes {
        let found: Vec<String> = find
            .query_map([&episode.0], |r| r.get(0))
            .and_then(Iterator::collect)
            .map_err(map_err)?;
        facts.extend(found);
    }
    for fact in facts {
        tx.execute("DELETE FROM fact_sources WHERE fact_id = ?1", [&fact]).map_err(map_err)?;
        tx.execute("DELETE FROM facts WHERE id = ?1", [&fact]).map_err(map_err)?;
    }
    Ok(())
}

/// Forgets every fact of a conversation.
pub(crate) fn forget_conversation(
    tx: &Transaction<'_>,
    conversation_id: i64,
) -> Result<(), StoreError> {
    tx.execute(
        "DELETE FROM fact_sources WHERE fact_id IN (SELECT id FROM facts WHERE conversation_id = ?1)",
        [conversation_id],
    )
    .map_err(map_err)?;
    tx.execute("DELETE FROM facts WHERE conversation_id = ?1", [conversation_id])
        .map_err(map_err)?;
    Ok(())
}

impl Facts for SqliteStore {
    fn consolidation_batch(
        &self,
        conversation: &ConversationKey,
        upto_seq: u64,
        max_episodes: usize,
        max_facts: usize,
        fingerprint: Option<&str>,
    ) -> Result<ConsolidationBatch, StoreError> {
        self.read(|conn| batch(conn, conversation, upto_seq, max_episodes, max_facts, fingerprint))
    }

    fn commit_consolidation(&self, commit: &ConsolidationCommit) -> Result<(), StoreError> {
        self.write(|tx| {

    if let Some(job) = commit.job {
        let exists: bool = tx
            .query_row("SELECT EXISTS (SELECT 1 FROM jobs WHERE id = ?1)", [job.0], |r| r.get(0))
            .map_err(map_err)?;
        if !exists {
            return Err(StoreError::Conflict(format!("consolidation job {} is gone", job.0)));
        }
    }
    let conversation = &commit.conversation;
    let id = rows::conversation_id(tx, conversation)?
        .ok_or_else(|| StoreError::Conflict(format!("conversation {conversation} is gone")))?;
    let (facts, sources) = rules::consolidation_reads(commit);
    let mut found = ConsolidationRows::default();
    let mut ours = tx
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM facts WHERE id = ?1 AND conversation_id = ?2)",
        )
        .map_err(map_err)?;
    for fact in facts {
        if ours.query_row(params![fact.0, id], |r| r.get(0)).map_err(map_err)? {
            found.ours.insert(fact);
        }
    }
    let mut kept = tx
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM episodes e JOIN conversations c
                 ON c.id = e.conversation_id WHERE e.id = ?1 AND c.tenant = ?2)",
        )
        .map_err(map_err)?;
    for source in sources {
        if kept.query_row(params![source.0, conversation.tenant], |r| r.get(0)).map_err(map_err)? {
            found.kept.insert(source);
        }
    }
    for write in rules::consolidation_writes(commit, &found)? {
        match write {
            FactWrite::Insert { fact, vector, fingerprint } => {
                insert(tx, id, fact, fingerprint, vector)?;
            }
            FactWrite::Reinforce { fact, sources } => {
                tx.execute(
                    "UPDATE facts SET reinforced = reinforced + 1 WHERE id = ?1 AND invalid_at IS NULL",
                    [&fact.0],
                )
                .map_err(map_err)?;
                add_sources(tx, fact, sources)?;
            }
            FactWrite::Invalidate { fact, at } => {
                tx.execute(
                    "UPDATE facts SET invalid_at = ?2 WHERE id = ?1 AND invalid_at IS NULL",
                    params![fact.0, at.millis()],
                )
                .map_err(map_err)?;
            }
        }
    }
    tx.execute(
        "UPDATE conversations SET consolidated_upto = max(consolidated_upto, ?2) WHERE id = ?1",
        params![id, commit.through_seq],
    )
    .map_err(map_err)?;
    if let Some(job) = commit.job.filter(|_| commit.finished) {
        tx.execute("DELETE FROM jobs WHERE id = ?1", [job.0]).map_err(map_err)?;
    }
    Ok(())
        })
    }

    fn facts(
        &self,
        scope: &Scope,
        with_invalid: bool,
        limit: Option<usize>,
        fingerprint: Option<&str>,
    ) -> Result<Vec<StoredFact>, StoreError> {
        self.read(|conn| list(conn, scope, with_invalid, limit, fingerprint))
    }
}
