//! Turn-level recall: the lines whose words match and the nearest lines by vector, then what
//! ranking needs around them, read in a few queries: the lines within reach of each candidate
//! (its neighbours, and what is known of each line), the episodes just before and after each
//! candidate's, and the episodes themselves.

use std::collections::HashMap;

use epimem_core::{
    Episode,
    recall::{
        Borrow, KeptEpisode, LexicalMatch, LineSignals, TurnFeatures, TurnKey, TurnTable,
        VectorMatch,
    },
    telling::keyword_list,
};
use epimem_search::{Seen, TurnQuery};

use super::{
    ScopeFilter,
    bm25::{self, Kind},
    episodes,
    text::{self, Names},
    vectors,
};
use crate::connection::{Failure, Tx};

/// A turn table as read, with what soft word matching needs after the transaction: the
/// content words of each candidate turn (in the order of `table.turns`) and the names.
pub(super) struct Gathered {
    pub(super) table: TurnTable,
    pub(super) turn_words: Vec<Vec<String>>,
    pub(super) names: Names,
}

/// A line read around a candidate.
struct Line {
    episode: String,
    start: i64,
    end: i64,
    author: String,
    asks: bool,
    by_person: bool,
    instructs: bool,
    in_work: bool,
    content: String,
}

pub(super) fn candidates(
    tx: &mut Tx<'_>,
    q: &TurnQuery<'_>,
    borrow: Borrow,
    tail_words: &epimem_search::TailWords,
) -> Result<Gathered, Failure> {
    let n = q.candidates;
    let tenant = q.scope.tenant.as_str();
    let scope = ScopeFilter::new(q.scope);
    let names = Names::of(tx, tenant)?;
    let query = text::tsquery(q.text, &names);
    let named: Vec<String> = query.as_ref().map(|(_, named)| named.clone()).unwrap_or_default();
    let unheard: Vec<String> = epimem_search::proper_nouns_beyond(q.weighed, q.tail)
        .into_iter()
        .filter(|word| !names.names(word))
        .collect();
    let unknown_names = bm25::never_held(tx, Kind::Line, tenant, &unheard)?;
    let weighed = text::tsquery(q.weighed, &names);
    // With a tail, its scoring sets the ceiling (on the same scale).
    let lexical_ceiling = match &weighed {
        Some((weighed, named)) if q.tail.is_empty() => {
            bm25::ceiling(tx, Kind::Line, tenant, weighed, named.len())?
        }
        _ => 0.0,
    };

    let mut table: Seen<String> = Seen::default();
    let mut found = Turns::default();
    let mut fetched: HashMap<String, Episode> = HashMap::new();
    if let Some((tsquery, named)) = &query {
        for (i, hit) in lexical(tx, tenant, &scope, tsquery, named, n)?.into_iter().enumerate() {
            let t = found.index((hit.conversation, hit.seq), &hit.episode, &mut table);
            let (score, length) = (hit.score, hit.length);
            found.turns[t].lexical = Some(LexicalMatch { rank: i + 1, score, length });
        }
    }
    let near = match q.vector {
        // Twice the candidates: the episodes of the context are the best of these too.
        Some(v) => vectors::nearest(tx, tenant, &scope, v, n * 2, borrow)?,
        None => Vec::new(),
    };
    for (i, hit) in near.iter().take(n).enumerate() {
        let t = found.index((hit.conversation.clone(), hit.seq), &hit.episode, &mut table);
        found.turns[t].vector = Some(VectorMatch { rank: Some(i + 1), similarity: hit.borrowed });
    }
    let mut context_lexical = Vec::new();
    let mut context_vector = Vec::new();
    if q.episode_context {
        if let Some((tsquery, _)) = &query {
            for (episode, score) in episodes::lexical(tx, tenant, &scope, tsquery, n)? {
                context_lexical.push((table.index(&episode.id.0), score));
                fetched.insert(episode.id.0.clone(), episode);
            }
        }
        // Episodes by their best message's own similarity.
        let mut best: Vec<(&str, f64)> = Vec::new();
        for hit in &near {
            match best.iter_mut().find(|(e, _)| *e == hit.episode) {
                Some(b) => b.1 = b.1.max(hit.own),
                None => best.push((&hit.episode, hit.own)),
            }
        }
        best.sort_by(|a, b| b.1.total_cmp(&a.1));
        context_vector = best.into_iter().take(n).map(|(e, s)| (table.index(e), s)).collect();
    }

    let Turns { keys, turns } = found;
    let keys = keys.items();
    let lines = around(tx, tenant, keys, q.reach)?;
    let adjacent_of = adjacent(tx, tenant, &turns, &table)?;
    let mut adjacent: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut neighbors: HashMap<(TurnKey, i64), TurnKey> = HashMap::new();
    let mut signals: HashMap<TurnKey, LineSignals> = HashMap::new();
    let mut turn_words = Vec::with_capacity(turns.len());
    let signal = |line: &Line| LineSignals {
        by_named_author: named.contains(&line.author),
        asks: line.asks,
        by_machine: !line.by_person,
        in_work: line.in_work,
        instructs: line.instructs,
    };
    for ((conversation, seq), t) in keys.iter().zip(&turns) {
        let own = lines.get(&(conversation.clone(), *seq));
        turn_words.push(own.map(|l| keyword_list(&l.content)).unwrap_or_default());
        if let Some(line) = own {
            signals.entry(t.turn).or_insert_with(|| signal(line));
        }
        adjacent.entry(t.turn.episode).or_insert_with(|| {
            let near = adjacent_of.get(&t.turn.episode).cloned().unwrap_or_default();
            near.into_iter()
                .filter(|(_, gap)| *gap <= q.max_gap_ms)
                .map(|(id, _)| table.index(&id))
                .collect()
        });
        let Some(own) = own else { continue };
        for d in 1..=q.reach as i64 {
            for offset in [-d, d] {
                let Some(s) = seq.checked_add_signed(offset).filter(|&s| s > 0) else {
                    continue;
                };
                let Some(line) = lines.get(&(conversation.clone(), s)) else { continue };
                let gap =
                    if line.start >= own.end { line.start - own.end } else { own.start - line.end };
                let near = line.episode == own.episode || gap <= q.max_gap_ms;
                let in_time = q.scope.since.is_none_or(|since| line.end >= since.0)
                    && q.scope.until.is_none_or(|until| line.start <= until.0);
                if near && in_time {
                    let turn = TurnKey { episode: table.index(&line.episode), seq: s };
                    neighbors.insert((t.turn, offset), turn);
                    signals.entry(turn).or_insert_with(|| signal(line));
                }
            }
        }
    }
    let missing: Vec<&str> =
        table.items().iter().filter(|id| !fetched.contains_key(*id)).map(String::as_str).collect();
    fetched.extend(episodes::episodes(tx, tenant, &missing)?);
    let mut episodes = Vec::with_capacity(table.len());
    for id in table.items() {
        let episode = fetched.remove(id).ok_or_else(|| {
            Failure::Store(epimem_store::StoreError::Internal(format!(
                "search_episodes has no row for episode {id} its lines name"
            )))
        })?;
        episodes.push(KeptEpisode::from(&episode));
    }
    let adjacent =
        (0..episodes.len() as u32).map(|e| adjacent.remove(&e).unwrap_or_default()).collect();
    let mut table = TurnTable {
        searched_words: query.is_some(),
        episodes,
        adjacent,
        context_lexical,
        context_vector,
        turns,
        neighbors,
        lines: signals,
        lexical_ceiling,
        named_authors: named.len(),
        unknown_names,
    };
    if !q.tail.is_empty() {
        let asked = query.as_ref().map(|(tsquery, named)| (tsquery.as_str(), named.as_slice()));
        let weighed = weighed.as_ref().map(|(tsquery, named)| (tsquery.as_str(), named.len()));
        let scores = bm25::score_outside(tx, tenant, asked, weighed, q.tail, tail_words)?;
        table.lexical_ceiling = scores.ceiling;
        let bounds = (q.candidates, q.reach);
        epimem_search::add_tail(&mut table, q.tail, &scores, q.vector, bounds);
    }
    Ok(Gathered { table, turn_words, names })
}

/// The best `limit` lines for `query` (a tsquery source), best first: (conversation, seq,
/// episode, score). A line by an author the query names scores [`bm25::NAME_SCORE`] more, and is a
/// candidate even without a matching word.
/// A line BM25 found: where it is, its length in words and its score.
struct Found {
    conversation: String,
    seq: u64,
    episode: String,
    length: u32,
    score: f64,
}

fn lexical(
    tx: &mut Tx<'_>,
    tenant: &str,
    scope: &ScopeFilter,
    query: &str,
    named: &[String],
    limit: usize,
) -> Result<Vec<Found>, Failure> {
    let columns = "d.conversation, d.seq, d.episode, d.tokens";
    let rows = bm25::search(tx, Kind::Line, tenant, scope, query, named, columns, limit)?;
    Ok(rows
        .iter()
        .map(|r| Found {
            conversation: r.get(0),
            seq: r.get::<_, i64>(1) as u64,
            episode: r.get(2),
            length: r.get::<_, f64>(3).max(0.0) as u32,
            score: r.get(4),
        })
        .collect())
}

/// The lines within `reach` of each of `keys` (themselves included), by (conversation, seq).
fn around(
    tx: &mut Tx<'_>,
    tenant: &str,
    keys: &[(String, u64)],
    reach: usize,
) -> Result<HashMap<(String, u64), Line>, Failure> {
    if keys.is_empty() {
        return Ok(HashMap::new());
    }
    let conversations: Vec<&str> = keys.iter().map(|(c, _)| c.as_str()).collect();
    let seqs: Vec<i64> = keys.iter().map(|(_, s)| *s as i64).collect();
    let rows = tx.query(
        "SELECT DISTINCT l.conversation, l.seq, l.episode, l.start_ms, l.end_ms, l.author, \
         l.asks, l.by_person, l.content, l.instructs, l.in_work FROM search_lines l \
         JOIN unnest($2::text[], $3::bigint[]) AS c(conversation, seq) \
         ON l.conversation = c.conversation AND l.seq BETWEEN c.seq - $4 AND c.seq + $4 \
         WHERE l.tenant = $1",
        &[&tenant, &conversations, &seqs, &(reach as i64)],
    )?;
    Ok(rows
        .iter()
        .map(|r| {
            let line = Line {
                episode: r.get(2),
                start: r.get(3),
                end: r.get(4),
                author: r.get(5),
                asks: r.get(6),
                by_person: r.get(7),
                content: r.get(8),
                instructs: r.get(9),
                in_work: r.get(10),
            };
            ((r.get(0), r.get::<_, i64>(1) as u64), line)
        })
        .collect())
}

/// For each candidate's episode (by its index in `table`): the episodes holding the message
/// just before its first and just after its last, with the silence between them.
fn adjacent(
    tx: &mut Tx<'_>,
    tenant: &str,
    turns: &[TurnFeatures],
    table: &Seen<String>,
) -> Result<HashMap<u32, Vec<(String, i64)>>, Failure> {
    let mut ids: Vec<&str> =
        turns.iter().map(|t| table.items()[t.turn.episode as usize].as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let rows = tx.query(
        "SELECT e.id, n.id, CASE WHEN n.start_ms >= e.end_ms THEN n.start_ms - e.end_ms \
         ELSE e.start_ms - n.end_ms END \
         FROM search_episodes e JOIN search_episodes n \
         ON n.tenant = e.tenant AND n.conversation = e.conversation AND n.id <> e.id \
         AND ((n.first_seq <= e.first_seq - 1 AND n.last_seq >= e.first_seq - 1) \
           OR (n.first_seq <= e.last_seq + 1 AND n.last_seq >= e.last_seq + 1)) \
         WHERE e.tenant = $1 AND e.id = ANY($2) ORDER BY e.id, n.first_seq",
        &[&tenant, &ids],
    )?;
    let mut out: HashMap<u32, Vec<(String, i64)>> = HashMap::new();
    for r in rows {
        let id: String = r.get(0);
        if let Some(e) = table.get(id.as_str()) {
            out.entry(e).or_default().push((r.get(1), r.get(2)));
        }
    }
    Ok(out)
}

/// The candidate turns, each once, in order of first sight.
#[derive(Default)]
struct Turns {
    keys: Seen<(String, u64)>,
    turns: Vec<TurnFeatures>,
}

impl Turns {
    fn index(&mut self, key: (String, u64), episode: &str, episodes: &mut Seen<String>) -> usize {
        let t = self.keys.index(&key) as usize;
        if t == self.turns.len() {
            let turn = TurnKey { episode: episodes.index(episode), seq: key.1 };
            self.turns.push(TurnFeatures { turn, lexical: None, vector: None, words: None });
        }
        t
    }
}
