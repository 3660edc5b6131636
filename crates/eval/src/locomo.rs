//! Reading LoCoMo (Maharana et al., 2024): long conversations with questions and their
//! evidence turns.

use std::{collections::HashSet, path::Path};

use anyhow::{Context, Result, bail};
use chrono::NaiveDateTime;
use epimem_core::Timestamp;
use serde::Deserialize;

/// Which part of a public set a conversation belongs to: defaults are tuned on the first and
/// judged on the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Split {
    Tuning,
    Test,
}

impl Split {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Split::Tuning => "tuning",
            Split::Test => "test",
        }
    }

    /// BEAM's chats `beam-1` … `beam-17` are for tuning and the rest for test; in any other
    /// file (LoCoMo: conv-26 … conv-43, then conv-44 … conv-50) the first half of the
    /// conversations, in file order, is for tuning.
    pub(crate) fn of(id: &str, position: usize, count: usize) -> Split {
        match id.strip_prefix("beam-").and_then(|n| n.parse::<u32>().ok()) {
            Some(n) if n <= 17 => Split::Tuning,
            Some(_) => Split::Test,
            None if position < count.div_ceil(2) => Split::Tuning,
            None => Split::Test,
        }
    }
}

/// One conversation, its turns in order, and its questions.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    pub(crate) id: String,
    pub(crate) split: Split,
    pub(crate) turns: Vec<Turn>,
    pub(crate) questions: Vec<Question>,
}

impl Sample {
    /// The evidence id of message `seq` (sequence numbers count from 1, in turn order).
    pub(crate) fn dia_id(&self, seq: u64) -> Option<&str> {
        let at = usize::try_from(seq.checked_sub(1)?).ok()?;
        self.turns.get(at).map(|t| t.dia_id.as_str())
    }

    /// The evidence ids of messages `first..=last`.
    pub(crate) fn dia_ids(&self, first: u64, last: u64) -> impl Iterator<Item = &str> {
        (first..=last).filter_map(|seq| self.dia_id(seq))
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Turn {
    pub(crate) dia_id: String,
    pub(crate) speaker: String,
    pub(crate) text: String,
    pub(crate) timestamp: Timestamp,
}

#[derive(Debug, Clone)]
pub(crate) struct Question {
    pub(crate) question: String,
    pub(crate) category: u8,
    pub(crate) evidence: Vec<String>,
}

impl Question {
    /// The share of its evidence that `covered` holds: 0 for a question that names no
    /// evidence, and an unresolvable evidence id counts as a miss.
    pub(crate) fn share_in(&self, covered: &HashSet<&str>) -> f64 {
        if self.evidence.is_empty() {
            return 0.0;
        }
        let found = self.evidence.iter().filter(|e| covered.contains(e.as_str())).count();
        found as f64 / self.evidence.len() as f64
    }
}

#[derive(Deserialize)]
struct RawSample {
    sample_id: String,
    conversation: serde_json::Map<String, serde_json::Value>,
    qa: Vec<RawQa>,
}

#[derive(Deserialize)]
struct RawQa {
    question: String,
    #[serde(default)]
    evidence: Vec<String>,
    category: u8,
}

#[derive(Deserialize)]
struct RawTurn {
    speaker: String,
    dia_id: String,
    text: String,
    #[serde(default)]
    blip_caption: Option<String>,
}

/// Reads a file in LoCoMo's format.
pub(crate) fn load(path: &Path) -> Result<Vec<Sample>> {
    let text = read_text(path)?;
    let raw: Vec<RawSample> = serde_json::from_str(&text)
        .with_context(|| format!("{} is not in LoCoMo's format", path.display()))?;
    if raw.is_empty() {
        bail!("{} holds no conversations", path.display());
    }
    let count = raw.len();
    raw.into_iter()
        .enumerate()
        .map(|(i, raw)| {
            let split = Split::of(&raw.sample_id, i, count);
            sample(raw, split)
        })
        .collect()
}

/// The file's text, gunzipped when its name ends in `.gz`.
fn read_text(path: &Path) -> Result<String> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut text = String::new();
    let read = if path.extension().is_some_and(|e| e == "gz") {
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(file), &mut text)
    } else {
        std::io::Read::read_to_string(&mut std::io::BufReader::new(file), &mut text)
    };
    read.with_context(|| format!("cannot read {}", path.display()))?;
    Ok(text)
}

fn sample(raw: RawSample, split: Split) -> Result<Sample> {
    // Sessions in numeric order; some conversations list dates of sessions that do not exist.
    let mut sessions: Vec<(u32, &Vec<serde_json::Value>)> = raw
        .conversation
        .iter()
        .filter_map(|(k, v)| {
            let n = k.strip_prefix("session_")?.parse::<u32>().ok()?;
            Some((n, v.as_array()?))
        })
        .collect();
    sessions.sort_by_key(|(n, _)| *n);
    let mut turns = Vec::new();
    for (n, list) in sessions {
        let key = format!("session_{n}_date_time");
        let date =
            raw.conversation.get(&key).and_then(|v| v.as_str()).with_context(|| {
                format!("conversation {}: session {n} has no {key}", raw.sample_id)
            })?;
        let start =
            parse_date(date).with_context(|| format!("conversation {}: {key}", raw.sample_id))?;
        for (i, value) in list.iter().enumerate() {
            let t: RawTurn = serde_json::from_value(value.clone()).with_context(|| {
                format!("conversation {}: a turn of session {n}", raw.sample_id)
            })?;
            let text = match t.blip_caption {
                Some(caption) => format!("{} [shares a photo: {caption}]", t.text),
                None => t.text,
            };
            // Turns of a session half a minute apart, from its start.
            turns.push(Turn {
                dia_id: t.dia_id,
                speaker: t.speaker,
                text,
                timestamp: start.plus_millis(i as i64 * 30_000),
            });
        }
    }
    let questions = raw
        .qa
        .into_iter()
        .map(|q| Question { question: q.question, category: q.category, evidence: q.evidence })
        .collect();
    Ok(Sample { id: raw.sample_id, split, turns, questions })
}

/// "1:56 pm on 8 May, 2023", read as UTC.
fn parse_date(text: &str) -> Result<Timestamp> {
    let normalized = text.trim().replace("am", "AM").replace("pm", "PM");
    let dt = NaiveDateTime::parse_from_str(&normalized, "%I:%M %p on %d %B, %Y")
        .with_context(|| format!("unreadable date {text:?}"))?;
    Ok(Timestamp(dt.and_utc().timestamp_millis()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_follow_the_data_readme() {
        let locomo = ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44", "conv-47"];
        let splits: Vec<Split> =
            locomo.iter().enumerate().map(|(i, id)| Split::of(id, i, 10)).collect();
        assert_eq!(splits[..5], [Split::Tuning; 5]);
        assert_eq!(splits[5..], [Split::Test; 2]);
        assert_eq!(Split::of("beam-17", 30, 35), Split::Tuning);
        assert_eq!(Split::of("beam-18", 0, 35), Split::Test);
        assert_eq!(Split::of("beam-x", 0, 1), Split::Tuning, "not BEAM's numbering: by position");
    }

    #[test]
    fn reads_locomo_dates() {
        assert_eq!(
            parse_date("1:56 pm on 8 May, 2023").unwrap().to_rfc3339(),
            "2023-05-08T13:56:00Z"
        );
        assert_eq!(
            parse_date("10:37 am on 27 June, 2023").unwrap().to_rfc3339(),
            "2023-06-27T10:37:00Z"
        );
        assert!(parse_date("yesterday").is_err());
    }

    #[test]
    fn sessions_in_numeric_order_with_captions() {
        let raw: RawSample = serde_json::from_value(serde_json::json!({
            "sample_id": "s",
            "conversation": {
                "speaker_a": "A", "speaker_b": "B",
                "session_10_date_time": "1:00 pm on 2 May, 2023",
                "session_10": [{"speaker": "A", "dia_id": "D10:1", "text": "later"}],
                "session_2_date_time": "1:00 pm on 1 May, 2023",
                "session_2": [{"speaker": "B", "dia_id": "D2:1", "text": "look", "blip_caption": "a dog"}],
                "session_3_date_time": "1:00 pm on 3 May, 2023"
            },
            "qa": [{"question": "q", "answer": "a", "evidence": ["D2:1"], "category": 4}]
        }))
        .unwrap();
        let s = sample(raw, Split::Test).unwrap();
        assert_eq!(
            s.turns.iter().map(|t| t.dia_id.as_str()).collect::<Vec<_>>(),
            ["D2:1", "D10:1"]
        );
        assert_eq!(s.turns[0].text, "look [shares a photo: a dog]");
        assert_eq!(s.questions[0].evidence, ["D2:1"]);
        // Messages by sequence number, from 1; none past either end.
        assert_eq!(s.dia_ids(0, 3).collect::<Vec<_>>(), ["D2:1", "D10:1"]);
        let q = &s.questions[0];
        assert_eq!(q.share_in(&["D2:1"].into_iter().collect()), 1.0);
        assert_eq!(q.share_in(&["D10:1"].into_iter().collect()), 0.0);
    }
}
