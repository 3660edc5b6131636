//! Where the default segmenter cuts realistic chats, with the default embedder (potion): one
//! episode per subject, short follow-ups ("And is there a travel card?", "ok") kept with it.

use std::path::Path;

use crate::common;

/// Runs epimem on `db` with the default embedder, potion, from `models` (the flags override the
/// model-free embedder the other tests use).
fn potion(db: &Path, models: &Path, args: &[&str]) -> Vec<serde_json::Value> {
    let models = models.to_str().unwrap();
    let flags = [&["--embedder", "potion", "--models", models][..], args].concat();
    common::json_lines(&common::epimem(db, &flags))
}

/// The episodes of `db` as (first, last) message numbers.
fn episodes(db: &Path, models: &Path) -> Vec<(u64, u64)> {
    surprises(db, models).into_iter().map(|(range, _)| range).collect()
}

/// The episodes of `db` as (first, last) message numbers, with their surprise.
fn surprises(db: &Path, models: &Path) -> Vec<((u64, u64), f64)> {
    let mut out: Vec<((u64, u64), f64)> =
        potion(db, models, &["episodes", "--json"])[0]["episodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let range = (e["first_seq"].as_u64().unwrap(), e["last_seq"].as_u64().unwrap());
                (range, e["surprise"].as_f64().unwrap())
            })
            .collect();
    out.sort_by_key(|&(range, _)| range);
    out
}

fn ingest(db: &Path, models: &Path, file: &Path) {
    potion(db, models, &["ingest", file.to_str().unwrap(), "--flush", "--json"]);
}

/// A new database in `dir` holding `file` (a path under the crate), ingested and flushed.
fn ingested(dir: &Path, models: &Path, file: &str) -> std::path::PathBuf {
    let db = dir.join("e.db");
    ingest(&db, models, &Path::new(env!("CARGO_MANIFEST_DIR")).join(file));
    db
}

/// Planning, debugging, cooking, planning again and gardening, as `epimem demo` ingests them.
#[test]
fn the_sample_conversation_is_cut_between_subjects_only() {
    let Some(models) = common::real_models() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = ingested(dir.path(), &models, "data/sample-conversation.jsonl");
    let with_surprise = surprises(&db, &models);
    let got: Vec<(u64, u64)> = with_surprise.iter().map(|&(range, _)| range).collect();
    // The Lisbon plan may be one episode or two (where to stay; what to see).
    let lisbon: &[(u64, u64)] = if got[0] == (1, 10) { &[(1, 10)] } else { &[(1, 6), (7, 10)] };
    let mut want = lisbon.to_vec();
    want.extend([(11, 20), (21, 26), (27, 32), (33, 38)]);
    assert_eq!(got, want);
    // The surprise comes from the signal that cut: nothing before the first episode; each
    // change of subject (CI after Lisbon, cooking after CI, ...) is one the coherence model
    // would cut by itself, even where a pause cut first; the turn from where to stay to what
    // to see, when cut at all, is less surprising than they are on average.
    assert_eq!(with_surprise[0].1, 0.0);
    let subject_changes = &with_surprise[with_surprise.len() - 4..];
    let threshold = epimem_core::segment::CoherenceConfig::default().threshold;
    assert!(subject_changes.iter().all(|&(_, s)| s >= threshold), "{with_surprise:?}");
    let mean = subject_changes.iter().map(|&(_, s)| s).sum::<f64>() / 4.0;
    if lisbon.len() == 2 {
        assert!(with_surprise[1].1 < mean, "{with_surprise:?}");
    }
}

/// A debugging session full of short replies, then a change of subject within minutes.
#[test]
fn a_work_session_with_short_replies_stays_whole() {
    let Some(models) = common::real_models() else { return };
    let turns = [
        ("user", "The nightly backup job to S3 failed again with an access denied error."),
        ("assistant", "Which bucket and which IAM role does the backup job use?"),
        ("user", "Bucket prod-backups, role backup-writer."),
        (
            "assistant",
            "The role's policy allows s3:PutObject but the bucket now requires KMS encryption, so it also needs kms:GenerateDataKey.",
        ),
        ("user", "ok"),
        (
            "assistant",
            "I added kms:GenerateDataKey for the backup key to the backup-writer policy.",
        ),
        ("user", "Run the backup job now please."),
        (
            "assistant",
            "The backup job finished: 412 objects uploaded to prod-backups, encrypted with KMS.",
        ),
        ("user", "great, thanks"),
        ("assistant", "You're welcome."),
        (
            "user",
            "Different question: what should I cook tonight with chickpeas, spinach and coconut milk?",
        ),
        (
            "assistant",
            "A chickpea and spinach curry: fry onion, garlic and ginger, add curry powder, chickpeas and coconut milk, simmer, then wilt the spinach.",
        ),
        ("user", "How long does it simmer?"),
        (
            "assistant",
            "Fifteen minutes for the chickpea curry, then two more after the spinach goes in.",
        ),
    ];
    let lines: Vec<String> = turns
        .iter()
        .enumerate()
        .map(|(i, (role, content))| {
            serde_json::json!({
                "conversation": "ops", "role": role, "content": content,
                "timestamp": format!("2026-05-04T18:{:02}:00Z", i * 2),
            })
            .to_string()
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let file = dir.path().join("chat.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    ingest(&db, &models, &file);
    assert_eq!(episodes(&db, &models), [(1, 10), (11, 14)]);
}

/// A technical chat whose answers run to a hundred words and more, with follow-ups of a line
/// ("hmm, what if some handler … forgets to release it?"), then a change of subject: two
/// episodes. Lengths are read against what each speaker usually writes, so long answers do not
/// make every next question look like a new subject.
#[test]
fn a_chat_with_long_answers_is_cut_at_its_change_of_subject_only() {
    let Some(models) = common::real_models() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = ingested(dir.path(), &models, "tests/it/chats/long-answers.jsonl");
    assert_eq!(episodes(&db, &models), [(1, 8), (9, 14)]);
}

/// The sample conversation sent one message at a time, as an agent streams it: the triggers
/// hand the segmenter windows of 20 with the last segment left open, and the cuts are still
/// the ones the whole conversation gets.
#[test]
fn streaming_one_message_at_a_time_cuts_where_the_whole_conversation_is_cut() {
    let Some(models) = common::real_models() else { return };
    let dir = tempfile::tempdir().unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sample-conversation.jsonl");
    let utterances: Vec<String> = std::fs::read_to_string(sample)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["content"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let subjects = [6, 4, 10, 6, 6, 6];
    let data = serde_json::json!([{"dial_id": 1, "utterances": utterances, "segments": subjects}]);
    let path = dir.path().join("sample.json");
    std::fs::write(&path, data.to_string()).unwrap();
    let dump = dir.path().join("dump.jsonl");
    let args = ["eval", "segmentation", "--dataset", "dialseg711", "--segmenter", "default"];
    let rest = ["--online", "--json", "--path", path.to_str().unwrap()];
    let out = [&args[..], &rest, &["--dump", dump.to_str().unwrap()]].concat();
    potion(&dir.path().join("unused.db"), &models, &out);
    let dumped = std::fs::read_to_string(&dump).unwrap();
    let predicted = |segmenter: &str| -> serde_json::Value {
        dumped
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|d| d["segmenter"] == segmenter)
            .unwrap()["predicted"]
            .clone()
    };
    assert_eq!(predicted("online"), serde_json::json!(subjects));
    assert_eq!(predicted("default"), serde_json::json!(subjects));
}

/// The labelled coding-agent sessions (crates/eval/data/agent-sessions.jsonl), replayed through
/// ingest: every task a person would call new opens a work unit, and the follow-ups ("Also
/// ...", "Make it friendlier", "do it and run the tests") mostly stay in theirs. Work units
/// read no vectors, so the model-free embedder gives the figures `docs/benchmarks.md` reports.
#[test]
fn coding_agent_sessions_are_cut_at_new_tasks_and_rarely_inside_one() {
    let sessions = Path::new(env!("CARGO_MANIFEST_DIR")).join("../eval/data/agent-sessions.jsonl");
    let dir = tempfile::tempdir().unwrap();
    for part in ["tuning", "test"] {
        let args = ["eval", "segmentation", "--dataset", "agent", "--segmenter", "default"];
        let rest = ["--online", "--json", "--set", part, "--path", sessions.to_str().unwrap()];
        let out = common::epimem(&dir.path().join("unused.db"), &[&args[..], &rest].concat());
        let rows = common::json_lines(&out);
        let row = |name: &str| rows.iter().find(|r| r["segmenter"] == name).unwrap().clone();
        let (none, online) = (row("none"), row("online"));
        // Every new task opens a unit, the one after a commit its tool message holds second
        // (after an edit) too.
        let missed = online["reference_boundaries"].as_f64().unwrap()
            * (1.0 - online["recall"].as_f64().unwrap());
        assert_eq!(missed.round(), 0.0, "{part}: {online}");
        // Not one unit per prompt: at least half the cuts are right, and cutting beats not
        // cutting at all by a margin (before the discourse cues it was worse: Pk 0.59 / 0.30).
        assert!(online["precision"].as_f64().unwrap() >= 0.5, "{part}: {online}");
        let (pk, none_pk) = (online["pk"].as_f64().unwrap(), none["pk"].as_f64().unwrap());
        assert!(pk < 0.6 * none_pk, "{part}: Pk {pk} against {none_pk} for none");
    }
}
