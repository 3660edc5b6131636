//! The index saved in a folder: the conformance suite again, reopening, starting again when
//! the saved index cannot be trusted, two processes on one folder, and forgetting that leaves
//! nothing in any file.

use std::{fs, ops::Deref, path::Path};

use epimem_core::{ConversationKey, Episode, EpisodeId, Role, Scope, recall::RankingConfig};
use epimem_search::{
    EpisodeQuery, IndexedEpisode, IndexedLine, Search, TurnQuery, Update, conformance,
};
use epimem_search_local::LocalSearch;
use tempfile::TempDir;

/// An index saved in a folder of its own, removed with it.
struct OnDisk {
    search: LocalSearch,
    _dir: TempDir,
}

impl Deref for OnDisk {
    type Target = LocalSearch;
    fn deref(&self) -> &LocalSearch {
        &self.search
    }
}

fn on_disk() -> OnDisk {
    let dir = TempDir::new().unwrap();
    let search = open(dir.path(), Some("hash:v1:8"));
    OnDisk { search, _dir: dir }
}

epimem_search::conformance_tests!(on_disk());

pub(crate) fn open(folder: &Path, fingerprint: Option<&str>) -> LocalSearch {
    LocalSearch::open(&folder.join("search"), &RankingConfig::default(), fingerprint)
}

pub(crate) fn episode(first: u64, lines: usize, title: &str) -> Episode {
    let start = 1_767_225_600_000 + first as i64 * 60_000;
    let end = start + lines as i64 * 60_000;
    conformance::episode(
        ConversationKey::new("t", "c"),
        (first, first + lines as u64 - 1),
        (start, end),
        title,
    )
}

pub(crate) fn unit(seed: usize) -> Vec<f32> {
    let v: Vec<f32> = (0..8).map(|i| ((i + 1) as f32 * (seed as f32 + 0.37)).sin()).collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

/// Adds an episode of `lines` (author, text) starting at message `first`.
pub(crate) fn add(search: &LocalSearch, first: u64, lines: &[(&str, &str)], generation: u64) {
    let e = episode(first, lines.len(), lines[0].1);
    let vectors: Vec<Vec<f32>> = (0..lines.len()).map(|i| unit(first as usize + i)).collect();
    let lines: Vec<IndexedLine<'_>> = lines
        .iter()
        .zip(&vectors)
        .enumerate()
        .map(|(i, (&(author, content), v))| IndexedLine {
            seq: first + i as u64,
            role: if author == "assistant" { Role::Assistant } else { Role::User },
            author,
            content,
            vector: Some(v),
        })
        .collect();
    let added = [IndexedEpisode { episode: &e, lines }];
    let update = Update { added: &added, generation: Some(generation), ..Update::default() };
    search.apply("t", &update).unwrap();
}

pub(crate) fn garden(search: &LocalSearch) {
    add(search, 1, &[("Ana", "I planted tomatoes in bed three"), ("assistant", "Water them")], 1);
    add(search, 3, &[("Ana", "the compost goes in first"), ("Ana", "then mulch")], 2);
    add(search, 5, &[("Ben", "taxes are due in April")], 3);
}

/// A turn query as the engine asks it, with the neighbours two turns out.
fn turn_query<'a>(scope: &'a Scope, text: &'a str, vector: &'a [f32]) -> TurnQuery<'a> {
    TurnQuery {
        scope,
        text,
        vector: Some(vector),
        candidates: 10,
        episode_context: true,
        word_match: false,
        reach: 2,
        max_gap_ms: 1_800_000,
        weighed: text,
        tail: &[],
    }
}

/// The garden saved in `dir`: its state file and what it holds.
fn saved_garden(dir: &Path) -> (std::path::PathBuf, Vec<u8>) {
    {
        let search = open(dir, Some("fp"));
        garden(&search);
    }
    let state = tenant_folder(dir).join("state.bin");
    let good = fs::read(&state).unwrap();
    (state, good)
}

/// What the index answers to a few queries, features and all.
pub(crate) fn answers(search: &LocalSearch) -> Vec<String> {
    let scope = Scope::tenant("t");
    ["tomatoes compost", "what did Ana say of mulch", "April"]
        .iter()
        .enumerate()
        .map(|(i, &text)| {
            let v = unit(i + 2);
            let episodes = search
                .episodes(&EpisodeQuery { scope: &scope, text, vector: Some(&v), candidates: 10 })
                .unwrap();
            let mut turns = search.turns(&turn_query(&scope, text, &v), None).unwrap();
            // Maps print in no fixed order: compare them sorted.
            let mut neighbors: Vec<_> = turns.neighbors.drain().collect();
            neighbors.sort_by_key(|(k, _)| *k);
            let mut lines: Vec<_> =
                turns.lines.drain().map(|(k, v)| format!("{k:?}{v:?}")).collect();
            lines.sort();
            format!("{episodes:?}\n{turns:?}\n{neighbors:?}\n{lines:?}")
        })
        .collect()
}

#[test]
fn a_saved_index_reopens_as_it_was() {
    let dir = TempDir::new().unwrap();
    let before = {
        let search = open(dir.path(), Some("fp"));
        garden(&search);
        assert!(search.on_disk("t").unwrap());
        answers(&search)
    };
    let search = open(dir.path(), Some("fp"));
    assert_eq!(search.generation("t").unwrap(), 3, "not rebuilt");
    assert_eq!(search.started_again("t").unwrap(), None);
    assert_eq!(answers(&search), before);
    // And it goes on from there, as one that never closed.
    add(&search, 6, &[("Ana", "tomatoes ripen in August")], 4);
    let kept = answers(&search);
    let fresh_dir = TempDir::new().unwrap();
    let fresh = open(fresh_dir.path(), Some("fp"));
    garden(&fresh);
    add(&fresh, 6, &[("Ana", "tomatoes ripen in August")], 4);
    same(&kept, &answers(&fresh));
}

#[test]
fn vectors_grouped_on_open_are_saved_and_answer_as_the_exact_scan() {
    let dir = TempDir::new().unwrap();
    let state = || fs::metadata(tenant_folder(dir.path()).join("state.bin")).unwrap().len();
    let exact = {
        let search = open(dir.path(), Some("fp"));
        garden(&search);
        answers(&search)
    };
    let saved_exact = state();
    let grouped = || {
        LocalSearch::open(&dir.path().join("search"), &RankingConfig::default(), Some("fp"))
            .approximate_from(0)
    };
    {
        // Saved before grouping was asked for: grouped on open, not rebuilt, and a search
        // that probes every row (there are few) answers as the scan did.
        let search = grouped();
        assert_eq!(answers(&search), exact);
        assert_eq!(search.started_again("t").unwrap(), None);
    }
    assert!(state() > saved_exact, "the groups are saved with the state");
    let search = grouped();
    assert_eq!(answers(&search), exact);
    add(&search, 6, &[("Ana", "tomatoes ripen in August")], 4);
    let fresh_dir = TempDir::new().unwrap();
    let fresh = open(fresh_dir.path(), Some("fp"));
    garden(&fresh);
    add(&fresh, 6, &[("Ana", "tomatoes ripen in August")], 4);
    same(&answers(&search), &answers(&fresh));
}

#[test]
fn vectors_are_saved_in_one_file_of_their_own_and_checked_on_open() {
    let dir = TempDir::new().unwrap();
    let vector_files = || {
        let mut names: Vec<String> = fs::read_dir(tenant_folder(dir.path()))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("vectors-"))
            .collect();
        names.sort();
        names
    };
    {
        let search = open(dir.path(), Some("fp"));
        garden(&search);
        // Rows added after a save are appended to the file it wrote.
        add(&search, 6, &[("Ana", "tomatoes ripen in August")], 4);
    }
    let files = vector_files();
    assert_eq!(files, ["vectors-1.bin"], "one file, named by the generation it was begun at");
    // Opened and dropped without a change: the same file, not written again.
    assert!(!answers(&open(dir.path(), Some("fp"))).is_empty());
    assert_eq!(vector_files(), files);
    // A vector file cut short is found out on open, and the index starts again.
    let path = tenant_folder(dir.path()).join(&files[0]);
    let bytes = fs::read(&path).unwrap();
    fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
    let search = open(dir.path(), Some("fp"));
    let why = search.started_again("t").unwrap().expect("started again");
    assert!(why.contains("bytes"), "{why}");
    assert_eq!(search.generation("t").unwrap(), 0);
}

/// Equal, or where the two first differ.
pub(crate) fn same(a: &[String], b: &[String]) {
    for (x, y) in a.iter().zip(b) {
        if let Some(at) = x.chars().zip(y.chars()).position(|(p, q)| p != q) {
            let from = at.saturating_sub(150);
            let show = |s: &str| s.chars().skip(from).take(300).collect::<String>();
            panic!("differ at {at}:\n{}\n{}", show(x), show(y));
        }
    }
    assert_eq!(a, b);
}

/// The saved index's folder for tenant "t" (the only one in these tests).
fn tenant_folder(dir: &Path) -> std::path::PathBuf {
    fs::read_dir(dir.join("search"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap()
}

#[test]
fn an_index_that_cannot_be_trusted_starts_again_empty() {
    let dir = TempDir::new().unwrap();
    let (state, good) = saved_garden(dir.path());

    fs::write(&state, b"not an index").unwrap();
    let search = open(dir.path(), Some("fp"));
    assert_eq!(search.generation("t").unwrap(), 0, "rebuilt from the store, from change 0");
    assert!(search.started_again("t").unwrap().is_some());
    garden(&search);
    drop(search);

    // A state saved after the last commit of the BM25 indexes beside it: out of step.
    let behind = dir.path().join("behind");
    copy_folder(&dir.path().join("search"), &behind.join("search"));
    {
        let search = open(dir.path(), Some("fp"));
        add(&search, 6, &[("Ana", "tomatoes ripen in August")], 4);
    }
    fs::copy(&state, tenant_folder(&behind).join("state.bin")).unwrap();
    let search = open(&behind, Some("fp"));
    let why = search.started_again("t").unwrap().expect("out of step");
    assert!(why.contains("out of step"), "{why}");
    assert_eq!(search.generation("t").unwrap(), 0);
    drop(search);
    fs::write(&state, good).unwrap();

    // The state gone, the BM25 indexes left.
    let search = open(dir.path(), Some("fp"));
    garden(&search);
    drop(search);
    fs::remove_file(&state).unwrap();
    let search = open(dir.path(), Some("fp"));
    assert!(search.started_again("t").unwrap().is_some());
    assert_eq!(search.generation("t").unwrap(), 0);
}

#[test]
fn another_embedder_starts_the_index_again() {
    let dir = TempDir::new().unwrap();
    garden(&open(dir.path(), Some("model-a")));
    assert_eq!(open(dir.path(), Some("model-a")).generation("t").unwrap(), 3);
    let other = open(dir.path(), Some("model-b"));
    assert_eq!(other.generation("t").unwrap(), 0, "vectors of another model are never mixed");
    garden(&other);
    drop(other);
    assert_eq!(open(dir.path(), Some("model-b")).generation("t").unwrap(), 3);
    assert_eq!(open(dir.path(), None).generation("t").unwrap(), 0, "no embedder, no vectors");
}

/// Whether any file under `dir` holds `needle`.
pub(crate) fn in_some_file(dir: &Path, needle: &[u8]) -> Option<std::path::PathBuf> {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if let Some(found) = in_some_file(&path, needle) {
                return Some(found);
            }
        } else if fs::read(&path).unwrap().windows(needle.len()).any(|w| w == needle) {
            return Some(path);
        }
    }
    None
}

#[test]
fn forgotten_words_and_names_leave_every_file() {
    let dir = TempDir::new().unwrap();
    let search = open(dir.path(), Some("fp"));
    garden(&search);
    add(&search, 6, &[("Zebulon Quaxley", "my xylophonist cousin visited")], 4);
    // Asked for once, so the query's words are in the word table too; saved when dropped.
    answers(&search);
    drop(search);
    let search = open(dir.path(), Some("fp"));
    for word in [&b"xylophonist"[..], b"quaxley"] {
        assert!(in_some_file(dir.path(), word).is_some(), "saved before forgetting");
    }
    let update = Update { forgotten: &[EpisodeId("t/c/6".into())], ..Update::default() };
    search.apply("t", &update).unwrap();
    for word in [&b"xylophon"[..], b"quaxley", b"Quaxley", b"zebulon", b"cousin"] {
        let found = in_some_file(dir.path(), word);
        assert!(found.is_none(), "{} in {found:?}", String::from_utf8_lossy(word));
    }
    // What was not forgotten is all still there.
    assert!(in_some_file(dir.path(), b"compost").is_some());
    drop(search);
    let search = open(dir.path(), Some("fp"));
    assert_eq!(search.generation("t").unwrap(), 4);
    assert_eq!(search.started_again("t").unwrap(), None);
}

#[test]
fn a_damaged_state_is_used_or_rebuilt_never_misread_into_a_panic() {
    let dir = TempDir::new().unwrap();
    let (state, good) = saved_garden(dir.path());
    let pristine = dir.path().join("pristine");
    copy_folder(&dir.path().join("search"), &pristine);
    let scope = Scope::tenant("t");
    let v = unit(3);
    for at in 0..good.len() {
        let mut damaged = good.clone();
        damaged[at] ^= 0x5A;
        fs::write(&state, &damaged).unwrap();
        let searched = std::panic::catch_unwind(|| {
            let search = open(dir.path(), Some("fp"));
            let _ = search.generation("t");
            let query =
                EpisodeQuery { scope: &scope, text: "compost", vector: Some(&v), candidates: 10 };
            let _ = search.episodes(&query);
            let _ = search.turns(&turn_query(&scope, "what did Ana say of mulch", &v), None);
            // Whatever was read, the index is started again from the store from here on.
            search.discard("t").unwrap();
        });
        assert!(searched.is_ok(), "byte {at} of {} damaged", good.len());
        fs::remove_dir_all(dir.path().join("search")).unwrap();
        copy_folder(&pristine, &dir.path().join("search"));
    }
}

/// Updates in a burst do not save the state each time; it is saved once they stop. An index
/// copied as a crash would leave it opens at the state's generation either way, without a
/// rebuild.
#[test]
fn a_burst_of_updates_is_saved_once_it_is_over() {
    let dir = TempDir::new().unwrap();
    let search = open(dir.path(), Some("fp"));
    let crashed = |name: &str| {
        let copy = dir.path().join(name);
        copy_folder(&dir.path().join("search"), &copy.join("search"));
        let reopened = open(&copy, Some("fp"));
        (reopened.generation("t").unwrap(), reopened.started_again("t").unwrap())
    };
    add(&search, 1, &[("Ana", "the compost goes in first")], 1);
    add(&search, 2, &[("Ana", "tomatoes ripen in August")], 2);
    // The state was saved after the first update only: the BM25 indexes, a commit ahead, are
    // taken back to it, and the second update is caught up again (as the engine does from the
    // generation the index reports), not rebuilt.
    assert_eq!(crashed("during"), (1, None));
    let during = open(&dir.path().join("during"), Some("fp"));
    add(&during, 2, &[("Ana", "tomatoes ripen in August")], 2);
    assert_eq!(answers(&during), answers(&search));
    drop(during);
    std::thread::sleep(std::time::Duration::from_millis(1_100));
    search.settle("t").unwrap();
    assert_eq!(crashed("after"), (2, None), "saved once the updates stopped");
    let reopened = open(&dir.path().join("after"), Some("fp"));
    assert_eq!(answers(&reopened), answers(&search));
}

fn copy_folder(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_folder(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A build commits its first episodes at generation 0: BM25 indexes holding documents without
/// a state are a build cut short, not a new index, and are started again.
#[test]
fn documents_committed_before_any_state_are_not_taken_for_a_new_index() {
    let dir = TempDir::new().unwrap();
    {
        let search = open(dir.path(), Some("fp"));
        let e = episode(1, 1, "the compost goes in first");
        let vector = unit(1);
        let lines = vec![IndexedLine {
            seq: 1,
            role: Role::User,
            author: "Ana",
            content: "the compost goes in first",
            vector: Some(&vector),
        }];
        let added = [IndexedEpisode { episode: &e, lines }];
        search.apply("t", &Update { added: &added, ..Update::default() }).unwrap();
        assert_eq!(search.generation("t").unwrap(), 0);
    }
    fs::remove_file(tenant_folder(dir.path()).join("state.bin")).unwrap();
    let search = open(dir.path(), Some("fp"));
    let why = search.started_again("t").unwrap().expect("started again");
    assert!(why.contains("without their state"), "{why}");
    let scope = Scope::tenant("t");
    let query = EpisodeQuery { scope: &scope, text: "compost", vector: None, candidates: 10 };
    assert!(search.episodes(&query).unwrap().candidates.is_empty(), "nothing left of it");
}
