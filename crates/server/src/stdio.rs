//! MCP over standard input and output (`epimem mcp`): JSON-RPC messages, one per line.
//!
//! Written here rather than taken from rmcp's stdio transport, which ends the session at the
//! first line it cannot read, reads a line of any length whole, and stops at the end of its
//! input with the answers to requests still running unsent (a client that writes a request and
//! closes its side got no answer). Here:
//!
//! - a line longer than the body limit is skipped as it streams in, never held, and answered
//!   with a JSON-RPC error, as is a line that is not a message (with its id, when it has one);
//! - at the end of the input, every request already read is answered before the session ends
//!   (waiting at most [`DRAIN_WAIT`] for them).

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use rmcp::{
    RoleServer,
    model::JsonRpcMessage,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader},
    sync::{Mutex, Notify},
};

/// How long the end of the input waits for the requests still running.
const DRAIN_WAIT: Duration = Duration::from_secs(60);

/// Requests read and not yet answered.
#[derive(Debug, Default)]
struct InFlight {
    count: AtomicUsize,
    answered: Notify,
}

impl InFlight {
    fn answered_one(&self) {
        // An answer to no request read here (a parse error's) takes nothing off.
        let _ = self.count.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        self.answered.notify_waiters();
    }

    async fn all_answered(&self) {
        loop {
            let answered = self.answered.notified();
            if self.count.load(Ordering::Acquire) == 0 {
                return;
            }
            answered.await;
        }
    }
}

/// The transport over a reader and a writer (standard input and output in `epimem mcp`).
pub(crate) struct LineTransport<R, W> {
    input: BufReader<R>,
    /// The line read so far (kept here, not in a future: a receive may be dropped midway).
    line: Vec<u8>,
    /// Skipping the rest of a line longer than `max_line`, whose length so far this is.
    skipping: Option<usize>,
    max_line: usize,
    ended: bool,
    output: Arc<Mutex<W>>,
    in_flight: Arc<InFlight>,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub(crate) fn new(input: R, output: W, max_line: usize) -> Self {
        Self {
            input: BufReader::new(input),
            line: Vec::new(),
            skipping: None,
            max_line,
            ended: false,
            output: Arc::new(Mutex::new(output)),
            in_flight: Arc::default(),
        }
    }

    /// The next whole line (`Err` with its length for one too long), or `None` at the end.
    async fn next_line(&mut self) -> Option<Result<Vec<u8>, usize>> {
        loop {
            let chunk = match self.input.fill_buf().await {
                Ok(chunk) => chunk,
                Err(_) => &[],
            };
            if chunk.is_empty() {
                // The end: a last line without its newline is still a line.
                self.ended = true;
                return match self.skipping.take() {
                    Some(len) => Some(Err(len)),
                    None if self.line.iter().any(|b| !b.is_ascii_whitespace()) => {
                        Some(Ok(std::mem::take(&mut self.line)))
                    }
                    None => None,
                };
            }
            let newline = chunk.iter().position(|&b| b == b'\n');
            let part = &chunk[..newline.unwrap_or(chunk.len())];
            match &mut self.skipping {
                Some(len) => *len += part.len(),
                None if self.line.len() + part.len() > self.max_line => {
                    self.skipping = Some(self.line.len() + part.len());
                    self.line = Vec::new();
                }
                None => self.line.extend_from_slice(part),
            }
            let used = newline.map_or(chunk.len(), |at| at + 1);
            self.input.consume(used);
            if newline.is_some() {
                if let Some(len) = self.skipping.take() {
                    return Some(Err(len));
                }
                let line = std::mem::take(&mut self.line);
                if line.iter().any(|b| !b.is_ascii_whitespace()) {
                    return Some(Ok(line));
                }
            }
        }
    }
}

/// Writes a JSON-RPC error for a line that was not read as a message.
async fn refuse<W: AsyncWrite + Unpin>(output: &Mutex<W>, id: Value, code: i64, message: String) {
    let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    write_line(output, &error).await.ok();
}

async fn write_line<W: AsyncWrite + Unpin>(
    output: &Mutex<W>,
    value: &impl serde::Serialize,
) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    let mut output = output.lock().await;
    output.write_all(&bytes).await?;
    output.flush().await
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answers = matches!(item, JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_));
        let (output, in_flight) = (self.output.clone(), self.in_flight.clone());
        async move {
            let written = write_line(&output, &item).await;
            if answers {
                in_flight.answered_one();
            }
            written
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.ended {
                // Answer what was asked before the input ended, then end the session.
                let in_flight = self.in_flight.clone();
                tokio::time::timeout(DRAIN_WAIT, in_flight.all_answered()).await.ok();
                return None;
            }
            let line = match self.next_line().await {
                None => continue, // the end: drained above
                Some(Ok(line)) => line,
                Some(Err(len)) => {
                    let message = format!(
                        "the message is {len} bytes; at most {} are read (server.body_limit_bytes)",
                        self.max_line
                    );
                    refuse(&self.output, Value::Null, -32600, message).await;
                    continue;
                }
            };
            match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(&line) {
                Ok(message) => {
                    if matches!(message, JsonRpcMessage::Request(_)) {
                        self.in_flight.count.fetch_add(1, Ordering::AcqRel);
                    }
                    return Some(message);
                }
                Err(e) => match serde_json::from_slice::<Value>(&line) {
                    // A notification we cannot read is not answered (JSON-RPC answers none).
                    Ok(value) if value.get("id").is_none() && value.get("method").is_some() => {}
                    Ok(value) => {
                        let id = value.get("id").cloned().unwrap_or(Value::Null);
                        let message = format!("not a JSON-RPC message: {e}");
                        refuse(&self.output, id, -32600, message).await;
                    }
                    Err(e) => {
                        refuse(&self.output, Value::Null, -32700, format!("not JSON: {e}")).await
                    }
                },
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.output.lock().await.flush().await
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    }

    #[test]
    fn long_and_unreadable_lines_are_answered_and_the_session_goes_on() {
        runtime().block_on(async {
            let ping = r#"{"jsonrpc": "2.0", "id": 7, "method": "ping"}"#;
            let input = format!(
                "{}\n{{not json\n{{\"jsonrpc\": \"2.0\", \"id\": 3, \"colour\": 1}}\n\n{ping}",
                "x".repeat(5000)
            );
            let (output, mut read_back) = tokio::io::duplex(1 << 16);
            let mut transport = LineTransport::new(input.as_bytes(), output, 1000);
            let message = transport.receive().await.expect("the ping is read");
            assert!(matches!(message, JsonRpcMessage::Request(_)), "{message:?}");
            assert_eq!(transport.in_flight.count.load(Ordering::Acquire), 1);
            drop(transport);
            let mut said = String::new();
            read_back.read_to_string(&mut said).await.unwrap();
            let errors: Vec<Value> =
                said.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
            let codes: Vec<(Value, i64)> = errors
                .iter()
                .map(|e| (e["id"].clone(), e["error"]["code"].as_i64().unwrap()))
                .collect();
            assert_eq!(codes, [(Value::Null, -32600), (Value::Null, -32700), (json!(3), -32600)]);
            assert!(errors[0]["error"]["message"].as_str().unwrap().contains("5000 bytes"));
        });
    }

    #[test]
    fn the_end_of_input_waits_for_the_answers() {
        runtime().block_on(async {
            let ping = "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}\n";
            let (output, _read_back) = tokio::io::duplex(1 << 16);
            let mut transport = LineTransport::new(ping.as_bytes(), output, 1000);
            transport.receive().await.expect("the ping");
            let in_flight = transport.in_flight.clone();
            let end = tokio::spawn(async move { transport.receive().await.is_none() });
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(!end.is_finished(), "the end waits for the ping's answer");
            in_flight.answered_one();
            assert!(end.await.unwrap());
        });
    }
}
