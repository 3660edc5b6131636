//! Lexical recall (FTS5 BM25) and counts.

use epimem_core::{EpisodeId, Scope, is_stopword};
use epimem_store::{LexicalHit, MessageHit, Stats, StoreError};
use rusqlite::{Connection, params};

use crate::{episodes::SCOPE_FILTER, map_err, rows};

/// BM25 column weights: title, summary, raw messages.
const WEIGHTS: &str = "10.0, 5.0, 1.0";

/// Turns free text into an FTS5 query: every word quoted (so FTS syntax in user input is
/// inert), any of them may match, BM25 ranks. Stopwords are left out unless nothing else is
/// left. `None` if the text has no word.
pub(crate) fn fts_query(text: &str) -> Option<String> {
    let words: Vec<&str> =
        text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let content: Vec<&str> =
        words.iter().copied().filter(|w| !is_stopword(&w.to_lowercase())).collect();
    let chosen = if content.is_empty() { words } else { content };
    (!chosen.is_empty())
        .then(|| chosen.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(" OR "))
}

fn no_words(query: &str) -> StoreError {
    StoreError::Invalid(format!("query {query:?} has no words to search for"))
}

pub(crate) fn lexical(
    conn: &Connection,
    scope: &Scope,
    query: &str,
    limit: usize,
) -> Result<Vec<LexicalHit>, StoreError> {
    let fts = fts_query(query).ok_or_else(|| no_words(query))?;
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {}, bm25(episodes_fts, {WEIGHTS}) AS rank
             FROM episodes_fts f
             JOIN episodes e ON e.rowid = f.rowid
             JOIN conversations c ON c.id = e.conversation_id
             WHERE episodes_fts MATCH ?7 AND {SCOPE_FILTER}
             ORDER BY rank LIMIT ?8",
            rows::EPISODE_COLUMNS
        ))
        .map_err(map_err)?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = stmt
        .query_map(
            rusqlite::params_from_iter(crate::episodes::with_scope(
                scope,
                vec![Box::new(fts), Box::new(limit)],
            )),
            |r| Ok((rows::episode(r)?, r.get::<_, f64>(19)?)),
        )
        .map_err(map_err)?;
    let mut out = Vec::new();
    for row in rows {
        let (episode, rank) = row.map_err(map_err)?;
        // FTS5's bm25() is lower-is-better; hits carry higher-is-better scores.
        out.push(LexicalHit { episode: episode?, score: -rank });
    }
    Ok(out)
}

pub(crate) fn lexical_messages(
    conn: &Connection,
    scope: &Scope,
    query: &str,
    limit: usize,
) -> Result<Vec<MessageHit>, StoreError> {
    let fts = fts_query(query).ok_or_else(|| no_words(query))?;
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT e.id, f.seq, bm25(messages_fts) AS rank
             FROM messages_fts f
             JOIN conversations c ON c.id = f.conversation_id
             JOIN episodes e ON e.conversation_id = f.conversation_id
                 AND f.seq BETWEEN e.first_seq AND e.last_seq
             WHERE messages_fts MATCH ?7 AND {SCOPE_FILTER}
             ORDER BY rank LIMIT ?8"
        ))
        .map_err(map_err)?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = stmt
        .query_map(
            rusqlite::params_from_iter(crate::episodes::with_scope(
                scope,
                vec![Box::new(fts), Box::new(limit)],
            )),
            |r| {
                Ok(MessageHit {
                    episode: EpisodeId(r.get(0)?),
                    seq: r.get(1)?,
                    score: -r.get::<_, f64>(2)?,
                })
            },
        )
        .map_err(map_err)?;
    rows.collect::<Result<Vec<_>, _>>().map_err(map_err)
}

pub(crate) fn stats(conn: &Connection, tenant: Option<&str>) -> Result<Stats, StoreError> {
    conn.query_row(
        "SELECT
             (SELECT count(*) FROM conversations c WHERE ?1 IS NULL OR c.tenant = ?1),
             (SELECT coalesce(sum(last_seq), 0) FROM conversations c WHERE ?1 IS NULL OR c.tenant = ?1),
             (SELECT coalesce(sum(last_seq - watermark), 0) FROM conversations c
                 WHERE ?1 IS NULL OR c.tenant = ?1),
             (SELECT count(*) FROM episodes e JOIN conversations c ON c.id = e.conversation_id
                 WHERE ?1 IS NULL OR c.tenant = ?1),
             (SELECT count(*) FROM jobs WHERE state = 'queued'),
             (SELECT count(*) FROM jobs WHERE state = 'failed')",
        params![tenant],
        |r| {
            Ok(Stats {
                conversations: r.get(0)?,
                messages: r.get(1)?,
                pending_messages: r.get(2)?,
                episodes: r.get(3)?,
                queued_jobs: r.get(4)?,
                failed_jobs: r.get(5)?,
            })
        },
    )
    .map_err(map_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_cannot_inject_fts_syntax() {
        assert_eq!(
            fts_query("tomato NEAR(\"x\" y) -z*").unwrap(),
            r#""tomato" OR "NEAR" OR "x" OR "y" OR "z""#
        );
        assert_eq!(fts_query("  ?! "), None);
        assert_eq!(fts_query("why did the CI fail").unwrap(), r#""CI" OR "fail""#);
        assert_eq!(fts_query("what was that").unwrap(), r#""what" OR "was" OR "that""#);
    }
}
