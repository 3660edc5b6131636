//! Export and import of whole conversations and of a tenant's timeline.

use epimem_core::{
    ConversationKey, EpisodeId, TimelineNode, Timestamp,
    facts::{Fact, FactId},
};
use epimem_store::{ConversationExport, ExportedFact, ExportedVectors, StoreError, Transfer};

use crate::{
    Failure, PostgresStore, Tx, changes,
    rows::{self, int, uint},
    vectors,
};

fn facts(tx: &mut Tx<'_>, id: i64, key: &ConversationKey) -> Result<Vec<ExportedFact>, Failure> {
    let rows = tx.query(
        "SELECT f.id, f.text, f.valid_at, f.invalid_at, f.reinforced, f.fingerprint, f.vector,
                ARRAY(SELECT s.episode_id FROM fact_sources s WHERE s.fact_id = f.id
                      ORDER BY s.serial)
         FROM facts f WHERE f.conversation_id = $1 ORDER BY f.valid_at, f.id",
        &[&id],
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let sources: Vec<String> = r.get(7);
        out.push(ExportedFact {
            fact: Fact {
                id: FactId(r.get(0)),
                conversation: key.clone(),
                text: r.get(1),
                valid_at: Timestamp(r.get(2)),
                invalid_at: r.get::<_, Option<i64>>(3).map(Timestamp),
                sources: sources.into_iter().map(EpisodeId).collect(),
                reinforced: u32::try_from(uint(r, 4)).unwrap_or(u32::MAX),
            },
            fingerprint: r.get(5),
            vector: r.get::<_, Option<&[u8]>>(6).map(vectors::decode).transpose()?,
        });
    }
    Ok(out)
}

fn message_vectors(tx: &mut Tx<'_>, id: i64) -> Result<Vec<ExportedVectors>, Failure> {
    let rows = tx.query(
        "SELECT vm.fingerprint, mv.seq, mv.vector FROM message_vectors mv
         JOIN vector_models vm ON vm.id = mv.model_id
         WHERE mv.conversation_id = $1 ORDER BY vm.fingerprint, mv.seq",
        &[&id],
    )?;
    let mut out: Vec<ExportedVectors> = Vec::new();
    for r in &rows {
        let fingerprint: String = r.get(0);
        let vector = vectors::decode(r.get(2))?;
        let seq = uint(r, 1);
        match out.last_mut().filter(|v| v.fingerprint == fingerprint) {
            Some(group) => group.vectors.push((seq, vector)),
            None => out.push(ExportedVectors { fingerprint, vectors: vec![(seq, vector)] }),
        }
    }
    Ok(out)
}

impl Transfer for PostgresStore {
    fn backup_to(&self, _dest: &std::path::Path) -> Result<(), StoreError> {
        Err(StoreError::Invalid(
            "a PostgreSQL database is backed up with pg_dump (see docs/operations.md), not by \
             epimem backup"
                .into(),
        ))
    }

    fn conversations(&self, tenant: &str) -> Result<Vec<ConversationKey>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .query(
                    "SELECT external_id FROM conversations WHERE tenant = $1 ORDER BY id",
                    &[&tenant],
                )?
                .iter()
                .map(|r| ConversationKey::new(tenant, r.get::<_, String>(0)))
                .collect())
        })
    }

    fn export_conversation(
        &self,
        key: &ConversationKey,
    ) -> Result<Option<ConversationExport>, StoreError> {
        self.read(|tx| {
            let Some(head) = tx.query_opt(
        "SELECT id, user_id, agent_id, watermark, window_doubled, consolidated_upto, last_seq
         FROM conversations WHERE tenant = $1 AND external_id = $2",
        &[&key.tenant, &key.conversation],
    )?
    else {
        return Ok(None);
    };
            let id: i64 = head.get(0);
            let episodes = tx
                .query(
                    &format!(
                        "SELECT {} FROM episodes e JOIN conversations c ON c.id = e.conversation_id
                         WHERE e.conversation_id = $1 ORDER BY e.first_seq",
                        rows::EPISODE_COLUMNS
                    ),
                    &[&id],
                )?
                .iter()
                .map(rows::episode)
                .collect::<Result<_, _>>()?;
            let pending_reviews = tx
                .query(
                    "SELECT review FROM pending_reviews WHERE conversation_id = $1 ORDER BY id",
                    &[&id],
                )?
                .iter()
                .map(|r| {
                    serde_json::from_value(r.get(0))
                        .map_err(|e| StoreError::Internal(format!("stored review: {e}")))
                })
                .collect::<Result<_, _>>()?;
            Ok(Some(ConversationExport {
                conversation: key.clone(),
                user: head.get(1),
                agent: head.get(2),
                watermark: uint(&head, 3),
                window_doubled: head.get(4),
                consolidated_upto: uint(&head, 5),
                messages: rows::messages(tx, id, 1, uint(&head, 6))?,
                episodes,
                pending_reviews,
                facts: facts(tx, id, key)?,
                vectors: message_vectors(tx, id)?,
                versions: crate::edits::exported(tx, id)?,
                reviews: crate::edits::exported_reviews(tx, id)?,
            }))
        })
    }

    fn import_conversation(&self, export: &ConversationExport) -> Result<(), StoreError> {
        self.write(|tx| {
            export.check().map_err(StoreError::Invalid)?;
            let key = &export.conversation;
            if rows::conversation_id(tx, key)?.is_some() {
                return Err(StoreError::Conflict(format!(
                    "conversation {key} exists: delete it first to import it again"
                ))
                .into());
            }
            let newest = export.messages.iter().map(|m| m.timestamp.millis()).max();
            let id: i64 = tx
                .query_one(
                    "INSERT INTO conversations (tenant, external_id, user_id, agent_id, last_seq,
                         watermark, newest_ts, window_doubled, consolidated_upto)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
                    &[
                        &key.tenant,
                        &key.conversation,
                        &export.user,
                        &export.agent,
                        &int(export.messages.len() as u64),
                        &int(export.watermark),
                        &newest,
                        &export.window_doubled,
                        &int(export.consolidated_upto),
                    ],
                )?
                .get(0);
            for m in &export.messages {
                let metadata = (!m.metadata.is_null()).then(|| m.metadata.to_string());
                tx.execute(
                    "INSERT INTO messages
                         (conversation_id, seq, key, role, speaker, content, ts, metadata, tokens)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                    &[
                        &id,
                        &int(m.seq),
                        &m.key,
                        &m.role.as_str(),
                        &m.speaker,
                        &m.content,
                        &m.timestamp.millis(),
                        &metadata,
                        &i64::from(m.tokens),
                    ],
                )?;
            }
            let ids: Vec<EpisodeId> = export.episodes.iter().map(|e| e.id.clone()).collect();
            changes::append(tx, &key.tenant, &ids, changes::Change::Closed)?;
            for e in &export.episodes {
                crate::segmentation::insert_episode(tx, id, e)?;
            }
            for review in &export.pending_reviews {
                crate::reviews::record(tx, key, review)?;
            }
            for f in &export.facts {
                crate::facts::insert(
                    tx,
                    id,
                    &f.fact,
                    f.fingerprint.as_deref(),
                    f.vector.as_deref(),
                )?;
            }
            for group in &export.vectors {
                vectors::put_message_vectors(tx, key, &group.fingerprint, &group.vectors)?;
            }
            crate::edits::import(tx, id, &export.versions)?;
            crate::edits::import_reviews(tx, id, &export.reviews)?;
            Ok(())
        })
    }

    fn timeline_export(&self, tenant: &str) -> Result<Vec<TimelineNode>, StoreError> {
        self.read(|tx| {
            let rows = tx.query(
                "SELECT node, version, summary, children FROM timeline_nodes
                 WHERE tenant = $1 ORDER BY node, version",
                &[&tenant],
            )?;
            let mut out = Vec::with_capacity(rows.len());
            for r in &rows {
                let node: &str = r.get(0);
                let summary: String = r.get(2);
                out.push(TimelineNode {
                    id: node
                        .parse()
                        .map_err(|e| StoreError::Internal(format!("stored timeline node: {e}")))?,
                    version: uint(r, 1) as u32,
                    summary: rows::from_json(&summary, "node")?,
                    children: serde_json::from_value(r.get(3))
                        .map_err(|e| StoreError::Internal(format!("stored node: {e}")))?,
                });
            }
            Ok(out)
        })
    }

    fn import_timeline(&self, tenant: &str, nodes: &[TimelineNode]) -> Result<(), StoreError> {
        self.write(|tx| {
            for node in nodes {
                let summary = rows::json(&node.summary, "a node")?;
                let children = serde_json::to_value(&node.children)
                    .map_err(|e| StoreError::Internal(format!("encoding a node: {e}")))?;
                tx.execute(
                    "INSERT INTO timeline_nodes (tenant, node, version, summary, children)
                     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                    &[&tenant, &node.id.to_string(), &i64::from(node.version), &summary, &children],
                )?;
            }
            let through = changes::generation(tx, tenant)?;
            crate::timeline::mark(tx, tenant, &[], through)
        })
    }
}
