//! Recall over coding-agent sessions (`crates/eval/data/agent-sessions.jsonl`), asked about as
//! a later session of the project would ask (`crates/eval/data/agent-questions.jsonl`).

use std::path::Path;

use crate::common;

/// What an agent found and what its tools printed are most of what a later session asks
/// about: in a work session they are the record, not a model saying its reply again, and
/// come back among the ten best turns (before this rule: 0.85 of the evidence, 0.83 of the
/// agent's findings).
#[test]
fn an_agents_findings_come_back_from_its_work_sessions() {
    let Some(models) = common::real_models() else { return };
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../eval/data");
    let (sessions, questions) =
        (data.join("agent-sessions.jsonl"), data.join("agent-questions.jsonl"));
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--embedder",
        "potion",
        "--models",
        models.to_str().unwrap(),
        "eval",
        "recall",
        "--dataset",
        "agent",
        "--json",
        "--path",
        sessions.to_str().unwrap(),
        "--questions",
        questions.to_str().unwrap(),
    ];
    let out = common::epimem(&dir.path().join("unused.db"), &args);
    let run = &common::json_lines(&out)[0];
    assert_eq!(run["overall"]["questions"], 109, "{run}");
    let turns_at_10 = |of: &serde_json::Value| of["turn_recall_at_k"]["10"].as_f64().unwrap();
    assert!(turns_at_10(&run["overall"]) >= 0.9, "{run}");
    assert!(turns_at_10(&run["by_category"]["1"]) >= 0.9, "the agent's findings: {run}");
    // A 1,000-token context block holds most of it, in a quarter of the tokens: it takes only
    // the lines that bear on the question (filled to its budget, it held 0.98 of the
    // evidence in about 1,000 tokens; judged, 0.80-0.81 in about 180, and nothing for one
    // question in eight or fifteen, docs/benchmarks.md). What a prompt is told of earlier
    // work, chosen by shared keywords alone (the hook), holds more than half and rarely tells
    // of anything when the project never did that work; chosen by recall where words and
    // meaning agree (the server, MCP), it holds more (keywords: 0.59 and 0.70) and tells
    // elsewhere about as often: 0.21 and 0.18 of the questions against 0.19 and 0.11, one and
    // four questions of 53 and 56 (0.17 and 0.12 with the summaries before they were cut to
    // 30 words; docs/benchmarks.md).
    let context = &run["prompt_context"];
    for part in ["tuning", "test"] {
        let block = run["splits"][part]["overall"]["recall_at_budget"]["1000"].as_f64().unwrap();
        assert!(block >= 0.75, "{part}: {run}");
        let judged = &run["blocks"][part][0]["own"];
        assert_eq!(run["blocks"][part][0]["setting"], "the defaults");
        let (non_empty, tokens) =
            (judged["non_empty"].as_f64().unwrap(), judged["mean_tokens"].as_f64().unwrap());
        assert!(non_empty >= 0.85 && tokens < 400.0, "{part}: {judged}");
        let [keywords, recall] = ["keywords", "recall"]
            .map(|by| &context[by][part])
            .map(|of| (of["held"].as_f64().unwrap(), of["told_elsewhere"].as_f64().unwrap()));
        assert!(keywords.0 > 0.5 && keywords.1 < 0.3, "{part}: {context}");
        assert!(recall.0 >= 0.75 && recall.0 > keywords.0 + 0.05, "{part}: {context}");
        assert!(recall.1 < 0.25, "{part}: {context}");
    }
}
