//! People in one tenant: an app that serves many people holds one key and scopes each call by
//! user. Recall, episodes and the timeline asked for one person never show another's
//! memories, and forgetting one leaves the other whole and the first in no file; on SQLite
//! and on PostgreSQL.

use std::path::Path;

use epimem_store_postgres::test_support::test_database;
use serde_json::{Value, json};

use crate::{common, postgres};

/// Two people's conversations in one tenant, long over (their days are rolled up), each with a
/// word of its own.
fn remember_two(target: &str, dir: &Path) {
    let said = |c: &str, user: &str, n: u32, content: &str, day: u32| {
        json!({"conversation": c, "user": user, "id": n.to_string(), "role": "user",
               "content": content, "timestamp": format!("2020-03-{day:02}T09:0{n}:00Z")})
        .to_string()
    };
    let lines = [
        said("alice-garden", "alice", 1, "My quoxtulip bulbs arrived for the garden", 2),
        said("alice-garden", "alice", 2, "Plant the quoxtulip bulbs before the frost", 2),
        said("bob-boat", "bob", 1, "The zephyrsail needs a new halyard", 3),
        said("bob-boat", "bob", 2, "Order the zephyrsail halyard and a shackle", 3),
    ];
    let file = dir.join("people.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    common::run_on(target, &["ingest", "--flush", file.to_str().unwrap()]);
}

fn json_of(target: &str, args: &[&str]) -> Value {
    serde_json::from_str(&common::run_on(target, args)).unwrap()
}

/// Every conversation named anywhere in a timeline (a person's, or the tenant's) walked down
/// from its top, and its words.
fn timeline_of(target: &str, user: Option<&str>) -> (Vec<String>, String) {
    let whose: Vec<&str> = user.map(|u| vec!["--user", u]).unwrap_or_default();
    let mut conversations = Vec::new();
    let mut words = String::new();
    let top = json_of(target, &[&["timeline", "--json"][..], &whose].concat());
    let mut nodes: Vec<String> = top["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap().to_owned())
        .collect();
    while let Some(id) = nodes.pop() {
        let node = json_of(target, &[&["timeline", &id, "--json"][..], &whose].concat());
        words.push_str(&node.to_string());
        for child in node["children"].as_array().unwrap() {
            let child = child.as_str().unwrap();
            if child.starts_with("toc:") {
                nodes.push(child.to_owned());
            } else {
                let episode = json_of(target, &["show", child, "--json"]);
                conversations.push(episode["conversation"].as_str().unwrap().to_owned());
            }
        }
    }
    (conversations, words)
}

/// What every backend must do; then `target` has forgotten alice.
fn two_people_never_meet_and_forget_apart(target: &str, dir: &Path) {
    remember_two(target, dir);
    let conversations = |answer: &Value, list: &str| -> Vec<String> {
        answer[list].as_array().unwrap().iter().map(|e| e["conversation"].to_string()).collect()
    };
    // Recall: each finds their own, and the other's word finds nothing of the other.
    let hers = json_of(target, &["recall", "quoxtulip bulbs", "--user", "alice", "--json"]);
    assert_eq!(conversations(&hers, "hits"), ["\"alice-garden\""], "{hers}");
    let not_his = json_of(target, &["recall", "quoxtulip bulbs", "--user", "bob", "--json"]);
    assert_eq!(conversations(&not_his, "hits"), Vec::<String>::new(), "{not_his}");
    let block =
        json_of(target, &["recall", "quoxtulip", "--user", "bob", "--budget", "300", "--json"]);
    assert_eq!(block["nothing_relevant"], true, "{block}");
    // Episodes.
    let his = json_of(target, &["episodes", "--user", "bob", "--json"]);
    assert_eq!(conversations(&his, "episodes"), ["\"bob-boat\""]);
    // The timeline, told per person.
    let (told, words) = timeline_of(target, Some("alice"));
    assert_eq!(told, ["alice-garden"]);
    assert!(!words.contains("zephyrsail") && !words.contains("halyard"), "{words}");
    let (told, words) = timeline_of(target, Some("bob"));
    assert_eq!(told, ["bob-boat"]);
    assert!(!words.contains("quoxtulip"), "{words}");
    // The tenant's timeline tells both.
    let (mut told, _) = timeline_of(target, None);
    told.sort();
    assert_eq!(told, ["alice-garden", "bob-boat"]);

    // Forgetting alice leaves bob whole.
    let forgot = json_of(target, &["forget", "--user", "alice", "--json"]);
    assert_eq!(forgot["episodes"], 1, "{forgot}");
    let everyone = json_of(target, &["recall", "quoxtulip bulbs", "--json"]);
    assert_eq!(conversations(&everyone, "hits"), Vec::<String>::new(), "{everyone}");
    let his = json_of(target, &["recall", "zephyrsail halyard", "--user", "bob", "--json"]);
    assert_eq!(conversations(&his, "hits"), ["\"bob-boat\""]);
    let left = json_of(target, &["episodes", "--json"]);
    assert_eq!(conversations(&left, "episodes"), ["\"bob-boat\""]);
    let (told, words) = timeline_of(target, None);
    assert_eq!(told, ["bob-boat"]);
    assert!(!words.contains("quoxtulip"), "{words}");
}

#[test]
fn on_sqlite_two_people_never_meet_and_forget_apart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let db = data.join("e.db");
    two_people_never_meet_and_forget_apart(db.to_str().unwrap(), dir.path());
    assert_eq!(common::in_some_file(&data, "quoxtulip"), None);
    assert!(common::in_some_file(&data, "zephyrsail").is_some());
}

#[test]
fn on_postgres_two_people_never_meet_and_forget_apart() {
    let Some(db) = test_database() else { return };
    let dir = tempfile::tempdir().unwrap();
    two_people_never_meet_and_forget_apart(&db.url, dir.path());
    common::run_on(&db.url, &["compact"]);
    let mut client = ::postgres::Client::connect(&db.url, ::postgres::NoTls).unwrap();
    client.batch_execute("CHECKPOINT").unwrap();
    let files = postgres::files(&mut client);
    assert_eq!(postgres::holding(&files, "quoxtulip"), 0, "a table file holds alice's words");
    assert!(postgres::holding(&files, "zephyrsail") > 0, "bob's words are on disk");
}

#[test]
fn over_http_a_person_is_scoped_and_forgotten_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    remember_two(db.to_str().unwrap(), dir.path());
    let server = crate::serve::Server::start(&db, "");
    let (status, page) = server.send("GET", "/v1/episodes?user=alice", None);
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["episodes"].as_array().unwrap().len(), 1);
    assert_eq!(page["episodes"][0]["conversation"], "alice-garden");
    let (_, top) = server.send("GET", "/v1/timeline?user=bob", None);
    assert!(!top["nodes"].as_array().unwrap().is_empty(), "{top}");
    assert!(!top.to_string().contains("quoxtulip"), "{top}");
    let (status, empty) = server.send("GET", "/v1/episodes?user=", None);
    assert_eq!((status, empty["error"]["code"].as_str()), (400, Some("bad_input")), "{empty}");

    let (status, forgot) = server.send("DELETE", "/v1/users/alice", None);
    assert_eq!((status, forgot["episodes"].as_u64()), (200, Some(1)), "{forgot}");
    let (_, left) = server.send("GET", "/v1/episodes", None);
    let left: Vec<&str> = left["episodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["conversation"].as_str().unwrap())
        .collect();
    assert_eq!(left, ["bob-boat"]);
}

#[test]
fn a_project_is_named_project_everywhere_and_agent_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    let server = crate::serve::Server::start(&dir.path().join("e.db"), "");
    let message = json!({"conversation": "s1", "project": "/src/shop", "role": "user",
                         "content": "Fix the flaky checkout test", "id": "1"});
    assert_eq!(server.post("/v1/messages", &message).0, 200);
    assert_eq!(server.send("POST", "/v1/conversations/s1/flush", None).0, 200);
    for name in ["project", "agent"] {
        let (status, page) = server.send("GET", &format!("/v1/episodes?{name}=/src/shop"), None);
        assert_eq!((status, page["episodes"].as_array().unwrap().len()), (200, 1), "{page}");
        let (_, none) = server.send("GET", &format!("/v1/episodes?{name}=/src/other"), None);
        assert_eq!(none["episodes"], json!([]), "{name}");
        let (_, found) =
            server.post("/v1/recall", &json!({"query": "flaky checkout", name: "/src/shop"}));
        assert_eq!(found["hits"].as_array().unwrap().len(), 1, "{name}: {found}");
    }
}
