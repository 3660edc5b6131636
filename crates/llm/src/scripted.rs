//! A scripted OpenAI-compatible server on loopback, for tests: each test says what the next
//! calls answer (an answer, an error status, a slow reply, a dropped connection), and reads back
//! what was asked and how many tokens were reported.
//!
//! Written on `std::net` rather than with an HTTP framework: it must answer with exactly the
//! bytes a test scripts (broken JSON, a hang-up, a reply slower than the client's timeout), one
//! connection per request, and it needs no async runtime.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

/// What the server does with one call.
#[derive(Debug, Clone)]
pub enum ScriptedReply {
    /// 200 with this text as the message's content.
    Answer(String),
    /// This status and body, with a `Retry-After` header when given.
    Status { status: u16, body: String, retry_after: Option<String> },
    /// The reply, after a wait.
    Slow(Duration, Box<ScriptedReply>),
    /// The connection closed without a reply.
    HangUp,
}

/// A call the server received.
#[derive(Debug, Clone)]
pub struct Received {
    pub body: Value,
    pub authorization: Option<String>,
}

impl Received {
    /// `response_format.type`: `json_schema` or `json_object`.
    pub fn response_format(&self) -> &str {
        self.body.pointer("/response_format/type").and_then(Value::as_str).unwrap_or("")
    }

    /// The text of the message with `role`.
    pub fn message(&self, role: &str) -> &str {
        let messages = self.body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
        messages
            .iter()
            .find(|m| m["role"] == role)
            .and_then(|m| m["content"].as_str())
            .unwrap_or("")
    }
}

type Responder = Box<dyn Fn(&Received) -> ScriptedReply + Send + Sync>;

struct Shared {
    script: Mutex<VecDeque<ScriptedReply>>,
    otherwise: Mutex<Option<Responder>>,
    received: Mutex<Vec<Received>>,
    /// Prompt and completion tokens reported in successful replies.
    reported: Mutex<(u64, u64)>,
    without_json_schema: AtomicBool,
}

/// The server; it stops when dropped.
pub struct ScriptedServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for ScriptedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedServer").field("addr", &self.addr).finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ScriptedServer {
    /// Starts a server that answers calls with `script` in order, then with HTTP 500.
    pub fn start(script: impl IntoIterator<Item = ScriptedReply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("local address");
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into_iter().collect()),
            otherwise: Mutex::new(None),
            received: Mutex::new(Vec::new()),
            reported: Mutex::new((0, 0)),
            without_json_schema: AtomicBool::new(false),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (shared, stop) = (Arc::clone(&shared), Arc::clone(&stop));
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let shared = Arc::clone(&shared);
                    std::thread::spawn(move || serve(stream, &shared));
                }
            })
        };
        Self { addr, shared, stop, thread: Some(thread) }
    }

    /// The base URL to configure as `llm.url`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Adds replies to the end of the script.
    pub fn push(&self, replies: impl IntoIterator<Item = ScriptedReply>) {
        lock(&self.shared.script).extend(replies);
    }

    /// Answers calls with `responder` once the script is used up.
    pub fn otherwise(
        &self,
        responder: impl Fn(&Received) -> ScriptedReply + Send + Sync + 'static,
    ) {
        *lock(&self.shared.otherwise) = Some(Box::new(responder));
    }

    /// Refuses `json_schema` response formats with HTTP 400, as servers without structured
    /// output do (the script is not consumed by a refusal).
    pub fn without_json_schema(&self) {
        self.shared.without_json_schema.store(true, Ordering::SeqCst);
    }

    /// The calls received so far, in order.
    pub fn received(&self) -> Vec<Received> {
        lock(&self.shared.received).clone()
    }

    /// Prompt and completion tokens reported in the replies so far.
    pub fn reported_tokens(&self) -> (u64, u64) {
        *lock(&self.shared.reported)
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread so it sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A dead port: nothing listens there.
pub fn dead_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let addr = listener.local_addr().expect("local address");
    drop(listener);
    format!("http://{addr}/v1")
}

fn serve(stream: TcpStream, shared: &Shared) {
    let Some(received) = read_request(&stream) else { return };
    let refused = shared.without_json_schema.load(Ordering::SeqCst)
        && received.response_format() == "json_schema";
    lock(&shared.received).push(received.clone());
    let reply = if refused {
        ScriptedReply::Status {
            status: 400,
            body: r#"{"error": {"message": "response_format json_schema is not supported"}}"#
                .into(),
            retry_after: None,
        }
    } else {
        let next = lock(&shared.script).pop_front();
        next.or_else(|| lock(&shared.otherwise).as_ref().map(|f| f(&received))).unwrap_or(
            ScriptedReply::Status {
                status: 500,
                body: "the script is used up".into(),
                retry_after: None,
            },
        )
    };
    respond(stream, &received, reply, shared);
}

fn read_request(stream: &TcpStream) -> Option<Received> {
    let mut reader = BufReader::new(stream);
    let (mut length, mut authorization) = (0usize, None);
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().ok()?,
                "authorization" => authorization = Some(value.trim().to_owned()),
                _ => {}
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Received { body: serde_json::from_slice(&body).unwrap_or(Value::Null), authorization })
}

fn respond(mut stream: TcpStream, received: &Received, reply: ScriptedReply, shared: &Shared) {
    let (status, body, retry_after) = match reply {
        ScriptedReply::HangUp => return,
        ScriptedReply::Slow(wait, reply) => {
            std::thread::sleep(wait);
            return respond(stream, received, *reply, shared);
        }
        ScriptedReply::Status { status, body, retry_after } => (status, body, retry_after),
        ScriptedReply::Answer(content) => {
            // Deterministic counts a test can add up: a token per four characters.
            let prompt_tokens =
                (received.message("system").len() + received.message("user").len()) as u64 / 4;
            let completion_tokens = content.len() as u64 / 4 + 1;
            let mut reported = lock(&shared.reported);
            reported.0 += prompt_tokens;
            reported.1 += completion_tokens;
            let body = json!({
                "id": "chatcmpl-scripted",
                "object": "chat.completion",
                "model": received.body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens},
            });
            (200, body.to_string(), None)
        }
    };
    let mut head = format!(
        "HTTP/1.1 {status} Scripted\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    if let Some(after) = retry_after {
        head.push_str(&format!("retry-after: {after}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body.as_bytes()));
}
