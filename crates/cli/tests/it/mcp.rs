//! The MCP tools as a client sees them: `epimem mcp` started over stdio by an rmcp client, and
//! `/mcp` of a running `epimem serve`.

use rmcp::{
    ServiceExt,
    model::{CallToolRequestParams, CallToolResult},
    service::{RoleClient, RunningService},
    transport::{
        StreamableHttpClientTransport, TokioChildProcess,
        streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use serde_json::{Value, json};

use crate::{
    keys::create_key,
    serve::{FAST_WORKER, Server},
};

type Client = RunningService<RoleClient, ()>;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

async fn call(client: &Client, tool: &str, arguments: Value) -> Result<String, rmcp::ServiceError> {
    let result: CallToolResult = client
        .call_tool(CallToolRequestParams {
            meta: None,
            name: tool.to_owned().into(),
            arguments: arguments.as_object().cloned(),
            task: None,
        })
        .await?;
    Ok(result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.clone()).collect())
}

/// One tool call over `/mcp` of `server`, in a session of its own: the text it answered, or
/// the error (its message and `data.code`, debug-printed).
pub(crate) fn call_over_http(
    server: &Server,
    tool: &str,
    arguments: Value,
) -> Result<String, String> {
    runtime().block_on(async {
        let transport = StreamableHttpClientTransport::from_uri(format!("{}/mcp", server.base));
        let client: Client = ().serve(transport).await.unwrap();
        let said = call(&client, tool, arguments).await.map_err(|e| format!("{e:?}"));
        client.cancel().await.unwrap();
        said
    })
}

/// `epimem mcp` over stdio on a new database in `dir`, its worker closing silent conversations
/// at once.
async fn stdio_client(dir: &std::path::Path) -> Client {
    let (db, config) = (dir.join("e.db"), dir.join("c.toml"));
    std::fs::write(&config, FAST_WORKER).unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_epimem"));
    command
        .args(["--db", db.to_str().unwrap(), "--config", config.to_str().unwrap(), "mcp"])
        .env("EPIMEM_EMBEDDER", "hash")
        .env_remove("EPIMEM_TENANT");
    ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap()
}

fn message(id: &str, content: &str) -> Value {
    json!({"conversation": "ops", "id": id, "role": "user", "content": content,
           "timestamp": "2026-03-14T09:00:00Z"})
}

#[test]
fn stdio_remember_recall_and_forget() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let client = stdio_client(dir.path()).await;

        let tools = client.list_tools(Default::default()).await.unwrap();
        let mut names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_ref()).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "forget",
                "get_episode",
                "list_episodes",
                "next_turn",
                "project_memory",
                "recall",
                "remember",
                "timeline"
            ]
        );
        assert!(tools.tools.iter().all(|t| t.description.as_ref().is_some_and(|d| d.len() > 40)));

        let said = call(
            &client,
            "remember",
            json!({"messages": [
                message("1", "The nightly backup to S3 fails with access denied on prod-backups"),
                message("2", "The backup role needs kms:GenerateDataKey for the bucket key"),
            ]}),
        )
        .await
        .unwrap();
        assert!(said.contains("Remembered 2"), "{said}");

        // A bad message is refused with the HTTP API's code, and nothing of its call is kept.
        let refused = call(
            &client,
            "remember",
            json!({"messages": [
                message("3", "fine"), {"conversation": "ops", "role": "robot", "content": "x"}
            ]}),
        )
        .await
        .unwrap_err();
        let text = format!("{refused:?}");
        assert!(text.contains("messages[1].role") && text.contains("bad_input"), "{text}");

        // The conversation is long silent: the worker closes it within moments.
        let mut listed = Value::Null;
        for _ in 0..100 {
            listed =
                serde_json::from_str(&call(&client, "list_episodes", json!({})).await.unwrap())
                    .unwrap();
            if listed["episodes"].as_array().is_some_and(|a| !a.is_empty()) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let episodes = listed["episodes"].as_array().unwrap();
        assert_eq!(episodes.len(), 1, "{listed}");
        assert_eq!(episodes[0]["message_count"], 2, "the refused call stored nothing");
        let id = episodes[0]["id"].as_str().unwrap();
        let full: Value =
            serde_json::from_str(&call(&client, "get_episode", json!({"id": id})).await.unwrap())
                .unwrap();
        assert_eq!(full["messages"].as_array().unwrap().len(), 2);

        let recalled =
            call(&client, "recall", json!({"query": "why does the backup fail?"})).await.unwrap();
        assert!(recalled.contains("kms:GenerateDataKey"), "{recalled}");
        let forgot = call(&client, "forget", json!({"conversation": "ops"})).await.unwrap();
        assert!(forgot.contains("1 episode"), "{forgot}");
        let recalled =
            call(&client, "recall", json!({"query": "why does the backup fail?"})).await.unwrap();
        assert!(recalled.starts_with("Nothing remembered"), "{recalled}");
        let both = call(&client, "forget", json!({"episode": id, "conversation": "ops"})).await;
        assert!(format!("{both:?}").contains("exactly one"), "{both:?}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn stdio_recalls_what_was_just_remembered() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let client = stdio_client(dir.path()).await;
        // Said now: the conversation stays open, no episode holds it yet.
        let fresh = json!({"conversation": "ops", "id": "1", "role": "user",
                           "content": "The staging database password rotates every Tuesday"});
        let said = call(&client, "remember", json!({"messages": [fresh]})).await.unwrap();
        assert!(said.contains("Remembered 1"), "{said}");
        let query = json!({"query": "When does the staging database password rotate?"});
        let recalled = call(&client, "recall", query).await.unwrap();
        assert!(recalled.contains("every Tuesday"), "{recalled}");
        assert!(recalled.contains("not yet an episode"), "{recalled}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn any_agent_reads_a_projects_work_memory_over_mcp() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let client = stdio_client(dir.path()).await;
        let work = |id: &str, role: &str, content: &str, metadata: Value| {
            json!({"conversation": "agent-run-1", "agent": "/src/shop", "id": id, "role": role,
                   "content": content, "timestamp": "2026-03-14T09:00:00Z", "metadata": metadata})
        };
        let failed = json!({"action": {"kind": "command", "tool": "shell", "subject": "make test", "failed": true}});
        call(
            &client,
            "remember",
            json!({"messages": [
                work("1", "user", "Find out why the invoice PDF renders without the logo", json!({})),
                work("2", "tool", "$ make test [failed]\nlogo.png not found", failed),
                work("3", "assistant", "The logo path is relative to the wrong folder.", json!({})),
            ]}),
        )
        .await
        .unwrap();
        let mut told = String::new();
        for _ in 0..100 {
            told = call(&client, "project_memory", json!({"project": "/src/shop"})).await.unwrap();
            if !told.is_empty() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert!(told.contains("Recent work") && told.to_lowercase().contains("invoice pdf"), "{told}");
        assert!(told.contains("failed: make test"), "{told}");
        let matched = call(
            &client,
            "project_memory",
            json!({"project": "/src/shop", "prompt": "the invoice PDF logo is missing again"}),
        )
        .await
        .unwrap();
        assert!(matched.contains("Earlier work"), "{matched}");
        // Recall chooses here: a prompt that shares no words and little meaning with the
        // project's work is told nothing.
        let unrelated = json!({"project": "/src/shop", "prompt": "bump the release version"});
        assert_eq!(call(&client, "project_memory", unrelated).await.unwrap(), "");
        let other = call(&client, "project_memory", json!({"project": "/src/blog"})).await.unwrap();
        assert_eq!(other, "");
        // Recall can keep to one project's sessions too.
        let query = |project: &str| json!({"query": "invoice PDF logo", "project": project});
        let recalled = call(&client, "recall", query("/src/shop")).await.unwrap();
        assert!(recalled.contains("logo path"), "{recalled}");
        let elsewhere = call(&client, "recall", query("/src/blog")).await.unwrap();
        assert!(elsewhere.starts_with("Nothing remembered"), "{elsewhere}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn the_server_offers_the_same_tools_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("e.db"), FAST_WORKER);
    let (status, _) =
        server.post("/v1/messages", &message("1", "Standup moved to 9:30 on Mondays"));
    assert_eq!(status, 200);
    assert_eq!(server.send("POST", "/v1/conversations/ops/flush", None).0, 200);
    runtime().block_on(async {
        let transport = StreamableHttpClientTransport::from_uri(format!("{}/mcp", server.base));
        let client: Client = ().serve(transport).await.unwrap();
        let recalled =
            call(&client, "recall", json!({"query": "when is the standup?"})).await.unwrap();
        assert!(recalled.contains("9:30"), "{recalled}");
        let missing = call(&client, "get_episode", json!({"id": "ep_none"})).await.unwrap_err();
        assert!(format!("{missing:?}").contains("not_found"), "{missing:?}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn recall_over_mcp_hands_back_the_facts_first() {
    let model = crate::llm::fact_model();
    let dir = tempfile::tempdir().unwrap();
    let config = format!("{FAST_WORKER}\n[llm]\nurl = \"{}\"\nmodel = \"m\"\n", model.url());
    let server = Server::start(&dir.path().join("e.db"), &config);
    let said = json!([
        message("1", "My sister married Rui yesterday in Porto!"),
        message("2", "Congratulations!")
    ]);
    assert_eq!(server.post("/v1/messages", &said).0, 200);
    assert_eq!(server.send("POST", "/v1/conversations/ops/flush", None).0, 200);
    runtime().block_on(async {
        let transport = StreamableHttpClientTransport::from_uri(format!("{}/mcp", server.base));
        let client: Client = ().serve(transport).await.unwrap();
        let recalled =
            call(&client, "recall", json!({"query": "who did the sister marry?"})).await.unwrap();
        assert!(
            recalled.starts_with("Known facts:\n- Ana's sister married Rui in Porto"),
            "{recalled}"
        );
        assert!(recalled.contains("My sister married Rui"), "the lines follow: {recalled}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn over_http_the_tools_work_in_the_keys_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let (acme, globex) = (create_key(&db, "acme"), create_key(&db, "globex"));
    let server = Server::start(&db, FAST_WORKER);
    let body = message("1", "The quarterly offsite is in Porto").to_string();
    assert_eq!(server.send_as(Some(&acme), "POST", "/v1/messages", Some(&body)).0, 200);
    assert_eq!(server.send_as(Some(&acme), "POST", "/v1/conversations/ops/flush", None).0, 200);
    runtime().block_on(async {
        let connect = |key: &str| {
            let config =
                StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", server.base))
                    .auth_header(key.to_owned());
            ().serve(StreamableHttpClientTransport::from_config(config))
        };
        let query = json!({"query": "where is the offsite?"});
        let client: Client = connect(&acme).await.unwrap();
        assert!(call(&client, "recall", query.clone()).await.unwrap().contains("Porto"));
        client.cancel().await.unwrap();
        let client: Client = connect(&globex).await.unwrap();
        let recalled = call(&client, "recall", query.clone()).await.unwrap();
        assert!(recalled.starts_with("Nothing remembered"), "{recalled}");
        client.cancel().await.unwrap();
        assert!(connect("epm_wrong").await.is_err(), "a bad key cannot open a session");
    });
}

#[test]
fn the_stdio_server_opens_the_index_at_start_and_says_why_it_builds_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let lines = r#"{"conversation": "ops", "role": "user", "content": "the nightly backup failed on the bucket", "timestamp": "2026-03-14T09:00:00Z"}"#;
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, lines).unwrap();
    let ingest = ["ingest", input.to_str().unwrap(), "--flush"];
    assert!(crate::common::epimem(&db, &ingest).status.success());
    assert!(crate::common::epimem(&db, &["recall", "backup"]).status.success());
    std::fs::remove_dir_all(dir.path().join("e.db.search")).unwrap();
    // No client speaks yet: the index is opened as soon as the process starts.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_epimem"))
        .args(["--db", db.to_str().unwrap(), "mcp"])
        .env("EPIMEM_EMBEDDER", "hash")
        .env_remove("EPIMEM_TENANT")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let log = crate::common::lines_of(child.stderr.take().unwrap());
    let mut said = Vec::new();
    crate::common::line_with(&log, "is ready", &mut said);
    drop(child.stdin.take()); // the client goes away before it ever spoke
    let status = child.wait().unwrap();
    assert!(status.success(), "a client that leaves before its session is no failure: {status}");
    assert!(
        said.iter().any(|l| l.contains("building the search index of tenant default")),
        "{said:?}"
    );
}
