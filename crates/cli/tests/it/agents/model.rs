//! A scripted language model on loopback that speaks what each agent calls: Anthropic's
//! Messages (Claude Code), OpenAI's Responses (Codex CLI), Gemini's generateContent (Gemini
//! CLI) and OpenAI's Chat Completions (opencode), streamed as server-sent events. A request
//! that offers tools and holds no tool result yet is answered with one call of the agent's
//! shell tool running the scripted command; any other with the scripted reply. Every request
//! is kept for the test to read.
//!
//! Written on `std::net`: a test server that must answer with exactly these bytes needs no
//! framework and no async runtime.

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{SocketAddr, TcpListener, TcpStream},
    sync::{Arc, Mutex, PoisonError},
    thread,
};

use serde_json::{Value, json};

/// What the model does in the session being run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Script {
    /// The shell command its one tool call runs.
    pub(crate) command: String,
    /// What it says once the command ran.
    pub(crate) reply: String,
}

/// A request the model received.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) path: String,
    pub(crate) body: Value,
}

impl Request {
    /// Whether the request offers tools (a turn of the agent, not a title or a routing call).
    pub(crate) fn offers_tools(&self) -> bool {
        self.body["tools"].as_array().is_some_and(|t| !t.is_empty())
    }

    /// The names of the tools offered; a tool in a namespace (Codex's MCP servers) is
    /// `namespace/name`.
    pub(crate) fn tool_names(&self) -> Vec<String> {
        let tools = self.body["tools"].as_array().cloned().unwrap_or_default();
        let mut names = Vec::new();
        for tool in &tools {
            // Gemini nests its functions under `functionDeclarations`, Codex a namespace's
            // under `tools`.
            let nested = ["functionDeclarations", "tools"]
                .iter()
                .filter_map(|f| tool[*f].as_array())
                .flatten();
            let prefix = tool["name"].as_str().map(|n| format!("{n}/")).unwrap_or_default();
            names.extend(nested.filter_map(|t| t["name"].as_str()).map(|n| format!("{prefix}{n}")));
            // OpenAI's chat format nests one function under `function`.
            for named in [tool, &tool["function"]] {
                names.extend(named["name"].as_str().map(str::to_owned));
            }
        }
        names
    }

    /// The whole request as text: what the model was told, system prompt and context included.
    pub(crate) fn text(&self) -> String {
        self.body.to_string()
    }
}

#[derive(Default)]
struct Shared {
    script: Mutex<Script>,
    requests: Mutex<Vec<Request>>,
}

/// The server; it runs until the test's process ends.
pub(crate) struct ScriptedModel {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl ScriptedModel {
    pub(crate) fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared::default());
        let serving = Arc::clone(&shared);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = Arc::clone(&serving);
                thread::spawn(move || {
                    let _ = serve(stream, &shared);
                });
            }
        });
        Self { addr, shared }
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// What the model does from now on.
    pub(crate) fn script(&self, script: Script) {
        *self.shared.script.lock().unwrap_or_else(PoisonError::into_inner) = script;
    }

    /// Every request so far, in order; [`ScriptedModel::clear`] forgets them.
    pub(crate) fn requests(&self) -> Vec<Request> {
        self.shared.requests.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    pub(crate) fn clear(&self) {
        self.shared.requests.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }
}

fn serve(stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
        let mut length = 0;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header)?;
            if header.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        let request = Request { path, body: serde_json::from_slice(&body).unwrap_or(Value::Null) };
        let script = shared.script.lock().unwrap_or_else(PoisonError::into_inner).clone();
        shared.requests.lock().unwrap_or_else(PoisonError::into_inner).push(request.clone());
        let mut out = &stream;
        match answer(&request, &script) {
            Some(Answer::Json(body)) => {
                let body = body.to_string();
                write!(
                    out,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                )?;
            }
            Some(Answer::Events(events)) => {
                write!(
                    out,
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
                )?;
                for (name, data) in events {
                    if let Some(name) = name {
                        writeln!(out, "event: {name}")?;
                    }
                    // `[DONE]` ends a Chat Completions stream as it is, unquoted.
                    match data {
                        Value::String(raw) => write!(out, "data: {raw}\n\n")?,
                        data => write!(out, "data: {data}\n\n")?,
                    }
                }
                out.flush()?;
                return Ok(());
            }
            None => {
                write!(out, "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")?;
            }
        }
    }
}

enum Answer {
    Json(Value),
    /// Server-sent events: an optional event name and the data.
    Events(Vec<(Option<&'static str>, Value)>),
}

fn answer(request: &Request, script: &Script) -> Option<Answer> {
    let text = request.text();
    let has_result = [
        "\"tool_result\"",
        "\"function_call_output\"",
        "\"functionResponse\"",
        "\"role\":\"tool\"",
    ]
    .iter()
    .any(|marker| text.contains(marker));
    let call = request.offers_tools() && !has_result;
    let path = request.path.as_str();
    if path.starts_with("/v1/messages") {
        Some(anthropic(&request.body, call, script))
    } else if path.starts_with("/v1/responses") {
        Some(responses(call, script))
    } else if path.starts_with("/v1/chat/completions") {
        Some(chat(call, script))
    } else if path.to_lowercase().contains("generatecontent") {
        Some(gemini(&request.body, call, path.contains("stream"), script))
    } else {
        None
    }
}

fn anthropic(body: &Value, call: bool, script: &Script) -> Answer {
    let model = body["model"].clone();
    let usage = json!({"input_tokens": 10, "output_tokens": 5});
    if body["stream"] != true {
        return Answer::Json(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": script.reply}],
            "stop_reason": "end_turn", "usage": usage
        }));
    }
    let (block, delta, stop) = if call {
        let input = json!({"command": script.command, "description": "run it"}).to_string();
        (
            json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input}),
            "tool_use",
        )
    } else {
        (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": script.reply}),
            "end_turn",
        )
    };
    Answer::Events(vec![
        (
            Some("message_start"),
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                "role": "assistant", "model": model, "content": [], "stop_reason": null,
                "usage": {"input_tokens": 10, "output_tokens": 0}}}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (Some("content_block_stop"), json!({"type": "content_block_stop", "index": 0})),
        (
            Some("message_delta"),
            json!({"type": "message_delta", "delta": {"stop_reason": stop},
                "usage": {"output_tokens": 5}}),
        ),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ])
}

fn responses(call: bool, script: &Script) -> Answer {
    let item = if call {
        json!({"type": "function_call", "id": "fc_1", "call_id": "call_1",
            "name": "exec_command", "arguments": json!({"cmd": script.command}).to_string()})
    } else {
        json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": script.reply, "annotations": []}]})
    };
    let response = json!({"id": "resp_1", "object": "response", "status": "in_progress",
        "output": []});
    let mut done = response.clone();
    done["status"] = "completed".into();
    done["output"] = json!([item]);
    done["usage"] = json!({"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0}});
    Answer::Events(vec![
        (Some("response.created"), json!({"type": "response.created", "response": response})),
        (
            Some("response.output_item.added"),
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        ),
        (
            Some("response.output_item.done"),
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (Some("response.completed"), json!({"type": "response.completed", "response": done})),
    ])
}

fn chat(call: bool, script: &Script) -> Answer {
    let (delta, finish) = if call {
        let arguments = json!({"command": script.command, "description": "run it"}).to_string();
        (
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1",
                "type": "function", "function": {"name": "bash", "arguments": arguments}}]}),
            "tool_calls",
        )
    } else {
        (json!({"role": "assistant", "content": script.reply}), "stop")
    };
    let chunk = |choice: Value, usage: Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
            "model": "scripted", "choices": [choice], "usage": usage})
    };
    Answer::Events(vec![
        (None, chunk(json!({"index": 0, "delta": delta, "finish_reason": null}), Value::Null)),
        (
            None,
            chunk(
                json!({"index": 0, "delta": {}, "finish_reason": finish}),
                json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}),
            ),
        ),
        (None, Value::String("[DONE]".into())),
    ])
}

fn gemini(body: &Value, call: bool, stream: bool, script: &Script) -> Answer {
    let config = &body["generationConfig"];
    let part = if config["responseMimeType"] == "application/json" {
        // A routing or classifying call: an object of the schema it asks for.
        let schema = [&config["responseJsonSchema"], &config["responseSchema"]]
            .into_iter()
            .find(|s| s.is_object())
            .cloned()
            .unwrap_or(Value::Null);
        json!({"text": filled(&schema).to_string()})
    } else if call {
        json!({"functionCall": {"name": "run_shell_command", "args": {"command": script.command}}})
    } else {
        json!({"text": script.reply})
    };
    let answer = json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
            "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    });
    if stream { Answer::Events(vec![(None, answer)]) } else { Answer::Json(answer) }
}

/// A value of the JSON schema `schema` (Gemini's upper-case types or JSON Schema's).
fn filled(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    match schema["type"].as_str().unwrap_or("").to_ascii_lowercase().as_str() {
        "object" => {
            let fields = schema["properties"].as_object().cloned().unwrap_or_default();
            Value::Object(fields.iter().map(|(k, v)| (k.clone(), filled(v))).collect())
        }
        "integer" | "number" => json!(10),
        "boolean" => json!(false),
        "array" => json!([]),
        _ => json!("simple"),
    }
}
