//! Search indexes stay current: what another process closes or forgets reaches an index that
//! is already loaded, and an index kept up to date piece by piece answers exactly as one
//! built from scratch.

use super::common::{engine_at, remember};
use crate::engine::{Engine, Freshness, IndexTask, RecallQuery};
use epimem_core::{ConversationKey, ErrorKind, Scope};

fn query(text: &str) -> RecallQuery {
    RecallQuery::new(Scope::tenant("t"), text, 10)
}

#[test]
fn what_another_process_closes_or_forgets_reaches_a_loaded_index() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let (reader, writer) = (engine_at(&db), engine_at(&db));
    remember(&reader, "t", "c", 0, &["the garden tomatoes are ripe", "time to make sauce"]);
    assert!(
        reader.recall(&query("walrus saxophone")).unwrap().iter().all(|h| h.episode.first_seq == 1)
    );

    remember(&writer, "t", "c", 1, &["a walrus played the saxophone", "at the harbour concert"]);
    let hits = reader.recall(&query("walrus saxophone")).unwrap();
    let theirs = hits.first().expect("found without a restart").episode.id.clone();
    assert_eq!(hits[0].lexical_rank, Some(1));
    let turns = reader.measure().recall_messages(&query("walrus saxophone")).unwrap();
    assert_eq!(turns[0].episode, theirs);

    writer.delete_episode(&Scope::tenant("t"), &theirs).unwrap();
    assert!(
        reader.recall(&query("walrus saxophone")).unwrap().iter().all(|h| h.episode.id != theirs)
    );
    let turns = reader.measure().recall_messages(&query("walrus saxophone")).unwrap();
    assert!(turns.iter().all(|t| t.episode != theirs), "{turns:?}");
    let context = reader.recall_context(&query("walrus saxophone"), 500).unwrap();
    assert!(!context.text.contains("walrus"), "{}", context.text);
}

const QUERIES: [&str; 3] = ["ferry to the island", "sourdough starter", "the deploy failed"];

fn answers(e: &Engine) -> Vec<String> {
    let mut out = Vec::new();
    for text in QUERIES {
        out.push(format!("{:?}", e.recall(&query(text)).unwrap()));
        out.push(format!("{:?}", e.measure().recall_messages(&query(text)).unwrap()));
        out.push(format!("{:?}", e.recall_context(&query(text), 300).unwrap()));
    }
    out
}

#[test]
fn an_index_kept_current_answers_as_one_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let (incremental, other) = (engine_at(&db), engine_at(&db));
    remember(&incremental, "t", "trip", 0, &["we took the ferry to the island", "rough sea"]);
    assert!(!incremental.recall(&query("ferry")).unwrap().is_empty(), "loads the index");
    // Closed by this process (added directly) and by another (caught up from the change log).
    remember(&incremental, "t", "bread", 1, &["my sourdough starter is bubbly", "feed it flour"]);
    remember(&other, "t", "work", 2, &["the deploy failed on staging", "rollback the release"]);
    remember(&other, "t", "trip", 3, &["the island ferry was late again", "we waited an hour"]);
    remember(&incremental, "t", "bread", 4, &["the sourdough loaf rose well", "crisp crust"]);
    let kept = answers(&incremental);
    let rebuilt = answers(&engine_at(&db));
    assert_eq!(kept, rebuilt);
}

/// A new index is built from the episodes live at the log's end: after episodes were
/// forgotten, corrected and a conversation emptied and filled again, it answers as the index
/// that saw all of it happen.
#[test]
fn an_index_built_after_much_forgetting_answers_as_one_kept_current() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let kept = engine_at(&db);
    let scope = Scope::tenant("t");
    remember(&kept, "t", "trip", 0, &["we took the ferry to the island", "rough sea"]);
    remember(&kept, "t", "bread", 1, &["my sourdough starter is bubbly", "feed it flour"]);
    remember(&kept, "t", "work", 2, &["the deploy failed on staging", "rollback the release"]);
    assert!(!kept.recall(&query("ferry")).unwrap().is_empty(), "loads the index");
    for round in 0..3 {
        kept.delete_conversation(&ConversationKey::new("t", "bread")).unwrap();
        let line = format!("sourdough loaf number {round} rose well");
        remember(&kept, "t", "bread", 3 + round, &[line.as_str(), "crisp crust"]);
    }
    let work = kept.recall(&query("deploy")).unwrap()[0].episode.id.clone();
    kept.edit_episode(&scope, &work, Some("The deploy that failed".into()), None).unwrap();
    let trip = kept.recall(&query("ferry")).unwrap()[0].episode.id.clone();
    kept.delete_episode(&scope, &trip).unwrap();
    remember(&kept, "t", "trip", 9, &["the island ferry was late again", "we waited an hour"]);
    let built = engine_at(&db);
    assert_eq!(answers(&kept), answers(&built));
    let loaf = built.recall(&query("sourdough loaf")).unwrap();
    assert_eq!(loaf.len(), 1, "only the last filling is live: {loaf:?}");
    assert!(loaf[0].episode.summary.contains("number 2"), "{loaf:?}");
}

/// In the background mode a recall never catches up on the request: what another process
/// closes waits for the owner's refresh, what this engine flushes is searchable at once.
#[test]
fn in_the_background_mode_recall_waits_for_no_catch_up() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let server = engine_at(&db).with_freshness(Freshness::Background);
    let other = engine_at(&db);
    remember(&server, "t", "c", 0, &["the garden tomatoes are ripe", "time to make sauce"]);
    assert!(!server.recall(&query("tomatoes")).unwrap().is_empty(), "built on first recall");

    remember(&other, "t", "c", 1, &["a walrus played the saxophone", "at the harbour concert"]);
    let before = server.recall(&query("walrus saxophone")).unwrap();
    assert!(before.iter().all(|h| h.episode.first_seq == 1), "not yet refreshed: {before:?}");
    server.refresh_indexes().unwrap();
    let after = server.recall(&query("walrus saxophone")).unwrap();
    assert_eq!(after[0].episode.first_seq, 3, "found once refreshed: {after:?}");

    // Written and flushed by the server itself: no refresh needed.
    remember(&server, "t", "d", 2, &["the lighthouse keeper fed the gulls"]);
    let own = server.recall(&query("lighthouse gulls")).unwrap();
    assert!(own[0].episode.title.to_lowercase().contains("lighthouse"), "{own:?}");
}

#[test]
fn an_edited_title_is_searched_by_its_new_words_in_every_process() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let (editor, other) = (engine_at(&db), engine_at(&db));
    remember(&editor, "t", "c", 0, &["we watched the zebras at the waterhole", "at dawn"]);
    let id = editor.recall(&query("zebras")).unwrap()[0].episode.id.clone();
    assert!(other.recall(&query("okapi")).unwrap().is_empty(), "loads the other's index");

    let scope = Scope::tenant("t");
    let edited = editor.edit_episode(&scope, &id, Some("Okapi sighting".into()), None).unwrap();
    assert_eq!(edited.title, "Okapi sighting");
    for engine in [&editor, &other] {
        let hits = engine.recall(&query("okapi")).unwrap();
        assert_eq!(hits.first().map(|h| &h.episode.id), Some(&id), "found by its new title");
        assert_eq!(hits[0].episode.title, "Okapi sighting");
    }
    let versions = editor.episode_versions(&scope, &id).unwrap();
    assert_eq!(versions.len(), 1);
    assert_ne!(versions[0].title, "Okapi sighting");
    // A bad edit is refused and changes nothing.
    let refused = editor.edit_episode(&scope, &id, Some(" ".into()), None).unwrap_err();
    assert_eq!(refused.kind(), epimem_core::ErrorKind::BadInput, "{refused}");
    assert_eq!(editor.episode_versions(&scope, &id).unwrap().len(), 1);
}

#[test]
fn loading_an_index_tells_what_it_takes_and_nothing_when_current() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let (engine, other) = (engine_at(&db), engine_at(&db));
    remember(&engine, "t", "a", 0, &["we took the ferry to the island", "rough sea"]);
    remember(&engine, "t", "b", 1, &["the sourdough starter is alive", "feed it daily"]);
    let load = |e: &Engine| {
        let mut told = Vec::new();
        e.load_search_index("t", &mut |task, done, total| told.push((task.clone(), done, total)))
            .unwrap();
        told
    };
    let built = load(&engine);
    let (first, last) = (built.first().unwrap(), built.last().unwrap());
    assert_eq!(first.0, IndexTask::Build { why: None }, "a new index: built, with no excuse");
    assert_eq!((first.1, last.1), (0, last.2), "from nothing done to all of it: {built:?}");
    assert!(last.2 >= 2, "at least the two closes: {built:?}");
    assert!(built.windows(2).all(|w| w[0].1 <= w[1].1), "never backwards: {built:?}");

    // Another process closes one more: the next load catches up with that change alone.
    remember(&other, "t", "c", 2, &["the deploy failed on a missing key", "rolled back"]);
    assert_eq!(load(&engine), [(IndexTask::CatchUp, 0, 1), (IndexTask::CatchUp, 1, 1)]);
    assert_eq!(load(&engine), [], "current: nothing to tell");
}

/// A process whose saved index another holds reads what the holder saved and catches up from
/// there in its own memory, also while the holder has committed past its last save.
#[test]
fn beside_the_process_holding_the_saved_index_it_is_read_or_copied() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    // The owner as a server runs: it keeps the index current after its own writes.
    let owner = with_saved_index(&db).with_freshness(crate::engine::Freshness::Background);
    let second = with_saved_index(&db);
    remember(&owner, "t", "a", 0, &["we took the ferry to the island", "rough sea"]);
    let first_task = |e: &Engine| tasks(e).first().cloned();
    assert_eq!(first_task(&owner), Some(IndexTask::Build { why: None }));
    assert_eq!(first_task(&second), None, "read as the owner saved it when built: current");
    assert_eq!(second.recall(&query("ferry island")).unwrap().len(), 1);

    // The owner commits again at once (a burst): its state is saved once updates pause.
    remember(&owner, "t", "b", 1, &["the sourdough starter is alive", "feed it daily"]);
    let third = with_saved_index(&db);
    assert_eq!(first_task(&third), Some(IndexTask::CatchUp), "the saved state is behind BM25");
    assert_eq!(third.recall(&query("sourdough starter")).unwrap().len(), 1, "caught up");

    std::thread::sleep(std::time::Duration::from_millis(1_100));
    owner.refresh_indexes().unwrap();
    let fourth = with_saved_index(&db);
    assert_eq!(first_task(&fourth), None, "read as saved, not copied");
    remember(&owner, "t", "c", 2, &["the bike chain snapped", "walked it home"]);
    assert_eq!(first_task(&fourth), Some(IndexTask::CatchUp), "and kept current from there");
    for words in ["ferry island", "sourdough starter", "bike chain"] {
        assert_eq!(fourth.recall(&query(words)).unwrap().len(), 1, "{words}");
    }
}

/// An engine over the SQLite store at `db`, its search index saved beside it.
fn with_saved_index(db: &std::path::Path) -> Engine {
    with_saved_index_of(db, None)
}

/// [`with_saved_index`] with `embedder` (none: the words alone).
fn with_saved_index_of(
    db: &std::path::Path,
    embedder: Option<epimem_embed::HashEmbedder>,
) -> Engine {
    use epimem_embed::Embedder;
    let search = epimem_search_local::LocalSearch::open(
        &db.with_extension("db.search"),
        &crate::engine::EngineConfig::default().ranking,
        embedder.as_ref().map(|e| e.fingerprint()),
    );
    let store = epimem_store_sqlite::SqliteStore::open(db).unwrap();
    let engine = Engine::new(
        std::sync::Arc::new(store),
        Box::new(search),
        Default::default(),
        Box::new(crate::engine::SystemClock),
        "t:1".into(),
    );
    match embedder {
        Some(embedder) => engine.with_embedder(Box::new(embedder)),
        None => engine,
    }
}

/// The tasks loading tenant "t"'s index took, in order.
fn tasks(engine: &Engine) -> Vec<IndexTask> {
    let mut tasks: Vec<IndexTask> = Vec::new();
    engine
        .load_search_index("t", &mut |task, _, _| {
            if tasks.last() != Some(task) {
                tasks.push(task.clone());
            }
        })
        .unwrap();
    tasks
}

/// Beside a holder whose saved index cannot be read (its BM25 indexes hold documents and no
/// state is saved beside them, as while it builds), a process with a large copy to build waits
/// for the holder's save and reads what it saved; past the wait it builds the copy, and says so
/// rather than that it builds the index (which would read as an index lost).
#[test]
fn beside_a_holder_without_a_saved_state_a_large_copy_waits_for_the_save() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let owner = with_saved_index(&db).with_freshness(Freshness::Background);
    remember(&owner, "t", "a", 0, &["we took the ferry to the island", "rough sea"]);
    assert_eq!(tasks(&owner), [IndexTask::Build { why: None }]);
    let state = std::fs::read_dir(db.with_extension("db.search"))
        .unwrap()
        .map(|tenant| tenant.unwrap().path().join("state.bin"))
        .find(|state| state.exists())
        .expect("the owner saved its state");
    std::fs::remove_file(&state).unwrap();
    let wait = |wait_ms| {
        with_saved_index(&db).with_holder_save_wait(1, std::time::Duration::from_millis(wait_ms))
    };
    let impatient = wait(300);
    assert_eq!(tasks(&impatient), [IndexTask::AwaitSave, IndexTask::Copy]);
    assert_eq!(impatient.recall(&query("ferry island")).unwrap().len(), 1, "the copy answers");

    let patient = wait(10_000);
    let started = std::time::Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            remember(&owner, "t", "b", 1, &["the sourdough starter is alive", "feed it daily"]);
            std::thread::sleep(std::time::Duration::from_millis(1_100));
            owner.refresh_indexes().unwrap(); // a second without updates: the owner saves
        });
        assert_eq!(tasks(&patient), [IndexTask::AwaitSave], "read as saved: nothing to copy");
    });
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(state.exists(), "saved again");
    for words in ["ferry island", "sourdough starter"] {
        assert_eq!(patient.recall(&query(words)).unwrap().len(), 1, "{words}");
    }
}

/// Beside a holder whose saved index was built with another embedder, no save of the holder's
/// could be read: the copy is built at once, not after the wait for a save.
#[test]
fn beside_a_holder_of_another_embedder_the_copy_is_built_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let owner = with_saved_index(&db).with_freshness(Freshness::Background);
    remember(&owner, "t", "a", 0, &["we took the ferry to the island", "rough sea"]);
    assert_eq!(tasks(&owner), [IndexTask::Build { why: None }]);
    let embedding = with_saved_index_of(&db, Some(epimem_embed::HashEmbedder::new(64)))
        .with_holder_save_wait(1, std::time::Duration::from_secs(10));
    let started = std::time::Instant::now();
    assert_eq!(tasks(&embedding), [IndexTask::Copy]);
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    assert_eq!(embedding.recall(&query("ferry island")).unwrap().len(), 1, "the copy answers");
    assert_eq!(tasks(&owner), [], "the holder's own is left as it was");
}

/// A server that read its index beside another process takes it over once that one stops, and
/// saves it from then on.
#[test]
fn a_server_beside_a_process_that_stops_takes_its_index_over() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let owner = with_saved_index(&db);
    remember(&owner, "t", "a", 0, &["we took the ferry to the island", "rough sea"]);
    assert_eq!(tasks(&owner), [IndexTask::Build { why: None }]);
    let server = with_saved_index(&db).with_freshness(Freshness::Background);
    assert_eq!(tasks(&server), [], "read beside the owner");
    drop(owner);
    server.refresh_indexes().unwrap();
    remember(&server, "t", "b", 1, &["the sourdough starter is alive", "feed it daily"]);
    assert_eq!(server.recall(&query("sourdough starter")).unwrap().len(), 1);
    drop(server);
    let later = with_saved_index(&db);
    assert_eq!(tasks(&later), [], "saved by the server: current");
    assert_eq!(later.recall(&query("sourdough starter")).unwrap().len(), 1);
}

/// An engine in the background mode, as a server runs one, over a new database holding one
/// episode about a ferry.
fn server_engine(dir: &tempfile::TempDir) -> Engine {
    let engine = engine_at(&dir.path().join("e.db")).with_freshness(Freshness::Background);
    remember(&engine, "t", "a", 0, &["we took the ferry to the island", "rough sea"]);
    engine
}

/// Loads tenant "t"'s index, running `during` once its build has started, before anything is
/// in it.
fn while_building(engine: &Engine, mut during: impl FnMut()) {
    engine
        .load_search_index("t", &mut |_, done, _| {
            if done == 0 {
                during();
            }
        })
        .unwrap();
}

#[test]
fn a_refresh_leaves_an_index_being_built_to_its_builder() {
    let dir = tempfile::tempdir().unwrap();
    let engine = server_engine(&dir);
    let mut seen_by_refresh = None;
    while_building(&engine, || {
        // The worker's timer firing while the server opens the index: it neither waits for the
        // build nor starts one of its own beside it.
        engine.refresh_indexes().unwrap();
        seen_by_refresh = Some(engine.indexed_vectors());
    });
    assert_eq!(seen_by_refresh, Some(0), "the refresh built nothing");
    assert!(engine.indexed_vectors() > 0, "the builder did");
    assert!(!engine.recall(&query("ferry island")).unwrap().is_empty());
}

#[test]
fn a_recall_waits_for_a_build_under_way_and_past_a_while_is_refused_not_answered_in_part() {
    let dir = tempfile::tempdir().unwrap();
    let wait = std::time::Duration::from_millis(300);
    let engine = server_engine(&dir).with_build_wait(wait);
    let mut during = None;
    while_building(&engine, || {
        // A request arriving while the server opens the index (here the build cannot go on
        // while it waits, so it waits in vain).
        let asked = std::time::Instant::now();
        let answer = engine.recall(&query("ferry island")).map(|hits| hits.len());
        during = Some((answer, asked.elapsed()));
    });
    let (answer, waited) = during.expect("asked during the build");
    // As long as it was told to, not the default two seconds.
    assert!(waited >= wait, "it waited for the build: {waited:?}");
    assert!(waited < std::time::Duration::from_secs(2), "it waited {waited:?}");
    let refused = answer.unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Unavailable, "{refused}");
    assert!(refused.to_string().contains("being built"), "{refused}");
    assert!(!engine.recall(&query("ferry island")).unwrap().is_empty(), "answered once built");
}

#[test]
fn a_recall_during_a_short_build_waits_for_it_and_answers_from_all_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let engine = server_engine(&dir);
    let (started, building) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            while_building(&engine, || {
                started.send(()).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(200));
            });
        });
        building.recv().unwrap();
        let hits = engine.recall(&query("ferry island")).unwrap();
        assert!(!hits.is_empty(), "answered once the build was done, not from half of it");
    });
}
