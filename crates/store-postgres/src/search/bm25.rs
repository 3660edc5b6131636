//! BM25 in SQL over `tsvector`s, with statistics of the tenant's own rows only.
//!
//! `ts_rank_cd` weighs every word alike (it reads no corpus statistics): a common word counts
//! as much as a rare one, and on LoCoMo that cost 0.04 of turn R@10 against the embedded
//! index's BM25. So the score is BM25 (k1 1.2, b 0.75, tantivy's idf), computed from the
//! positions a `tsvector` keeps: a term's frequency is its positions (weighted by label in an
//! episode: its lines 1, its title and summary 0.3 each, as the embedded index boosts those
//! fields), a row's length is its weighted positions. The statistics are kept per tenant as
//! episodes come and go (`search_terms`: how many rows hold each word; `search_stats`: rows
//! and their total length), so a query reads them instead of counting, and no tenant's words
//! move another's scores.

use epimem_search::{HeldWords, LineWords, TailLine, TailScores, TailWords, score_tail};

use super::{ScopeFilter, text::CONFIG};
use crate::connection::{Failure, Tx};

/// What a named author adds to a line's score: about what a rare word scores, so the named
/// person's own lines come first among lines that match equally well otherwise (the embedded
/// index adds the same to its BM25).
pub(super) const NAME_SCORE: f64 = 8.0;

/// BM25's parameters, as the embedded index scores.
use epimem_search::{BM25_B as B, BM25_K1 as K1};

/// The rows searched: lines, or whole episodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Line,
    Episode,
}

impl Kind {
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Line => "line",
            Self::Episode => "episode",
        }
    }

    fn table(self) -> &'static str {
        match self {
            Self::Line => "search_lines",
            Self::Episode => "search_episodes",
        }
    }

    /// A term's frequency in a row, from its `unnest(words)` entry `u`: lines are all label D.
    fn frequency(self) -> &'static str {
        match self {
            Self::Line => "cardinality(u.positions)",
            Self::Episode => WEIGHTED,
        }
    }
}

/// A `unnest(words)` entry's weighted positions: those labelled D (lines) count 1, the others
/// (title, summary) 0.3. An expression, not a subquery: it runs for every term of every row
/// that matches.
const WEIGHTED: &str = "(cardinality(u.weights) - 0.7 * cardinality(array_remove(u.weights, 'D')))";

/// The length of tsvector `words` for the `tokens` column.
pub(super) fn tokens_of(words: &str) -> String {
    format!("(SELECT coalesce(sum({WEIGHTED}), 0)::float8 FROM unnest({words}) u)")
}

/// Adds the statistics of the rows of `kind` that `rows` (a query of `tokens, words` rows)
/// returns, or takes them away (`sign` -1, before they are deleted).
pub(super) fn count(
    tx: &mut Tx<'_>,
    tenant: &str,
    kind: Kind,
    rows: &str,
    params: &[&(dyn postgres::types::ToSql + Sync)],
    sign: i64,
) -> Result<(), Failure> {
    let kind_name = kind.name();
    let first = params.len() + 1;
    let mut all: Vec<&(dyn postgres::types::ToSql + Sync)> = params.to_vec();
    all.push(&tenant);
    all.push(&kind_name);
    all.push(&sign);
    let (t, k, s) = (first, first + 1, first + 2);
    tx.execute(
        &format!(
            "INSERT INTO search_terms (tenant, kind, lexeme, rows) \
             SELECT ${t}, ${k}, u.lexeme, ${s} * count(*) FROM ({rows}) r, unnest(r.words) u \
             GROUP BY u.lexeme \
             ON CONFLICT (tenant, kind, lexeme) DO UPDATE SET rows = search_terms.rows + EXCLUDED.rows"
        ),
        &all,
    )?;
    tx.execute(
        &format!(
            "INSERT INTO search_stats (tenant, kind, rows, tokens) \
             SELECT ${t}, ${k}, ${s} * count(*), ${s} * coalesce(sum(r.tokens), 0) FROM ({rows}) r \
             ON CONFLICT (tenant, kind) DO UPDATE SET rows = search_stats.rows + EXCLUDED.rows, \
             tokens = search_stats.tokens + EXCLUDED.tokens"
        ),
        &all,
    )?;
    if sign < 0 {
        // A word no row holds any more is forgotten with them.
        tx.execute(
            "DELETE FROM search_terms WHERE tenant = $1 AND kind = $2 AND rows <= 0",
            &[&tenant, &kind_name],
        )?;
    }
    Ok(())
}

/// The query's terms (stemmed as the rows were) with their idf in the tenant's rows of
/// `kind`, and the rows' mean length; no terms when no row holds any of them.
fn weights(
    tx: &mut Tx<'_>,
    tenant: &str,
    kind: Kind,
    query: &str,
) -> Result<(Vec<String>, Vec<f64>, f64), Failure> {
    let kind_name = kind.name();
    let stats = tx.query_opt(
        "SELECT rows, tokens FROM search_stats WHERE tenant = $1 AND kind = $2",
        &[&tenant, &kind_name],
    )?;
    let (rows, tokens) = stats.map_or((0, 0.0), |r| (r.get::<_, i64>(0), r.get::<_, f64>(1)));
    if rows <= 0 {
        return Ok((Vec::new(), Vec::new(), 1.0));
    }
    let found = tx.query(
        &format!(
            "SELECT t.lexeme, t.rows FROM search_terms t \
             WHERE t.tenant = $1 AND t.kind = $2 AND t.lexeme IN \
             (SELECT unnest(tsvector_to_array(to_tsvector('{CONFIG}', replace($3, '|', ' '))))) \
             ORDER BY t.lexeme"
        ),
        &[&tenant, &kind_name, &query],
    )?;
    let n = rows as f64;
    let (lexemes, idfs) = found
        .iter()
        .map(|r| {
            let df = r.get::<_, i64>(1) as f64;
            (r.get::<_, String>(0), (1.0 + (n - df + 0.5) / (df + 0.5)).ln())
        })
        .unzip();
    Ok((lexemes, idfs, (tokens / n).max(1e-9)))
}

/// What a row of `kind` holding every word of `query` (a tsquery source) would score at most:
/// each word's idf times `k1 + 1` (a word no row holds counted as held by one), and
/// [`NAME_SCORE`] for each of `named`. The scale a row's score is read against.
pub(super) fn ceiling(
    tx: &mut Tx<'_>,
    kind: Kind,
    tenant: &str,
    query: &str,
    named: usize,
) -> Result<f64, Failure> {
    let kind_name = kind.name();
    let rows = tx
        .query_opt(
            "SELECT rows FROM search_stats WHERE tenant = $1 AND kind = $2",
            &[&tenant, &kind_name],
        )?
        .map_or(0, |r| r.get::<_, i64>(0)) as f64;
    let held = tx.query(
        &format!(
            "SELECT coalesce(t.rows, 0) FROM              unnest(tsvector_to_array(to_tsvector('{CONFIG}', replace($3, '|', ' ')))) l(lexeme)              LEFT JOIN search_terms t ON t.tenant = $1 AND t.kind = $2 AND t.lexeme = l.lexeme"
        ),
        &[&tenant, &kind_name, &query],
    )?;
    let words: f64 = held
        .iter()
        .map(|r| {
            let df = r.get::<_, i64>(0).max(1) as f64;
            (1.0 + (rows - df + 0.5) / (df + 0.5)).ln() * (K1 + 1.0)
        })
        .sum();
    Ok(words + NAME_SCORE * named as f64)
}

/// The open tail's lines (an author and a text each) scored for `query` (a tsquery source
/// and the authors it names) as if line rows of the tenant, and the ceiling over `weighed`
/// (its tsquery source and how many authors it names): `epimem_search::score_tail` over the
/// tenant's statistics and stemming. How the tail, in no table, is scored.
pub(super) fn score_outside(
    tx: &mut Tx<'_>,
    tenant: &str,
    query: Option<(&str, &[String])>,
    weighed: Option<(&str, usize)>,
    tail: &[TailLine<'_>],
    kept: &TailWords,
) -> Result<TailScores, Failure> {
    let kind_name = Kind::Line.name();
    let stats = tx.query_opt(
        "SELECT rows, tokens FROM search_stats WHERE tenant = $1 AND kind = $2",
        &[&tenant, &kind_name],
    )?;
    let (rows, tokens) = stats.map_or((0, 0.0), |r| (r.get::<_, i64>(0), r.get::<_, f64>(1)));
    let mut index =
        HeldWords { lines: rows.max(0) as u64, tokens: tokens as u64, ..Default::default() };
    let lexemes = |tx: &mut Tx<'_>, source: &str| -> Result<Vec<String>, Failure> {
        let found = tx.query(
            &format!(
                "SELECT DISTINCT l FROM \
                 unnest(tsvector_to_array(to_tsvector('{CONFIG}', replace($1, '|', ' ')))) l"
            ),
            &[&source],
        )?;
        Ok(found.iter().map(|r| r.get(0)).collect())
    };
    let query_words = match query {
        Some((source, _)) => lexemes(tx, source)?,
        None => Vec::new(),
    };
    let ceiling_words = match weighed {
        Some((source, _)) => lexemes(tx, source)?,
        None => Vec::new(),
    };
    let asked: Vec<&String> = query_words.iter().chain(&ceiling_words).collect();
    let held = tx.query(
        "SELECT lexeme, rows FROM search_terms \
         WHERE tenant = $1 AND kind = $2 AND lexeme = ANY($3)",
        &[&tenant, &kind_name, &asked],
    )?;
    for row in &held {
        index.held.insert(row.get(0), row.get::<_, i64>(1).max(0) as u64);
    }
    let lines = kept.of(tail, |lines| analyze(tx, lines))?;
    let lines: Vec<&LineWords> = lines.iter().map(AsRef::as_ref).collect();
    let named_authors = query.map_or(&[][..], |(_, named)| named);
    let named: Vec<bool> =
        tail.iter().map(|line| named_authors.iter().any(|n| n == line.author)).collect();
    let ceiling_names = weighed.map_or(0, |(_, named)| named);
    Ok(score_tail(&index, &query_words, &ceiling_words, ceiling_names, &lines, &named, NAME_SCORE))
}

/// The words of each of `lines` as the line rows' are made.
fn analyze(tx: &mut Tx<'_>, lines: &[&TailLine<'_>]) -> Result<Vec<LineWords>, Failure> {
    let sources: Vec<String> =
        lines.iter().map(|l| super::text::line_text(l.author, l.content)).collect();
    let found = tx.query(
        &format!(
            "SELECT t.i, u.lexeme, cardinality(u.positions)::bigint \
             FROM unnest($1::text[]) WITH ORDINALITY t(line, i), \
             LATERAL unnest(to_tsvector('{CONFIG}', t.line)) u"
        ),
        &[&sources],
    )?;
    let mut words = vec![LineWords::default(); lines.len()];
    for row in &found {
        let at = usize::try_from(row.get::<_, i64>(0) - 1).unwrap_or(usize::MAX);
        if let Some(line) = words.get_mut(at) {
            let tf = row.get::<_, i64>(2).max(0) as u64;
            line.length += tf;
            line.counts.insert(row.get(1), tf);
        }
    }
    Ok(words)
}

/// How many of `words` (lower case) no row of `kind` holds, stemmed as the rows were.
pub(super) fn never_held(
    tx: &mut Tx<'_>,
    kind: Kind,
    tenant: &str,
    words: &[String],
) -> Result<usize, Failure> {
    if words.is_empty() {
        return Ok(0);
    }
    let kind_name = kind.name();
    let row = tx.query_one(
        &format!(
            "SELECT count(*) FROM unnest($3::text[]) w(word) WHERE NOT EXISTS ( \
               SELECT 1 FROM unnest(tsvector_to_array(to_tsvector('{CONFIG}', w.word))) l(lexeme) \
               JOIN search_terms t ON t.tenant = $1 AND t.kind = $2 AND t.lexeme = l.lexeme)"
        ),
        &[&tenant, &kind_name, &words],
    )?;
    Ok(row.get::<_, i64>(0) as usize)
}

/// Which of `words` some row of `kind` in `tenant` holds (as its words are analyzed).
pub(super) fn held(
    tx: &mut Tx<'_>,
    kind: Kind,
    tenant: &str,
    words: &[String],
) -> Result<std::collections::HashSet<String>, Failure> {
    if words.is_empty() {
        return Ok(std::collections::HashSet::new());
    }
    let kind_name = kind.name();
    let rows = tx.query(
        &format!(
            "SELECT w.word FROM unnest($3::text[]) w(word) WHERE EXISTS ( \
               SELECT 1 FROM unnest(tsvector_to_array(to_tsvector('{CONFIG}', w.word))) l(lexeme) \
               JOIN search_terms t ON t.tenant = $1 AND t.kind = $2 AND t.lexeme = l.lexeme)"
        ),
        &[&tenant, &kind_name, &words],
    )?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// The best `limit` rows of `kind` in tenant `tenant` and `scope` for `query` (a tsquery
/// source), best first: `columns` (of alias `d`) and the score last. For lines, `named`
/// authors' lines score [`NAME_SCORE`] more and are found without a word.
#[allow(clippy::too_many_arguments)]
pub(super) fn search(
    tx: &mut Tx<'_>,
    kind: Kind,
    tenant: &str,
    scope: &ScopeFilter,
    query: &str,
    named: &[String],
    columns: &str,
    limit: usize,
) -> Result<Vec<postgres::Row>, Failure> {
    let (lexemes, idfs, mean) = weights(tx, tenant, kind, query)?;
    if lexemes.is_empty() && named.is_empty() {
        return Ok(Vec::new());
    }
    let (author_match, author_score, order) = match kind {
        Kind::Line => (
            " OR d.author = ANY($12::text[])",
            format!(" + CASE WHEN d.author = ANY($12::text[]) THEN {NAME_SCORE} ELSE 0 END"),
            "d.added, d.seq",
        ),
        Kind::Episode => ("", String::new(), "d.added"),
    };
    let (table, tf) = (kind.table(), kind.frequency());
    let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![&tenant, &query];
    params.extend(scope.params());
    let limit = limit.max(1) as i64;
    params.push(&limit);
    params.push(&lexemes);
    params.push(&idfs);
    params.push(&mean);
    if kind == Kind::Line {
        params.push(&named);
    }
    let sql = format!(
        "SELECT {columns}, (coalesce((SELECT sum(($10::float8[])[array_position($9::text[], u.lexeme)] * f.tf \
           * {k1p1} / (f.tf + {K1} * ({one_b} + {B} * d.tokens / $11::float8))) \
           FROM unnest(d.words) u, LATERAL (SELECT {tf} AS tf) f \
           WHERE u.lexeme = ANY($9::text[])), 0){author_score})::float8 AS score \
         FROM {table} d, to_tsquery('{CONFIG}', $2) q \
         WHERE d.tenant = $1 AND (d.words @@ q{author_match}) AND {scope} \
         ORDER BY score DESC, {order} LIMIT $8",
        k1p1 = K1 + 1.0,
        one_b = 1.0 - B,
        scope = ScopeFilter::sql(3, "d"),
    );
    tx.query(&sql, &params)
}
