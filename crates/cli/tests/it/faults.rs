//! Fault injection: the server (with a scripted language model, so that consolidation and
//! rollups run) is crashed at seeded points of ingest, segmentation, consolidation and the
//! timeline's rollup, the way a kill would stop it, then started again. After every restart
//! nothing acknowledged is lost, nothing is stored twice, every conversation's episodes tile
//! its messages, and a conversation whose job the dead process held closes within seconds.
//!
//! The seed is printed; `EPIMEM_FAULT_SEED=N` replays a run.

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use epimem_llm::scripted::{ScriptedReply, ScriptedServer};
use serde_json::{Value, json};

use crate::serve::{Server, message};

/// Every crash point of the engine (`epimem_api::CrashAt`).
const POINTS: [&str; 9] = [
    "push.before",
    "push.after",
    "job.claimed",
    "segment.before_commit",
    "segment.after_commit",
    "consolidate.before_commit",
    "consolidate.after_commit",
    "rollup.before_put",
    "rollup.after_put",
];
const CONVERSATIONS: [&str; 2] = ["alpha", "beta"];
/// How long a round's workload goes on before the process is killed anyway (its point was
/// not reached in time).
const ROUND: Duration = Duration::from_secs(8);
/// How soon after a restart a conversation must close again.
const RESUMES_WITHIN: Duration = Duration::from_secs(10);

/// What was sent to each conversation, by id, and which ids the server acknowledged.
#[derive(Default)]
struct Sent {
    messages: BTreeMap<&'static str, Vec<Value>>,
    acknowledged: BTreeMap<String, bool>,
}

#[test]
fn crashes_at_seeded_points_lose_and_double_nothing() {
    let seed = std::env::var("EPIMEM_FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    println!("fault-injection seed: {seed} (replay with EPIMEM_FAULT_SEED={seed})");
    let mut rng = fastrand::Rng::with_seed(seed);
    let model = model();
    let config = format!(
        "[server]\ntick_seconds = 0.2\n\n[llm]\nurl = \"{}\"\nmodel = \"m\"\nretry_base_ms = 1\n",
        model.url()
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let mut sent = Sent::default();
    let mut points = POINTS.to_vec();
    rng.shuffle(&mut points);
    let mut clock = 0u32;
    for (round, point) in points.into_iter().enumerate() {
        let at = format!("{point}:{}", rng.u64(1..=2));
        let what = format!("seed {seed}, round {round}, crash at {at}");
        let mut server = Server::start_with_env(&db, &config, &[("EPIMEM_CRASH_AT", &at)]);
        let started = Instant::now();
        let mut batch = 0;
        while server.runs() && started.elapsed() < ROUND {
            let conversation = CONVERSATIONS[rng.usize(..CONVERSATIONS.len())];
            let messages: Vec<Value> = (0..rng.usize(1..=4))
                .map(|i| {
                    clock += 1;
                    let id = format!("r{round}-b{batch}-{i}");
                    let time = format!(
                        "2026-03-{:02}T{:02}:{:02}:00Z",
                        1 + clock / 300,
                        8 + (clock / 60) % 5,
                        clock % 60
                    );
                    let text = format!("Message {id}: the plan for step {clock} of {conversation}");
                    message(conversation, &id, "user", &text, &time)
                })
                .collect();
            sent.messages.entry(conversation).or_default().extend(messages.iter().cloned());
            let answer = server.try_post("/v1/messages", &json!(messages));
            for m in &messages {
                let ok = matches!(answer, Some((200, _)));
                sent.acknowledged.insert(m["id"].as_str().unwrap().to_owned(), ok);
            }
            if rng.bool() {
                let path = format!("/v1/conversations/{conversation}/flush");
                server.try_post(&path, &json!(null));
            }
            batch += 1;
        }
        let crashed = !server.runs();
        drop(server); // SIGKILL, if the crash point was not reached
        println!("{what}: {}", if crashed { "crashed there" } else { "killed after the round" });
        check_after_restart(&db, &config, &sent, &what);
    }
}

/// A model that cuts every window as one startling episode (so each is consolidated at
/// once), distils a fact from it, and tells each period of the timeline.
fn model() -> ScriptedServer {
    let server = ScriptedServer::start([]);
    server.otherwise(|asked| {
        let system = asked.message("system");
        let answer = if system.starts_with("You keep a list of lasting facts") {
            json!({"actions": [{"action": "new", "fact_id": "", "text": "The plan moved on",
                "episode_ids": ["e1"]}]})
        } else if asked.message("user").lines().any(|l| l.starts_with('[')) {
            let n = asked.message("user").lines().filter(|l| l.starts_with('[')).count();
            json!({"segments": [{"start_message_index": 0, "end_message_index": n - 1,
                "num_messages": n, "title": "A step of the plan", "summary": "The plan moves.",
                "surprise_level": "extremely_high"}]})
        } else {
            let (title, bullets) = ("Steps of the plan", ["the plan moved"]);
            json!({"title": title, "bullets": bullets, "keywords": ["plan"]})
        };
        ScriptedReply::Answer(answer.to_string())
    });
    server
}

/// Starts the server again and checks what it kept.
fn check_after_restart(db: &std::path::Path, config: &str, sent: &Sent, what: &str) {
    let server = Server::start(db, config);
    for conversation in CONVERSATIONS {
        let Some(messages) = sent.messages.get(conversation) else { continue };
        // The dead process may have held this conversation's job: it closes within seconds.
        let started = Instant::now();
        let path = format!("/v1/conversations/{conversation}/flush");
        let (status, flushed) = server.send("POST", &path, None);
        assert!(status == 200 || status == 404, "{what}: flush {status} {flushed}");
        assert!(started.elapsed() < RESUMES_WITHIN, "{what}: flush took {:?}", started.elapsed());

        // Everything sent once more: what was acknowledged is there (a duplicate), what was
        // not may or may not be, and nothing is stored twice.
        for chunk in messages.chunks(50) {
            let (status, added) = server.post("/v1/messages", &json!(chunk));
            assert_eq!(status, 200, "{what}: {added}");
            for (m, placed) in chunk.iter().zip(added["messages"].as_array().unwrap()) {
                let id = m["id"].as_str().unwrap();
                let state = placed["status"].as_str().unwrap();
                assert_ne!(state, "conflict", "{what}: {id}");
                if sent.acknowledged[id] {
                    assert_eq!(state, "duplicate", "{what}: {id} was acknowledged, then lost");
                }
            }
        }
        let (status, _) = server.send("POST", &path, None);
        assert_eq!(status, 200, "{what}");
        let (_, state) = server.send("GET", &format!("/v1/conversations/{conversation}"), None);
        assert_eq!(state["last_seq"].as_u64(), Some(messages.len() as u64), "{what}: {state}");
        assert_eq!(state["pending"].as_u64(), Some(0), "{what}: {state}");
        tiles(&server, conversation, messages.len() as u64, what);
    }
    for path in ["/v1/timeline", "/v1/facts?all=true", "/v1/jobs"] {
        let (status, answer) = server.send("GET", path, None);
        assert_eq!(status, 200, "{what}: {path} {answer}");
    }
}

/// The conversation's episodes cover `1..=last` without a gap or an overlap.
fn tiles(server: &Server, conversation: &str, last: u64, what: &str) {
    let path = format!("/v1/episodes?conversation={conversation}&limit=1000");
    let (_, page) = server.send("GET", &path, None);
    let mut ranges: Vec<(u64, u64)> = page["episodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["first_seq"].as_u64().unwrap(), e["last_seq"].as_u64().unwrap()))
        .collect();
    ranges.sort_unstable();
    let mut next = 1;
    for (first, last_seq) in &ranges {
        assert_eq!(*first, next, "{what}: {conversation} episodes {ranges:?}");
        next = last_seq + 1;
    }
    assert_eq!(next, last + 1, "{what}: {conversation} episodes {ranges:?} of {last} messages");
}
