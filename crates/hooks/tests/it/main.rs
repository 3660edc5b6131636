//! `Hook::run` on a real SQLite store: events delivered twice, transcripts read at every event,
//! a store that was unavailable and then is.

use std::{io::Write, path::Path};

use epimem_api::{Engine, EngineConfig, FixedClock, Memory};
use epimem_app::config::HookConfig;
use epimem_core::{Scope, Timestamp, TokenCounter};
use epimem_hooks::{Background, Hook, HookDir};
use epimem_search_local::LocalSearch;
use epimem_store_sqlite::SqliteStore;
use serde_json::json;

fn engine(db: &Path) -> Result<Engine, String> {
    let store = SqliteStore::open(db).map_err(|e| e.to_string())?;
    let config = EngineConfig::default();
    let search = Box::new(LocalSearch::in_memory(&config.ranking));
    let clock =
        Box::new(FixedClock::new(Timestamp::parse_rfc3339("2026-11-20T10:00:00Z").unwrap()));
    Ok(Engine::new(std::sync::Arc::new(store), search, config, clock, "test".into())
        .with_token_counter(TokenCounter::estimate()))
}

struct Fixture {
    dir: tempfile::TempDir,
    hooks: HookDir,
    config: HookConfig,
    tenant: &'static str,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("repo/.git")).unwrap();
        let hooks = HookDir::beside(&dir.path().join("m.db"));
        Self { dir, hooks, config: HookConfig::default(), tenant: "t" }
    }

    fn event(&self, name: &str, fields: serde_json::Value) -> String {
        let mut e = json!({"session_id": "s1", "hook_event_name": name,
            "cwd": self.dir.path().join("repo"), "transcript_path": self.dir.path().join("t.jsonl")});
        e.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        e.to_string()
    }

    fn run(&self, db: &Path, event: &str, at_second: i64) -> epimem_hooks::HookOutcome {
        let hook = Hook {
            agent: epimem_hooks::Agent::Claude,
            tenant: self.tenant,
            dir: &self.hooks,
            config: &self.config,
            recall: None,
        };
        let at =
            Timestamp::parse_rfc3339("2026-11-20T10:00:00Z").unwrap().plus_millis(at_second * 1000);
        hook.run(event, at, || engine(db).map(Memory::new))
    }

    fn reply(&self, uuid: &str, text: &str) {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("t.jsonl"))
            .unwrap();
        writeln!(file, "{}", json!({"type": "assistant", "uuid": uuid, "message": {"content": [{"type": "text", "text": text}]}})).unwrap();
    }

    /// Every message of session s1, in order, after closing it.
    fn messages(&self, db: &Path) -> Vec<(String, String)> {
        let memory = Memory::new(engine(db).unwrap());
        let scope = Scope::tenant("t").with_conversation(Some("s1".into()));
        memory.flush_now(&scope).unwrap();
        let mut out = Vec::new();
        for e in memory.measure().episodes(&scope, None).unwrap().iter().rev() {
            let episode = memory.episode("t", &e.id.0).unwrap();
            for m in episode.messages.unwrap_or_default().into_iter().filter(|m| !m.context) {
                out.push((m.role, m.content));
            }
        }
        out
    }
}

#[test]
fn an_event_delivered_twice_and_a_transcript_read_at_every_event_store_each_thing_once() {
    let f = Fixture::new();
    let db = f.dir.path().join("m.db");
    let prompt = f.event(
        "UserPromptSubmit",
        json!({"prompt": "Find out why the nightly export job is slow"}),
    );
    f.run(&db, &prompt, 0);
    f.reply("a1", "Looking at the export job's query plan.");
    let tool = f.event("PostToolUse", json!({"tool_name": "Bash", "tool_use_id": "tu1",
        "tool_input": {"command": "psql -c 'explain analyze select 1'"}, "tool_response": {"stdout": "Seq Scan on orders"}}));
    f.run(&db, &tool, 5);
    f.run(&db, &tool, 6);
    f.reply("a2", "The orders scan is sequential: an index on created_at would help.");
    let stop = f.event("Stop", json!({}));
    f.run(&db, &stop, 10);
    f.run(&db, &stop, 11);
    let messages = f.messages(&db);
    let roles: Vec<&str> = messages.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"], "{messages:#?}");
    assert!(messages[2].1.starts_with("$ psql -c 'explain analyze select 1'\nSeq Scan"));
}

#[test]
fn events_the_store_could_not_take_are_stored_by_the_next_hook_in_their_order() {
    let f = Fixture::new();
    let db = f.dir.path().join("m.db");
    // The database's folder is a file: nothing can be opened there.
    let blocked = f.dir.path().join("blocked");
    std::fs::write(&blocked, "not a folder").unwrap();
    let nowhere = blocked.join("m.db");
    let first = f.event(
        "UserPromptSubmit",
        json!({"prompt": "Rename the billing module to invoicing everywhere"}),
    );
    let outcome = f.run(&nowhere, &first, 0);
    assert_eq!(outcome.stdout, "");
    let second = f.event(
        "PostToolUse",
        json!({"tool_name": "Grep", "tool_use_id": "g1", "tool_input": {"pattern": "billing"}}),
    );
    f.run(&nowhere, &second, 1);
    assert!(
        std::fs::read_to_string(f.hooks.log_path()).unwrap().contains("cannot open the database")
    );
    // The database is reachable again: the spool goes first, then the new event.
    let end = f.event("SessionEnd", json!({"reason": "exit"}));
    let outcome = f.run(&db, &end, 2);
    assert_eq!(outcome.background, Some(Background::Flush("s1".into())));
    let messages = f.messages(&db);
    assert_eq!(messages.len(), 2, "{messages:#?}");
    assert!(messages[0].1.contains("Rename the billing module"));
    assert_eq!(messages[1].1, "Grep \"billing\"");
    assert!(f.hooks.take_spool().is_empty());
}

#[test]
fn without_background_work_a_hook_names_none() {
    let mut f = Fixture::new();
    f.config.background = false;
    let db = f.dir.path().join("m.db");
    let outcome = f.run(&db, &f.event("SessionEnd", json!({})), 0);
    assert_eq!(outcome.background, None);
    let outcome = f.run(&db, &f.event("Notification", json!({"message": "hi"})), 1);
    assert_eq!(outcome, epimem_hooks::HookOutcome::default());
}

#[test]
fn an_event_the_store_refuses_for_good_is_dropped_after_three_tries() {
    // No tenant: the engine refuses every message (bad input, not a database out of reach).
    let mut f = Fixture::new();
    f.tenant = "";
    let db = f.dir.path().join("m.db");
    for second in 0..3 {
        let prompt = f.event(
            "UserPromptSubmit",
            json!({"prompt": format!("prompt number {second} about the export")}),
        );
        f.run(&db, &prompt, second);
    }
    let log = std::fs::read_to_string(f.hooks.log_path()).unwrap();
    assert_eq!(log.matches("dropped after 3 failures").count(), 1, "{log}");
    let kept = f.hooks.take_spool();
    assert_eq!(kept.iter().map(|s| s.failures).collect::<Vec<_>>(), [2, 1], "{kept:?}");
}
