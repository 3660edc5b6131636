//! What every door answers when nothing remembered bears on a question: an empty block that
//! says so, distinct from an error, and the old full block only when asked for.

use serde_json::json;

use crate::{
    common,
    serve::{FAST_WORKER, Server, message},
};

const STORED: &str = "The quarterly budget review moved to Thursday at ten";
const RELATED: &str = "When is the quarterly budget review?";
const UNRELATED: &str = "How do I configure the Kubernetes ingress controller?";

#[test]
fn every_door_says_plainly_when_nothing_bears_on_the_question() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let server = Server::start(&db, FAST_WORKER);
    let said = message("ops", "m1", "user", STORED, "2026-03-14T09:00:00Z");
    assert_eq!(server.post("/v1/messages", &said).0, 200);
    assert_eq!(server.send("POST", "/v1/conversations/ops/flush", None).0, 200);

    // HTTP.
    let (status, found) = server.post("/v1/recall", &json!({"query": RELATED, "budget": 500}));
    assert_eq!((status, found["nothing_relevant"].as_bool()), (200, Some(false)), "{found}");
    assert!(found["context"].as_str().unwrap().contains("Thursday"), "{found}");
    let (status, none) = server.post("/v1/recall", &json!({"query": UNRELATED, "budget": 500}));
    assert_eq!((status, none["nothing_relevant"].as_bool()), (200, Some(true)), "{none}");
    assert_eq!((none["context"].as_str(), none["tokens"].as_u64()), (Some(""), Some(0)));
    let episodes = json!({"query": UNRELATED, "budget": 500, "episodes": true});
    assert_eq!(server.post("/v1/recall", &episodes).1["nothing_relevant"], true);
    let (_, filled) =
        server.post("/v1/recall", &json!({"query": UNRELATED, "budget": 500, "fill": true}));
    assert_eq!(filled["nothing_relevant"], false, "{filled}");
    assert!(filled["context"].as_str().unwrap().contains("Thursday"), "{filled}");
    let (status, error) =
        server.post("/v1/recall", &json!({"query": RELATED, "budget": 500, "min_relevance": 3}));
    assert_eq!((status, error["error"]["code"].as_str()), (400, Some("bad_input")), "{error}");
    let (status, _) = server.post("/v1/recall", &json!({"query": RELATED, "fill": true}));
    assert_eq!(status, 400, "fill needs a budget");

    // MCP (streamable HTTP).
    let text = crate::mcp::call_over_http(&server, "recall", json!({"query": UNRELATED})).unwrap();
    assert_eq!(text, "Nothing remembered bears on this.");
    let text = crate::mcp::call_over_http(&server, "recall", json!({"query": RELATED})).unwrap();
    assert!(text.contains("Thursday"), "{text}");
    drop(server);

    // The command line.
    let out = common::epimem(&db, &["recall", UNRELATED, "--budget", "500"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Nothing remembered bears on this.");
    let json = common::json_lines(&common::epimem(
        &db,
        &["recall", UNRELATED, "--budget", "500", "--json"],
    ));
    assert_eq!(
        (json[0]["nothing_relevant"].as_bool(), json[0]["tokens"].as_u64()),
        (Some(true), Some(0))
    );
    let json =
        common::json_lines(&common::epimem(&db, &["recall", RELATED, "--budget", "500", "--json"]));
    assert_eq!(json[0]["nothing_relevant"], false);
    let out = common::epimem(&db, &["recall", UNRELATED, "--budget", "500", "--fill"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Thursday"));
}
