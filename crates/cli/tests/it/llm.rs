//! The command line with a language model that misbehaves: random answers that follow the
//! schema but miscount, and a third of all calls failing.

use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use epimem_llm::scripted::{ScriptedReply, ScriptedServer};
use serde_json::{Value, json};

use crate::common::{json_lines, listed};

/// Schema-valid episodes for a window of `n` messages, their counts chosen by `seed` and not
/// always adding up to `n`.
fn random_cut(n: usize, seed: u64) -> ScriptedReply {
    let mut rng = fastrand::Rng::with_seed(seed);
    let segments: Vec<Value> = (0..rng.usize(1..=4))
        .map(|i| {
            let surprise = ["low", "high", "extremely_high"][rng.usize(0..3)];
            json!({"start_message_index": 0, "end_message_index": 0,
                   "num_messages": rng.usize(0..=n / 2 + 2), "title": format!("Random episode {i}"),
                   "summary": "Something happened.", "surprise_level": surprise})
        })
        .collect();
    ScriptedReply::Answer(json!({ "segments": segments }).to_string())
}

/// Schema-valid fact actions citing episodes and facts that may or may not exist.
fn random_actions(seed: u64) -> ScriptedReply {
    let mut rng = fastrand::Rng::with_seed(seed);
    let kinds = ["new", "reinforce", "update", "invalidate"];
    let actions: Vec<Value> = (0..rng.usize(0..=3))
        .map(|i| {
            json!({"action": kinds[rng.usize(0..4)], "fact_id": format!("f{}", rng.usize(0..4)),
                   "text": format!("Random fact {seed}-{i}"), "episode_ids": [format!("e{}", rng.usize(0..5))]})
        })
        .collect();
    ScriptedReply::Answer(json!({ "actions": actions }).to_string())
}

#[test]
fn a_model_that_fails_a_third_of_its_calls_loses_and_duplicates_nothing() {
    let server = ScriptedServer::start([]);
    let calls = AtomicU64::new(0);
    server.otherwise(move |asked| {
        let call = calls.fetch_add(1, Ordering::SeqCst);
        if call % 3 == 2 {
            return ScriptedReply::Status {
                status: 500,
                body: "scripted failure".into(),
                retry_after: None,
            };
        }
        if asked.message("system").starts_with("You keep a list of lasting facts") {
            return random_actions(call);
        }
        let n = asked.message("user").lines().filter(|l| l.starts_with('[')).count();
        random_cut(n, call)
    });
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let config = dir.path().join("epimem.toml");
    std::fs::write(
        &config,
        "[llm]\nmodel = \"random\"\nmax_retries = 1\nretry_base_ms = 1\ntimeout_seconds = 10\n",
    )
    .unwrap();
    let lines: String = (0..2000)
        .map(|i| {
            let line = json!({"conversation": format!("c{}", i % 4), "role": if i % 2 == 0 { "user" } else { "assistant" },
                              "content": format!("message {i} about subject {}", i / 30), "id": format!("m{i}"),
                              "timestamp": format!("2026-03-01T{:02}:{:02}:00Z", i / 60 / 4 % 24, i / 4 % 60)});
            format!("{line}\n")
        })
        .collect();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, lines).unwrap();
    let epimem = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_epimem"))
            .arg("--db")
            .arg(&db)
            .arg("--config")
            .arg(&config)
            .args(args)
            .env_remove("EPIMEM_TENANT")
            .env_remove("EPIMEM_LLM_MODEL")
            .env_remove("EPIMEM_LLM_API_KEY")
            .env("EPIMEM_LLM_URL", server.url())
            .env("EPIMEM_EMBEDDER", "hash")
            .output()
            .unwrap()
    };
    let ingest = epimem(&["ingest", input.to_str().unwrap(), "--flush"]);
    assert!(ingest.status.success(), "{}", String::from_utf8_lossy(&ingest.stderr));

    // Every message in exactly one episode, conversation by conversation.
    let episodes = listed(&epimem(&["episodes", "--json"]), "episodes");
    for c in 0..4 {
        let mut ranges: Vec<(u64, u64)> = episodes
            .iter()
            .filter(|e| e["conversation"] == format!("c{c}"))
            .map(|e| (e["first_seq"].as_u64().unwrap(), e["last_seq"].as_u64().unwrap()))
            .collect();
        ranges.sort_unstable();
        let mut next = 1;
        for (first, last) in ranges {
            assert_eq!(first, next, "c{c}: no gap, no overlap");
            next = last + 1;
        }
        assert_eq!(next, 501, "c{c}: all 500 messages");
    }
    assert!(
        episodes.iter().any(|e| e["title"].as_str().unwrap().starts_with("Random episode")),
        "the model cut some"
    );

    // What stats counts is what the server saw and reported.
    let stats = &json_lines(&epimem(&["stats", "--json"]))[0];
    assert_eq!(
        (stats["messages"].as_u64(), stats["pending_messages"].as_u64()),
        (Some(2000), Some(0))
    );
    let stages = stats["llm"].as_object().unwrap();
    assert!(
        stages.contains_key("segmentation") && stages.contains_key("consolidation"),
        "{stages:?}"
    );
    let total = |field: &str| stages.values().map(|u| u[field].as_u64().unwrap()).sum::<u64>();
    let (prompt_tokens, completion_tokens) = server.reported_tokens();
    assert_eq!(total("calls"), server.received().len() as u64);
    assert!(total("failures") >= server.received().len() as u64 / 3);
    assert_eq!(
        (total("prompt_tokens"), total("completion_tokens")),
        (prompt_tokens, completion_tokens)
    );
    let text = String::from_utf8(epimem(&["stats"]).stdout).unwrap();
    assert!(text.contains("llm segmentation"), "{text}");
}

/// A model that cuts every window as one flashbulb episode and distils one fact from it.
pub(crate) fn fact_model() -> ScriptedServer {
    let server = ScriptedServer::start([]);
    server.otherwise(|asked| {
        if asked.message("system").starts_with("You keep a list of lasting facts") {
            return ScriptedReply::Answer(
                json!({"actions": [{"action": "new", "fact_id": "", "text": "Ana's sister married Rui in Porto", "episode_ids": ["e1"]}]})
                    .to_string(),
            );
        }
        let n = asked.message("user").lines().filter(|l| l.starts_with('[')).count();
        ScriptedReply::Answer(
            json!({"segments": [{"start_message_index": 0, "end_message_index": n - 1, "num_messages": n,
                "title": "Ana's sister's wedding", "summary": "Ana tells of the wedding.", "surprise_level": "extremely_high"}]})
                .to_string(),
        )
    });
    server
}

#[test]
fn facts_are_listed_and_recalled_over_the_command_line_and_http() {
    let model = fact_model();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let config = dir.path().join("epimem.toml");
    let llm = format!("[llm]\nurl = \"{}\"\nmodel = \"m\"\nretry_base_ms = 1\n", model.url());
    std::fs::write(&config, &llm).unwrap();
    let input = dir.path().join("in.jsonl");
    let line = json!({"conversation": "c", "role": "user", "content": "My sister married Rui yesterday in Porto!", "id": "m1", "timestamp": "2026-03-01T10:00:00Z"});
    let reply = json!({"conversation": "c", "role": "assistant", "content": "Congratulations to them!", "id": "m2", "timestamp": "2026-03-01T10:01:00Z"});
    std::fs::write(&input, format!("{line}\n{reply}\n")).unwrap();
    let epimem = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_epimem"))
            .args(["--db", db.to_str().unwrap(), "--config", config.to_str().unwrap()])
            .args(args)
            .env_remove("EPIMEM_TENANT")
            .env_remove("EPIMEM_LLM_URL")
            .env_remove("EPIMEM_LLM_MODEL")
            .env("EPIMEM_EMBEDDER", "hash")
            .output()
            .unwrap()
    };
    let ingest = epimem(&["ingest", input.to_str().unwrap(), "--flush"]);
    assert!(ingest.status.success(), "{}", String::from_utf8_lossy(&ingest.stderr));

    let facts = listed(&epimem(&["facts", "--json"]), "facts");
    assert_eq!(facts.len(), 1, "{facts:?}");
    assert_eq!(facts[0]["text"], "Ana's sister married Rui in Porto");
    assert_eq!(facts[0]["valid_at"], "2026-03-01T10:01:00Z");
    assert_eq!(facts[0]["sources"].as_array().unwrap().len(), 1);
    let text = String::from_utf8(epimem(&["recall", "who did the sister marry?"]).stdout).unwrap();
    assert!(
        text.starts_with("Known facts:\n- Ana's sister married Rui in Porto (since 2026-03-01)"),
        "{text}"
    );
    let recalled =
        &json_lines(&epimem(&["recall", "sister married", "--budget", "200", "--json"]))[0];
    assert_eq!(recalled["facts"][0]["text"], "Ana's sister married Rui in Porto");

    // Over HTTP, from a server on the same database.
    let server = crate::serve::Server::start(&db, &llm);
    let (status, listed) = server.send("GET", "/v1/facts?conversation=c", None);
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["facts"][0]["text"], "Ana's sister married Rui in Porto");
    let (status, recall) =
        server.post("/v1/recall", &json!({"query": "sister married", "budget": 200}));
    assert_eq!(status, 200, "{recall}");
    assert_eq!(recall["facts"][0]["text"], "Ana's sister married Rui in Porto");
    assert!(recall["facts"][0]["score"].as_f64().unwrap() > 0.0);
    let (status, _) = server.send("GET", "/v1/facts?everything=1", None);
    assert_eq!(status, 400, "unknown parameters are refused");

    // Forgetting the conversation forgets its facts.
    let forget = epimem(&["forget", "--conversation", "c"]);
    assert!(forget.status.success());
    assert!(crate::common::listed(&epimem(&["facts", "--json", "--all"]), "facts").is_empty());
}
