//! The messages nearest a query vector. pgvector's HNSW index (one per dimension, on a cast
//! of the column) finds the nearest by their own similarity; each then borrows from the
//! messages just before and after it by core's rule (`epimem_core::recall::borrowed`), and the messages next to a
//! hit become candidates too: an answer that shares no word with the query rises behind the
//! question that does.

use std::collections::HashMap;

use epimem_core::recall::{Borrow, borrowed};

use super::{ScopeFilter, apply::vector_text};
use crate::connection::{Failure, Tx};

/// A message found by its vector: its own similarity and the one it has after borrowing.
#[derive(Debug, Clone)]
pub(super) struct Near {
    pub(super) conversation: String,
    pub(super) seq: u64,
    pub(super) episode: String,
    pub(super) own: f64,
    pub(super) borrowed: f64,
}

/// What is read of a message to score it.
struct Row {
    episode: String,
    start: i64,
    end: i64,
    own: f64,
    added: i64,
}

/// The `limit` messages in `scope` best by borrowed similarity to `query`, best first.
pub(super) fn nearest(
    tx: &mut Tx<'_>,
    tenant: &str,
    scope: &ScopeFilter,
    query: &[f32],
    limit: usize,
    borrow: Borrow,
) -> Result<Vec<Near>, Failure> {
    if limit == 0 || query.is_empty() {
        return Ok(Vec::new());
    }
    let dim = query.len();
    let q = vector_text(query);
    // The index is searched until the tenant's filter has let `limit` rows through.
    let ef = (limit * 2).clamp(40, 1000);
    tx.batch(&format!(
        "SET LOCAL hnsw.ef_search = {ef}; SET LOCAL hnsw.iterative_scan = relaxed_order"
    ))?;
    let cast = format!("embedding::vector({dim})");
    let query_cast = format!("CAST($2::text AS vector({dim}))");
    let select = format!(
        "SELECT l.conversation, l.seq, l.episode, l.start_ms, l.end_ms, \
         1 - ({cast} <=> {query_cast}), l.added FROM search_vectors l"
    );
    let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![&tenant, &q];
    params.extend(scope.params());
    let limit_i = limit as i64;
    params.push(&limit_i);
    let hits = tx.query(
        &format!(
            "{select} WHERE l.tenant = $1 AND vector_dims(l.embedding) = {dim} AND {} \
             ORDER BY {cast} <=> {query_cast} LIMIT $8",
            ScopeFilter::sql(3, "l")
        ),
        &params,
    )?;
    let mut rows: HashMap<(String, u64), Row> = HashMap::new();
    let mut wanted: Vec<(String, i64)> = Vec::new();
    for r in hits {
        let key = (r.get::<_, String>(0), r.get::<_, i64>(1) as u64);
        for seq in [key.1 as i64 - 1, key.1 as i64 + 1] {
            wanted.push((key.0.clone(), seq));
        }
        rows.insert(key, row(&r));
    }
    wanted.retain(|(c, s)| *s > 0 && !rows.contains_key(&(c.clone(), *s as u64)));
    if !wanted.is_empty() {
        let (conversations, seqs): (Vec<String>, Vec<i64>) = wanted.into_iter().unzip();
        let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![&tenant, &q];
        params.extend(scope.params());
        params.push(&conversations);
        params.push(&seqs);
        let next = tx.query(
            &format!(
                "{select} JOIN unnest($8::text[], $9::bigint[]) AS n(conversation, seq) \
                 ON l.conversation = n.conversation AND l.seq = n.seq \
                 WHERE l.tenant = $1 AND vector_dims(l.embedding) = {dim} AND {}",
                ScopeFilter::sql(3, "l")
            ),
            &params,
        )?;
        for r in next {
            rows.insert((r.get(0), r.get::<_, i64>(1) as u64), row(&r));
        }
    }
    let mut near: Vec<(Near, i64)> = rows
        .iter()
        .map(|((conversation, seq), r)| {
            // A neighbour's own similarity, if it is one (`forward`: the message after).
            let neighbour = |other: u64, forward: bool| -> Option<f64> {
                let o = rows.get(&(conversation.clone(), other))?;
                let (first, second) = if forward { (r, o) } else { (o, r) };
                let gap = second.start - first.end;
                borrow.adjacent(first.episode == second.episode, gap).then_some(o.own)
            };
            let before = seq.checked_sub(1).and_then(|p| neighbour(p, false));
            let after = neighbour(seq + 1, true);
            let near = Near {
                conversation: conversation.clone(),
                seq: *seq,
                episode: r.episode.clone(),
                own: r.own,
                borrowed: borrowed(
                    r.own,
                    [
                        before.and_then(|s| borrow.from_before(s)),
                        after.and_then(|s| borrow.from_after(s)),
                    ],
                ),
            };
            (near, r.added)
        })
        .collect();
    // Best first; equal scores in the order episodes were added.
    near.sort_by(|(a, ao), (b, bo)| {
        b.borrowed.total_cmp(&a.borrowed).then(ao.cmp(bo)).then(a.seq.cmp(&b.seq))
    });
    near.truncate(limit);
    Ok(near.into_iter().map(|(n, _)| n).collect())
}

fn row(r: &postgres::Row) -> Row {
    Row { episode: r.get(2), start: r.get(3), end: r.get(4), own: r.get(5), added: r.get(6) }
}
