//! `epimem serve` as agents use it: the real binary on a loopback port, driven over HTTP.

use std::{
    io::{BufRead, BufReader},
    path::Path,
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use epimem_llm::scripted::{ScriptedReply, ScriptedServer};
use serde_json::{Value, json};

/// A server process on a free loopback port, killed when dropped.
pub(crate) struct Server {
    child: Child,
    pub(crate) base: String,
    agent: ureq::Agent,
}

impl Server {
    /// Starts `epimem serve` on `db` with `config` laid over the defaults.
    pub(crate) fn start(db: &Path, config: &str) -> Self {
        Self::start_as(db, config, "default")
    }

    /// [`Server::start`] serving `tenant` (without API keys).
    pub(crate) fn start_as(db: &Path, config: &str, tenant: &str) -> Self {
        Self::spawn(db, config, tenant, Stdio::null()).0
    }

    /// [`Server::start`], with what it logs on standard error, a line at a time.
    pub(crate) fn start_logging(db: &Path, config: &str) -> (Self, mpsc::Receiver<String>) {
        let (server, stderr) = Self::spawn(db, config, "default", Stdio::piped());
        (server, crate::common::lines_of(stderr.expect("standard error piped")))
    }

    /// [`Server::start`] started by `wrapper` (a program and its arguments, followed by the
    /// server's command line), logging on standard error.
    pub(crate) fn start_wrapped(
        wrapper: &[&str],
        db: &Path,
        config: &str,
    ) -> (Self, mpsc::Receiver<String>) {
        let (server, stderr) =
            Self::spawn_with(wrapper, &[], db, config, "default", Stdio::piped());
        (server, crate::common::lines_of(stderr.expect("standard error piped")))
    }

    /// [`Server::start`] with these environment variables too.
    pub(crate) fn start_with_env(db: &Path, config: &str, env: &[(&str, &str)]) -> Self {
        Self::spawn_with(&[], env, db, config, "default", Stdio::null()).0
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process still runs.
    pub(crate) fn runs(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// A POST that may meet a server that is gone: `None` when no answer came.
    pub(crate) fn try_post(&self, path: &str, body: &Value) -> Option<(u16, Value)> {
        let url = format!("{}{path}", self.base);
        let call = self.agent.post(&url).content_type("application/json");
        let mut response = call.send(body.to_string()).ok()?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().ok()?;
        Some((status, serde_json::from_str(&text).unwrap_or(Value::String(text))))
    }

    fn spawn(
        db: &Path,
        config: &str,
        tenant: &str,
        stderr: Stdio,
    ) -> (Self, Option<std::process::ChildStderr>) {
        Self::spawn_with(&[], &[], db, config, tenant, stderr)
    }

    fn spawn_with(
        wrapper: &[&str],
        env: &[(&str, &str)],
        db: &Path,
        config: &str,
        tenant: &str,
        stderr: Stdio,
    ) -> (Self, Option<std::process::ChildStderr>) {
        // Beside the database's folder when wrapped: the wrapper may mount over that folder.
        let file = match wrapper {
            [] => db.with_extension("toml"),
            _ => db.parent().unwrap().with_extension("toml"),
        };
        std::fs::write(&file, config).unwrap();
        let mut command = match wrapper {
            [] => Command::new(env!("CARGO_BIN_EXE_epimem")),
            [program, args @ ..] => {
                let mut command = Command::new(program);
                command.args(args).arg(env!("CARGO_BIN_EXE_epimem"));
                command
            }
        };
        let mut child = command
            .args(["--db", db.to_str().unwrap(), "--config", file.to_str().unwrap()])
            .args(["--tenant", tenant])
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env("EPIMEM_EMBEDDER", "hash")
            .env_remove("EPIMEM_TENANT")
            .env_remove("EPIMEM_LLM_URL")
            .env_remove("EPIMEM_LLM_MODEL")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let base = line.trim().rsplit(' ').next().unwrap().to_owned();
        assert!(base.starts_with("http://127.0.0.1:"), "{line:?}");
        let agent = ureq::Agent::config_builder().http_status_as_error(false).build().new_agent();
        let stderr = child.stderr.take();
        (Self { child, base, agent }, stderr)
    }

    pub(crate) fn send(&self, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
        self.send_as(None, method, path, body)
    }

    /// `send` with `Authorization: Bearer key`.
    pub(crate) fn send_as(
        &self,
        key: Option<&str>,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        let auth = key.map(|k| format!("Bearer {k}")).unwrap_or_default();
        let response = match (method, body) {
            ("GET", _) => self.agent.get(&url).header("authorization", &auth).call(),
            ("DELETE", _) => self.agent.delete(&url).header("authorization", &auth).call(),
            (_, Some(body)) => self
                .agent
                .post(&url)
                .header("authorization", &auth)
                .content_type("application/json")
                .send(body),
            (_, None) => self.agent.post(&url).header("authorization", &auth).send_empty(),
        };
        let mut response = response.unwrap();
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    pub(crate) fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.send("POST", path, Some(&body.to_string()))
    }
}

impl Server {
    /// SIGKILL: no shutdown of any kind.
    pub(crate) fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, and how the process ended (within 10 s).
    pub(crate) fn stop(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "still running after SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A worker run every 0.1 s: an idle conversation closes within moments.
pub(crate) const FAST_WORKER: &str = "[server]\ntick_seconds = 0.1\nbody_limit_bytes = 4000\n";

pub(crate) fn message(
    conversation: &str,
    id: &str,
    role: &str,
    content: &str,
    time: &str,
) -> Value {
    json!({"conversation": conversation, "id": id, "role": role, "content": content, "timestamp": time})
}

#[test]
fn remember_then_the_worker_closes_then_recall_then_forget() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("e.db"), FAST_WORKER);
    // Long ago: the conversation is idle as soon as it arrives, and only the worker closes it.
    let messages = json!([
        message(
            "trip",
            "1",
            "user",
            "We are planning a trip to Lisbon in May, where should we stay?",
            "2026-03-14T09:00:00Z"
        ),
        message(
            "trip",
            "2",
            "assistant",
            "Alfama has old-town charm and fado bars; Baixa is flatter.",
            "2026-03-14T09:00:40Z"
        ),
    ]);
    let (status, added) = server.post("/v1/messages", &messages);
    assert_eq!(status, 200, "{added}");
    assert_eq!((added["inserted"].as_u64(), added["duplicates"].as_u64()), (Some(2), Some(0)));
    let placed = |answer: &Value| -> Vec<(u64, bool)> {
        let messages = answer["messages"].as_array().unwrap();
        messages.iter().map(|m| (m["seq"].as_u64().unwrap(), m["new"].as_bool().unwrap())).collect()
    };
    assert_eq!(placed(&added), [(1, true), (2, true)]);
    assert_eq!(added["messages"][1]["id"], "2");
    // The same ids again are stored once, and say where they already are.
    let (_, again) = server.post("/v1/messages", &messages);
    assert_eq!((again["inserted"].as_u64(), again["duplicates"].as_u64()), (Some(0), Some(2)));
    assert_eq!(placed(&again), [(1, false), (2, false)]);

    let started = Instant::now();
    let episodes = loop {
        let (_, page) = server.send("GET", "/v1/episodes?conversation=trip", None);
        let episodes = page["episodes"].as_array().unwrap().clone();
        if !episodes.is_empty() || started.elapsed() > Duration::from_secs(20) {
            break episodes;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(episodes.len(), 1, "the worker closed the idle conversation");
    assert_eq!(episodes[0]["boundary_reason"], "idle");
    let id = episodes[0]["id"].as_str().unwrap().to_owned();
    let (_, conversation) = server.send("GET", "/v1/conversations/trip", None);
    assert_eq!(
        (conversation["pending"].as_u64(), conversation["episodes"].as_u64()),
        (Some(0), Some(1))
    );

    let (status, found) = server.post("/v1/recall", &json!({"query": "where to stay in Lisbon"}));
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["hits"][0]["id"], id.as_str());
    assert!(found["hits"][0]["score"].as_f64().unwrap() > 0.0);
    let (_, context) = server.post("/v1/recall", &json!({"query": "Lisbon", "budget": 100}));
    assert!(context["context"].as_str().unwrap().contains("Alfama"), "{context}");
    let (_, detail) = server.send("GET", &format!("/v1/episodes/{id}"), None);
    assert_eq!(detail["messages"].as_array().unwrap().len(), 2);

    let (status, deleted) = server.send("DELETE", "/v1/conversations/trip", None);
    assert_eq!((status, deleted["episodes"].as_u64()), (200, Some(1)));
    let (_, found) = server.post("/v1/recall", &json!({"query": "where to stay in Lisbon"}));
    assert_eq!(found["hits"], json!([]));
    assert_eq!(server.send("GET", &format!("/v1/episodes/{id}"), None).0, 404);
    assert_eq!(server.send("GET", "/v1/conversations/trip", None).0, 404);
}

#[test]
fn errors_name_what_was_wrong_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("e.db"), FAST_WORKER);
    let good = message("c", "1", "user", "hello there", "2026-03-14T09:00:00Z");
    let cases: Vec<(String, u16, &str, &str)> = vec![
        ("{not json".into(), 400, "bad_input", "not JSON"),
        (json!({"conversation": "c", "role": "user"}).to_string(), 400, "bad_input", "content"),
        (
            json!([good, {"conversation": "c", "role": "robot", "content": "x"}]).to_string(),
            400,
            "bad_input",
            "[1].role",
        ),
        (
            json!({"conversation": "c", "role": "user", "content": "x", "colour": 1}).to_string(),
            400,
            "bad_input",
            "colour",
        ),
        (
            json!({"conversation": "c", "role": "user", "content": "x", "timestamp": "noon"})
                .to_string(),
            400,
            "bad_input",
            "timestamp",
        ),
        (
            json!({"conversation": "c", "role": "user", "content": "x".repeat(5000)}).to_string(),
            413,
            "payload_too_large",
            "",
        ),
    ];
    for (body, status, code, names) in cases {
        let (got, error) = server.send("POST", "/v1/messages", Some(&body));
        assert_eq!(got, status, "{body:.80}: {error}");
        assert_eq!(error["error"]["code"], code, "{error}");
        assert!(error["error"]["message"].as_str().unwrap().contains(names), "{error}");
    }
    // The batch with one bad message stored nothing, not even its good first message.
    assert_eq!(server.send("GET", "/v1/conversations/c", None).0, 404);
    let (status, error) = server.post("/v1/recall", &json!({"query": "x", "limit": 0}));
    assert_eq!((status, error["error"]["code"].as_str()), (400, Some("bad_input")));
    assert!(error["error"]["message"].as_str().unwrap().contains("limit"));
    let (status, error) = server.post("/v1/recall", &json!({"query": "x", "episodes": true}));
    assert_eq!(status, 400, "{error}");
    let (status, error) = server.send("GET", "/v1/episodes/ep_unknown", None);
    assert_eq!((status, error["error"]["code"].as_str()), (404, Some("not_found")));
    let (status, error) = server.send("GET", "/v1/episodes?cursor=zz", None);
    assert!(status == 400 && error["error"]["message"].as_str().unwrap().contains("cursor"));
    assert_eq!(server.send("DELETE", "/v1/conversations/never", None).0, 404);
}

#[test]
fn the_openapi_document_lists_every_route() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("e.db"), FAST_WORKER);
    let (status, document) = server.send("GET", "/v1/openapi.json", None);
    assert_eq!(status, 200);
    assert!(document["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths: Vec<&str> =
        document["paths"].as_object().unwrap().keys().map(String::as_str).collect();
    for path in [
        "/v1/messages",
        "/v1/recall",
        "/v1/project-memory",
        "/v1/episodes",
        "/v1/episodes/{id}",
        "/v1/conversations/{conversation}",
        "/v1/conversations/{conversation}/flush",
        "/v1/tenant",
        "/healthz",
        "/readyz",
    ] {
        assert!(paths.contains(&path), "{path} missing from {paths:?}");
    }
    assert_eq!(server.send("GET", "/healthz", None), (200, Value::String("ok".into())));
}

#[test]
fn pages_of_episodes_follow_their_cursor() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("e.db"), FAST_WORKER);
    for c in ["a", "b", "c"] {
        let m = message(
            c,
            "1",
            "user",
            &format!("conversation {c} about its own subject"),
            "2026-03-14T09:00:00Z",
        );
        server.post("/v1/messages", &m);
        let (status, flushed) = server.send("POST", &format!("/v1/conversations/{c}/flush"), None);
        assert_eq!(status, 200, "{flushed}");
    }
    let mut seen: Vec<serde_json::Value> = Vec::new();
    let mut path = "/v1/episodes?limit=2".to_owned();
    loop {
        let (_, page) = server.send("GET", &path, None);
        seen.extend(page["episodes"].as_array().unwrap().iter().map(|e| e["id"].clone()));
        if seen.len() == 2 {
            // Deleting what the first page showed must not make the next one skip an episode.
            let first = seen[0].as_str().unwrap();
            let (status, _) = server.send("DELETE", &format!("/v1/episodes/{first}"), None);
            assert_eq!(status, 200);
        }
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/v1/episodes?limit=2&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen.len(), 3);
    seen.dedup();
    assert_eq!(seen.len(), 3, "no episode twice");
}

#[test]
fn serve_refuses_an_address_beyond_loopback_without_keys() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_epimem"))
        .args(["--db", dir.path().join("e.db").to_str().unwrap(), "serve", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("loopback"));
}

#[test]
fn sigterm_stops_the_server_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(&dir.path().join("e.db"), FAST_WORKER);
    let status = server.stop();
    assert!(status.success(), "{status}");
}

#[test]
fn metrics_count_requests_by_route_and_what_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let episode = r#"{"segments": [{"start_message_index": 0, "end_message_index": 1, "num_messages": 2,
        "title": "A greeting", "summary": "Someone says hello.", "surprise_level": "low"}]}"#;
    let model = ScriptedServer::start([ScriptedReply::Answer(episode.into())]);
    let config = format!("{FAST_WORKER}\n[llm]\nurl = \"{}\"\nmodel = \"m\"\n", model.url());
    let server = Server::start(&dir.path().join("e.db"), &config);
    let m = json!([
        message("c", "1", "user", "hello there", "2026-03-14T09:00:00Z"),
        message("c", "2", "assistant", "hello, how can I help?", "2026-03-14T09:00:05Z")
    ]);
    server.post("/v1/messages", &m);
    server.send("POST", "/v1/messages", Some("{not json"));
    server.send("POST", "/v1/conversations/c/flush", None);
    let (status, text) = server.send("GET", "/metrics", None);
    assert_eq!(status, 200);
    let text = text.as_str().unwrap();
    for line in [
        r#"epimem_http_requests_total{method="POST",route="/v1/messages",status="200"} 1"#,
        r#"epimem_http_requests_total{method="POST",route="/v1/messages",status="400"} 1"#,
        r#"epimem_http_request_duration_seconds_count{method="POST",route="/v1/messages"} 2"#,
        "epimem_messages 2",
        "epimem_episodes 1",
        "epimem_pending_messages 0",
        r#"epimem_jobs{state="queued"} 0"#,
        r#"epimem_llm_calls{stage="segmentation"} 1"#,
        r#"epimem_llm_failures{stage="segmentation"} 0"#,
    ] {
        assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
    }
}

#[test]
fn bench_serve_prints_its_table_without_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_epimem"))
        .args(["--db", dir.path().join("unused.db").to_str().unwrap()])
        .args(["bench", "serve", "--seconds", "3", "--batch", "10"])
        .env("EPIMEM_EMBEDDER", "hash")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for phase in ["one message per request", "batches of 10", "5 at a time, pauses"] {
        let row = text.lines().find(|l| l.starts_with(phase)).unwrap_or_else(|| panic!("{text}"));
        let columns: Vec<&str> = row[phase.len()..].split_whitespace().collect();
        assert!(columns[0].parse::<f64>().unwrap() > 0.0, "messages were added: {row}");
        // messages/s, add p50, add p99, recalls/s, recall p50, recall p99, recall max,
        // errors, …
        assert_eq!(columns.get(7), Some(&"0"), "no errors: {row}");
    }
}

/// Given a store, the load goes into it, in the tenant asked for, and stays there.
#[test]
fn bench_serve_loads_the_store_and_tenant_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kept.db");
    let out = Command::new(env!("CARGO_BIN_EXE_epimem"))
        .args(["--tenant", "loaded", "bench", "serve", "--seconds", "3", "--batch", "10", "--db"])
        .arg(&db)
        .env("EPIMEM_EMBEDDER", "hash")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let messages = |tenant: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_epimem"))
            .args(["--tenant", tenant, "stats", "--json", "--db"])
            .arg(&db)
            .env("EPIMEM_EMBEDDER", "hash")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stats: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        stats["messages"].as_u64().unwrap()
    };
    assert!(messages("loaded") > 0);
    assert_eq!(messages("default"), 0);
}
/// A job that cannot run is parked with its error, and the API shows it (in the tenant's jobs
/// and its conversation's), never to another tenant.
#[test]
fn a_parked_job_is_visible_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let server = Server::start(&db, FAST_WORKER);
    let (status, _) = server.post(
        "/v1/messages",
        &json!({"conversation": "c", "role": "user",
                                                          "content": "hello"}),
    );
    assert_eq!(status, 200);
    // A job whose payload this version cannot read (as one written by a newer version).
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    let payload = json!({"kind": "segment", "conversation": {"tenant": "default",
                         "conversation": "c"}, "upto_seq": "not a number"});
    conn.execute("INSERT INTO jobs (payload) VALUES (?1)", [payload.to_string()]).unwrap();
    drop(conn);

    let started = Instant::now();
    let jobs = loop {
        let (status, answer) = server.send("GET", "/v1/jobs", None);
        assert_eq!(status, 200, "{answer}");
        let jobs = answer["jobs"].as_array().unwrap().clone();
        if jobs.iter().any(|j| j["state"] == "parked") {
            break jobs;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "never parked: {answer}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let parked = jobs.iter().find(|j| j["state"] == "parked").unwrap();
    assert_eq!(parked["conversation"], Value::Null, "unreadable: {parked}");
    assert!(parked["last_error"].as_str().unwrap().contains("unreadable job"), "{parked}");
    let (status, answer) = server.send("GET", "/v1/jobs?limit=0", None);
    assert_eq!(status, 400, "{answer}");
    let (status, answer) = server.send("GET", "/v1/jobs?colour=red", None);
    assert_eq!(status, 400, "{answer}");
    let (_, conversation) = server.send("GET", "/v1/conversations/c", None);
    assert!(conversation["jobs"].is_array(), "{conversation}");
}
