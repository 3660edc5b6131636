//! What a coding agent is handed, by when it is handed: at the session's start only, at its
//! first prompt only, at both, or at every prompt (what the hooks did before). Each agent
//! session question is asked as the first prompt of a new session of its project; measured are
//! how much of its evidence the handed blocks hold, what they cost in tokens per session, and
//! how often a prompt's block tells of work when the question is asked of the other part's
//! project, which never held it. The prompt's earlier work is chosen by keywords, as the hooks
//! choose it.
//!
//! A later prompt of a session costs more blocks only under "every prompt": that cost is
//! measured on the sessions' own later prompts, each asked of its project's work before it
//! (its own session's and later work left out), as a hook would have asked it.

use std::{
    collections::{BTreeMap, HashSet},
    fmt::Write as _,
};

use anyhow::Result;
use epimem_api::Memory;
use epimem_core::{Episode, EpisodeId};

use super::{
    locomo::{Question, Sample, Split},
    prompt_context::{ByWords, evidence_held},
};

#[derive(Debug, Default)]
struct Part {
    questions: usize,
    /// Evidence held, summed over questions: the start block, the first prompt's, both.
    start_held: f64,
    prompt_held: f64,
    both_held: f64,
    /// Tokens, summed over questions.
    start_tokens: usize,
    prompt_tokens: usize,
    /// Questions asked of the other part's project whose prompt was handed a block, and asked.
    told_elsewhere: usize,
    asked_elsewhere: usize,
    /// Sessions, their later prompts, those handed a block, and the blocks' tokens.
    sessions: usize,
    later_prompts: usize,
    later_handed: usize,
    later_tokens: usize,
}

/// The sums per part.
#[derive(Debug, Default)]
pub(crate) struct HandedSums(BTreeMap<Split, Part>);

impl HandedSums {
    /// Counts question `q` of `s` (whose episodes are `episodes`) as the first prompt of a new
    /// session of its project, the keywords having chosen `by_words` for it.
    pub(crate) fn add_question(
        &mut self,
        memory: &Memory,
        s: &Sample,
        q: &Question,
        episodes: &[Episode],
        by_words: &ByWords,
        place: impl Fn(&Sample) -> (String, String),
    ) -> Result<()> {
        let (tenant, project) = place(s);
        let measure = memory.measure();
        let (start, started) = measure.start_block(&tenant, &project)?;
        let prompt = measure.prompt_block(&tenant, &project, &by_words.own)?;
        let part = self.0.entry(s.split).or_default();
        part.questions += 1;
        part.start_held += evidence_held(s, q, episodes, &started);
        part.prompt_held += evidence_held(s, q, episodes, &by_words.own);
        part.both_held += evidence_held(s, q, episodes, started.iter().chain(&by_words.own));
        part.start_tokens += measure.tokens(&start);
        part.prompt_tokens += measure.tokens(&prompt);
        part.told_elsewhere += by_words.told_elsewhere;
        part.asked_elsewhere += by_words.asked_elsewhere;
        Ok(())
    }

    /// Asks each later prompt of `s`'s sessions (every user turn but a session's first) of its
    /// project's work before it: what "every prompt" adds to a session.
    pub(crate) fn add_later_prompts(
        &mut self,
        memory: &Memory,
        s: &Sample,
        episodes: &[Episode],
        place: impl Fn(&Sample) -> (String, String),
    ) -> Result<()> {
        let (tenant, project) = place(s);
        let measure = memory.measure();
        let session_of = |dia_id: &str| dia_id.rsplit_once(':').map_or("", |(s, _)| s).to_owned();
        let mut seen: HashSet<String> = HashSet::new();
        let mut sessions = 0;
        let (mut prompts, mut handed, mut tokens) = (0, 0, 0);
        for turn in s.turns.iter().filter(|t| t.speaker == "user") {
            let session = session_of(&turn.dia_id);
            if seen.insert(session.clone()) {
                sessions += 1;
                continue;
            }
            prompts += 1;
            let told = measure.prompt_episodes_by_words(&tenant, &project, "", &turn.text)?;
            // Only what a hook could have told then: earlier sessions' work.
            let before: Vec<EpisodeId> = told
                .into_iter()
                .filter(|id| {
                    episodes.iter().find(|e| &e.id == id).is_some_and(|e| {
                        e.end < turn.timestamp
                            && s.dia_ids(e.first_seq, e.last_seq).all(|d| session_of(d) != session)
                    })
                })
                .collect();
            if !before.is_empty() {
                handed += 1;
                tokens += measure.tokens(&measure.prompt_block(&tenant, &project, &before)?);
            }
        }
        let part = self.0.entry(s.split).or_default();
        part.sessions += sessions;
        part.later_prompts += prompts;
        part.later_handed += handed;
        part.later_tokens += tokens;
        Ok(())
    }

    /// `{part: {policy: {held, tokens, told_elsewhere}}}`.
    pub(crate) fn json(&self) -> serde_json::Value {
        let out: BTreeMap<&str, serde_json::Value> = self
            .0
            .iter()
            .map(|(split, part)| {
                let policies: BTreeMap<&str, serde_json::Value> = part
                    .policies()
                    .into_iter()
                    .map(|p| {
                        let row = serde_json::json!({"held": p.held, "tokens": p.tokens,
                            "told_elsewhere": p.told_elsewhere});
                        (p.name, row)
                    })
                    .collect();
                (split.name(), serde_json::json!(policies))
            })
            .collect();
        serde_json::json!(out)
    }

    pub(crate) fn write(&self, out: &mut String) -> std::fmt::Result {
        for (split, part) in &self.0 {
            writeln!(
                out,
                "{} part, what an agent is handed ({} questions as first prompts; {} sessions, \
                 {} later prompts, {} of them handed a block):",
                split.name(),
                part.questions,
                part.sessions,
                part.later_prompts,
                part.later_handed,
            )?;
            for p in part.policies() {
                writeln!(
                    out,
                    "  {:<24} holds {:.3} of the evidence, {:>5.0} tokens a session, told of \
                     work for {:.3} of the questions its project never held",
                    p.name, p.held, p.tokens, p.told_elsewhere
                )?;
            }
        }
        Ok(())
    }
}

struct Policy {
    name: &'static str,
    held: f64,
    tokens: f64,
    told_elsewhere: f64,
}

impl Part {
    fn policies(&self) -> [Policy; 4] {
        let n = self.questions.max(1) as f64;
        let elsewhere = self.told_elsewhere as f64 / self.asked_elsewhere.max(1) as f64;
        let start = self.start_tokens as f64 / n;
        let prompt = self.prompt_tokens as f64 / n;
        // Every prompt: the first prompt's block, and as many later blocks as a session gets.
        let later = self.later_tokens as f64 / self.sessions.max(1) as f64;
        [
            // The start block tells of the project's own newest work, whatever is asked.
            Policy {
                name: "session start only",
                held: self.start_held / n,
                tokens: start,
                told_elsewhere: 0.0,
            },
            Policy {
                name: "first prompt only",
                held: self.prompt_held / n,
                tokens: prompt,
                told_elsewhere: elsewhere,
            },
            Policy {
                name: "start + first prompt",
                held: self.both_held / n,
                tokens: start + prompt,
                told_elsewhere: elsewhere,
            },
            Policy {
                name: "start + every prompt",
                held: self.both_held / n,
                tokens: start + prompt + later,
                told_elsewhere: elsewhere,
            },
        ]
    }
}
