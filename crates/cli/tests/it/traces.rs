//! Traces as a collector receives them: `epimem serve` sending OTLP to a receiver that is not
//! ours (oteltest's, from PyPI: scripts/otel-receiver.sh), one span tree per request, and no
//! message text on any span unless the settings ask for it.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use epimem_llm::scripted::{ScriptedReply, ScriptedServer};
use serde_json::{Value, json};

use crate::serve::{Server, message};

/// What the conversation says and what is asked of it: none of it may be on a span.
const SAID: [&str; 2] = [
    "Biscuit the beagle chewed the zebra-striped sofa",
    "Then keep Biscuit out of the living room",
];
const ASKED: &str = "what did Biscuit chew";
const TITLE: &str = "Quokka furniture incident";

/// A trace context a caller sends (W3C `traceparent`): its trace and its span.
const CALLER_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN: &str = "b7ad6b7169203331";

/// oteltest's receiver, printing each span it receives as a JSON line.
struct Receiver {
    child: Child,
    spans: mpsc::Receiver<Value>,
    endpoint: String,
}

impl Receiver {
    fn start() -> Option<Self> {
        let Some(python) = std::env::var_os("EPIMEM_TEST_OTLP") else {
            assert!(
                std::env::var_os("EPIMEM_REQUIRE_OTLP").is_none(),
                "EPIMEM_REQUIRE_OTLP is set but EPIMEM_TEST_OTLP is not: run scripts/test.sh \
                 (scripts/otel-receiver.sh installs the receiver)"
            );
            eprintln!("skipped: no OTLP receiver (EPIMEM_TEST_OTLP; scripts/otel-receiver.sh)");
            return None;
        };
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/otel/receive.py");
        let mut child = Command::new(python)
            .arg(script)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the receiver starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        let endpoint = format!("http://127.0.0.1:{}", first["port"]);
        let (send, spans) = mpsc::channel();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if send.send(serde_json::from_str(&line).unwrap()).is_err() {
                    break;
                }
            }
        });
        Some(Self { child, spans, endpoint })
    }

    /// The spans received until `done` holds of them (or 30 s passed, which fails).
    fn spans_until(&self, done: impl Fn(&Spans) -> bool) -> Spans {
        let mut spans = Spans(Vec::new());
        let started = Instant::now();
        while !done(&spans) {
            let left = Duration::from_secs(30).saturating_sub(started.elapsed());
            match self.spans.recv_timeout(left) {
                Ok(span) => spans.0.push(span),
                Err(_) => panic!("the spans awaited did not arrive; got {:#?}", spans.names()),
            }
        }
        spans
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Spans(Vec<Value>);

impl Spans {
    fn names(&self) -> Vec<&str> {
        self.0.iter().map(|s| s["name"].as_str().unwrap()).collect()
    }

    fn named(&self, name: &str) -> Vec<&Value> {
        self.0.iter().filter(|s| s["name"] == name).collect()
    }

    fn one(&self, name: &str) -> &Value {
        let found = self.named(name);
        assert_eq!(found.len(), 1, "one span {name:?} in {:#?}", self.names());
        found[0]
    }

    fn children(&self, parent: &Value) -> Vec<&Value> {
        self.0.iter().filter(|s| s["parent_span_id"] == parent["span_id"]).collect()
    }

    /// The child of `parent` named `name`.
    fn child(&self, parent: &Value, name: &str) -> &Value {
        let children = self.children(parent);
        let found: Vec<_> = children.iter().filter(|s| s["name"] == name).collect();
        assert!(
            found.len() == 1,
            "one {name:?} under {}: {:?}",
            parent["name"],
            children.iter().map(|s| &s["name"]).collect::<Vec<_>>()
        );
        found[0]
    }

    /// Every span under `root`, at any depth.
    fn below(&self, root: &Value) -> Vec<&Value> {
        let mut found = Vec::new();
        let mut parents = vec![root];
        while let Some(parent) = parents.pop() {
            for child in self.children(parent) {
                found.push(child);
                parents.push(child);
            }
        }
        found
    }
}

/// A model that cuts every batch into one episode.
fn model() -> ScriptedServer {
    let model = ScriptedServer::start([]);
    model.otherwise(|asked| {
        let n = asked.message("user").lines().filter(|l| l.starts_with('[')).count();
        let segment = json!({"start_message_index": 0, "end_message_index": n.max(1) - 1,
            "num_messages": n, "title": TITLE, "summary": "A dog and a sofa.",
            "surprise_level": "low"});
        ScriptedReply::Answer(json!({ "segments": [segment] }).to_string())
    });
    model
}

/// A server sending traces to `receiver` (with `env` besides) is told the conversation, closes
/// it, and is asked about it with the caller's trace context; then stops. Its spans, once
/// every request's has arrived.
fn session(receiver: &Receiver, env: &[(&str, &str)]) -> Spans {
    let dir = tempfile::tempdir().unwrap();
    let model = model();
    let config = format!("[llm]\nurl = \"{}\"\nmodel = \"m\"\n", model.url());
    let mut vars = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint.as_str()),
        ("OTEL_BSP_SCHEDULE_DELAY", "50"),
    ];
    vars.extend_from_slice(env);
    let mut server = Server::start_with_env(&dir.path().join("m.db"), &config, &vars);
    let said = json!([
        message("c", "1", "user", SAID[0], "2026-03-14T09:00:00Z"),
        message("c", "2", "assistant", SAID[1], "2026-03-14T09:01:00Z"),
    ]);
    assert_eq!(server.post("/v1/messages", &said).0, 200);
    let (status, flushed) = server.send("POST", "/v1/conversations/c/flush", None);
    assert_eq!((status, flushed["episodes_closed"].as_u64()), (200, Some(1)), "{flushed}");
    let mut answer = ureq::post(&format!("{}/v1/recall", server.base))
        .header("traceparent", &format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01"))
        .content_type("application/json")
        .send(json!({"query": ASKED}).to_string())
        .unwrap();
    let recalled: Value =
        serde_json::from_str(&answer.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(recalled["hits"][0]["title"], TITLE, "{recalled}");
    assert!(server.stop().success());
    receiver.spans_until(|spans| {
        ["POST /v1/messages", "POST /v1/conversations/{conversation}/flush", "POST /v1/recall"]
            .iter()
            .all(|name| !spans.named(name).is_empty())
    })
}

#[test]
fn a_recall_an_ingest_its_job_and_a_model_call_are_span_trees_without_what_was_said() {
    let Some(receiver) = Receiver::start() else { return };
    let spans = session(&receiver, &[]);
    let server_span = |name: &str| {
        let span = spans.one(name);
        assert_eq!(span["kind"], "SPAN_KIND_SERVER", "{span}");
        assert_eq!(span["attributes"]["http.response.status_code"], 200, "{span}");
        assert_eq!(span["resource"]["service.name"], "epimem", "{span}");
        span
    };

    // Remembering: the request, the use case as GenAI's create_memory, the store's write.
    let remember = server_span("POST /v1/messages");
    assert_eq!(remember["parent_span_id"], "", "a request without trace context starts one");
    let create = spans.child(remember, "create_memory");
    assert_eq!(create["kind"], "SPAN_KIND_INTERNAL");
    assert_eq!(create["attributes"]["gen_ai.operation.name"], "create_memory");
    assert_eq!(create["attributes"]["gen_ai.memory.store.id"], "default");
    assert_eq!(create["attributes"]["gen_ai.memory.record.count"], 2);
    let push = spans.child(create, "sqlite push_messages");
    assert_eq!(push["kind"], "SPAN_KIND_CLIENT");
    assert_eq!(push["attributes"]["db.system.name"], "sqlite");

    // Closing the conversation: the segmentation job it runs, the model call with its tokens,
    // the messages' embeddings and the commit, each under the job.
    let flush = server_span("POST /v1/conversations/{conversation}/flush");
    let closing = spans.child(flush, "create_memory");
    assert_eq!(closing["attributes"]["epimem.use_case"], "flush");
    assert_eq!(closing["attributes"]["gen_ai.conversation.id"], "c");
    let job = spans.child(closing, "job segment");
    assert_eq!(job["attributes"]["gen_ai.operation.name"], "create_memory");
    assert_eq!(job["attributes"]["gen_ai.memory.record.count"], 1);
    let chat = spans.child(job, "chat m");
    assert_eq!(chat["kind"], "SPAN_KIND_CLIENT");
    let a = &chat["attributes"];
    assert_eq!(
        (&a["gen_ai.operation.name"], &a["gen_ai.request.model"]),
        (&json!("chat"), &json!("m"))
    );
    assert_eq!(a["server.address"], "127.0.0.1");
    assert_eq!(a["epimem.llm.stage"], "segmentation");
    assert!(a["gen_ai.usage.input_tokens"].as_i64() > Some(0), "{chat}");
    assert!(a["gen_ai.usage.output_tokens"].as_i64() > Some(0), "{chat}");
    let embeddings = spans.children(job);
    let embeddings =
        embeddings.iter().find(|s| s["attributes"]["gen_ai.operation.name"] == "embeddings");
    assert_eq!(embeddings.expect("the messages' embeddings")["attributes"]["epimem.texts"], 2);
    spans.child(job, "sqlite commit_segmentation");
    assert_eq!(chat["trace_id"], flush["trace_id"]);

    // Recalling, in the caller's trace: the search as GenAI's search_memory, the query's
    // embedding, the index's retrieval, the store's reads.
    let recall = server_span("POST /v1/recall");
    assert_eq!(
        (recall["trace_id"].as_str(), recall["parent_span_id"].as_str()),
        (Some(CALLER_TRACE), Some(CALLER_SPAN))
    );
    let search = spans.child(recall, "search_memory");
    assert_eq!(search["attributes"]["gen_ai.operation.name"], "search_memory");
    assert_eq!(search["attributes"]["gen_ai.memory.record.count"], 1);
    let below = spans.below(search);
    let operation =
        |name: &str| below.iter().any(|s| s["attributes"]["gen_ai.operation.name"] == name);
    assert!(
        operation("embeddings") && operation("retrieval"),
        "{:?}",
        below.iter().map(|s| &s["name"]).collect::<Vec<_>>()
    );
    let retrieval =
        below.iter().find(|s| s["attributes"]["gen_ai.operation.name"] == "retrieval").unwrap();
    assert_eq!(retrieval["attributes"]["epimem.index"], "local");
    assert!(below.iter().any(|s| s["attributes"]["db.system.name"] == "sqlite"));

    // Not a word of what was said, asked or titled, on any span of any trace.
    for span in &spans.0 {
        let text = span.to_string();
        for word in ["Biscuit", "zebra", "sofa", "living room", "chew", "Quokka", "A dog"] {
            assert!(!text.contains(word), "{word:?} on a span: {span:#}");
        }
        for key in epimem_telemetry::CONTENT_ATTRIBUTES {
            assert!(span["attributes"].get(key).is_none(), "{key} on {span:#}");
        }
    }
}

#[test]
fn what_was_said_is_on_spans_only_when_asked_for() {
    let Some(receiver) = Receiver::start() else { return };
    let capture = [("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")];
    let spans = session(&receiver, &capture);
    let search = spans.child(spans.one("POST /v1/recall"), "search_memory");
    assert_eq!(search["attributes"]["gen_ai.memory.query.text"], ASKED);
    let chat = spans.one("chat m");
    let input = chat["attributes"]["gen_ai.input.messages"].as_str().unwrap();
    assert!(input.contains(SAID[0]), "{input}");
    let output = chat["attributes"]["gen_ai.output.messages"].as_str().unwrap();
    assert!(output.contains(TITLE), "{output}");
}

#[test]
fn a_collector_protocol_it_cannot_speak_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = crate::common::epimem_command(&dir.path().join("m.db"))
        .arg("stats")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL=\"grpc\"") && stderr.contains("4318"),
        "{stderr}"
    );
}

#[test]
fn a_coding_agents_hook_is_a_trace_without_the_prompt() {
    let Some(receiver) = Receiver::start() else { return };
    let claude = crate::hooks::Claude::new("");
    let event = json!({"session_id": "s1", "transcript_path": claude.dir.path().join("s1.jsonl"),
        "cwd": claude.project, "hook_event_name": "UserPromptSubmit",
        "prompt": "Fix the flaky quokka test in the billing module"});
    let mut hook = Command::new(env!("CARGO_BIN_EXE_epimem-hook"));
    hook.args(["--agent", "claude"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint)
        .env("OTEL_BSP_SCHEDULE_DELAY", "50");
    let (out, _) = claude.hook_with(hook, &claude.db, &event.to_string());
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spans = receiver.spans_until(|spans| !spans.named("hook claude").is_empty());
    let root = spans.one("hook claude");
    assert_eq!(
        (root["parent_span_id"].as_str(), root["attributes"]["epimem.hook.agent"].as_str()),
        (Some(""), Some("claude"))
    );
    let below = spans.below(root);
    assert!(
        below.iter().any(|s| s["attributes"]["db.system.name"] == "sqlite"),
        "{:?}",
        spans.names()
    );
    for span in &spans.0 {
        assert!(!span.to_string().contains("quokka"), "the prompt on a span: {span:#}");
    }
}

#[test]
fn a_collector_that_cannot_be_reached_is_told_once_and_the_command_still_answers() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    crate::common::ingest_lines(
        &db,
        "{\"conversation\": \"c\", \"role\": \"user\", \"content\": \"hello\"}\n",
    );
    let out = crate::common::epimem_command(&db)
        .args(["recall", "hello"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{closed}"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let told = format!("epimem: traces could not be sent to http://{closed}/v1/traces");
    assert_eq!(stderr.matches(&told).count(), 1, "{stderr}");
}

#[test]
fn an_mcp_tool_call_over_http_is_a_span_under_its_request() {
    let Some(receiver) = Receiver::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint.as_str()),
        ("OTEL_BSP_SCHEDULE_DELAY", "50"),
    ];
    let mut server = Server::start_with_env(&dir.path().join("m.db"), "", &env);
    let said = crate::mcp::call_over_http(&server, "recall", json!({"query": ASKED}));
    assert!(said.is_ok(), "{said:?}");
    assert!(server.stop().success());
    let parent_of = |spans: &Spans| {
        let tool = spans.named("tools/call recall").pop()?;
        spans.0.iter().find(|s| s["span_id"] == tool["parent_span_id"]).cloned()
    };
    let spans = receiver.spans_until(|spans| parent_of(spans).is_some());
    let tool = spans.one("tools/call recall");
    assert_eq!(tool["attributes"]["gen_ai.tool.name"], "recall");
    assert_eq!(parent_of(&spans).unwrap()["name"], "POST /mcp");
    spans.child(tool, "search_memory");
}
