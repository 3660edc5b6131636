//! One call: an operation of the HTTP API by its `operationId`, with its request as the HTTP
//! API would take it (`path` parameters, `query` fields, a JSON `body`), answered with the
//! JSON the HTTP API answers with.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use epimem_api::{
    Memory, MemoryError, from_json, parse_messages,
    wire::{
        ConversationsQuery, EpisodeEditIn, EpisodesQuery, FactsQuery, JobsQuery, MessagesQuery,
        NextTurnIn, ProjectMemoryIn, ProjectMemoryOut, RecallIn, TimelineQuery, VersionQuery,
    },
};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::value::RawValue;

/// A request as the Python package sends it. Its query and body stay JSON text until an
/// operation reads them as its own types, so each is parsed once.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    #[serde(default)]
    path: HashMap<String, String>,
    #[serde(default)]
    query: Option<Box<RawValue>>,
    #[serde(default)]
    body: Option<Box<RawValue>>,
}

impl Request {
    fn path(&self, name: &str) -> Result<&str, MemoryError> {
        self.path
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| MemoryError::bad_input(format!("{name}: missing")))
    }

    /// The query fields as `T` (all of them optional).
    fn query<T: DeserializeOwned>(&self) -> Result<T, MemoryError> {
        from_json(self.query.as_ref().map_or("{}", |q| q.get()).as_bytes())
    }

    /// The body as `T`; `None` when there is none.
    fn body<T: DeserializeOwned>(&self) -> Result<Option<T>, MemoryError> {
        self.body.as_ref().map(|body| from_json(body.get().as_bytes())).transpose()
    }

    fn required_body<T: DeserializeOwned>(&self) -> Result<T, MemoryError> {
        self.body()?.ok_or_else(|| MemoryError::bad_input("the body is missing"))
    }
}

/// The trace context (W3C) of the Python code that calls, if it has one.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Caller<'a> {
    pub(crate) traceparent: Option<&'a str>,
    pub(crate) tracestate: Option<&'a str>,
}

/// Runs `operation` on `memory` in `tenant`: its answer, and how long the engine took (the
/// call to [`Memory`] alone, without reading the request or writing the answer).
pub(crate) fn call(
    memory: &Memory,
    tenant: &str,
    operation: &str,
    request: &[u8],
    caller: Caller<'_>,
) -> Result<(String, Duration), MemoryError> {
    // The door's span: the use case's nests under it.
    // Its target names epimem (the library is `_native`): only epimem's spans are sent.
    let span = tracing::info_span!(
        target: "epimem::python",
        "python",
        otel.name = %format_args!("python {operation}"),
        otel.kind = "internal",
        epimem.operation = operation,
    );
    epimem_telemetry::continue_trace_from(&span, caller.traceparent, caller.tracestate);
    let _entered = span.enter();
    let request: Request = from_json(request)?;
    // Read before each call to `memory`; `answer` reads the clock again before it writes.
    let started = Instant::now();
    match operation {
        "add_messages" => {
            let body = request.body.as_ref().map_or("", |b| b.get());
            answer(started, memory.remember(parse_messages(tenant, body.as_bytes())?))
        }
        "get_conversation" => {
            answer(started, memory.conversation(tenant, request.path("conversation")?))
        }
        "list_conversations" => answer(
            started,
            memory.conversation_names(tenant, request.query::<ConversationsQuery>()?),
        ),
        "list_messages" => {
            let asked: MessagesQuery = request.query()?;
            answer(started, memory.messages(tenant, request.path("conversation")?, asked))
        }
        "take_back_message" => {
            answer(started, memory.take_back(tenant, request.path("conversation")?))
        }
        "flush_conversation" => {
            answer(started, memory.flush(tenant, request.path("conversation")?))
        }
        "delete_conversation" => {
            answer(started, memory.forget_conversation(tenant, request.path("conversation")?))
        }
        "next_turn" => {
            let asked: NextTurnIn = request.body()?.unwrap_or_default();
            answer(started, memory.next_turn(tenant, request.path("conversation")?, asked))
        }
        "flush_tenant" => answer(started, memory.flush_tenant(tenant)),
        "delete_tenant" => answer(started, memory.forget_tenant(tenant)),
        "delete_user" => answer(started, memory.forget_user(tenant, request.path("user")?)),
        "list_episodes" => {
            answer(started, memory.episodes(tenant, request.query::<EpisodesQuery>()?))
        }
        "get_episode" => answer(started, memory.episode(tenant, request.path("id")?)),
        "delete_episode" => answer(started, memory.forget_episode(tenant, request.path("id")?)),
        "edit_episode" => {
            let edit: EpisodeEditIn = request.required_body()?;
            answer(started, memory.edit_episode(tenant, request.path("id")?, edit))
        }
        "episode_versions" => answer(started, memory.episode_versions(tenant, request.path("id")?)),
        "list_jobs" => answer(started, memory.jobs(tenant, request.query::<JobsQuery>()?)),
        "recall" => answer(started, memory.recall(tenant, request.required_body::<RecallIn>()?)),
        "project_memory" => {
            let asked: ProjectMemoryIn = request.required_body()?;
            let context = memory.project_memory(tenant, &asked)?;
            answer(started, Ok(ProjectMemoryOut { context }))
        }
        "list_facts" => answer(started, memory.facts(tenant, request.query::<FactsQuery>()?)),
        "timeline_top" => {
            answer(started, memory.timeline(tenant, request.query::<TimelineQuery>()?))
        }
        "timeline_node" => {
            let version: VersionQuery = request.query()?;
            answer(started, memory.timeline_node(tenant, request.path("node")?, version))
        }
        "get_stats" => answer(started, memory.stats(tenant)),
        other => Err(MemoryError::bad_input(format!("no operation `{other}`"))),
    }
}

/// The answer as JSON, and the time since `started`, read before the answer is written.
fn answer<T: Serialize>(
    started: Instant,
    result: Result<T, MemoryError>,
) -> Result<(String, Duration), MemoryError> {
    let took = started.elapsed();
    Ok((serde_json::to_string(&result?).expect("the answer types serialize"), took))
}
