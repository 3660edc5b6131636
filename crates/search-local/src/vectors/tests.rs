//! The vector index's own tests: saving, mapping, quantizing, borrowing.

use super::*;
use crate::table::tests::episode;

pub(super) fn exact(borrow: Borrow) -> VectorConfig {
    VectorConfig { borrow, approximate_from: usize::MAX, probe_rows: PROBE_ROWS }
}

pub(super) fn unit(seed: u32, dim: usize) -> Vec<f32> {
    let v: Vec<f32> = (0..dim).map(|i| ((i as f32 + 1.0) * (seed as f32 + 0.37)).sin()).collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}

#[test]
fn rows_added_stay_in_memory_only_until_a_save_maps_them_unless_the_rows_were_stored_anew() {
    let dir = tempfile::tempdir().unwrap();
    let (dim, visible) = (16, [true; 40]);
    let mut index = VectorIndex::new(exact(Borrow::default()));
    let mut all = VectorIndex::new(exact(Borrow::default()));
    let add = |index: &mut VectorIndex, all: &mut VectorIndex, slot: usize| {
        let at = (slot, 0, &episode("t", "c", None, 0));
        index.add(at, slot as u64, &unit(slot as u32, dim));
        all.add(at, slot as u64, &unit(slot as u32, dim));
    };
    let same_as_in_memory = |index: &VectorIndex, all: &VectorIndex| {
        for seed in [3, 29, 30, 31] {
            let (found, expected) = (
                index.search(&unit(seed, dim), &visible, 5, 5),
                all.search(&unit(seed, dim), &visible, 5, 5),
            );
            assert_eq!((found.messages, found.episodes), (expected.messages, expected.episodes));
        }
    };
    for slot in 0..30 {
        add(&mut index, &mut all, slot);
    }
    let save = index.take_save(1).expect("new rows").write(dir.path()).unwrap();
    assert!(index.written(save));
    assert_eq!(index.in_memory(), 0, "read from the file");
    same_as_in_memory(&index, &all);
    add(&mut index, &mut all, 30);
    assert_eq!(index.in_memory(), dim, "the added row only, not a copy of the file");
    // A row added while a save is written stays in memory after it.
    let save = index.take_save(2).expect("a row added");
    add(&mut index, &mut all, 31);
    assert!(index.written(save.write(dir.path()).unwrap()));
    assert_eq!(index.in_memory(), dim);
    same_as_in_memory(&index, &all);
    // Rows stored anew while a save is written: the file no longer holds them as they are.
    let save = index.take_save(2).expect("a row added");
    index.remove(5);
    all.remove(5);
    assert!(!index.written(save.write(dir.path()).unwrap()));
    assert_eq!(index.in_memory(), 31 * dim);
    same_as_in_memory(&index, &all);
}

#[test]
fn rows_added_since_a_save_are_appended_to_its_file_and_any_other_change_writes_a_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let (dim, visible) = (16, [true; 40]);
    let mut index = VectorIndex::new(exact(Borrow::default()));
    let add = |index: &mut VectorIndex, slots: std::ops::Range<usize>| {
        for slot in slots {
            let v = unit(slot as u32, dim);
            index.add((slot, 0, &episode("t", "c", None, 0)), slot as u64, &v);
        }
    };
    let reloaded = |index: &VectorIndex| {
        let mut copy: VectorIndex =
            postcard::from_bytes(&postcard::to_stdvec(index).unwrap()).expect("the state decodes");
        copy.config = index.config;
        copy.attach(dir.path()).unwrap();
        copy
    };
    let found = |index: &VectorIndex, seed: u32| {
        index
            .search(&unit(seed, dim), &visible, 3, 3)
            .messages
            .iter()
            .map(|m| m.1)
            .collect::<Vec<_>>()
    };
    add(&mut index, 0..20);
    let first = index.take_save(1).expect("new rows");
    assert_eq!((first.from, first.name.as_str()), (0, "vectors-1.bin"));
    first.write(dir.path()).unwrap();
    assert!(index.take_save(2).is_none(), "nothing changed");
    add(&mut index, 20..30);
    let appended = index.take_save(2).expect("new rows");
    assert_eq!((appended.from, appended.name.as_str()), (20 * dim, "vectors-1.bin"));
    appended.write(dir.path()).unwrap();
    let copy = reloaded(&index);
    for seed in [3, 25, 29] {
        assert_eq!(found(&copy, seed), found(&index, seed), "seed {seed}");
    }
    index.remove(5);
    let rewritten = index.take_save(2).expect("a row removed");
    assert_eq!((rewritten.from, rewritten.name.as_str()), (0, "vectors-2.bin"));
    rewritten.write(dir.path()).unwrap();
    assert_eq!(found(&reloaded(&index), 25), found(&index, 25));
    // A save that failed is written whole again, into a file the state does not name.
    add(&mut index, 30..31);
    let _lost = index.take_save(2).expect("a row added");
    index.unsaved();
    let again = index.take_save(2).expect("written again");
    assert_eq!((again.from, again.name.as_str()), (0, "vectors-2-1.bin"));
}

#[test]
fn quantized_similarity_is_close_to_the_exact_one() {
    let dim = 37; // not a multiple of the lanes: the tail counts too
    let mut index = VectorIndex::new(exact(Borrow::default()));
    let rows: Vec<Vec<f32>> = (0..20).map(|s| unit(s, dim)).collect();
    for (i, r) in rows.iter().enumerate() {
        index.add((i, 0, &episode("t", "c", None, 0)), 1, r);
    }
    let q = unit(99, dim);
    let quantized = Quantized::new(&q);
    for (i, r) in rows.iter().enumerate() {
        let exact: f32 = r.iter().zip(&q).map(|(x, y)| x * y).sum();
        assert!((index.similarity(i, &quantized) - exact).abs() < 0.02, "row {i}");
    }
    assert_eq!(Quantized::new(&vec![0.0; dim]).scale, 1.0, "a zero vector stays finite");
}

#[test]
fn an_answer_borrows_from_the_question_before_it() {
    let dim = 8;
    let axis = |i: usize| {
        let mut v = vec![0.0; dim];
        v[i] = 1.0;
        v
    };
    let borrow = Borrow { before: 0.8, after: 0.6, max_gap_ms: 100 };
    let ep = |start| episode("t", "c", None, start);
    let q: Vec<f32> = axis(0).iter().zip(axis(1)).map(|(a, b)| a * 0.9 + b * 0.3).collect();
    let search = |index: &VectorIndex| {
        let found = index.search(&q, &[true; 4], 4, 8).messages;
        move |seq| found.iter().find(|m| m.1 == seq).map(|m| m.2 as f32).unwrap()
    };
    let mut index = VectorIndex::new(exact(borrow));
    // Conversation 1: a question (episode 0, seq 1) answered in the next episode (seq 2),
    // a few moments later.
    index.add((0, 1, &ep(0)), 1, &axis(0));
    index.add((1, 1, &ep(20)), 2, &axis(1));
    // Conversation 2 follows in the rows with the next seq: no neighbour of either.
    index.add((2, 2, &ep(30)), 3, &axis(2));
    // Conversation 2 again, after a long silence.
    index.add((3, 2, &ep(1_000)), 4, &axis(3));
    let score = search(&index);
    assert!((score(1) - 0.9).abs() < 0.02);
    assert!((score(2) - 0.8 * 0.9).abs() < 0.02, "the answer borrows");
    assert!(score(3).abs() < 0.02, "another conversation lends nothing");
    assert!(score(4).abs() < 0.02, "nothing borrowed over a long silence");
    // Borrowing off: a message scores its own similarity only.
    let mut plain = VectorIndex::new(exact(Borrow::default()));
    plain.add((0, 1, &ep(0)), 1, &axis(0));
    plain.add((1, 1, &ep(20)), 2, &axis(1));
    assert!((search(&plain)(2) - 0.3).abs() < 0.02);
}
