//! Facts distilled from episodes, their sources, and when consolidation runs.

use epimem_core::{
    ConversationKey, EpisodeId, JobKind, Scope, Timestamp,
    facts::{Fact, FactId},
};
use epimem_store::{
    ConsolidationBatch, ConsolidationCommit, ConsolidationRule, Facts, StoreError, StoredFact,
    rules::{self, ConsolidationRows, FactWrite},
};

use crate::{
    Failure, PostgresStore, Tx, episodes,
    rows::{self, int, uint},
    vectors,
};

/// Queues a consolidation of the conversation (closing episodes up to `upto_seq` just now) if
/// `rule` says it is time and none is queued or running.
pub(crate) fn queue_if_due(
    tx: &mut Tx<'_>,
    conversation_id: i64,
    conversation: &ConversationKey,
    upto_seq: u64,
    rule: ConsolidationRule,
) -> Result<(), Failure> {
    let row = tx.query_one(
        "SELECT count(*), coalesce(bool_or(e.surprise >= $2), FALSE) FROM episodes e
         JOIN conversations c ON c.id = e.conversation_id
         WHERE e.conversation_id = $1 AND e.last_seq > c.consolidated_upto",
        &[&conversation_id, &rule.flashbulb],
    )?;
    let (waiting, flashbulb): (u64, bool) = (uint(&row, 0), row.get(1));
    if waiting == 0 || (waiting < u64::from(rule.every.max(1)) && !flashbulb) {
        return Ok(());
    }
    let queued: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM jobs WHERE state = 'queued'
                 AND payload ->> 'kind' = 'consolidate'
                 AND payload -> 'conversation' ->> 'tenant' = $1
                 AND payload -> 'conversation' ->> 'conversation' = $2)",
            &[&conversation.tenant, &conversation.conversation],
        )?
        .get(0);
    if queued {
        return Ok(());
    }
    rows::insert_job(tx, &JobKind::Consolidate { conversation: conversation.clone(), upto_seq })?;
    Ok(())
}

pub(crate) fn batch(
    tx: &mut Tx<'_>,
    conversation: &ConversationKey,
    upto_seq: u64,
    max_episodes: usize,
    max_facts: usize,
    fingerprint: Option<&str>,
) -> Result<ConsolidationBatch, Failure> {
    let Some(id) = rows::conversation_id(tx, conversation)? else {
        return Ok(ConsolidationBatch { episodes: Vec::new(), facts: Vec::new() });
    };
    let ids: Vec<EpisodeId> = tx
        .query(
            "SELECT e.id FROM episodes e JOIN conversations c ON c.id = e.conversation_id
             WHERE e.conversation_id = $1 AND e.last_seq > c.consolidated_upto
               AND e.last_seq <= $2
             ORDER BY e.first_seq LIMIT $3",
            &[&id, &int(upto_seq), &int(max_episodes as u64)],
        )?
        .iter()
        .map(|r| EpisodeId(r.get(0)))
        .collect();
    let scope = Scope::tenant(&conversation.tenant)
        .with_conversation(Some(conversation.conversation.clone()));
    let mut details = Vec::with_capacity(ids.len());
    for id in &ids {
        details.extend(episodes::detail(tx, &scope, id)?);
    }
    let facts = list(tx, &scope, false, Some(max_facts), fingerprint)?;
    Ok(ConsolidationBatch { episodes: details, facts })
}

/// Stores `fact` (with its sources) unless it is there already.
pub(crate) fn insert(
    tx: &mut Tx<'_>,
    conversation_id: i64,
    fact: &Fact,
    fingerprint: Option<&str>,
    vector: Option<&[f32]>,
) -> Result<(), Failure> {
    let inserted = tx.execute(
        "INSERT INTO facts (id, conversation_id, text, valid_at, invalid_at, reinforced,
             fingerprint, vector)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
        &[
            &fact.id.0,
            &conversation_id,
            &fact.text,
            &fact.valid_at.millis(),
            &fact.invalid_at.map(Timestamp::millis),
            &i64::from(fact.reinforced),
            &fingerprint,
            &vector.map(vectors::encode),
        ],
    )?;
    if inserted > 0 {
        add_sources(tx, &fact.id, &fact.sources)?;
    }
    Ok(())
}

fn add_sources(tx: &mut Tx<'_>, fact: &FactId, sources: &[EpisodeId]) -> Result<(), Failure> {
    for source in sources {
        tx.execute(
            "INSERT INTO fact_sources (fact_id, episode_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[&fact.0, &source.0],
        )?;
    }
    Ok(())
}

/// Facts of conversations `scope` may see; valid during its time range, if it has one.
const FACT_FILTER: &str = "c.tenant = $1 AND ($2::text IS NULL OR c.user_id = $2) \
     AND ($3::text IS NULL OR c.agent_id = $3) AND ($4::text IS NULL OR c.external_id = $4) \
     AND ($5::bigint IS NULL OR f.invalid_at IS NULL OR f.invalid_at >= $5) \
     AND ($6::bigint IS NULL OR f.valid_at <= $6)";

pub(crate) fn list(
    tx: &mut Tx<'_>,
    scope: &Scope,
    with_invalid: bool,
    limit: Option<usize>,
    fingerprint: Option<&str>,
) -> Result<Vec<StoredFact>, Failure> {
    let limit: Option<i64> = limit.map(|l| int(l as u64));
    let params = episodes::scope_params(scope);
    let rows = tx.query(
        &format!(
            "SELECT f.id, c.tenant, c.external_id, f.text, f.valid_at, f.invalid_at, f.reinforced,
                    CASE WHEN f.fingerprint = $9 THEN f.vector END,
                    ARRAY(SELECT s.episode_id FROM fact_sources s WHERE s.fact_id = f.id
                          ORDER BY s.serial)
             FROM facts f JOIN conversations c ON c.id = f.conversation_id
             WHERE {FACT_FILTER} AND ($7 OR f.invalid_at IS NULL)
             ORDER BY f.valid_at DESC, f.id DESC LIMIT $8"
        ),
        &params.with(&[&with_invalid, &limit, &fingerprint]),
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let vector = r.get::<_, Option<&[u8]>>(7).map(vectors::decode).transpose()?;
        let sources: Vec<String> = r.get(8);
        out.push(StoredFact {
            fact: Fact {
                id: FactId(r.get(0)),
                conversation: ConversationKey::new(r.get::<_, String>(1), r.get::<_, String>(2)),
                text: r.get(3),
                valid_at: Timestamp(r.get(4)),
                invalid_at: r.get::<_, Option<i64>>(5).map(Timestamp),
                sources: sources.into_iter().map(EpisodeId).collect(),
                reinforced: u32::try_from(uint(r, 6)).unwrap_or(u32::MAX),
            },
            vector,
        });
    }
    Ok(out)
}

/// Forgets the facts that came from any of `episodes` (their text may repeat it).
pub(crate) fn forget_from(tx: &mut Tx<'_>, episodes: &[EpisodeId]) -> Result<(), Failure> {
    let ids: Vec<&str> = episodes.iter().map(|e| e.0.as_str()).collect();
    let facts: Vec<String> = tx
        .query("SELECT DISTINCT fact_id FROM fact_sources WHERE episode_id = ANY($1)", &[&ids])?
        .iter()
        .map(|r| r.get(0))
        .collect();
    tx.execute("DELETE FROM fact_sources WHERE fact_id = ANY($1)", &[&facts])?;
    tx.execute("DELETE FROM facts WHERE id = ANY($1)", &[&facts])?;
    Ok(())
}

/// Forgets every fact of a conversation.
pub(crate) fn forget_conversation(tx: &mut Tx<'_>, conversation_id: i64) -> Result<(), Failure> {
    tx.execute(
        "DELETE FROM fact_sources WHERE fact_id IN (SELECT id FROM facts WHERE conversation_id = $1)",
        &[&conversation_id],
    )?;
    tx.execute("DELETE FROM facts WHERE conversation_id = $1", &[&conversation_id])?;
    Ok(())
}

impl Facts for PostgresStore {
    fn consolidation_batch(
        &self,
        conversation: &ConversationKey,
        upto_seq: u64,
        max_episodes: usize,
        max_facts: usize,
        fingerprint: Option<&str>,
    ) -> Result<ConsolidationBatch, StoreError> {
        self.read(|tx| batch(tx, conversation, upto_seq, max_episodes, max_facts, fingerprint))
    }

    fn commit_consolidation(&self, commit: &ConsolidationCommit) -> Result<(), StoreError> {
        self.write(|tx| {
            if let Some(job) = commit.job {
                let exists: bool = tx
                    .query_one("SELECT EXISTS (SELECT 1 FROM jobs WHERE id = $1)", &[&job.0])?
                    .get(0);
                if !exists {
                    let gone = format!("consolidation job {} is gone", job.0);
                    return Err(StoreError::Conflict(gone).into());
                }
            }
            let conversation = &commit.conversation;
            let id = rows::conversation_id(tx, conversation)?.ok_or_else(|| {
                StoreError::Conflict(format!("conversation {conversation} is gone"))
            })?;
            let (facts, sources) = rules::consolidation_reads(commit);
            let fact_ids: Vec<&str> = facts.iter().map(|f| f.0.as_str()).collect();
            let ours: Vec<String> = tx
                .query(
                    "SELECT id FROM facts WHERE id = ANY($1) AND conversation_id = $2",
                    &[&fact_ids, &id],
                )?
                .iter()
                .map(|r| r.get(0))
                .collect();
            let source_ids: Vec<&str> = sources.iter().map(|s| s.0.as_str()).collect();
            let kept: Vec<String> = tx
                .query(
                    "SELECT e.id FROM episodes e JOIN conversations c ON c.id = e.conversation_id
                     WHERE e.id = ANY($1) AND c.tenant = $2",
                    &[&source_ids, &conversation.tenant],
                )?
                .iter()
                .map(|r| r.get(0))
                .collect();
            let found = ConsolidationRows {
                ours: facts.into_iter().filter(|f| ours.contains(&f.0)).collect(),
                kept: sources.into_iter().filter(|s| kept.contains(&s.0)).collect(),
            };
            for write in rules::consolidation_writes(commit, &found)? {
                match write {
                    FactWrite::Insert { fact, vector, fingerprint } => {
                        insert(tx, id, fact, fingerprint, vector)?;
                    }
                    FactWrite::Reinforce { fact, sources } => {
                        tx.execute(
                            "UPDATE facts SET reinforced = reinforced + 1
                             WHERE id = $1 AND invalid_at IS NULL",
                            &[&fact.0],
                        )?;
                        add_sources(tx, fact, sources)?;
                    }
                    FactWrite::Invalidate { fact, at } => {
                        tx.execute(
                            "UPDATE facts SET invalid_at = $2 WHERE id = $1 AND invalid_at IS NULL",
                            &[&fact.0, &at.millis()],
                        )?;
                    }
                }
            }
            tx.execute(
                "UPDATE conversations SET consolidated_upto = greatest(consolidated_upto, $2)
                 WHERE id = $1",
                &[&id, &int(commit.through_seq)],
            )?;
            if let Some(job) = commit.job.filter(|_| commit.finished) {
                tx.execute("DELETE FROM jobs WHERE id = $1", &[&job.0])?;
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
        self.read(|tx| list(tx, scope, with_invalid, limit, fingerprint))
    }
}
