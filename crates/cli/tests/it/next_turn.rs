//! The next-turn block at every door: a LoCoMo conversation replayed session by session
//! through the command line, and the same fields over HTTP and MCP.

use std::path::Path;

use serde_json::{Value, json};

use crate::{common, serve::Server};

const BUDGET: u64 = 800;

/// The first LoCoMo conversation, from the shared data beside the repository.
fn locomo_conversation() -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/memory/locomo10.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("{}: {e} (the shared data sits beside the repository)", path.display())
    });
    let all: Value = serde_json::from_str(&text).unwrap();
    all[0].clone()
}

fn next_turn(db: &Path, args: &[&str]) -> Value {
    let mut all = vec!["next-turn", "locomo", "--budget", "800", "--json"];
    all.extend_from_slice(args);
    let out = common::epimem(db, &all);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_locomo_conversation_replayed_session_by_session() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let sample = locomo_conversation();
    let conversation = &sample["conversation"];
    let mut said: Vec<String> = Vec::new();
    for session in 1.. {
        let Some(turns) = conversation[format!("session_{session}")].as_array() else { break };
        let lines: Vec<String> = turns
            .iter()
            .enumerate()
            .map(|(i, turn)| {
                said.push(turn["text"].as_str().unwrap().to_owned());
                json!({"conversation": "locomo", "id": turn["dia_id"], "role": "user",
                       "speaker": turn["speaker"], "content": turn["text"],
                       "timestamp": format!("2023-{:02}-{:02}T10:{:02}:00Z",
                                            1 + session / 28, 1 + session % 28, i.min(59))})
                .to_string()
            })
            .collect();
        let file = dir.path().join(format!("session_{session}.jsonl"));
        std::fs::write(&file, lines.join("\n")).unwrap();
        assert!(common::epimem(&db, &["ingest", file.to_str().unwrap()]).status.success());

        let turn = next_turn(&db, &[]);
        let context = turn["context"].as_str().unwrap();
        assert!(turn["tokens"].as_u64().unwrap() <= BUDGET, "session {session}: {turn}");
        // The recent part: the conversation's newest messages, whole, in order, to its end.
        let recent = turn["recent"]["messages"].as_array().unwrap();
        assert!(!recent.is_empty(), "session {session}");
        let texts: Vec<&str> = recent.iter().map(|m| m["content"].as_str().unwrap()).collect();
        assert_eq!(texts, said[said.len() - texts.len()..], "session {session}");
        let seqs: Vec<u64> = recent.iter().map(|m| m["seq"].as_u64().unwrap()).collect();
        assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
        assert_eq!(*seqs.last().unwrap(), said.len() as u64);
        // No line twice: the memory quotes nothing of the recent part, and the block holds
        // each recent line once.
        for quoted in turn["memory"]["turns"].as_array().unwrap() {
            assert!(quoted["seq"].as_u64().unwrap() < seqs[0], "session {session}: {turn}");
        }
        let summary = turn["summary"]["text"].as_str().unwrap();
        let memory = turn["memory"]["context"].as_str().unwrap();
        let start = |line: &str| line.chars().take(60).collect::<String>();
        for text in &texts {
            assert!(context.contains(text.trim_end()), "verbatim: {text}");
            assert!(!summary.contains(&start(text)) && !memory.contains(&start(text)), "{text}");
        }
        for quoted in memory.lines().filter_map(|l| l.strip_prefix("> ")) {
            let text = quoted.split_once(": ").map_or(quoted, |(_, text)| text);
            assert!(!summary.contains(&start(text)), "session {session}: {text}");
        }
        let parts = ["recent", "summary", "memory"].map(|p| turn[p]["tokens"].as_u64().unwrap());
        assert!(parts.iter().sum::<u64>() <= BUDGET, "{parts:?}");
    }
    assert!(said.len() > 300, "every session was replayed ({})", said.len());
    // Something the memory never held: the long-term part is empty and says so.
    let unrelated =
        next_turn(&db, &["--query", "How do I configure the Kubernetes ingress controller?"]);
    assert_eq!(unrelated["memory"]["nothing_relevant"], true, "{unrelated}");
    assert_eq!(unrelated["memory"]["context"], "");
    assert!(!unrelated["context"].as_str().unwrap().contains("# From memory"));
    // Something it did: the long-term part quotes it.
    let question = sample["qa"][0]["question"].as_str().unwrap();
    let asked = next_turn(&db, &["--query", question]);
    assert_eq!(asked["memory"]["nothing_relevant"], false, "{question}: {asked}");
    assert!(asked["summary"]["episodes"].as_array().unwrap().len() > 1, "{asked}");
}

#[test]
fn http_and_mcp_answer_the_next_turn_alike() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("e.db"), "");
    let lines = [
        ("1", "The quarterly budget review moved to Thursday at ten"),
        ("2", "Noted. Should I tell the finance team?"),
        ("3", "Yes, and ask Priya for the updated slides"),
    ];
    for (id, text) in lines {
        let said = json!({"conversation": "ops", "id": id, "role": "user", "content": text});
        assert_eq!(server.post("/v1/messages", &said).0, 200);
    }
    let (status, turn) = server.post("/v1/conversations/ops/next-turn", &json!({"budget": 300}));
    assert_eq!(status, 200, "{turn}");
    assert_eq!(turn["budget"], 300);
    let recent: Vec<&str> = turn["recent"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(recent, lines.map(|(_, text)| text));
    assert_eq!(turn["memory"]["query"], lines[2].1, "the newest line a person wrote");
    // Bodyless, with every default.
    let (status, plain) = server.send("POST", "/v1/conversations/ops/next-turn", None);
    assert_eq!((status, plain["budget"].as_u64()), (200, Some(2000)), "{plain}");
    let (status, bad) = server.post(
        "/v1/conversations/ops/next-turn",
        &json!({"recent_share": 0.9, "summary_share": 0.5}),
    );
    assert_eq!((status, bad["error"]["code"].as_str()), (400, Some("bad_input")), "{bad}");
    let (status, missing) = server.post("/v1/conversations/nowhere/next-turn", &json!({}));
    assert_eq!((status, missing["error"]["code"].as_str()), (404, Some("not_found")), "{missing}");

    let text = crate::mcp::call_over_http(
        &server,
        "next_turn",
        json!({"conversation": "ops", "budget": 300}),
    )
    .unwrap();
    assert_eq!(text, turn["context"].as_str().unwrap());
    let documented = server.send("GET", "/v1/openapi.json", None).1;
    assert!(documented["paths"]["/v1/conversations/{conversation}/next-turn"]["post"].is_object());
}
