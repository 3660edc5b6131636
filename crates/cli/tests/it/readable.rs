//! What epimem writes for people to read without a model: episode titles and summaries, and
//! the timeline's rollups. On LoCoMo, properties only (its text is not ours to snapshot); on
//! the demo conversation, a snapshot; and what an older telling becomes when told again.

use std::{collections::BTreeSet, path::Path};

use serde_json::{Value, json};

use crate::common::{epimem, ingest_lines, json_lines, listed};

/// This test's own list of words that say nothing of a subject: chat, praise, interjections,
/// vague time words and function words. Not the code's list.
const SAYS_NOTHING: &[&str] = &[
    "a",
    "about",
    "amazing",
    "an",
    "and",
    "awesome",
    "be",
    "chat",
    "cool",
    "day",
    "definitely",
    "episode",
    "for",
    "fun",
    "glad",
    "going",
    "good",
    "great",
    "haha",
    "happy",
    "hello",
    "hey",
    "hi",
    "i",
    "in",
    "is",
    "it",
    "just",
    "keep",
    "lol",
    "looks",
    "love",
    "lovely",
    "my",
    "nice",
    "of",
    "oh",
    "ok",
    "okay",
    "on",
    "photo",
    "pic",
    "really",
    "share",
    "shares",
    "so",
    "soon",
    "sounds",
    "stuff",
    "sure",
    "talk",
    "thank",
    "thanks",
    "that",
    "the",
    "things",
    "this",
    "time",
    "to",
    "totally",
    "untitled",
    "we",
    "week",
    "with",
    "wonderful",
    "wow",
    "yeah",
    "yes",
    "you",
    "your",
];

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The words of `text` that could name someone or something.
fn naming_words(text: &str) -> BTreeSet<String> {
    words(text)
        .into_iter()
        .filter(|w| w.chars().count() >= 3 && !SAYS_NOTHING.contains(&w.as_str()))
        .filter(|w| !w.chars().all(|c| c.is_ascii_digit()))
        .collect()
}

/// Every timeline node, from the top down to the days.
fn all_nodes(db: &Path) -> Vec<Value> {
    let mut ids: Vec<String> = listed(&epimem(db, &["timeline", "--json"]), "nodes")
        .iter()
        .map(|n| n["id"].as_str().unwrap().to_owned())
        .collect();
    let mut nodes = Vec::new();
    while let Some(id) = ids.pop() {
        let node = json_lines(&epimem(db, &["timeline", &id, "--json"])).remove(0);
        if node["level"] != "day" {
            ids.extend(
                node["children"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_owned()),
            );
        }
        nodes.push(node);
    }
    nodes
}

/// No title is filler alone, and every node names a person, place or subject of its period:
/// a word of its episodes' titles and summaries.
fn assert_readable(db: &Path, conversations: &[&str]) -> (Vec<Value>, Vec<Value>) {
    let mut episodes = Vec::new();
    for conversation in conversations {
        let args = ["episodes", "--json", "--limit", "1000", "--conversation", conversation];
        let some = listed(&epimem(db, &args), "episodes");
        assert!(!some.is_empty() && some.len() < 1000, "all of {conversation}'s");
        episodes.extend(some);
    }
    for e in &episodes {
        let title = e["title"].as_str().unwrap();
        assert!(!naming_words(title).is_empty(), "a title of filler alone: {title:?}");
        let summary = e["summary"].as_str().unwrap();
        assert!(summary.split_whitespace().count() <= 30, "{summary:?}");
    }
    let nodes = all_nodes(db);
    assert!(!nodes.is_empty());
    for node in &nodes {
        let (start, end) = (node["start"].as_str().unwrap(), node["end"].as_str().unwrap());
        let mut period = BTreeSet::new();
        for e in episodes.iter().filter(|e| {
            let at = e["start"].as_str().unwrap();
            at >= start && at < end
        }) {
            period.extend(naming_words(e["title"].as_str().unwrap()));
            period.extend(naming_words(e["summary"].as_str().unwrap()));
        }
        let title = node["title"].as_str().unwrap();
        let named = naming_words(title);
        assert!(!named.is_empty(), "a rollup of filler alone: {node}");
        assert!(named.iter().any(|w| period.contains(w)), "names nothing of its period: {node}");
        for bullet in node["bullets"].as_array().unwrap() {
            assert!(!naming_words(bullet.as_str().unwrap()).is_empty(), "{node}");
        }
    }
    (episodes, nodes)
}

/// LoCoMo's conversations as `epimem ingest` lines: sessions in order, turns half a minute
/// apart, a shared photo told by its caption (as `eval recall` reads them); and their names.
fn locomo_lines() -> (String, Vec<String>) {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/memory/locomo10.json");
    let samples: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out = String::new();
    let mut names = Vec::new();
    for sample in &samples {
        names.push(sample["sample_id"].as_str().unwrap().to_owned());
        let conversation = &sample["conversation"];
        for n in 1.. {
            let Some(turns) = conversation[format!("session_{n}")].as_array() else { break };
            let date = conversation[format!("session_{n}_date_time")].as_str().unwrap();
            let date = date.replace("am", "AM").replace("pm", "PM");
            let start =
                chrono::NaiveDateTime::parse_from_str(&date, "%I:%M %p on %d %B, %Y").unwrap();
            for (i, turn) in turns.iter().enumerate() {
                let mut text = turn["text"].as_str().unwrap().to_owned();
                if let Some(caption) = turn["blip_caption"].as_str() {
                    text.push_str(&format!(" [shares a photo: {caption}]"));
                }
                let at = start + chrono::Duration::seconds(30 * i as i64);
                let line = json!({
                    "conversation": sample["sample_id"],
                    "role": "user",
                    "speaker": turn["speaker"],
                    "content": text,
                    "timestamp": at.and_utc().to_rfc3339(),
                });
                out.push_str(&format!("{line}\n"));
            }
        }
    }
    (out, names)
}

#[test]
fn locomo_titles_and_rollups_name_something() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("locomo.db");
    let (lines, conversations) = locomo_lines();
    ingest_lines(&db, &lines);
    let conversations: Vec<&str> = conversations.iter().map(String::as_str).collect();
    let (episodes, nodes) = assert_readable(&db, &conversations);
    assert!(episodes.len() > 100 && nodes.len() > 50, "{} {}", episodes.len(), nodes.len());
    // The people of a conversation run through its periods: most rollups name someone.
    let named = nodes.iter().filter(|n| !n["names"].as_array().unwrap().is_empty()).count();
    assert!(named * 10 >= nodes.len() * 9, "{named} of {}", nodes.len());
}

#[test]
fn the_demo_reads_well_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    ingest_lines(&db, include_str!("../../data/sample-conversation.jsonl"));
    let (episodes, mut nodes) = assert_readable(&db, &["maya-assistant"]);
    nodes.sort_by_key(|n| n["id"].as_str().unwrap().to_owned());
    let episodes: Vec<Value> = episodes
        .iter()
        .rev()
        .map(|e| json!({"title": e["title"], "summary": e["summary"]}))
        .collect();
    let nodes: Vec<Value> = nodes
        .iter()
        .map(|n| json!({"id": n["id"], "title": n["title"], "bullets": n["bullets"], "names": n["names"]}))
        .collect();
    insta::assert_json_snapshot!(json!({"episodes": episodes, "timeline": nodes}));
}

/// What an earlier telling stored (here, 50-word summaries) is told again as this version
/// tells it; a person's correction and a second retelling change nothing.
#[test]
fn retell_tells_an_older_telling_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("old.db");
    let older = dir.path().join("older.toml");
    std::fs::write(&older, "[summary]\nmax_summary_words = 50\n").unwrap();
    let input = db.with_extension("jsonl");
    std::fs::write(&input, include_str!("../../data/sample-conversation.jsonl")).unwrap();
    let config = older.to_str().unwrap();
    let run = |args: &[&str]| epimem(&db, args);
    let out = run(&["--config", config, "ingest", input.to_str().unwrap(), "--flush"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let before = listed(&run(&["episodes", "--json"]), "episodes");
    let long =
        before.iter().filter(|e| e["summary"].as_str().unwrap().split_whitespace().count() > 30);
    assert!(long.count() >= 3, "the older telling is longer");
    let corrected = before[0]["id"].as_str().unwrap();
    assert!(run(&["edit", corrected, "--title", "Tomatoes on the balcony"]).status.success());

    let out = run(&["retell", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = &json_lines(&out)[0];
    assert_eq!(report["episodes"], before.len());
    assert_eq!(report["kept"], 1, "the corrected one: {report}");
    assert!(report["retold"].as_u64().unwrap() >= 3, "{report}");
    assert!(report["periods"].as_u64().unwrap() >= 3, "{report}");
    let after = listed(&run(&["episodes", "--json"]), "episodes");
    for (old, new) in before.iter().zip(&after) {
        assert_eq!(old["id"], new["id"]);
        let words = new["summary"].as_str().unwrap().split_whitespace().count();
        assert!(new["id"] == corrected || words <= 30, "{new}");
    }
    assert_eq!(after[0]["title"], "Tomatoes on the balcony");
    // The older telling is kept as a version.
    let (_, retold) =
        before.iter().zip(&after).find(|(old, new)| old["summary"] != new["summary"]).unwrap();
    let shown = json_lines(&run(&["show", retold["id"].as_str().unwrap(), "--json"])).remove(0);
    assert_eq!(shown["versions"].as_array().map(Vec::len), Some(1), "{shown}");

    let again = json_lines(&run(&["retell", "--json"])).remove(0);
    assert_eq!(again["retold"], 0, "{again}");
}
