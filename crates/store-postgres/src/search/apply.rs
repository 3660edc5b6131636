//! The port's updates, each one transaction: forgotten episodes leave first, added ones come
//! in (an episode already there is left as it is, so applying twice changes nothing),
//! restated ones take their new memory strength, and the generation only moves forward (two
//! processes catching up at once apply the same changes).

use epimem_core::{Episode, Role, telling::standing_instructions};
use epimem_search::{IndexedEpisode, Update};
use postgres::types::Json;

use super::{
    bm25::{self, Kind, tokens_of},
    text::{CONFIG, line_text},
};
use crate::connection::{Failure, Tx};

/// The shape of the rows a tenant's index is written in, raised when a row gains something
/// older rows lack (2: whether a line sets a standing rule; 3: whether its episode holds tool
/// output).
pub(super) const FORMAT: i32 = 3;

/// A tenant's index as `search_state` describes it.
pub(super) struct State {
    pub(super) generation: u64,
    /// The embedder its vectors came from.
    pub(super) fingerprint: String,
    /// The shape of its rows ([`FORMAT`] when written by this version).
    pub(super) format: i32,
}

/// The tenant's index, if it has one.
pub(super) fn state(tx: &mut Tx<'_>, tenant: &str) -> Result<Option<State>, Failure> {
    let row = tx.query_opt(
        "SELECT generation, fingerprint, format FROM search_state WHERE tenant = $1",
        &[&tenant],
    )?;
    Ok(row.map(|r| State {
        generation: r.get::<_, i64>(0).max(0) as u64,
        fingerprint: r.get(1),
        format: r.get(2),
    }))
}

pub(super) fn apply(
    tx: &mut Tx<'_>,
    tenant: &str,
    update: &Update<'_>,
    fingerprint: &str,
) -> Result<(), Failure> {
    if !update.forgotten.is_empty() {
        let ids: Vec<&str> = update.forgotten.iter().map(|id| id.0.as_str()).collect();
        for (kind, rows) in [
            (
                Kind::Line,
                "SELECT tokens, words FROM search_lines WHERE tenant = $1 AND episode = ANY($2)",
            ),
            (
                Kind::Episode,
                "SELECT tokens, words FROM search_episodes WHERE tenant = $1 AND id = ANY($2)",
            ),
        ] {
            bm25::count(tx, tenant, kind, rows, &[&tenant, &ids], -1)?;
        }
        for table in ["search_lines", "search_vectors"] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE tenant = $1 AND episode = ANY($2)"),
                &[&tenant, &ids],
            )?;
        }
        tx.execute(
            "DELETE FROM search_episodes WHERE tenant = $1 AND id = ANY($2)",
            &[&tenant, &ids],
        )?;
        // A name nobody's remaining line bears is forgotten too.
        tx.execute(
            "DELETE FROM search_authors a WHERE a.tenant = $1 AND NOT EXISTS \
             (SELECT 1 FROM search_lines l WHERE l.tenant = a.tenant AND l.author = a.author)",
            &[&tenant],
        )?;
    }
    let mut inserted: Vec<&str> = Vec::new();
    for added in update.added {
        if add(tx, tenant, added)? {
            inserted.push(&added.episode.id.0);
        }
    }
    // BM25's statistics, once for all the episodes this update brought in.
    if !inserted.is_empty() {
        for (kind, rows) in [
            (
                Kind::Line,
                "SELECT tokens, words FROM search_lines WHERE tenant = $1 AND episode = ANY($2)",
            ),
            (
                Kind::Episode,
                "SELECT tokens, words FROM search_episodes WHERE tenant = $1 AND id = ANY($2)",
            ),
        ] {
            bm25::count(tx, tenant, kind, rows, &[&tenant, &inserted], 1)?;
        }
    }
    for episode in update.restated {
        tx.execute(
            "UPDATE search_episodes SET episode = $3 WHERE tenant = $1 AND id = $2",
            &[&tenant, &episode.id.0, &Json(episode)],
        )?;
    }
    if let Some(generation) = update.generation {
        tx.execute(
            "INSERT INTO search_state (tenant, generation, fingerprint, format) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (tenant) DO UPDATE \
             SET generation = GREATEST(search_state.generation, EXCLUDED.generation), \
             fingerprint = EXCLUDED.fingerprint, format = EXCLUDED.format",
            &[&tenant, &(generation as i64), &fingerprint, &FORMAT],
        )?;
    }
    Ok(())
}

/// Adds an episode and its lines; false if it was there already.
fn add(tx: &mut Tx<'_>, tenant: &str, added: &IndexedEpisode<'_>) -> Result<bool, Failure> {
    let e: &Episode = added.episode;
    let body: Vec<String> = added.lines.iter().map(|l| line_text(l.author, l.content)).collect();
    let inserted = tx.query_opt(
        &format!(
            "INSERT INTO search_episodes (tenant, id, conversation, user_id, agent, first_seq, \
             last_seq, start_ms, end_ms, episode, words, tokens) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, w, {} FROM (SELECT \
             setweight(to_tsvector('{CONFIG}', $11), 'B') \
             || setweight(to_tsvector('{CONFIG}', $12), 'C') || to_tsvector('{CONFIG}', $13) \
             AS w) AS t ON CONFLICT (tenant, id) DO NOTHING RETURNING added",
            tokens_of("w")
        ),
        &[
            &tenant,
            &e.id.0,
            &e.conversation.conversation,
            &e.user,
            &e.agent,
            &(e.first_seq as i64),
            &(e.last_seq as i64),
            &e.start.0,
            &e.end.0,
            &Json(e),
            &e.title,
            &e.summary,
            &body.join("\n"),
        ],
    )?;
    // Already there: applied before.
    let Some(row) = inserted else { return Ok(false) };
    let order: i64 = row.get(0);
    let lines = &added.lines;
    let seqs: Vec<i64> = lines.iter().map(|l| l.seq as i64).collect();
    let authors: Vec<String> = lines.iter().map(|l| l.author.to_lowercase()).collect();
    let by_person: Vec<bool> = lines.iter().map(|l| l.role == Role::User).collect();
    let asks: Vec<bool> = lines.iter().map(|l| l.content.trim_end().ends_with('?')).collect();
    let instructs = standing_instructions(lines.iter().map(|l| (l.role, l.content)));
    // The same for every line of the episode.
    let in_work = added.is_work();
    let contents: Vec<&str> = lines.iter().map(|l| l.content).collect();
    let vectors: Vec<Option<String>> = lines.iter().map(|l| l.vector.map(vector_text)).collect();
    // $1–$8 of both inserts: the episode's columns every line and vector row carries.
    let episode: [&(dyn postgres::types::ToSql + Sync); 8] = [
        &tenant,
        &e.conversation.conversation,
        &e.id.0,
        &order,
        &e.user,
        &e.agent,
        &e.start.0,
        &e.end.0,
    ];
    tx.execute(
        &format!(
            "INSERT INTO search_lines (tenant, conversation, seq, episode, added, user_id, agent, \
             start_ms, end_ms, author, by_person, asks, instructs, in_work, content, words, \
             tokens) \
             SELECT $1, $2, s, $3, $4, $5, $6, $7, $8, a, p, q, i, $16, c, tv, {} \
             FROM unnest($9::bigint[], $10::text[], $11::bool[], $12::bool[], $13::bool[], \
             $14::text[], $15::text[]) AS t(s, a, p, q, i, c, w), \
             LATERAL (SELECT to_tsvector('{CONFIG}', w) AS tv) AS l \
             ON CONFLICT (tenant, conversation, seq) DO NOTHING",
            tokens_of("tv")
        ),
        &[
            &episode[..],
            &[&seqs, &authors, &by_person, &asks, &instructs, &contents, &body, &in_work],
        ]
        .concat(),
    )?;
    tx.execute(
        "INSERT INTO search_vectors (tenant, conversation, seq, episode, added, user_id, agent, \
         start_ms, end_ms, embedding) \
         SELECT $1, $2, s, $3, $4, $5, $6, $7, $8, v::vector \
         FROM unnest($9::bigint[], $10::text[]) AS t(s, v) WHERE v IS NOT NULL \
         ON CONFLICT (tenant, conversation, seq) DO NOTHING",
        &[&episode[..], &[&seqs, &vectors]].concat(),
    )?;
    tx.execute(
        "INSERT INTO search_authors (tenant, author) SELECT $1, unnest($2::text[]) \
         ON CONFLICT DO NOTHING",
        &[&tenant, &authors],
    )?;
    Ok(true)
}

/// Drops everything the tenant's index holds.
pub(super) fn discard(tx: &mut Tx<'_>, tenant: &str) -> Result<(), Failure> {
    for table in [
        "search_lines",
        "search_vectors",
        "search_episodes",
        "search_authors",
        "search_terms",
        "search_stats",
        "search_state",
    ] {
        tx.execute(&format!("DELETE FROM {table} WHERE tenant = $1"), &[&tenant])?;
    }
    Ok(())
}

/// A vector in pgvector's text form.
pub(super) fn vector_text(vector: &[f32]) -> String {
    let mut text = String::with_capacity(vector.len() * 10 + 2);
    text.push('[');
    for (i, x) in vector.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        // Not finite has no text form pgvector reads; a zero adds nothing to a similarity.
        let x = if x.is_finite() { *x } else { 0.0 };
        text.push_str(&x.to_string());
    }
    text.push(']');
    text
}
