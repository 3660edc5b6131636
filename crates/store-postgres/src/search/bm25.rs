//! BM25 in SQL over `tsvector`s, with statistics of the tenant's own rows only.
//!
//! `ts_rank_cd` weighs every word alike (it reads no corpus statistics): a common word counts
//! as much as a rare one, and on LoCoMo that cost 0.04 of turn R@10 against the embedded
//! index's BM25. So the score is BM25 (k1 1.2, b 0.75, tantivy's idf), computed from the
//! positions a `tsvector` keeps: a term's frequency is its positions (weighted by label: the
//! lines 1, an episode's title and summary 0.3 each, as the embedded index boosts those
//! fields), a row's length is its weighted positions, and document frequencies, the row count
//! and the mean length are counted over the tenant's rows when asked, so no tenant's words
//! move another's scores. Counting costs a GIN lookup per query term; at a million rows per
//! tenant a kept table of frequencies would be the next step.

use super::{ScopeFilter, text::CONFIG};

/// What a named author adds to a line's score: about what a rare word scores, so the named
/// person's own lines come first among lines that match equally well otherwise (the embedded
/// index adds the same to its BM25).
pub(super) const NAME_SCORE: f64 = 8.0;

/// A row's weighted positions: its length, or a term's frequency in it.
pub(super) const WEIGHTED: &str = "(SELECT count(*) FILTER (WHERE x = 'D') + 0.3 * count(*) FILTER (WHERE x <> 'D') \
     FROM unnest(u.weights) x)";

/// The length of tsvector `words` for the `tokens` column.
pub(super) fn tokens_of(words: &str) -> String {
    format!("(SELECT coalesce(sum({WEIGHTED}), 0)::float8 FROM unnest({words}) u)")
}

/// A query of `table` (alias `d`) returning `columns` and `score`, best first, for the
/// tsquery source `$2` in tenant `$1`, scope `$3..$7`, at most `$8` rows; with `by_author`,
/// `$9` names authors whose lines score [`NAME_SCORE`] more and are found without a word.
pub(super) fn query(table: &str, columns: &str, by_author: bool, order: &str) -> String {
    let (author_match, author_score) = if by_author {
        (
            " OR d.author = ANY($9)",
            format!(" + CASE WHEN d.author = ANY($9) THEN {NAME_SCORE} ELSE 0 END"),
        )
    } else {
        ("", String::new())
    };
    format!(
        "WITH query AS (SELECT to_tsquery('{CONFIG}', $2) AS q), \
         terms AS (SELECT DISTINCT unnest(tsvector_to_array(to_tsvector('{CONFIG}', \
           replace($2, '|', ' ')))) AS lexeme), \
         stats AS (SELECT count(*)::float8 AS n, coalesce(avg(tokens), 1)::float8 AS mean \
           FROM {table} WHERE tenant = $1), \
         idf AS (SELECT t.lexeme, ln(1 + (s.n - f.df + 0.5) / (f.df + 0.5)) AS idf \
           FROM terms t CROSS JOIN stats s CROSS JOIN LATERAL \
           (SELECT count(*)::float8 AS df FROM {table} x WHERE x.tenant = $1 \
            AND x.words @@ to_tsquery('simple', quote_literal(t.lexeme))) f) \
         SELECT {columns}, (coalesce((SELECT sum(i.idf * w.tf * 2.2 \
             / (w.tf + 1.2 * (0.25 + 0.75 * d.tokens / greatest(s.mean, 1e-9)))) \
           FROM (SELECT u.lexeme, {WEIGHTED} AS tf FROM unnest(d.words) u) w \
           JOIN idf i ON i.lexeme = w.lexeme), 0){author_score})::float8 AS score \
         FROM {table} d CROSS JOIN query CROSS JOIN stats s \
         WHERE d.tenant = $1 AND (d.words @@ query.q{author_match}) AND {} \
         ORDER BY score DESC, {order} LIMIT $8",
        ScopeFilter::sql(3, "d")
    )
}
