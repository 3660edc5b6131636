//! Questions the memory cannot answer, asked beside those it can: each question is asked in
//! its own conversation, in another conversation of the same part (as written, and with its
//! speakers' names replaced by the host's), and a question from another data set is asked in
//! its conversation. A block should hold the evidence of the first and stay empty for the rest.

use std::{collections::BTreeMap, fmt::Write as _};

use anyhow::Result;
use epimem_api::{Memory, RecallQuery};
use epimem_core::{Scope, recall::RelevanceConfig};
use serde::Serialize;

use super::locomo::{Question, Sample, Split};

/// The budget the blocks are judged at.
pub(crate) const BUDGET: usize = 1_000;

/// Whose question a block was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Asked {
    /// The conversation's own question: its answer is there.
    Own,
    /// Another conversation's question, as written.
    OtherConversation,
    /// Another conversation's question with its speakers' names replaced by the host's.
    Renamed,
    /// A question from another data set.
    OtherSet,
    /// The first prompt of a new task.
    NewTask,
    /// An own question that names someone or something the conversation holds, as written...
    Named,
    /// ...and with those names misspelled.
    Misspelled,
}

impl Asked {
    fn name(self) -> &'static str {
        match self {
            Asked::Own => "own",
            Asked::OtherConversation => "other_conversation",
            Asked::Renamed => "renamed",
            Asked::OtherSet => "other_set",
            Asked::NewTask => "new_task",
            Asked::Named => "named",
            Asked::Misspelled => "misspelled",
        }
    }

    /// Whether the answer is in the conversation asked.
    pub(crate) fn answered_here(self) -> bool {
        matches!(self, Asked::Own | Asked::Named | Asked::Misspelled)
    }
}

/// Blocks of one part, setting and kind: how many, how many not empty, tokens used, and (own
/// questions) the evidence they held.
#[derive(Debug, Default, Clone, Serialize)]
pub(crate) struct BlockSums {
    pub(crate) questions: usize,
    pub(crate) non_empty: usize,
    pub(crate) tokens: usize,
    pub(crate) evidence: f64,
}

impl BlockSums {
    fn json(&self) -> serde_json::Value {
        let n = self.questions.max(1) as f64;
        serde_json::json!({
            "questions": self.questions,
            "non_empty": self.non_empty as f64 / n,
            "mean_tokens": self.tokens as f64 / n,
            "evidence": self.evidence / n,
        })
    }

    fn share_non_empty(&self) -> f64 {
        self.non_empty as f64 / self.questions.max(1) as f64
    }
}

/// A way of judging blocks the harness asks with, and its label.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Setting {
    pub(crate) label: &'static str,
    pub(crate) rule: RelevanceConfig,
}

/// The defaults alone.
pub(crate) fn default_setting(rule: RelevanceConfig) -> Vec<Setting> {
    vec![Setting { label: "the defaults", rule }]
}

/// The curve: the block as before (filled), then the defaults with one setting moved at a
/// time (where a block speaks, which lines it takes, how many at least, each channel alone),
/// and a few settings of which lines a block takes moved together.
pub(crate) fn curve(rule: RelevanceConfig) -> Vec<Setting> {
    let speak = |label, speak| Setting { label, rule: RelevanceConfig { speak, ..rule } };
    let take = |label, take| Setting { label, rule: RelevanceConfig { take, ..rule } };
    let at_least = |label, at_least| Setting { label, rule: RelevanceConfig { at_least, ..rule } };
    // A channel is silenced by a bias no evidence outweighs.
    let mut words_only = rule;
    words_only.meaning.bias = -1e9;
    let mut meaning_only = rule;
    meaning_only.words.bias = -1e9;
    let stop = |label, stop_below| Setting { label, rule: RelevanceConfig { stop_below, ..rule } };
    vec![
        Setting { label: "fill the budget (before)", rule: RelevanceConfig::FILL },
        Setting { label: "the defaults", rule },
        speak("speak 0.3", 0.3),
        speak("speak 0.4", 0.4),
        speak("speak 0.5", 0.5),
        speak("speak 0.6", 0.6),
        take("take 0", 0.0),
        take("take 0.3", 0.3),
        take("take 0.5", 0.5),
        stop("stop_below 0.4", 0.4),
        stop("stop_below 0.6", 0.6),
        at_least("at least 0", 0),
        at_least("at least 8", 8),
        Setting { label: "beside 0", rule: RelevanceConfig { beside: 0, ..rule } },
        Setting { label: "words alone", rule: words_only },
        Setting { label: "meaning alone", rule: meaning_only },
    ]
}

/// The blocks of one setting: its label, and its sums by kind.
type SettingBlocks = (&'static str, BTreeMap<Asked, BlockSums>);

/// The blocks asked so far, by part and setting (its place in the list asked).
#[derive(Debug, Default)]
pub(crate) struct Blocks(BTreeMap<(Split, usize), SettingBlocks>);

impl Blocks {
    pub(crate) fn add(
        &mut self,
        split: Split,
        setting: (usize, &'static str),
        asked: Asked,
        tokens: usize,
        evidence: f64,
    ) {
        let (_, kinds) =
            self.0.entry((split, setting.0)).or_insert_with(|| (setting.1, BTreeMap::new()));
        let sums = kinds.entry(asked).or_default();
        sums.questions += 1;
        sums.non_empty += usize::from(tokens > 0);
        sums.tokens += tokens;
        sums.evidence += evidence;
    }

    /// By part, the settings in the order asked: `{"tuning": [{"setting": …, "own": …}]}`.
    pub(crate) fn json(&self) -> serde_json::Value {
        let mut out: BTreeMap<&str, Vec<serde_json::Value>> = BTreeMap::new();
        for ((split, _), (label, kinds)) in &self.0 {
            let mut row = serde_json::Map::new();
            row.insert("setting".into(), (*label).into());
            for (asked, sums) in kinds {
                row.insert(asked.name().into(), sums.json());
            }
            out.entry(split.name()).or_default().push(row.into());
        }
        serde_json::json!(out)
    }

    pub(crate) fn write(&self, out: &mut String, other_set: Option<&str>) -> Result<()> {
        let splits: std::collections::BTreeSet<Split> = self.0.keys().map(|(s, _)| *s).collect();
        let other = other_set.unwrap_or("none asked");
        for split in splits {
            writeln!(
                out,
                "blocks of {BUDGET} tokens, {} part: the evidence held and tokens used on the \
                 questions whose answer is there, and the share of blocks that are not empty, \
                 asked by the conversation (own), by another conversation of the part (as \
                 written, and with its speakers' names replaced) and by another data set ({other})",
                split.name()
            )?;
            writeln!(
                out,
                "{:<26} {:>9} {:>7} {:>7} {:>8} {:>8} {:>9} {:>9} {:>15}",
                "setting",
                "evidence",
                "tokens",
                "own",
                "other",
                "renamed",
                "other set",
                "new tasks",
                "named / missp."
            )?;
            for ((_, _), (label, kinds)) in self.0.range((split, 0)..=(split, usize::MAX)) {
                let get = |asked| kinds.get(&asked).cloned().unwrap_or_default();
                let (own, n) = (get(Asked::Own), get(Asked::Own).questions.max(1) as f64);
                let share = |asked| match kinds.get(&asked) {
                    Some(s) => format!("{:.1}%", 100.0 * s.share_non_empty()),
                    None => "-".to_owned(),
                };
                let evidence = |asked| match kinds.get(&asked) {
                    Some(s) => format!("{:.3}", s.evidence / s.questions.max(1) as f64),
                    None => "-".to_owned(),
                };
                let names = format!("{} / {}", evidence(Asked::Named), evidence(Asked::Misspelled));
                writeln!(
                    out,
                    "{label:<26} {:>9.3} {:>7.0} {:>7} {:>8} {:>8} {:>9} {:>9} {:>15}",
                    own.evidence / n,
                    own.tokens as f64 / n,
                    share(Asked::Own),
                    share(Asked::OtherConversation),
                    share(Asked::Renamed),
                    share(Asked::OtherSet),
                    share(Asked::NewTask),
                    names
                )?;
            }
            writeln!(out)?;
        }
        Ok(())
    }
}

/// Where each conversation's questions are asked when they are another conversation's: the
/// next conversation of the same part (the first, after the last).
pub(crate) fn hosts(samples: &[Sample]) -> Vec<usize> {
    (0..samples.len())
        .map(|i| {
            let part: Vec<usize> =
                (0..samples.len()).filter(|&j| samples[j].split == samples[i].split).collect();
            let at = part.iter().position(|&j| j == i).expect("in its own part");
            part[(at + 1) % part.len()]
        })
        .collect()
}

/// The people who speak in a conversation, in order of their first line (roles are not names).
fn speakers(s: &Sample) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for t in &s.turns {
        if t.speaker.parse::<epimem_core::Role>().is_err() && !seen.contains(&t.speaker.as_str()) {
            seen.push(&t.speaker);
        }
    }
    seen
}

/// `question` with the speakers of `from` named as those of `to`, first for first.
pub(crate) fn renamed(question: &str, from: &Sample, to: &Sample) -> String {
    let pairs: Vec<(&str, &str)> = speakers(from).into_iter().zip(speakers(to)).collect();
    question
        .split_inclusive(|c: char| !c.is_alphanumeric())
        .map(|piece| {
            let word = piece.trim_end_matches(|c: char| !c.is_alphanumeric());
            match pairs.iter().find(|(name, _)| *name == word) {
                Some((_, to)) => format!("{to}{}", &piece[word.len()..]),
                None => piece.to_owned(),
            }
        })
        .collect()
}

/// The questions of another data set that are asked in this one's conversations, in turn.
pub(crate) fn foreign(samples: &[Sample]) -> Vec<String> {
    samples
        .iter()
        .flat_map(|s| s.questions.iter())
        .filter(|q| (1..=4).contains(&q.category))
        .map(|q| q.question.clone())
        .collect()
}

/// Asks `text` in `host`'s conversation under `rule`: the tokens of its block (0 when empty)
/// and the block's quoted messages.
pub(crate) fn block(
    memory: &Memory,
    (tenant, host): (&str, &Sample),
    text: &str,
    rule: RelevanceConfig,
) -> Result<(usize, Vec<u64>)> {
    let scope = Scope::tenant(tenant).with_conversation(Some(host.id.clone()));
    let at = host.turns.last().map(|t| t.timestamp);
    let query =
        RecallQuery { at, relevance: Some(rule), ..RecallQuery::new(scope, text.to_owned(), 1) };
    let context = memory.measure().recall_context(&query, BUDGET)?;
    let quoted: Vec<u64> = context.turns.iter().map(|(_, seq)| *seq).collect();
    Ok((if quoted.is_empty() { 0 } else { context.tokens }, quoted))
}

/// What ranking scored a recalled line, as `--dump-lines` writes it.
#[derive(Serialize)]
pub(crate) struct LineScores {
    similarity: Option<f64>,
    lexical: Option<f64>,
    words: Option<f64>,
    fused: f64,
    score: f64,
    episode_factor: f64,
    lent: f64,
    line_factor: f64,
}

impl From<&epimem_api::MessageHit> for LineScores {
    fn from(h: &epimem_api::MessageHit) -> Self {
        Self {
            similarity: h.similarity,
            lexical: h.lexical,
            words: h.words,
            fused: h.fused,
            score: h.score,
            episode_factor: h.episode_factor,
            lent: h.lent,
            line_factor: h.line_factor,
        }
    }
}

#[derive(Serialize)]
struct DumpedLine<'a> {
    seq: u64,
    speaker: &'a str,
    text: &'a str,
    #[serde(flatten)]
    scores: LineScores,
    /// Whether it is evidence of the question (own questions only).
    evidence: bool,
}

#[derive(Serialize)]
struct DumpedAsk<'a> {
    asked: Asked,
    /// What a line matching every weighed word would score (`lexical` is read against it).
    lexical_ceiling: f64,
    /// The query names people none of whom spoke in the scope.
    names_absent: bool,
    /// The query names something no line of the tenant holds.
    unknown_names: bool,
    conversation: &'a str,
    question: &'a str,
    category: Option<u8>,
    lines: Vec<DumpedLine<'a>>,
}

/// Writes the lines `text` recalls in `host`'s conversation, best first, with their scores.
pub(crate) fn dump_lines(
    out: &mut impl std::io::Write,
    memory: &Memory,
    (tenant, host): (&str, &Sample),
    asked: Asked,
    text: &str,
    question: Option<&Question>,
) -> Result<()> {
    let scope = Scope::tenant(tenant).with_conversation(Some(host.id.clone()));
    let at = host.turns.last().map(|t| t.timestamp);
    let query = RecallQuery { at, ..RecallQuery::new(scope, text.to_owned(), 100) };
    let (hits, evidence) = memory.measure().recall_messages_judged(&query)?;
    let lines = hits
        .iter()
        .filter_map(|h| {
            let turn = host.turns.get(usize::try_from(h.seq).ok()?.checked_sub(1)?)?;
            let evidence = question.is_some_and(|q| q.evidence.contains(&turn.dia_id));
            Some(DumpedLine {
                seq: h.seq,
                speaker: &turn.speaker,
                text: &turn.text,
                scores: LineScores::from(h),
                evidence,
            })
        })
        .collect();
    let line = DumpedAsk {
        asked,
        lexical_ceiling: evidence.lexical_ceiling,
        names_absent: evidence.names_absent,
        unknown_names: evidence.unknown_names,
        conversation: &host.id,
        question: text,
        category: question.map(|q| q.category),
        lines,
    };
    writeln!(out, "{}", crate::json_line(&line))?;
    Ok(())
}
