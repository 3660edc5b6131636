//! Lucene's common-terms rule for BM25 over a large index: a word that a good share of all
//! documents hold says little about which of them is meant, so it only adds to the scores of
//! documents that the query's rarer words found, instead of making every document that holds it
//! a candidate. Scoring the union of such words in full is most of a search's time over a
//! million episodes; the rarer words' union is a small part of it. A query of common words only
//! is found by its rarest.
//!
//! The documents the rarer words find are asked for several times over before the common words
//! score them, so a document that one rare word and several common ones describe best is among
//! them; each is then scored exactly as the union of every word would score it.

use std::collections::HashMap;

use tantivy::{
    DocAddress, DocSet, Searcher, TERMINATED,
    query::{EnableScoring, Query},
};

/// Documents an index holds from which words are told apart as common or not: below it, every
/// word is searched in full (a small index is fast either way).
const FROM_DOCUMENTS: u64 = 10_000;
/// Share of the documents above which a word is common.
const COMMON_SHARE: f64 = 0.01;
/// Candidates the rarer words find for each document asked for.
const CANDIDATES_PER_HIT: usize = 10;

/// Clauses of a query.
pub(crate) type Queries = Vec<Box<dyn Query>>;

/// A word searched in one field, with how many documents hold the word (in the field that
/// most do), or a name, which always finds.
pub(crate) struct Clause {
    /// `None` for a name.
    pub(crate) word_df: Option<u64>,
    /// Whether it searches the lines (a title and a summary are drawn from them, so the words
    /// found there are found in the lines too).
    pub(crate) lines: bool,
    pub(crate) query: Box<dyn Query>,
}

/// The clauses that find candidates, and those that only add to the scores of what they found
/// (empty when every clause finds). In an index of `documents`, a word that more than
/// `COMMON_SHARE` of them hold only adds, unless no word of the query is rarer: then the rarest
/// finds and the others add (a name finds too, but it ranks nothing by itself). A word finds
/// by the lines that hold it; its title and summary add.
pub(crate) fn split(clauses: Vec<Clause>, documents: u64) -> (Queries, Queries) {
    if documents < FROM_DOCUMENTS {
        return every_word_finds(clauses);
    }
    let rarest = clauses.iter().filter_map(|c| c.word_df).min();
    let finds = |c: &Clause| {
        c.lines
            && c.word_df
                .is_none_or(|df| df as f64 <= COMMON_SHARE * documents as f64 || Some(df) == rarest)
    };
    let (finders, adders): (Vec<_>, Vec<_>) = clauses.into_iter().partition(finds);
    (finders.into_iter().map(|c| c.query).collect(), adders.into_iter().map(|c| c.query).collect())
}

/// Every clause finds; none only adds.
pub(crate) fn every_word_finds(clauses: Vec<Clause>) -> (Queries, Queries) {
    (clauses.into_iter().map(|c| c.query).collect(), Vec::new())
}

/// How many documents the rarer words find for a search of `limit`.
pub(crate) fn candidates(limit: usize) -> usize {
    limit.max(1) * CANDIDATES_PER_HIT
}

/// `found` (scored by the rarer words) with what each of `common` adds to each, the best
/// `limit` first.
pub(crate) fn scored_with(
    searcher: &Searcher,
    found: Vec<(f32, DocAddress)>,
    common: &[Box<dyn Query>],
    limit: usize,
) -> tantivy::Result<Vec<(f32, DocAddress)>> {
    let mut by_segment: HashMap<u32, Vec<(u32, f32)>> = HashMap::new();
    for (score, address) in found {
        by_segment.entry(address.segment_ord).or_default().push((address.doc_id, score));
    }
    let weights = common
        .iter()
        .map(|q| q.weight(EnableScoring::enabled_from_searcher(searcher)))
        .collect::<tantivy::Result<Vec<_>>>()?;
    let mut scored = Vec::new();
    for (segment, mut docs) in by_segment {
        docs.sort_unstable_by_key(|&(doc, _)| doc);
        let reader = searcher.segment_reader(segment);
        for weight in &weights {
            // Postings are read forward only: the documents in order, each looked up once.
            let mut postings = weight.scorer(reader, 1.0)?;
            for (doc, score) in &mut docs {
                if postings.doc() < *doc {
                    postings.seek(*doc);
                }
                if postings.doc() == TERMINATED {
                    break;
                }
                if postings.doc() == *doc {
                    *score += postings.score();
                }
            }
        }
        scored.extend(docs.into_iter().map(|(doc, score)| (score, DocAddress::new(segment, doc))));
    }
    // Equal scores in document order, as tantivy's own top documents come.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(limit.max(1));
    Ok(scored)
}

#[cfg(test)]
mod tests {
    use epimem_core::Scope;

    use crate::{
        lexical::{Bm25, Doc, Documents},
        table::tests::episode,
    };

    /// An index of `n` documents that all hold "harbour"; every 100th also holds "walrus" (rare:
    /// 1 % of them) and every 7th "ferry" and "harbour" again (common), every 5th of the last
    /// thousand "lighthouse" (common at 12,000, barely). Ana wrote every other.
    fn index_of(n: usize) -> Bm25 {
        let bm25 = Bm25::open(None, Documents::Episodes).unwrap();
        let e = episode("t", "c", None, 0);
        let ana = ["ana".to_owned()];
        let documents = (0..n)
            .map(|slot| {
                let mut body = format!("harbour note {slot}");
                if slot % 100 == 0 {
                    body.push_str(" walrus");
                }
                if slot % 7 == 0 {
                    body.push_str(" ferry harbour");
                }
                if slot >= 11_000 && slot % 5 == 0 {
                    body.push_str(" lighthouse");
                }
                let (title, summary) = ("", "");
                let authors = if slot % 2 == 0 { &ana[..] } else { &[] };
                bm25.document(&Doc {
                    slot,
                    episode: &e,
                    seq: 1,
                    title,
                    summary,
                    body: &body,
                    authors,
                })
            })
            .collect();
        bm25.committer().commit(documents, 1, false).unwrap();
        bm25
    }

    fn search(bm25: &Bm25, query: &str, limit: usize) -> Vec<(usize, f32)> {
        let found = bm25.search(&Scope::tenant("t"), query, limit, true).unwrap().unwrap();
        found.into_iter().map(|hit| (hit.slot, hit.score)).collect()
    }

    /// Each hit scored as the sum of what each word, searched alone, gave it.
    #[track_caller]
    fn assert_scored_as_the_union(hits: &[(usize, f32)], alone: &[&[(usize, f32)]]) {
        for &(slot, score) in hits {
            let of =
                |found: &[(usize, f32)]| found.iter().find(|h| h.0 == slot).map_or(0.0, |h| h.1);
            let union: f32 = alone.iter().map(|found| of(found)).sum();
            assert!((score - union).abs() < 1e-4, "{slot}: {score} against {union}");
        }
    }

    #[test]
    fn a_common_word_only_adds_to_what_the_rare_ones_found_and_exactly_as_the_union_would() {
        let bm25 = index_of(12_000);
        let (rare, common) =
            (search(&bm25, "walrus ferry", 5_000), search(&bm25, "harbour", 20_000));
        assert_eq!(common.len(), 12_000, "alone, a common word is searched in full");
        let both = search(&bm25, "walrus harbour ferry", 50);
        assert_eq!(both.len(), 50);
        assert!(both.iter().all(|h| h.0 % 100 == 0), "a document without the rare word: {both:?}");
        assert_scored_as_the_union(&both, &[&rare, &common]);
        // Best first, and the documents that also hold both common words twice lead.
        assert!(both.windows(2).all(|w| w[0].1 >= w[1].1), "{both:?}");
        assert_eq!(both[0].0 % 700, 0, "{both:?}");
    }

    #[test]
    fn a_query_of_common_words_only_is_found_by_the_rarest() {
        let bm25 = index_of(12_000);
        let (ferry, harbour) = (search(&bm25, "ferry", 5_000), search(&bm25, "harbour", 20_000));
        let both = search(&bm25, "harbour ferry", 50);
        assert_eq!(both.len(), 50);
        assert!(both.iter().all(|h| h.0 % 7 == 0), "one without the rarer word: {both:?}");
        assert_scored_as_the_union(&both, &[&ferry, &harbour]);
    }

    #[test]
    fn a_name_with_common_words_only_is_found_by_the_rarest_word_too() {
        let bm25 = index_of(12_000);
        let hits = search(&bm25, "Ana harbour lighthouse", 50);
        assert_eq!(hits.len(), 50);
        // Not the first of Ana's many documents: those that hold "lighthouse", hers first.
        assert!(hits.iter().all(|h| h.0 >= 11_000 && h.0 % 5 == 0), "{hits:?}");
        assert!(hits[..20].iter().all(|h| h.0 % 2 == 0), "{hits:?}");
    }

    #[test]
    fn a_small_index_searches_every_word_in_full() {
        let bm25 = index_of(2_000);
        let hits = search(&bm25, "walrus harbour", 100);
        assert_eq!(hits.len(), 100, "documents with the common word alone fill the rest");
        assert!(hits.iter().any(|h| h.0 % 100 != 0));
    }
}
