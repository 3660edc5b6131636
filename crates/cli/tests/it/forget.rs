//! Forgetting deletes: after `forget`, the forgotten text is in no file under the database's
//! folder, while what was kept is still there.

use std::path::Path;

use serde_json::Value;

use crate::common;

/// Runs the binary and reads its JSON lines (failing the test if it fails).
fn epimem(db: &Path, args: &[&str]) -> Vec<Value> {
    common::json_lines(&common::epimem(db, args))
}

/// The hits of a recall without a budget.
fn recalled(db: &Path, args: &[&str]) -> Vec<Value> {
    common::listed(&common::epimem(db, args), "hits")
}

/// Two conversations; in "trip", two episodes a day apart, each with a word of its own.
fn ingested(dir: &Path) -> std::path::PathBuf {
    let line = |conversation: &str, n: u32, day: u32, content: &str| {
        serde_json::json!({
            "conversation": conversation, "role": if n.is_multiple_of(2) { "user" } else { "assistant" },
            "content": content, "timestamp": format!("2026-03-{day:02}T10:{n:02}:00Z"),
        })
        .to_string()
    };
    let lines = [
        line("trip", 0, 1, "We should visit the xylophonequartz museum in Lisbon."),
        line("trip", 1, 1, "The xylophonequartz museum opens at nine."),
        line("trip", 2, 5, "Let us book the marmaladecomet ferry to Cacilhas."),
        line("trip", 3, 5, "The marmaladecomet ferry leaves every twenty minutes."),
        line("cooking", 0, 2, "My grandmother's quindimbrioche recipe needs coconut."),
        line("cooking", 1, 2, "Quindimbrioche bakes in a water bath."),
    ];
    let file = dir.join("in.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let db = dir.join("data").join("e.db");
    epimem(&db, &["ingest", file.to_str().unwrap(), "--flush", "--json"]);
    std::fs::remove_file(&file).unwrap();
    db
}

#[test]
fn a_forgotten_episodes_words_are_in_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = ingested(dir.path());
    let data = db.parent().unwrap();
    let hits = recalled(&db, &["recall", "xylophonequartz", "--json", "--conversation", "trip"]);
    let id = hits[0]["id"].as_str().unwrap().to_owned();
    assert!(common::in_some_file(data, "xylophonequartz").is_some(), "the scan finds stored text");

    epimem(&db, &["forget", &id, "--json"]);
    assert_eq!(common::in_some_file(data, "xylophonequartz"), None);
    assert!(common::in_some_file(data, "marmaladecomet").is_some(), "the other episode is kept");
    assert!(
        recalled(&db, &["recall", "xylophonequartz museum", "--json"])
            .iter()
            .all(|h| h["id"] != id)
    );
    let kept = recalled(&db, &["recall", "marmaladecomet", "--json"]);
    assert!(!kept.is_empty());
}

#[test]
fn a_forgotten_conversation_is_in_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = ingested(dir.path());
    let data = db.parent().unwrap();
    let before = epimem(&db, &["stats", "--json"]);
    // Recalled once, so the saved search index holds the words too.
    assert!(!recalled(&db, &["recall", "quindimbrioche", "--json"]).is_empty());
    assert!(data.join("e.db.search").is_dir());
    let out = epimem(&db, &["forget", "--conversation", "cooking", "--json"]);
    assert_eq!(out[0]["episodes"], 1);
    assert_eq!(common::in_some_file(data, "quindimbrioche"), None);
    assert!(common::in_some_file(data, "xylophonequartz").is_some());
    let after = epimem(&db, &["stats", "--json"]);
    assert_eq!(after[0]["conversations"], before[0]["conversations"].as_u64().unwrap() - 1);
    assert_eq!(after[0]["messages"], 4);
    let hits = recalled(&db, &["recall", "quindimbrioche coconut", "--json"]);
    assert!(hits.iter().all(|h| h["conversation"] == "trip"), "{hits:?}");
    // A conversation that is not there is an error that names it.
    let missing = common::epimem(&db, &["forget", "--conversation", "cooking"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cooking"));
}

#[test]
fn a_forgotten_tenant_is_in_no_file_and_another_tenant_keeps_its_memory() {
    let dir = tempfile::tempdir().unwrap();
    let db = ingested(dir.path());
    let data = db.parent().unwrap();
    let other = dir.path().join("other.jsonl");
    let line = r#"{"conversation": "o", "role": "user", "content": "The plumbago hedge needs water", "timestamp": "2026-03-01T10:00:00Z"}"#;
    std::fs::write(&other, line).unwrap();
    let path = other.to_str().unwrap();
    epimem(&db, &["--tenant", "other", "ingest", path, "--flush", "--json"]);
    assert!(!recalled(&db, &["recall", "quindimbrioche", "--json"]).is_empty());
    // Which to forget must be said: an episode, a conversation or the whole tenant.
    assert!(!common::epimem(&db, &["forget"]).status.success());
    let out = epimem(&db, &["forget", "--whole-tenant", "--json"]);
    assert_eq!(out[0]["episodes"].as_u64(), Some(3));
    for word in ["quindimbrioche", "xylophonequartz", "marmaladecomet"] {
        assert_eq!(common::in_some_file(data, word), None, "{word}");
    }
    assert_eq!(epimem(&db, &["stats", "--json"])[0]["messages"], 0);
    let kept = recalled(&db, &["--tenant", "other", "recall", "plumbago hedge", "--json"]);
    assert_eq!(kept.len(), 1, "{kept:?}");
}

#[test]
fn a_corrected_title_is_searched_and_its_versions_go_with_the_episode() {
    let dir = tempfile::tempdir().unwrap();
    let db = ingested(dir.path());
    let data = db.parent().unwrap();
    let hits = recalled(&db, &["recall", "xylophonequartz", "--json", "--conversation", "trip"]);
    let id = hits[0]["id"].as_str().unwrap().to_owned();
    let old_title = hits[0]["title"].as_str().unwrap().to_owned();

    let edited = epimem(&db, &["edit", &id, "--title", "Okapiverdigris outing", "--json"]);
    assert_eq!(edited[0]["title"], "Okapiverdigris outing");
    let found = recalled(&db, &["recall", "okapiverdigris", "--json"]);
    assert_eq!(found[0]["id"], id.as_str(), "found by its new title");
    // Bad corrections are refused, naming what is wrong, and change nothing.
    for (args, said) in [
        (vec!["edit", id.as_str(), "--title", " "], "title cannot be empty"),
        (vec!["edit", id.as_str()], "--title"),
        (vec!["edit", "ep_nope", "--title", "x"], "not found"),
    ] {
        let out = common::epimem(&db, &args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(said), "{args:?}: {err}");
    }
    let shown = epimem(&db, &["show", &id, "--json"]);
    assert_eq!(shown[0]["title"], "Okapiverdigris outing");
    assert_eq!(shown[0]["versions"][0]["title"], old_title.as_str(), "the old title, kept");
    assert_eq!(shown[0]["versions"][0]["version"], 1);
    assert!(shown[0]["memory"]["retrievability"].as_f64().is_some(), "{}", shown[0]);
    let text = common::epimem(&db, &["show", &id]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("earlier versions:") && text.contains(&old_title), "{text}");
    assert!(text.contains("memory: "), "{text}");

    // The old title, kept as a version, goes with the episode when it is forgotten.
    assert!(old_title.to_lowercase().contains("xylophonequartz"), "{old_title}");
    assert!(common::in_some_file(data, "Okapiverdigris").is_some());
    epimem(&db, &["forget", &id, "--json"]);
    assert_eq!(common::in_some_file(data, "Okapiverdigris"), None, "the new title is in no file");
    assert_eq!(common::in_some_file(data, "xylophonequartz"), None, "nor the old one: {old_title}");
}
