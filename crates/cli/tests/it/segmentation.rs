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
    let mut ranges: Vec<(u64, u64)> = potion(db, models, &["episodes", "--json"])
        .iter()
        .map(|e| (e["first_seq"].as_u64().unwrap(), e["last_seq"].as_u64().unwrap()))
        .collect();
    ranges.sort_unstable();
    ranges
}

fn ingest(db: &Path, models: &Path, file: &Path) {
    potion(db, models, &["ingest", file.to_str().unwrap(), "--flush", "--json"]);
}

/// Planning, debugging, cooking, planning again and gardening, as `epimem demo` ingests them.
#[test]
fn the_sample_conversation_is_cut_between_subjects_only() {
    let Some(models) = common::real_models() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sample-conversation.jsonl");
    ingest(&db, &models, &sample);
    let got = episodes(&db, &models);
    // The Lisbon plan may be one episode or two (where to stay; what to see).
    let lisbon: &[(u64, u64)] = if got[0] == (1, 10) { &[(1, 10)] } else { &[(1, 6), (7, 10)] };
    let mut want = lisbon.to_vec();
    want.extend([(11, 20), (21, 26), (27, 32), (33, 38)]);
    assert_eq!(got, want);
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
