//! Episode recall: the episodes whose words match (BM25 over their title, summary and lines), then the episodes of the nearest messages no lexical candidate was; each with its
//! best message's similarity.

use std::collections::HashMap;

use epimem_core::{
    Episode,
    recall::{
        Borrow, EpisodeCandidates, EpisodeFeatures, KeptEpisode, LexicalMatch, VectorMatch,
        story_fingerprint,
    },
};
use epimem_search::EpisodeQuery;
use postgres::types::Json;

use super::{
    ScopeFilter,
    apply::vector_text,
    bm25::{self, Kind},
    text::{self, Names},
    vectors,
};
use crate::connection::{Failure, Tx};

pub(super) fn candidates(
    tx: &mut Tx<'_>,
    q: &EpisodeQuery<'_>,
    borrow: Borrow,
) -> Result<EpisodeCandidates, Failure> {
    let tenant = q.scope.tenant.as_str();
    let scope = ScopeFilter::new(q.scope);
    let names = Names::of(tx, tenant)?;
    let lexical = match text::tsquery(q.text, &names) {
        Some((query, _)) => Some(lexical(tx, tenant, &scope, &query, q.candidates)?),
        None => None,
    };
    let searched_words = lexical.is_some();
    let lexical = lexical.unwrap_or_default();
    let mut candidates: Vec<EpisodeFeatures> = lexical
        .into_iter()
        .enumerate()
        .map(|(i, (episode, score))| {
            candidate(&episode, Some(LexicalMatch { rank: i + 1, score, length: 0 }))
        })
        .collect();
    if let Some(v) = q.vector {
        let ids: Vec<&str> = candidates.iter().map(|c| c.episode.id.0.as_str()).collect();
        let best = best_of(tx, tenant, v, &ids)?;
        for c in &mut candidates {
            if let Some(&(similarity, seq)) = best.get(c.episode.id.0.as_str()) {
                c.vector = Some(VectorMatch { rank: None, similarity });
                c.best_seq = Some(seq);
            }
        }
        // Each episode's best message among the nearest, by its own similarity.
        let near = vectors::nearest(tx, tenant, &scope, v, q.candidates * 4, borrow)?;
        let mut ranked: Vec<(String, f64, u64)> = Vec::new();
        for n in near {
            match ranked.iter_mut().find(|(e, ..)| *e == n.episode) {
                Some(best) if n.own > best.1 => *best = (n.episode, n.own, n.seq),
                Some(_) => {}
                None => ranked.push((n.episode, n.own, n.seq)),
            }
        }
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        ranked.truncate(q.candidates);
        let at: HashMap<String, usize> =
            candidates.iter().enumerate().map(|(i, c)| (c.episode.id.0.clone(), i)).collect();
        let missing: Vec<&str> =
            ranked.iter().filter(|(e, ..)| !at.contains_key(e)).map(|(e, ..)| e.as_str()).collect();
        let mut fetched = episodes(tx, tenant, &missing)?;
        for (i, (id, similarity, seq)) in ranked.iter().enumerate() {
            let c = match at.get(id) {
                Some(&c) => c,
                None => {
                    let Some(episode) = fetched.remove(id) else { continue };
                    candidates.push(candidate(&episode, None));
                    candidates.len() - 1
                }
            };
            candidates[c].vector = Some(VectorMatch { rank: Some(i + 1), similarity: *similarity });
            candidates[c].best_seq = Some(*seq);
        }
    }
    Ok(EpisodeCandidates { searched_words, candidates })
}

/// What ranking reads of a candidate episode, before its similarity is known.
fn candidate(episode: &Episode, lexical: Option<LexicalMatch>) -> EpisodeFeatures {
    EpisodeFeatures {
        episode: KeptEpisode::from(episode),
        story: story_fingerprint(&episode.title, &episode.summary),
        lexical,
        vector: None,
        best_seq: None,
    }
}

/// The best `limit` episodes for `query` (a tsquery source), best first, with their scores.
pub(super) fn lexical(
    tx: &mut Tx<'_>,
    tenant: &str,
    scope: &ScopeFilter,
    query: &str,
    limit: usize,
) -> Result<Vec<(Episode, f64)>, Failure> {
    let rows = bm25::search(tx, Kind::Episode, tenant, scope, query, &[], "d.episode", limit)?;
    Ok(rows.iter().map(|r| (r.get::<_, Json<Episode>>(0).0, r.get(1))).collect())
}

/// The best (similarity, message) of each of the episodes `ids`.
fn best_of(
    tx: &mut Tx<'_>,
    tenant: &str,
    query: &[f32],
    ids: &[&str],
) -> Result<HashMap<String, (f64, u64)>, Failure> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let dim = query.len();
    let q = vector_text(query);
    let rows = tx.query(
        &format!(
            "SELECT DISTINCT ON (episode) episode, seq, \
             1 - (embedding::vector({dim}) <=> CAST($2::text AS vector({dim}))) AS sim \
             FROM search_vectors WHERE tenant = $1 AND episode = ANY($3) \
             AND vector_dims(embedding) = {dim} ORDER BY episode, sim DESC, seq"
        ),
        &[&tenant, &q, &ids],
    )?;
    Ok(rows
        .iter()
        .map(|r| (r.get::<_, String>(0), (r.get::<_, f64>(2), r.get::<_, i64>(1) as u64)))
        .collect())
}

/// The episodes `ids` as indexed, by id.
pub(super) fn episodes(
    tx: &mut Tx<'_>,
    tenant: &str,
    ids: &[&str],
) -> Result<HashMap<String, Episode>, Failure> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let rows = tx.query(
        "SELECT id, episode FROM search_episodes WHERE tenant = $1 AND id = ANY($2)",
        &[&tenant, &ids],
    )?;
    Ok(rows.iter().map(|r| (r.get(0), r.get::<_, Json<Episode>>(1).0)).collect())
}
