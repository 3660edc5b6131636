//! BM25's own tests: merging, compacting, and an index read beside the process that holds it.

use std::collections::HashMap;

use super::*;
use crate::table::tests::episode;

/// Whether any segment's dictionary holds `word` (analyzed) in the body field.
fn holds(bm25: &Bm25, word: &str) -> bool {
    let searcher = bm25.shared.reader.searcher();
    let term = Term::from_field_text(bm25.fields.body, word);
    searcher.segment_readers().iter().any(|segment| {
        let index = segment.inverted_index(bm25.fields.body).unwrap();
        index.terms().get(term.serialized_value_bytes()).unwrap().is_some()
    })
}

fn document(bm25: &Bm25, slot: usize, body: &str) -> TantivyDocument {
    let e = episode("t", "c", None, slot as i64);
    bm25.document(&Doc { slot, episode: &e, seq: 1, title: "", summary: "", body, authors: &[] })
}

/// The documents each segment holds, by id.
fn segment_sizes(bm25: &Bm25) -> HashMap<SegmentId, u32> {
    let metas = bm25.shared.index.searchable_segment_metas().unwrap();
    metas.iter().map(|m| (m.id(), m.num_docs())).collect()
}

#[test]
fn small_commits_after_large_ones_do_not_merge_the_large_ones_again_and_again() {
    let bm25 = Bm25::open(None, Documents::Episodes).unwrap();
    let (mut slot, mut merged, mut generation) = (0, 0u64, 0);
    let mut commit = |bm25: &Bm25, count: usize| {
        let before = segment_sizes(bm25);
        let documents =
            (slot..slot + count).map(|s| document(bm25, s, &format!("common word{s}"))).collect();
        slot += count;
        generation += 1;
        bm25.committer().commit(documents, generation, false).unwrap();
        let after = segment_sizes(bm25);
        // Documents written by merges: those of every new segment, less the commit's own.
        let written: u64 = after
            .iter()
            .filter(|(id, _)| !before.contains_key(id))
            .map(|(_, &docs)| u64::from(docs))
            .sum();
        merged += written - count as u64;
        after.len()
    };
    for _ in 0..5 {
        commit(&bm25, 4_000);
    }
    for _ in 0..60 {
        let segments = commit(&bm25, 1);
        assert!(segments <= 2 * MERGE_FACTOR, "{segments} segments");
    }
    let total = slot as u64;
    // The first four large segments are merged once (16,000); the small ones among
    // themselves. Merging the smallest segments past a fixed count merged a large one
    // with every few small ones (52,122 here).
    assert!(merged < total + total / 4, "{merged} documents merged of {total}");
    let scope = Scope::tenant("t");
    assert_eq!(bm25.search(&scope, "common", 30_000, false).unwrap().unwrap().len(), slot);
    // The oldest document was merged and is still found by its own word.
    assert_eq!(bm25.search(&scope, "word0", 5, false).unwrap().unwrap()[0].slot, 0);
}

#[test]
fn compacting_drops_the_words_only_removed_documents_held() {
    let dir = tempfile::TempDir::new().unwrap();
    let bm25 = Bm25::open(Some(dir.path()), Documents::Episodes).unwrap();
    let documents = [(0, "the compost goes in first"), (1, "my xylophonist cousin")]
        .map(|(slot, body)| document(&bm25, slot, body));
    // One commit: both documents in one segment.
    bm25.committer().commit(documents.to_vec(), 1, false).unwrap();
    assert!(holds(&bm25, "xylophonist") && holds(&bm25, "compost"));
    bm25.remove(1);
    bm25.committer().commit(Vec::new(), 2, false).unwrap();
    assert!(holds(&bm25, "xylophonist"), "a delete alone leaves the word in the segment");
    bm25.committer().commit(Vec::new(), 2, true).unwrap();
    assert!(!holds(&bm25, "xylophonist"));
    assert!(holds(&bm25, "compost"));
    assert_eq!(bm25.shared.index.searchable_segment_ids().unwrap().len(), 1);
    assert_eq!(bm25.generation(), Some(2));
    let scope = Scope::tenant("t");
    assert_eq!(bm25.search(&scope, "xylophonist", 5, false).unwrap(), Some(vec![]));
}

/// A process beside the holder reads the commit it opened, whatever the holder commits
/// after, and its own commits never reach the holder's folder.
#[test]
fn an_index_held_elsewhere_is_read_as_opened_and_changed_in_memory_only() {
    let dir = tempfile::TempDir::new().unwrap();
    let holder = Bm25::open(Some(dir.path()), Documents::Episodes).unwrap();
    let first = vec![document(&holder, 0, "the compost goes in first")];
    holder.committer().commit(first, 1, false).unwrap();
    assert!(matches!(
        Bm25::open(Some(dir.path()), Documents::Episodes).map(|_| ()),
        Err(tantivy::TantivyError::LockFailure(..))
    ));
    let beside = Bm25::open_held(dir.path(), Documents::Episodes).unwrap();
    let more = vec![document(&holder, 1, "tomatoes ripen in August")];
    holder.committer().commit(more, 2, false).unwrap();
    assert_eq!((beside.generation(), beside.documents()), (Some(1), 1), "as opened");
    let mine = vec![document(&beside, 1, "my xylophonist cousin")];
    beside.committer().commit(mine, 2, false).unwrap();
    assert!(holds(&beside, "xylophonist") && !holds(&beside, "august"));
    assert!(!holds(&holder, "xylophonist") && holds(&holder, "august"));
    assert_eq!(holder.generation(), Some(2));
    drop((beside, holder));
    let reopened = Bm25::open(Some(dir.path()), Documents::Episodes).unwrap();
    assert_eq!(reopened.documents(), 2);
    assert!(!holds(&reopened, "xylophonist"));
}

#[test]
fn taken_back_to_a_generation_it_holds_only_the_episodes_it_knew_then() {
    let bm25 = Bm25::open(None, Documents::Episodes).unwrap();
    let commit = |slots: std::ops::Range<usize>, generation| {
        let documents = slots.map(|s| document(&bm25, s, &format!("kayak word{s}"))).collect();
        bm25.committer().commit(documents, generation, false).unwrap();
    };
    commit(0..4, 1);
    commit(4..6, 2);
    commit(6..7, 3);
    bm25.back_to(4, 1).unwrap();
    assert_eq!((bm25.documents(), bm25.generation()), (4, Some(1)));
    assert!(!holds_live(&bm25, "word5") && holds_live(&bm25, "word3"));
    // Caught up again from there.
    commit(4..5, 2);
    assert_eq!((bm25.documents(), bm25.generation()), (5, Some(2)));
}

/// Whether a document not removed holds `word` in its body.
fn holds_live(bm25: &Bm25, word: &str) -> bool {
    let searcher = bm25.shared.reader.searcher();
    let term = Term::from_field_text(bm25.fields.body, word);
    let query = TermQuery::new(term, IndexRecordOption::Basic);
    searcher.search(&query, &tantivy::collector::Count).unwrap() > 0
}
