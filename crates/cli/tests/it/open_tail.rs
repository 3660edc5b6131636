//! Every door recalls a message as soon as it is acknowledged, long before its conversation
//! closes into an episode, and another process on the same database does too.

use serde_json::json;

use crate::{common, serve::Server};

const STORED: &str = "The quarterly budget review moved to Thursday at ten";
const ASKED: &str = "When is the quarterly budget review?";

#[test]
fn every_door_recalls_a_message_stored_a_moment_ago() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    // The default worker: a conversation said now stays open for minutes.
    let server = Server::start(&db, "");
    let said = json!({"conversation": "ops", "id": "m1", "role": "user", "content": STORED});
    assert_eq!(server.post("/v1/messages", &said).0, 200);

    // HTTP, at once.
    let (status, found) = server.post("/v1/recall", &json!({"query": ASKED, "budget": 500}));
    assert_eq!((status, found["nothing_relevant"].as_bool()), (200, Some(false)), "{found}");
    let context = found["context"].as_str().unwrap();
    assert!(context.contains("Thursday at ten"), "{found}");
    assert!(context.contains("· ops · not yet an episode"), "{found}");
    assert_eq!(server.send("GET", "/v1/episodes", None).1["episodes"], json!([]), "none closed");

    // MCP over HTTP: remembered in one session, recalled in the next.
    let plants = json!({"conversation": "ops", "id": "m2", "role": "user",
                        "content": "Priya waters the office plants every Monday morning"});
    let remembered =
        crate::mcp::call_over_http(&server, "remember", json!({"messages": [plants]})).unwrap();
    assert!(remembered.contains("Remembered 1"), "{remembered}");
    let query = json!({"query": "Who waters the office plants?"});
    let text = crate::mcp::call_over_http(&server, "recall", query).unwrap();
    assert!(text.contains("Priya") && text.contains("not yet an episode"), "{text}");

    // The command line: another process on the database the server writes.
    let out = common::epimem(&db, &["recall", ASKED, "--budget", "500"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Thursday at ten"));
    drop(server);

    // And what the command line stores, it recalls on its next call.
    let line = json!({"conversation": "home", "role": "user",
                      "content": "The spare key is under the blue flower pot"});
    let file = dir.path().join("one.jsonl");
    std::fs::write(&file, format!("{line}\n")).unwrap();
    assert!(common::epimem(&db, &["ingest", file.to_str().unwrap()]).status.success());
    let out = common::epimem(&db, &["recall", "Where is the spare key?", "--budget", "500"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("blue flower pot") && text.contains("· home · not yet"), "{text}");
}
