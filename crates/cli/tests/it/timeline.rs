//! The timeline from the command line and over HTTP: a few days of 2020 (long over), walked
//! from the top down to a day's episodes.

use serde_json::{Value, json};

use crate::common::{epimem, ingest_lines, json_lines, listed};

fn ingest_days(db: &std::path::Path) {
    let lines: String = [
        ("2020-03-02T09:00:00Z", "We planned the garden beds for spring"),
        ("2020-03-02T09:01:00Z", "Tomatoes along the south fence"),
        ("2020-03-04T18:00:00Z", "The garden beds are dug"),
        ("2020-03-04T18:02:00Z", "Compost goes in next"),
        ("2020-03-20T08:00:00Z", "Seedlings of tomato and basil are up"),
    ]
    .iter()
    .enumerate()
    .map(|(i, (at, text))| {
        json!({"conversation": "garden", "role": "user", "content": text, "id": format!("m{i}"), "timestamp": at})
            .to_string()
            + "\n"
    })
    .collect();
    ingest_lines(db, &lines);
}

#[test]
fn the_timeline_is_walked_from_the_top_down_to_episodes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    ingest_days(&db);
    let top = listed(&epimem(&db, &["timeline", "--json"]), "nodes");
    let ids: Vec<&str> = top.iter().map(|n| n["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["toc:year:2020"], "2020 is long over");
    let year = &json_lines(&epimem(&db, &["timeline", "toc:year:2020", "--json"]))[0];
    assert_eq!(year["children"], json!(["toc:month:2020:03"]));
    assert_eq!(year["episodes"].as_u64(), Some(3));
    let month = &json_lines(&epimem(&db, &["timeline", "toc:month:2020:03", "--json"]))[0];
    assert_eq!(month["children"], json!(["toc:week:2020:W10", "toc:week:2020:W12"]));
    let day = &json_lines(&epimem(&db, &["timeline", "toc:day:2020-03-02", "--json"]))[0];
    let episode = day["children"][0].as_str().unwrap();
    assert!(episode.starts_with("ep_"), "{day}");
    assert!(day["title"].as_str().unwrap().to_lowercase().contains("garden"), "{day}");
    assert_eq!(
        (day["start"].as_str(), day["end"].as_str()),
        (Some("2020-03-02T00:00:00Z"), Some("2020-03-03T00:00:00Z"))
    );

    let text = String::from_utf8(epimem(&db, &["timeline", "toc:week:2020:W10"]).stdout).unwrap();
    assert!(text.starts_with("toc:week:2020:W10 (v1)  2020-03-02 to 2020-03-09"), "{text}");
    let bad = epimem(&db, &["timeline", "toc:week:2020-10"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("YEAR:Www"));
    let missing = epimem(&db, &["timeline", "toc:day:2020-03-03"]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("not rolled up"));

    // Recall within a period: a node, or words read against the conversation's time (its
    // newest message is 2020-03-20, a Friday).
    let within = |period: &str| -> Vec<String> {
        let args =
            ["recall", "garden tomato", "--conversation", "garden", "--within", period, "--json"];
        listed(&epimem(&db, &args), "hits")
            .iter()
            .map(|h| h["start"].as_str().unwrap()[..10].to_owned())
            .collect()
    };
    assert_eq!(within("toc:day:2020-03-20"), ["2020-03-20"]);
    assert_eq!(within("this week"), ["2020-03-20"]);
    assert!(within("last week").is_empty(), "nothing between the 9th and the 15th");
    assert_eq!(within("in March").len(), 3);
    let vague = epimem(&db, &["recall", "garden", "--within", "someday"]);
    assert!(String::from_utf8_lossy(&vague.stderr).contains("names no period"));

    // The same over HTTP (the server's worker rolls up too; here it is done already).
    let server = crate::serve::Server::start(&db, crate::serve::FAST_WORKER);
    let (status, top) = server.send("GET", "/v1/timeline", None);
    assert_eq!(status, 200, "{top}");
    assert_eq!(top["nodes"][0]["id"], "toc:year:2020");
    let (status, week) = server.send("GET", "/v1/timeline/toc:week:2020:W12?version=1", None);
    assert_eq!(status, 200, "{week}");
    assert_eq!(week["children"], json!(["toc:day:2020-03-20"]));
    let (status, error): (u16, Value) = server.send("GET", "/v1/timeline/toc:month:2020:3", None);
    assert_eq!((status, error["error"]["code"].as_str()), (400, Some("bad_input")), "{error}");
    let (status, _) = server.send("GET", "/v1/timeline/toc:day:2019-01-01", None);
    assert_eq!(status, 404);
    let (status, session) = server.send("GET", "/v1/conversations/garden", None);
    assert_eq!(status, 200, "{session}");
    assert_eq!(session["summary"]["bullets"].as_array().unwrap().len(), 3, "{session}");
    assert!(
        session["summary"]["keywords"].as_array().unwrap().iter().any(|k| k == "garden"),
        "{session}"
    );
    let (status, found) =
        server.post("/v1/recall", &json!({"query": "garden beds", "within": "toc:week:2020:W10"}));
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["hits"].as_array().unwrap().len(), 2, "the two episodes of that week");
    let (status, error) = server.post(
        "/v1/recall",
        &json!({"query": "garden", "within": "in March", "from": "2020-01-01T00:00:00Z"}),
    );
    assert_eq!(status, 400, "{error}");
}

/// Rows of the timeline's nodes in the database file (any version), read from outside.
fn nodes_written(db: &std::path::Path) -> i64 {
    rusqlite::Connection::open(db)
        .and_then(|c| c.query_row("SELECT count(*) FROM timeline_nodes", [], |r| r.get(0)))
        .unwrap_or(0)
}

#[test]
fn a_rollup_killed_between_two_nodes_resumes_without_duplicate_or_missing_ones() {
    use epimem_llm::scripted::{ScriptedReply, ScriptedServer};
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    ingest_days(&db);
    // A model that tells each period slowly, so the rollup is mid-way when it is killed.
    let model = ScriptedServer::start([]);
    model.otherwise(|_| {
        let told = json!({"title": "Garden work", "bullets": ["Beds dug"], "keywords": ["garden"]});
        ScriptedReply::Slow(
            Duration::from_millis(300),
            Box::new(ScriptedReply::Answer(told.to_string())),
        )
    });
    let config = dir.path().join("llm.toml");
    std::fs::write(&config, format!("[llm]\nurl = \"{}\"\nmodel = \"m\"\n", model.url())).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_epimem"))
        .args(["--db", db.to_str().unwrap(), "--config", config.to_str().unwrap(), "timeline"])
        .env("EPIMEM_EMBEDDER", "hash")
        .env_remove("EPIMEM_TENANT")
        .env_remove("EPIMEM_LLM_URL")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while nodes_written(&db) < 2 {
        assert!(started.elapsed() < Duration::from_secs(30), "the rollup never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL: no cleanup of any kind
    child.wait().unwrap();
    let written = nodes_written(&db);
    assert!((2..7).contains(&written), "killed between two nodes: {written} of 7 written");

    // The next run (LLM-free) finishes what was left, writing nothing twice.
    let top = listed(&epimem(&db, &["timeline", "--json"]), "nodes");
    assert_eq!(top[0]["id"], "toc:year:2020");
    assert_eq!(nodes_written(&db), 7, "every node once: 3 days, 2 weeks, a month, a year");
    let year = &top[0];
    assert_eq!(year["episodes"].as_u64(), Some(3), "none missing");
    assert_eq!(year["version"].as_u64(), Some(1));
}
