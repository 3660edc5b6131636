//! Reading our coding-agent sessions as a recall set: the labelled sessions of
//! `crates/eval/data/agent-sessions.jsonl` and questions about them, asked as a later session
//! of the same project would ask them.

use std::{
    collections::{BTreeMap, HashMap},
    path::Path,
};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use super::{
    data::{self, Dialogue, SegDataset},
    locomo::{Question, Sample, Split, Turn},
};

/// One line of the questions file. `evidence` holds the answering messages' positions in
/// their session, from 0.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQuestion {
    conversation: String,
    question: String,
    category: u8,
    evidence: Vec<usize>,
}

/// The sessions of `sessions`, each part (`"set"` of a session's first line) replayed as one
/// project's history in time order, with the questions of `questions` about its sessions.
/// A message's evidence id is `<session>:<position>`.
pub(crate) fn load(sessions: &Path, questions: &Path) -> Result<Vec<Sample>> {
    let mut dialogues = data::load(SegDataset::Agent, sessions)?;
    dialogues.sort_by_key(|d| d.time(0));
    let mut parts: BTreeMap<Split, Sample> = BTreeMap::new();
    let mut part_of: HashMap<&str, (Split, usize)> = HashMap::new();
    for d in &dialogues {
        let split = match d.set.as_deref() {
            Some("tuning") => Split::Tuning,
            Some("test") => Split::Test,
            other => bail!("session {}: \"set\" is {other:?}, expected tuning or test", d.id),
        };
        let part = parts.entry(split).or_insert_with(|| Sample {
            id: format!("agent-{}", split.name()),
            split,
            turns: Vec::new(),
            questions: Vec::new(),
        });
        part_of.insert(&d.id, (split, d.utterances.len()));
        part.turns.extend(turns(d));
    }
    let text = std::fs::read_to_string(questions)
        .with_context(|| format!("cannot read {}", questions.display()))?;
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let at = || format!("{} line {}", questions.display(), i + 1);
        let raw: RawQuestion = serde_json::from_str(line).with_context(at)?;
        let Some(&(split, len)) = part_of.get(raw.conversation.as_str()) else {
            bail!("{}: no session {:?} in {}", at(), raw.conversation, sessions.display());
        };
        if let Some(bad) = raw.evidence.iter().find(|&&e| e >= len) {
            bail!("{}: session {:?} has {len} messages, not {}", at(), raw.conversation, bad + 1);
        }
        let evidence = raw.evidence.iter().map(|e| format!("{}:{e}", raw.conversation)).collect();
        let part = parts.get_mut(&split).expect("made with the sessions");
        part.questions.push(Question { question: raw.question, category: raw.category, evidence });
    }
    Ok(parts.into_values().collect())
}

/// A session's messages as turns; the speaker is the role, which the ingest reads back.
fn turns(d: &Dialogue) -> impl Iterator<Item = Turn> + '_ {
    d.utterances.iter().enumerate().map(|(i, (role, text))| Turn {
        dia_id: format!("{}:{i}", d.id),
        speaker: role.as_str().to_owned(),
        text: text.clone(),
        timestamp: d.time(i),
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn file(lines: &[serde_json::Value]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        for line in lines {
            writeln!(f, "{line}").unwrap();
        }
        f
    }

    fn message(session: &str, role: &str, minute: u32, set: Option<&str>) -> serde_json::Value {
        let mut line = serde_json::json!({
            "conversation": session, "role": role, "content": format!("{role} at {minute}"),
            "timestamp": format!("2026-11-02T09:{minute:02}:00Z"),
        });
        if let Some(set) = set {
            line["metadata"] = serde_json::json!({ "set": set });
        }
        line
    }

    #[test]
    fn parts_hold_their_sessions_in_time_order_with_their_questions() {
        let sessions = file(&[
            message("later", "user", 30, Some("tuning")),
            message("later", "tool", 31, None),
            message("other", "user", 0, Some("test")),
            message("first", "user", 10, Some("tuning")),
            message("first", "assistant", 11, None),
        ]);
        let questions = file(&[
            serde_json::json!({"conversation": "later", "question": "q1", "category": 3, "evidence": [1]}),
            serde_json::json!({"conversation": "other", "question": "q2", "category": 2, "evidence": [0]}),
        ]);
        let parts = load(sessions.path(), questions.path()).unwrap();
        assert_eq!(parts.len(), 2);
        let tuning = &parts[0];
        assert_eq!((tuning.id.as_str(), tuning.split), ("agent-tuning", Split::Tuning));
        let ids: Vec<&str> = tuning.turns.iter().map(|t| t.dia_id.as_str()).collect();
        assert_eq!(ids, ["first:0", "first:1", "later:0", "later:1"]);
        assert_eq!(tuning.turns[3].speaker, "tool");
        assert_eq!(tuning.questions.len(), 1);
        assert_eq!(tuning.questions[0].evidence, ["later:1"]);
        assert_eq!(parts[1].questions[0].question, "q2");
    }

    #[test]
    fn a_question_about_a_missing_session_or_message_is_an_error() {
        let sessions = file(&[message("s", "user", 0, Some("tuning"))]);
        for (question, says) in [
            (
                serde_json::json!({"conversation": "t", "question": "q", "category": 1, "evidence": [0]}),
                "no session \"t\"",
            ),
            (
                serde_json::json!({"conversation": "s", "question": "q", "category": 1, "evidence": [1]}),
                "has 1 messages, not 2",
            ),
            (
                serde_json::json!({"conversation": "s", "question": "q", "category": 1, "evidence": [0], "extra": 1}),
                "line 1",
            ),
        ] {
            let questions = file(&[question]);
            let err = format!("{:#}", load(sessions.path(), questions.path()).unwrap_err());
            assert!(err.contains(says), "{err}");
        }
        let unsplit = file(&[message("s", "user", 0, None)]);
        let questions = file(&[]);
        let err = format!("{:#}", load(unsplit.path(), questions.path()).unwrap_err());
        assert!(err.contains("expected tuning or test"), "{err}");
    }
}
