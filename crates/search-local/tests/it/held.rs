//! Two processes on one saved index: the one that holds it for writing, and another that reads
//! what the holder last saved and keeps every change of its own in memory.

use std::{fs, path::Path, time::Duration};

use epimem_core::EpisodeId;
use epimem_search::{Search, Update};
use epimem_search_local::LocalSearch;
use tempfile::TempDir;

use crate::disk::{add, answers, garden, open, same};

/// Every file under `dir` with what it holds, in order.
fn files(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files(&path));
        } else {
            found.push((path.clone(), fs::read(&path).unwrap()));
        }
    }
    found.sort();
    found
}

/// The garden, held by the returned index and saved as updates paused.
fn held_garden(dir: &Path) -> LocalSearch {
    let owner = open(dir, Some("fp"));
    garden(&owner);
    std::thread::sleep(Duration::from_millis(1_100));
    owner.settle("t").unwrap();
    owner
}

/// The garden and then `more`, in a fresh index of their own: what an index that applied the
/// same updates answers.
fn fresh(more: impl FnOnce(&LocalSearch)) -> Vec<String> {
    let dir = TempDir::new().unwrap();
    let search = open(dir.path(), Some("fp"));
    garden(&search);
    more(&search);
    answers(&search)
}

/// What a process opening the folder once nobody holds it finds: the generation of tenant
/// "t"'s index, and why it was started again, if it was.
fn reopened(dir: &Path, fingerprint: &str) -> (u64, Option<String>) {
    let search = open(dir, Some(fingerprint));
    (search.generation("t").unwrap(), search.started_again("t").unwrap())
}

fn forget(search: &LocalSearch, id: &str) {
    let forgotten = [EpisodeId(id.into())];
    search.apply("t", &Update { forgotten: &forgotten, ..Update::default() }).unwrap();
}

#[test]
fn a_second_process_reads_the_saved_index_and_changes_only_its_memory() {
    let dir = TempDir::new().unwrap();
    let owner = held_garden(dir.path());
    let saved = files(dir.path());
    let second = open(dir.path(), Some("fp"));
    assert!(second.held_elsewhere("t").unwrap() && !second.on_disk("t").unwrap());
    assert_eq!(second.generation("t").unwrap(), 3, "read as saved, not built again");
    assert_eq!(second.started_again("t").unwrap(), None);
    same(&answers(&second), &answers(&owner));

    let more = |search: &LocalSearch| {
        add(search, 6, &[("Ana", "tomatoes ripen in August")], 4);
        forget(search, "t/c/5");
    };
    more(&second);
    assert_eq!(second.generation("t").unwrap(), 4);
    same(&answers(&second), &fresh(more));
    assert_ne!(answers(&second), answers(&owner));
    second.discard("t").unwrap();
    drop(second);
    assert!(files(dir.path()) == saved, "the holder's folder is as it saved it");

    drop(owner);
    assert_eq!(reopened(dir.path(), "fp"), (3, None));
}

/// The holder goes on (its segments merged and their files deleted): what the second process
/// read stays whole, answers as it did and takes its own updates.
#[test]
fn what_the_second_process_read_outlives_the_holders_changes() {
    let dir = TempDir::new().unwrap();
    let owner = held_garden(dir.path());
    let second = open(dir.path(), Some("fp"));
    let read = answers(&second);
    let holders_own = |search: &LocalSearch| {
        for (i, first) in (10..30).step_by(2).enumerate() {
            add(search, first, &[("Ben", "the shed roof leaks again")], 4 + i as u64);
        }
        forget(search, "t/c/1");
    };
    let read_files: Vec<_> = files(dir.path()).into_iter().map(|(path, _)| path).collect();
    holders_own(&owner);
    let gone = read_files.iter().filter(|p| !p.exists()).count();
    assert!(gone > 0, "the holder deleted files the second process read");
    same(&answers(&second), &read);
    let mine = |search: &LocalSearch| {
        add(search, 6, &[("Ana", "tomatoes ripen in August")], 4);
        forget(search, "t/c/3");
    };
    mine(&second);
    same(&answers(&second), &fresh(mine));
    same(&answers(&owner), &fresh(holders_own));
}

/// A holder that committed since it last saved (updates in a burst) leaves BM25 indexes ahead
/// of its saved state: the second process takes them back to the state, in its own memory,
/// and catches up from there, as it would from any state behind the store.
#[test]
fn beside_a_holder_saved_behind_its_commits_the_state_is_read_and_caught_up() {
    let dir = TempDir::new().unwrap();
    let owner = open(dir.path(), Some("fp"));
    garden(&owner);
    let before = files(dir.path());
    let second = open(dir.path(), Some("fp"));
    assert!(!second.on_disk("t").unwrap(), "the owner holds the saved index");
    assert!(second.held_elsewhere("t").unwrap() && !owner.held_elsewhere("t").unwrap());
    assert_eq!(second.generation("t").unwrap(), 1, "saved after the first update only");
    // The engine's catch-up: the updates after the first again (the first is left as it is).
    garden(&second);
    same(&answers(&second), &answers(&owner));
    assert!(files(dir.path()) == before, "the owner's folder was left alone");
    drop(second);
    drop(owner);
    assert_eq!(reopened(dir.path(), "fp"), (3, None));
}

#[test]
fn another_embedder_leaves_an_index_held_by_another_process_alone() {
    let dir = TempDir::new().unwrap();
    let owner = open(dir.path(), Some("model-a"));
    garden(&owner);
    let before = answers(&owner);
    let other = open(dir.path(), Some("model-b"));
    assert!(!other.on_disk("t").unwrap(), "held: kept in memory, the folder untouched");
    assert_eq!(other.generation("t").unwrap(), 0);
    drop(other);
    assert_eq!(answers(&owner), before);
    drop(owner);
    assert_eq!(reopened(dir.path(), "model-a"), (3, None));
}

/// Once the holder stops, the process that read its index beside it takes the index over and
/// saves it from then on.
#[test]
fn once_the_holder_stops_the_process_beside_it_adopts_the_index() {
    let dir = TempDir::new().unwrap();
    let owner = held_garden(dir.path());
    let second = open(dir.path(), Some("fp"));
    assert!(!second.adopt("t").unwrap(), "not opened here: nothing to adopt");
    assert_eq!(second.generation("t").unwrap(), 3);
    assert!(!second.adopt("t").unwrap(), "still held");
    assert!(second.held_elsewhere("t").unwrap());
    drop(owner);
    assert!(second.adopt("t").unwrap());
    assert!(second.on_disk("t").unwrap() && !second.held_elsewhere("t").unwrap());
    assert_eq!(second.generation("t").unwrap(), 3);
    assert!(!second.adopt("t").unwrap(), "its own now");
    add(&second, 6, &[("Ana", "tomatoes ripen in August")], 4);
    drop(second);
    assert_eq!(reopened(dir.path(), "fp"), (4, None), "saved by the process that adopted it");
}
