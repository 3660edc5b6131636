//! One front door: the same recall asked through `epimem recall --json`, `POST /v1/recall`
//! and the MCP `recall` tool (its structured content) answers with the same fields and
//! values. Every process reads the same fixed clock, so that how strong a memory is "now" is
//! the same number in each.

use std::path::Path;

use rmcp::{
    ServiceExt,
    model::{CallToolRequestParams, CallToolResult},
    transport::StreamableHttpClientTransport,
};
use serde_json::{Value, json};

use crate::serve::{Server, message};

const NOW: &str = "2026-04-01T12:00:00Z";

fn epimem(db: &Path, args: &[&str]) -> Value {
    let out = crate::common::run_on_with(db.to_str().unwrap(), args, &[("EPIMEM_CLOCK", NOW)]);
    serde_json::from_str(&out).unwrap()
}

/// Two conversations closed into episodes, and one message after them not yet in one.
fn remembered(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("e.db");
    let lines = [
        message(
            "trip",
            "1",
            "user",
            "Book the ferry to Zanzibar for the 14th",
            "2026-03-02T09:00:00Z",
        ),
        message(
            "trip",
            "2",
            "assistant",
            "Ferry booked: 14 March, 08:30 from Dar.",
            "2026-03-02T09:01:00Z",
        ),
        message(
            "trip",
            "3",
            "user",
            "Which hotel did we pick in Stone Town?",
            "2026-03-09T18:00:00Z",
        ),
        message(
            "trip",
            "4",
            "assistant",
            "The Emerson Spice, three nights.",
            "2026-03-09T18:01:00Z",
        ),
        message(
            "garden",
            "1",
            "user",
            "The tomato seedlings need repotting",
            "2026-03-05T07:00:00Z",
        ),
        message(
            "garden",
            "2",
            "assistant",
            "Use the larger terracotta pots by the shed.",
            "2026-03-05T07:02:00Z",
        ),
    ];
    let file = dir.join("m.jsonl");
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&file, text.join("\n")).unwrap();
    epimem(&db, &["ingest", file.to_str().unwrap(), "--flush", "--json"]);
    let tail = message("trip", "5", "user", "Move the ferry to the 15th please", NOW);
    std::fs::write(&file, tail.to_string()).unwrap();
    epimem(&db, &["ingest", file.to_str().unwrap(), "--json"]);
    db
}

/// The MCP `recall` tool's structured content, over `/mcp` of `server`.
fn mcp_recall(server: &Server, arguments: Value) -> Value {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let transport = StreamableHttpClientTransport::from_uri(format!("{}/mcp", server.base));
        let client = ().serve(transport).await.unwrap();
        let result: CallToolResult = client
            .call_tool(CallToolRequestParams {
                meta: None,
                name: "recall".into(),
                arguments: arguments.as_object().cloned(),
                task: None,
            })
            .await
            .unwrap();
        client.cancel().await.unwrap();
        result.structured_content.expect("recall answers with structured content")
    })
}

#[test]
fn the_same_recall_answers_alike_through_the_cli_http_and_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let db = remembered(dir.path());
    // The worker never runs during the test: nothing changes between the three questions.
    let server = Server::start_with_env(
        &db,
        "[server]\ntick_seconds = 3600\n",
        &[("EPIMEM_CLOCK", NOW), ("EPIMEM_EMBEDDER", "hash")],
    );

    // Hits, with their scores and how strong each memory is now.
    let by_cli = epimem(&db, &["recall", "ferry to Zanzibar", "--limit", "3", "--json"]);
    let (status, by_http) =
        server.post("/v1/recall", &json!({"query": "ferry to Zanzibar", "limit": 3}));
    assert_eq!(status, 200, "{by_http}");
    assert!(!by_cli["hits"].as_array().unwrap().is_empty(), "{by_cli}");
    assert!(by_cli["hits"][0]["retrievability"].is_number(), "{by_cli}");
    assert_eq!(by_cli, by_http);

    // A block of lines within a budget, the open tail's line among them; the same from MCP.
    let by_cli = epimem(&db, &["recall", "ferry", "--budget", "300", "--json"]);
    let (_, by_http) = server.post("/v1/recall", &json!({"query": "ferry", "budget": 300}));
    let by_mcp = mcp_recall(&server, json!({"query": "ferry", "budget": 300}));
    let context = by_cli["context"].as_str().unwrap();
    assert!(context.contains("Ferry booked") && context.contains("15th"), "{context}");
    assert_eq!(by_cli, by_http);
    assert_eq!(by_http, by_mcp);

    // Whole episodes in a period, by its new names and by the old ones.
    let by_cli = epimem(
        &db,
        &[
            "recall",
            "hotel",
            "--budget",
            "400",
            "--episodes",
            "--since",
            "2026-03-08T00:00:00Z",
            "--json",
        ],
    );
    let (_, by_http) = server.post(
        "/v1/recall",
        &json!({"query": "hotel", "budget": 400, "episodes": true, "from": "2026-03-08T00:00:00Z"}),
    );
    let by_mcp = mcp_recall(
        &server,
        json!({"query": "hotel", "budget": 400, "episodes": true, "since": "2026-03-08T00:00:00Z"}),
    );
    assert!(by_cli["hits"][0]["title"].is_string(), "{by_cli}");
    assert!(by_cli["hits"].as_array().unwrap().iter().all(|h| h["conversation"] == "trip"));
    assert_eq!(by_cli, by_http);
    assert_eq!(by_http, by_mcp);

    // Nothing bears on it: the same empty answer everywhere.
    let by_cli = epimem(&db, &["recall", "quarterly tax filing", "--budget", "300", "--json"]);
    let by_mcp = mcp_recall(&server, json!({"query": "quarterly tax filing", "budget": 300}));
    assert_eq!(by_cli["nothing_relevant"], true, "{by_cli}");
    assert_eq!(by_cli, by_mcp);
}
