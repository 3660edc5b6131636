//! What a coding agent is told of earlier work when it sends a prompt, measured on the agent
//! sessions' questions asked as prompts: how much of their evidence the chosen episodes hold,
//! and how often something is told when the question is asked of the other part's project,
//! which never held that work. Both ways of choosing are measured: by shared keywords (the
//! hook, a process per event) and by recall (the server and MCP, which hold an embedder).

use std::{
    collections::{BTreeMap, HashSet},
    fmt::Write as _,
};

use anyhow::Result;
use epimem_api::Memory;
use epimem_core::{Episode, EpisodeId};

use super::locomo::{Question, Sample, Split};

/// How the episodes a prompt is told of are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Chooser {
    Keywords,
    Recall,
}

impl Chooser {
    const ALL: [Chooser; 2] = [Chooser::Keywords, Chooser::Recall];

    fn name(self) -> &'static str {
        match self {
            Self::Keywords => "keywords",
            Self::Recall => "recall",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Self::Keywords => "by shared keywords, as the hook chooses",
            Self::Recall => "by recall, as the server and MCP choose",
        }
    }

    fn choose(
        self,
        memory: &Memory,
        tenant: &str,
        project: &str,
        prompt: &str,
    ) -> Result<Vec<EpisodeId>> {
        Ok(match self {
            Self::Keywords => {
                memory.measure().prompt_episodes_by_words(tenant, project, "", prompt)?
            }
            Self::Recall => {
                memory.measure().prompt_episodes_recalled(tenant, project, "", prompt)?
            }
        })
    }
}

#[derive(Debug, Default)]
struct Sums {
    /// Share of each question's evidence held, summed, and questions.
    held: f64,
    questions: usize,
    /// Questions asked of the other part's project that were told something, and asked.
    told_elsewhere: usize,
    asked_elsewhere: usize,
}

/// The sums per way of choosing and part.
#[derive(Debug, Default)]
pub(crate) struct PromptContextSums(BTreeMap<(Chooser, Split), Sums>);

/// What the keywords chose for a question (as the hooks choose): the episodes of its own
/// project, and how many other parts' projects told of something, of how many asked.
#[derive(Debug, Default)]
pub(crate) struct ByWords {
    pub(crate) own: Vec<EpisodeId>,
    pub(crate) told_elsewhere: usize,
    pub(crate) asked_elsewhere: usize,
}

/// The share of `q`'s evidence that the episodes of `s` among `told` hold.
pub(crate) fn evidence_held<'e>(
    s: &Sample,
    q: &Question,
    episodes: &[Episode],
    told: impl IntoIterator<Item = &'e EpisodeId>,
) -> f64 {
    let told: Vec<&EpisodeId> = told.into_iter().collect();
    let covered: HashSet<&str> = episodes
        .iter()
        .filter(|e| told.contains(&&e.id))
        .flat_map(|e| s.dia_ids(e.first_seq, e.last_seq))
        .collect();
    q.share_in(&covered)
}

impl PromptContextSums {
    /// Asks question `q` of `s` (whose episodes are `episodes`) as a prompt of its project
    /// (`project`), and of every other part's project in `samples`. Returns what the
    /// keywords chose.
    pub(crate) fn add(
        &mut self,
        memory: &Memory,
        samples: &[Sample],
        s: &Sample,
        q: &Question,
        episodes: &[Episode],
        place: impl Fn(&Sample) -> (String, String),
    ) -> Result<ByWords> {
        let (tenant, project) = place(s);
        let mut by_words = ByWords::default();
        for chooser in Chooser::ALL {
            let told = chooser.choose(memory, &tenant, &project, &q.question)?;
            let sums = self.0.entry((chooser, s.split)).or_default();
            sums.held += evidence_held(s, q, episodes, &told);
            sums.questions += 1;
            let (mut told_elsewhere, mut asked_elsewhere) = (0, 0);
            for other in samples.iter().filter(|o| o.split != s.split) {
                let (tenant, project) = place(other);
                let told = chooser.choose(memory, &tenant, &project, &q.question)?;
                told_elsewhere += usize::from(!told.is_empty());
                asked_elsewhere += 1;
            }
            let sums = self.0.entry((chooser, s.split)).or_default();
            sums.told_elsewhere += told_elsewhere;
            sums.asked_elsewhere += asked_elsewhere;
            if chooser == Chooser::Keywords {
                by_words = ByWords { own: told, told_elsewhere, asked_elsewhere };
            }
        }
        Ok(by_words)
    }

    /// `{chooser: {part: {held, told_elsewhere}}}`, as shares.
    pub(crate) fn json(&self) -> serde_json::Value {
        let mut out: BTreeMap<&str, BTreeMap<&str, serde_json::Value>> = BTreeMap::new();
        for ((chooser, split), sums) in &self.0 {
            out.entry(chooser.name()).or_default().insert(
                split.name(),
                serde_json::json!({
                    "held": sums.held / sums.questions.max(1) as f64,
                    "told_elsewhere": sums.told_elsewhere as f64 / sums.asked_elsewhere.max(1) as f64,
                }),
            );
        }
        serde_json::json!(out)
    }

    pub(crate) fn write(&self, out: &mut String) -> std::fmt::Result {
        for ((chooser, split), sums) in &self.0 {
            writeln!(
                out,
                "{} part, prompt context {}: holds {:.3} of the evidence; asked of the other \
                 part's project, tells of something for {} of {}",
                split.name(),
                chooser.what(),
                sums.held / sums.questions.max(1) as f64,
                sums.told_elsewhere,
                sums.asked_elsewhere,
            )?;
        }
        Ok(())
    }
}
