//! What a recall takes and answers: `POST /v1/recall`, the MCP `recall` tool (its structured
//! content) and `epimem recall --json` alike.

use crate::engine::{EpisodeContext, RecalledContext};
use epimem_core::recall::NameReading;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::EpisodeOut;

/// What recall says when nothing remembered bears on the query (an answer, not an error).
pub const NOTHING_RELEVANT: &str = "Nothing remembered bears on this.";

/// A recall: what to look for, where, and in what form.
#[derive(Debug, Default, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallIn {
    /// What to look for, in plain words.
    pub query: String,
    /// Only this conversation.
    #[serde(default)]
    pub conversation: Option<String>,
    /// Only what this person said: the conversations whose messages carry this `user`.
    #[serde(default)]
    pub user: Option<String>,
    /// Only the sessions of this project: a coding agent's, named by its repository's root
    /// folder as `epimem hook` records it (the messages' `agent`). Also read as `agent`.
    #[serde(default, alias = "agent")]
    pub project: Option<String>,
    /// Only episodes that end at or after this time (RFC 3339). Also read as `from`.
    #[serde(default, alias = "from")]
    pub since: Option<String>,
    /// Only episodes that start at or before this time (RFC 3339). Also read as `to`.
    #[serde(default, alias = "to")]
    pub until: Option<String>,
    /// Only episodes of this period: a timeline node id (`toc:week:2026:W09`) or a phrase
    /// ("last week", "in March") read against the conversation's time; not with from/to.
    #[serde(default)]
    pub within: Option<String>,
    /// At most this many episodes (default 5, at most 1000).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Answer with a context block of at most this many tokens instead of hits: the lines
    /// that best answer the query, grouped by episode.
    #[serde(default)]
    pub budget: Option<usize>,
    /// With `budget`: whole episodes (title, time, summary, matching lines), not single lines.
    #[serde(default)]
    pub episodes: bool,
    /// With `budget`: fill it with the best lines whether or not they bear on the query (the
    /// behaviour before relevance was judged). By default a block holds only lines that do,
    /// stops where they score well below the best, and is empty when nothing does.
    #[serde(default)]
    pub fill: bool,
    /// With `budget`: the relevance (0 to 1: the probability that a line bears on the query)
    /// a line must reach for the block to speak (default `relevance.speak`); lower keeps more,
    /// higher leaves more empty.
    #[serde(default)]
    pub min_relevance: Option<f64>,
    /// The conversation the recall is made for, which the caller's context holds already (an
    /// agent's session): a context block leaves its messages out, and the episodes it quotes
    /// are strengthened when that conversation goes on to use them.
    #[serde(default)]
    pub asked_in: Option<String>,
}

/// What recall found: `hits` without a budget; `context` with one.
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct RecallOut {
    /// The episodes, best first, with why each came back.
    pub hits: Vec<EpisodeOut>,
    /// The context block, ready to put in a prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Tokens of `context`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<usize>,
    /// With a budget: true when nothing remembered bears on the query (no line and no fact):
    /// `context` is then empty. Not an error, and not the same as a memory that holds
    /// nothing to search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nothing_relevant: Option<bool>,
    /// The lines quoted in `context`, best first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turns: Option<Vec<TurnOut>>,
    /// Lasting facts that bear on the query, best first (distilled by the language model;
    /// absent when none does).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<super::FactOut>,
    /// Words of the query this memory never heard, each read as a name it holds that it
    /// slips from ("Katrina" read as "Katrin"): the recall searched for the name (absent when
    /// no word was read so).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub names_read: Vec<NameReadOut>,
}

/// A word of the query read as a name the memory holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct NameReadOut {
    /// As the query wrote it.
    pub written: String,
    /// The name it was read as.
    pub read_as: String,
}

impl From<&NameReading> for NameReadOut {
    fn from(r: &NameReading) -> Self {
        Self { written: r.written.clone(), read_as: r.read_as.clone() }
    }
}

/// A line quoted in a block: its episode (or `tail:<conversation>` for a message not yet in one)
/// and its sequence number.
#[derive(Debug, Serialize, ToSchema)]
pub struct TurnOut {
    pub episode: String,
    pub seq: u64,
}

impl From<RecalledContext> for RecallOut {
    fn from(c: RecalledContext) -> Self {
        let turns = c.turns.into_iter().map(|(id, seq)| TurnOut { episode: id.0, seq }).collect();
        Self {
            hits: Vec::new(),
            context: Some(c.text),
            tokens: Some(c.tokens),
            nothing_relevant: Some(!c.relevant),
            turns: Some(turns),
            facts: Vec::new(),
            names_read: Vec::new(),
        }
    }
}

impl From<EpisodeContext> for RecallOut {
    fn from(c: EpisodeContext) -> Self {
        Self {
            hits: c.hits.iter().map(EpisodeOut::from).collect(),
            context: Some(c.text),
            tokens: Some(c.tokens),
            nothing_relevant: Some(!c.relevant),
            turns: None,
            facts: Vec::new(),
            names_read: Vec::new(),
        }
    }
}

impl RecallOut {
    /// The answer as a person or a model reads it: the facts that bear on the query, then the
    /// context block, or [`NOTHING_RELEVANT`] when there is neither. Hits (a recall without a
    /// budget) are not text; each door lists them its own way.
    pub fn text(&self) -> String {
        let mut text = self.facts_text();
        text.push_str(self.context.as_deref().unwrap_or(""));
        if text.trim().is_empty() {
            text = NOTHING_RELEVANT.into();
        }
        text
    }

    /// The facts that bear on the query, a line each under "Known facts:", and a blank line;
    /// empty when there are none.
    pub fn facts_text(&self) -> String {
        if self.facts.is_empty() {
            return String::new();
        }
        let mut text = "Known facts:\n".to_owned();
        for fact in &self.facts {
            let since = fact.valid_at.get(..10).unwrap_or(&fact.valid_at);
            text.push_str(&format!("- {} (since {since})\n", fact.text));
        }
        text.push('\n');
        text
    }
}
