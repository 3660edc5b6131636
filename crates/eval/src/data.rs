//! Reading the public segmentation data sets.

use std::{path::Path, str::FromStr};

use anyhow::{Context, Result, bail};
use epimem_core::{Role, SegmentMessage, Timestamp};

use super::online::UTTERANCE_SPACING_MS;
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SegDataset {
    DialSeg711,
    Tiage,
    SuperDialseg,
    /// Coding-agent sessions in `epimem ingest`'s format, labelled in each line's metadata:
    /// `"opens": true` on a prompt that opens a work unit, `"set"` on a session's first line.
    Agent,
}

impl SegDataset {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::DialSeg711 => "dialseg711",
            Self::Tiage => "tiage",
            Self::SuperDialseg => "superdialseg",
            Self::Agent => "agent",
        }
    }
}

impl FromStr for SegDataset {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "dialseg711" => Ok(Self::DialSeg711),
            "tiage" => Ok(Self::Tiage),
            "superdialseg" => Ok(Self::SuperDialseg),
            "agent" => Ok(Self::Agent),
            _ => Err(format!(
                "unknown dataset {s:?}: expected dialseg711, tiage, superdialseg or agent"
            )),
        }
    }
}

/// One dialogue with its gold segmentation.
#[derive(Debug, Clone)]
pub(crate) struct Dialogue {
    pub(crate) id: String,
    pub(crate) set: Option<String>,
    pub(crate) utterances: Vec<(Role, String)>,
    /// Gold segment lengths; they sum to the number of utterances.
    pub(crate) reference: Vec<usize>,
    /// Each utterance's time, when the data set has them (agent sessions); otherwise they are
    /// `UTTERANCE_SPACING_MS` apart.
    pub(crate) times: Option<Vec<Timestamp>>,
}

impl Dialogue {
    /// When utterance `i` was said.
    pub(crate) fn time(&self, i: usize) -> Timestamp {
        self.times.as_ref().map_or(Timestamp(i as i64 * UTTERANCE_SPACING_MS), |t| t[i])
    }

    /// The utterances as a segmenter reads them, at their times, with their token counts (1
    /// each when `tokens` is `None`, for callers whose segmenter does not read them) and
    /// embeddings when given.
    pub(crate) fn messages<'a>(
        &'a self,
        vectors: Option<&'a [Vec<f32>]>,
        tokens: Option<&[u32]>,
    ) -> Vec<SegmentMessage<'a>> {
        self.utterances
            .iter()
            .enumerate()
            .map(|(i, (role, text))| SegmentMessage {
                role: *role,
                content: text,
                timestamp: self.time(i),
                tokens: tokens.map_or(1, |t| t[i]),
                embedding: vectors.map(|v| v[i].as_slice()),
            })
            .collect()
    }
}

#[derive(Deserialize)]
struct JsonDialogue {
    dial_id: serde_json::Value,
    utterances: Vec<String>,
    segments: Vec<usize>,
    #[serde(default)]
    set: Option<String>,
}

#[derive(Deserialize)]
struct SuperLine {
    id: String,
    dialogue: String,
}

/// Reads `path` in the format of `dataset`.
pub(crate) fn load(dataset: SegDataset, path: &Path) -> Result<Vec<Dialogue>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let dialogues = match dataset {
        // DialSeg711 joins MultiWOZ and KVRET: a user and a clerk, alternating, the user
        // first. TIAGE is PersonaChat: two people, either of whom may change the subject.
        SegDataset::DialSeg711 => parse_json_array(&text, Role::Assistant),
        SegDataset::Tiage => parse_json_array(&text, Role::User),
        SegDataset::SuperDialseg => parse_superdialseg(&text),
        SegDataset::Agent => parse_agent_sessions(&text),
    }
    .with_context(|| format!("{} is not in the {} format", path.display(), dataset.name()))?;
    if dialogues.is_empty() {
        bail!("{} holds no dialogues", path.display());
    }
    Ok(dialogues)
}

/// Speakers alternate, starting with a user; the other speaker's role is `second`.
fn parse_json_array(text: &str, second: Role) -> Result<Vec<Dialogue>> {
    let raw: Vec<JsonDialogue> = serde_json::from_str(text)?;
    raw.into_iter()
        .map(|d| {
            let id = match d.dial_id {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            let total: usize = d.segments.iter().sum();
            if total != d.utterances.len() || d.segments.contains(&0) {
                bail!(
                    "dialogue {id}: segments {:?} do not add up to its {} utterances",
                    d.segments,
                    d.utterances.len()
                );
            }
            let utterances = d
                .utterances
                .into_iter()
                .enumerate()
                .map(|(i, u)| (if i % 2 == 0 { Role::User } else { second }, u))
                .collect();
            Ok(Dialogue { id, set: d.set, utterances, reference: d.segments, times: None })
        })
        .collect()
}

fn parse_superdialseg(text: &str) -> Result<Vec<Dialogue>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let raw: SuperLine =
            serde_json::from_str(line).with_context(|| format!("line {}", i + 1))?;
        let mut utterances = Vec::new();
        let mut reference = Vec::new();
        let mut current = 0;
        for piece in raw.dialogue.split("[NEWLINE]").map(str::trim).filter(|p| !p.is_empty()) {
            if piece == "[BOUNDARY]" {
                if current > 0 {
                    reference.push(current);
                    current = 0;
                }
                continue;
            }
            let (role, text) = if let Some(t) = piece.strip_prefix("user:") {
                (Role::User, t)
            } else if let Some(t) = piece.strip_prefix("agent:") {
                (Role::Assistant, t)
            } else {
                bail!("line {}: utterance without a speaker: {piece:?}", i + 1);
            };
            utterances.push((role, text.trim().to_owned()));
            current += 1;
        }
        if current > 0 {
            reference.push(current);
        }
        if !utterances.is_empty() {
            out.push(Dialogue { id: raw.id, set: None, utterances, reference, times: None });
        }
    }
    Ok(out)
}

#[derive(Deserialize)]
struct AgentLine {
    conversation: String,
    role: String,
    content: String,
    timestamp: String,
    #[serde(default)]
    metadata: AgentLabels,
}

#[derive(Deserialize, Default)]
struct AgentLabels {
    #[serde(default)]
    set: Option<String>,
    #[serde(default)]
    opens: bool,
}

/// Sessions in ingest's line format, in the order their first lines come.
fn parse_agent_sessions(text: &str) -> Result<Vec<Dialogue>> {
    let mut out: Vec<Dialogue> = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let raw: AgentLine =
            serde_json::from_str(line).with_context(|| format!("line {}", i + 1))?;
        let role: Role = raw.role.parse().map_err(|e| anyhow::anyhow!("line {}: {e}", i + 1))?;
        let time = Timestamp::parse_rfc3339(&raw.timestamp)
            .with_context(|| format!("line {}: timestamp {:?}", i + 1, raw.timestamp))?;
        let d = match out.iter_mut().position(|d| d.id == raw.conversation) {
            Some(at) => &mut out[at],
            None => {
                out.push(Dialogue {
                    id: raw.conversation,
                    set: raw.metadata.set.clone(),
                    utterances: Vec::new(),
                    reference: vec![0],
                    times: Some(Vec::new()),
                });
                out.last_mut().expect("just pushed")
            }
        };
        if raw.metadata.opens && !d.utterances.is_empty() {
            d.reference.push(0);
        }
        *d.reference.last_mut().expect("never empty") += 1;
        d.utterances.push((role, raw.content));
        d.times.as_mut().expect("agent sessions have times").push(time);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_superdialseg_boundaries() {
        let line = r#"{"id": "s0", "dialogue": "user: a[NEWLINE]agent: b[NEWLINE][BOUNDARY][NEWLINE]user: c[NEWLINE]agent: d[NEWLINE]user: e[NEWLINE][BOUNDARY][NEWLINE]agent: f"}"#;
        let d = parse_superdialseg(line).unwrap();
        assert_eq!(d[0].reference, [2, 3, 1]);
        assert_eq!(d[0].utterances[1], (Role::Assistant, "b".to_owned()));
    }

    #[test]
    fn reads_agent_sessions_with_their_times_and_labels() {
        let text = [
            r#"{"conversation": "a", "role": "user", "content": "x", "timestamp": "2026-01-01T00:00:00Z", "metadata": {"set": "test"}}"#,
            r#"{"conversation": "b", "role": "user", "content": "y", "timestamp": "2026-01-01T00:00:00Z"}"#,
            r#"{"conversation": "a", "role": "tool", "content": "z", "timestamp": "2026-01-01T00:01:00Z"}"#,
            r#"{"conversation": "a", "role": "user", "content": "w", "timestamp": "2026-01-01T00:02:00Z", "metadata": {"opens": true}}"#,
        ]
        .join("\n");
        let d = parse_agent_sessions(&text).unwrap();
        assert_eq!((d[0].id.as_str(), d[0].set.as_deref()), ("a", Some("test")));
        assert_eq!(d[0].reference, [2, 1]);
        assert_eq!(d[0].utterances[1], (Role::Tool, "z".to_owned()));
        assert_eq!(d[0].time(2).since(d[0].time(0)), 2 * Timestamp::MINUTE_MS);
        assert_eq!(d[1].reference, [1]);
        let bad = r#"{"conversation": "a", "role": "robot", "content": "x", "timestamp": "2026-01-01T00:00:00Z"}"#;
        assert!(parse_agent_sessions(bad).unwrap_err().to_string().contains("line 1"));
    }

    #[test]
    fn reads_json_arrays_and_checks_lengths() {
        let ok =
            r#"[{"dial_id": 3, "utterances": ["a","b","c"], "segments": [1,2], "set": "dev"}]"#;
        let d = parse_json_array(ok, Role::Assistant).unwrap();
        assert_eq!(
            (d[0].id.as_str(), d[0].set.as_deref(), &d[0].reference[..]),
            ("3", Some("dev"), &[1, 2][..])
        );
        assert_eq!(d[0].utterances[2].0, Role::User);
        let bad = r#"[{"dial_id": "x", "utterances": ["a"], "segments": [2]}]"#;
        assert!(
            parse_json_array(bad, Role::Assistant)
                .unwrap_err()
                .to_string()
                .contains("do not add up")
        );
    }
}
