//! One call: an operation of the HTTP API by its `operationId`, with its request as the HTTP
//! API would take it (`path` parameters, `query` fields, a JSON `body`), answered with the
//! JSON the HTTP API answers with.

use std::collections::HashMap;

use epimem_api::{
    Memory, MemoryError, from_json, parse_messages,
    wire::{
        EpisodeEditIn, EpisodesQuery, FactsQuery, JobsQuery, NextTurnIn, ProjectMemoryIn,
        ProjectMemoryOut, RecallIn, TimelineQuery, VersionQuery,
    },
};
use epimem_engine::Engine;
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;

/// A request as the Python package sends it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    #[serde(default)]
    path: HashMap<String, String>,
    #[serde(default)]
    query: Option<Value>,
    #[serde(default)]
    body: Option<Value>,
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
        let query = self.query.clone().unwrap_or_else(|| Value::Object(Default::default()));
        from_json(query.to_string().as_bytes())
    }

    /// The body as `T`; `None` when there is none.
    fn body<T: DeserializeOwned>(&self) -> Result<Option<T>, MemoryError> {
        self.body.as_ref().map(|body| from_json(body.to_string().as_bytes())).transpose()
    }

    fn required_body<T: DeserializeOwned>(&self) -> Result<T, MemoryError> {
        self.body()?.ok_or_else(|| MemoryError::bad_input("the body is missing"))
    }
}

/// Runs `operation` on `engine` in `tenant`.
pub(crate) fn call(
    engine: &Engine,
    tenant: &str,
    operation: &str,
    request: &[u8],
) -> Result<String, MemoryError> {
    let request: Request = from_json(request)?;
    let memory = Memory::new(engine);
    match operation {
        "add_messages" => {
            let body = request.body.as_ref().map(Value::to_string).unwrap_or_default();
            answer(memory.remember(parse_messages(tenant, body.as_bytes())?))
        }
        "get_conversation" => answer(memory.conversation(tenant, request.path("conversation")?)),
        "flush_conversation" => answer(memory.flush(tenant, request.path("conversation")?)),
        "delete_conversation" => {
            answer(memory.forget_conversation(tenant, request.path("conversation")?))
        }
        "next_turn" => {
            let asked: NextTurnIn = request.body()?.unwrap_or_default();
            answer(memory.next_turn(tenant, request.path("conversation")?, asked))
        }
        "delete_tenant" => answer(memory.forget_tenant(tenant)),
        "delete_user" => answer(memory.forget_user(tenant, request.path("user")?)),
        "list_episodes" => answer(memory.episodes(tenant, request.query::<EpisodesQuery>()?)),
        "get_episode" => answer(memory.episode(tenant, request.path("id")?)),
        "delete_episode" => answer(memory.forget_episode(tenant, request.path("id")?)),
        "edit_episode" => {
            let edit: EpisodeEditIn = request.required_body()?;
            answer(memory.edit_episode(tenant, request.path("id")?, edit))
        }
        "episode_versions" => answer(memory.episode_versions(tenant, request.path("id")?)),
        "list_jobs" => answer(memory.jobs(tenant, request.query::<JobsQuery>()?)),
        "recall" => answer(memory.recall(tenant, request.required_body::<RecallIn>()?)),
        "project_memory" => {
            let asked: ProjectMemoryIn = request.required_body()?;
            let context = memory.project_memory(tenant, &asked)?;
            answer(Ok(ProjectMemoryOut { context }))
        }
        "list_facts" => answer(memory.facts(tenant, request.query::<FactsQuery>()?)),
        "timeline_top" => answer(memory.timeline(tenant, request.query::<TimelineQuery>()?)),
        "timeline_node" => {
            let version: VersionQuery = request.query()?;
            answer(memory.timeline_node(tenant, request.path("node")?, version))
        }
        "get_stats" => answer(memory.stats(tenant)),
        other => Err(MemoryError::bad_input(format!("no operation `{other}`"))),
    }
}

fn answer<T: Serialize>(result: Result<T, MemoryError>) -> Result<String, MemoryError> {
    Ok(serde_json::to_string(&result?).expect("the answer types serialize"))
}
