//! Export and import of whole conversations and of a tenant's timeline.

use epimem_core::{
    ConversationKey, EpisodeId, TimelineNode, Timestamp,
    facts::{Fact, FactId},
};
use epimem_store::{ConversationExport, ExportedFact, ExportedVectors, StoreError, Transfer};
use rusqlite::{Connection, OptionalExtension, params};

use crate::{SqliteStore, map_err, rows, vectors};

fn facts(
    conn: &Connection,
    id: i64,
    key: &ConversationKey,
) -> Result<Vec<ExportedFact>, StoreError> {
    type Row = (String, String, i64, Option<i64>, u32, Option<String>, Option<Vec<u8>>);
    let found: Vec<Row> = conn
        .prepare_cached(
            "SELECT id, text, valid_at, invalid_at, reinforced, fingerprint, vector FROM facts
             WHERE conversation_id = ?1 ORDER BY valid_at, id",
        )
        .and_then(|mut s| {
            s.query_map([id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?))
            })?
            .collect()
        })
        .map_err(map_err)?;
    let mut sources = conn
        .prepare_cached("SELECT episode_id FROM fact_sources WHERE fact_id = ?1 ORDER BY rowid")
        .map_err(map_err)?;
    found
        .into_iter()
        .map(|(fact, text, valid_at, invalid_at, reinforced, fingerprint, vector)| {
            let sources = sources
                .query_map([&fact], |r| r.get(0).map(EpisodeId))
                .and_then(Iterator::collect)
                .map_err(map_err)?;
            Ok(ExportedFact {
                fact: Fact {
                    id: FactId(fact),
                    conversation: key.clone(),
                    text,
                    valid_at: Timestamp(valid_at),
                    invalid_at: invalid_at.map(Timestamp),
                    sources,
                    reinforced,
                },
                fingerprint,
                vector: vector.as_deref().map(vectors::decode).transpose()?,
            })
        })
        .collect()
}

fn message_vectors(conn: &Connection, id: i64) -> Result<Vec<ExportedVectors>, StoreError> {
    let rows: Vec<(String, u64, Vec<u8>)> = conn
        .prepare_cached(
            "SELECT vm.fingerprint, mv.seq, mv.vector FROM message_vectors mv
             JOIN vector_models vm ON vm.id = mv.model_id
             WHERE mv.conversation_id = ?1 ORDER BY vm.fingerprint, mv.seq",
        )
        .and_then(|mut s| s.query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect())
        .map_err(map_err)?;
    let mut out: Vec<ExportedVectors> = Vec::new();
    for (fingerprint, seq, bytes) in rows {
        let vector = vectors::decode(&bytes)?;
        match out.last_mut().filter(|v| v.fingerprint == fingerprint) {
            Some(group) => group.vectors.push((seq, vector)),
            None => out.push(ExportedVectors { fingerprint, vectors: vec![(seq, vector)] }),
        }
    }
    Ok(out)
}

impl Transfer for SqliteStore {
    fn backup_to(&self, dest: &std::path::Path) -> Result<(), StoreError> {
        if dest.exists() {
            let exists = format!("{} exists: a backup never writes over a file", dest.display());
            return Err(StoreError::Conflict(exists));
        }
        let path = dest
            .to_str()
            .ok_or_else(|| StoreError::Invalid(format!("{} is not UTF-8", dest.display())))?;
        // One read transaction: a snapshot, while writers go on in the write-ahead log.
        self.with_conn(|conn| conn.execute("VACUUM INTO ?1", [path]).map(drop).map_err(map_err))
    }

    fn conversations(&self, tenant: &str) -> Result<Vec<ConversationKey>, StoreError> {
        self.read(|conn| {
            conn.prepare_cached(
                "SELECT external_id FROM conversations WHERE tenant = ?1 ORDER BY id",
            )
            .and_then(|mut s| {
                s.query_map([tenant], |r| Ok(ConversationKey::new(tenant, r.get::<_, String>(0)?)))?
                    .collect()
            })
            .map_err(map_err)
        })
    }

    fn export_conversation(
        &self,
        key: &ConversationKey,
    ) -> Result<Option<ConversationExport>, StoreError> {
        self.read(|conn| {
            type Head = (i64, Option<String>, Option<String>, u64, bool, u64, u64);
            let head: Option<Head> = conn
        .query_row(
            "SELECT id, user_id, agent_id, watermark, window_doubled, consolidated_upto, last_seq
             FROM conversations WHERE tenant = ?1 AND external_id = ?2",
            params![key.tenant, key.conversation],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?)),
        )
        .optional()
        .map_err(map_err)?;
            let Some((id, user, agent, watermark, window_doubled, consolidated_upto, last)) = head
            else {
                return Ok(None);
            };
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {} FROM episodes e JOIN conversations c ON c.id = e.conversation_id
                     WHERE e.conversation_id = ?1 ORDER BY e.first_seq",
                    rows::EPISODE_COLUMNS
                ))
                .map_err(map_err)?;
            let episodes = stmt
                .query_map([id], rows::episode)
                .map_err(map_err)?
                .map(|r| r.map_err(map_err)?)
                .collect::<Result<Vec<_>, _>>()?;
            let pending_reviews = conn
                .prepare_cached(
                    "SELECT review FROM pending_reviews WHERE conversation_id = ?1 ORDER BY id",
                )
                .and_then(|mut s| {
                    s.query_map([id], |r| r.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()
                })
                .map_err(map_err)?
                .iter()
                .map(|r| {
                    serde_json::from_str(r)
                        .map_err(|e| StoreError::Internal(format!("stored review: {e}")))
                })
                .collect::<Result<_, _>>()?;
            Ok(Some(ConversationExport {
                conversation: key.clone(),
                user,
                agent,
                watermark,
                window_doubled,
                consolidated_upto,
                messages: rows::messages(conn, id, 1, last)?,
                episodes,
                pending_reviews,
                facts: facts(conn, id, key)?,
                vectors: message_vectors(conn, id)?,
                versions: crate::edits::exported(conn, id)?,
                reviews: crate::edits::exported_reviews(conn, id)?,
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
                )));
            }
            let last = export.messages.len() as u64;
            let newest = export.messages.iter().map(|m| m.timestamp.millis()).max();
            tx.execute(
        "INSERT INTO conversations (tenant, external_id, user_id, agent_id, last_seq, watermark,
             newest_ts, window_doubled, consolidated_upto)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            key.tenant,
            key.conversation,
            export.user,
            export.agent,
            last,
            export.watermark,
            newest,
            export.window_doubled,
            export.consolidated_upto
        ],
    )
    .map_err(map_err)?;
            let id = tx.last_insert_rowid();
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO messages
                         (conversation_id, seq, key, role, speaker, content, ts, metadata, tokens)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )
                .map_err(map_err)?;
            for m in &export.messages {
                let metadata = (!m.metadata.is_null()).then(|| m.metadata.to_string());
                insert
                    .execute(params![
                        id,
                        m.seq,
                        m.key,
                        m.role.as_str(),
                        m.speaker,
                        m.content,
                        m.timestamp.millis(),
                        metadata,
                        m.tokens
                    ])
                    .map_err(map_err)?;
            }
            for e in &export.episodes {
                crate::segmentation::insert_episode(tx, &key.tenant, id, e)?;
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
        self.read(|conn| {
            let rows: Vec<(String, u32, String, String)> = conn
                .prepare_cached(
                    "SELECT node, version, summary, children FROM timeline_nodes
                     WHERE tenant = ?1 ORDER BY node, version",
                )
                .and_then(|mut s| {
                    s.query_map([tenant], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                        .collect()
                })
                .map_err(map_err)?;
            rows.into_iter()
                .map(|(node, version, summary, children)| {
                    Ok(TimelineNode {
                        id: node.parse().map_err(|e| {
                            StoreError::Internal(format!("stored timeline node: {e}"))
                        })?,
                        version,
                        summary: crate::timeline::decode(&summary)?,
                        children: crate::timeline::decode(&children)?,
                    })
                })
                .collect()
        })
    }

    fn import_timeline(&self, tenant: &str, nodes: &[TimelineNode]) -> Result<(), StoreError> {
        self.write(|tx| {
            let mut insert = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO timeline_nodes (tenant, node, version, summary, children)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .map_err(map_err)?;
            for node in nodes {
                let summary = crate::timeline::encode(&node.summary)?;
                let children = crate::timeline::encode(&node.children)?;
                insert
                    .execute(params![tenant, node.id.to_string(), node.version, summary, children])
                    .map_err(map_err)?;
            }
            let through = crate::changes::generation(tx, tenant)?;
            crate::timeline::mark(tx, tenant, &[], through)
        })
    }
}
