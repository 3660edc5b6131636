//! Memory for coding agents: what a new session of a project is told, what a prompt that
//! matches earlier work is told, and the patterns across the project's sessions. A project's
//! sessions are its conversations whose `agent` scope is the project.

use std::collections::HashMap;

use epimem_core::{
    Episode, EpisodeId, Scope, Timestamp, session_summary,
    telling::{rule_sentences, standing_instructions},
    work::{
        Action, FailurePattern, IntentPattern, PROMPT_EPISODES, PromptHit, RuleLine, SessionLine,
        SessionWork, Skeleton, StartContext, WorkItem, failure_patterns, prompt_matches,
        prompt_recalled, recurring_intents, render_prompt_context, render_start_context, skeleton,
    },
};
use epimem_store::EpisodeDetail;
use serde::{Deserialize, Serialize};

use crate::engine::{Engine, EngineError, RecallHit, RecallQuery};

/// Episodes a prompt's recall returns, from which the ones of its own session are left out
/// before [`prompt_recalled`] chooses.
const PROMPT_RECALLED: usize = 20;

/// What coding agents are told of their project's memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkContextConfig {
    /// Tokens (cl100k) a session start may be given.
    pub start_budget: usize,
    /// Episodes shown whole at a session start, newest first; older work is told by session.
    pub recent_episodes: usize,
    /// Older sessions summarized at a session start.
    pub older_sessions: usize,
    /// Tokens a prompt that matches earlier work may be given.
    pub prompt_budget: usize,
    /// A prompt's match must share at least this many keywords with an episode...
    pub prompt_min_shared: usize,
    /// ...and this share of the smaller word set.
    pub prompt_min_overlap: f64,
    /// Where recall can read meaning (the server, MCP): an episode a prompt is told of is
    /// among the first this many of the project's episodes by BM25...
    pub prompt_word_rank: usize,
    /// ...and its best message is at least this alike the prompt (cosine).
    pub prompt_min_similarity: f64,
    /// Episodes (newest first) a session start reads, messages and all, for the failures and
    /// requests that recur (what it costs grows with this, not with the project's history).
    pub start_episodes: usize,
    /// Episodes (newest first) whose titles and keywords a prompt is matched against.
    pub prompt_episodes: usize,
    /// A failure or an intent is a pattern once seen in this many sessions.
    pub pattern_min_sessions: usize,
    /// Two episodes ask for the same work at this Jaccard similarity of their keywords.
    pub intent_threshold: f64,
}

impl Default for WorkContextConfig {
    fn default() -> Self {
        Self {
            start_budget: 1_500,
            recent_episodes: 6,
            older_sessions: 5,
            prompt_budget: 500,
            prompt_min_shared: 2,
            prompt_min_overlap: 0.4,
            prompt_word_rank: 1,
            prompt_min_similarity: 0.45,
            start_episodes: 60,
            prompt_episodes: 500,
            pattern_min_sessions: 2,
            intent_threshold: 0.3,
        }
    }
}

/// The patterns across a project's sessions.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Patterns {
    pub intents: Vec<IntentPattern>,
    pub failures: Vec<FailurePattern>,
    /// Sessions and episodes read.
    pub sessions: usize,
    pub episodes: usize,
}

/// An episode of the project's work, its messages read.
struct Work {
    detail: EpisodeDetail,
    skeleton: Option<Skeleton>,
}

impl Work {
    fn item(&self) -> WorkItem<'_> {
        WorkItem { episode: &self.detail.episode, skeleton: self.skeleton.as_ref() }
    }
}

impl Engine {
    /// What a new session of `project` is told: the rules the user set in its sessions, its
    /// recent episodes whole (with their skeletons), the failures that recur across its
    /// sessions, and its older sessions' summaries, within the configured budget. Empty when
    /// the project has no memory yet.
    pub(crate) fn start_context(&self, tenant: &str, project: &str) -> Result<String, EngineError> {
        Ok(self.start_block(tenant, project)?.0)
    }

    /// [`Engine::start_context`], and the episodes it tells of whole (its recent work).
    pub(crate) fn start_block(
        &self,
        tenant: &str,
        project: &str,
    ) -> Result<(String, Vec<EpisodeId>), EngineError> {
        let config = &self.config.work;
        let work = self.project_work(tenant, project, config.start_episodes)?;
        let recent: Vec<&Work> = work.iter().take(config.recent_episodes).collect();
        let sessions = by_session(&work);
        let shown: Vec<&str> =
            recent.iter().map(|w| w.detail.episode.conversation.conversation.as_str()).collect();
        let older: Vec<SessionLine> = sessions
            .iter()
            .filter(|(c, _)| !shown.contains(c))
            .take(config.older_sessions)
            .map(|(_, episodes)| {
                let owned: Vec<Episode> =
                    episodes.iter().map(|w| w.detail.episode.clone()).collect();
                let told = session_summary(&owned, 3);
                let mut line = told.title;
                if !told.bullets.is_empty() {
                    line.push_str(&format!(" ({})", told.bullets.join("; ")));
                }
                SessionLine {
                    start: owned.iter().map(|e| e.start).min().unwrap_or(Timestamp(0)),
                    summary: line,
                }
            })
            .collect();
        let worked = session_work(&sessions);
        let context = StartContext {
            rules: rules_set(&work),
            recent: recent.iter().map(|w| w.item()).collect(),
            failures: failure_patterns(&worked, config.pattern_min_sessions),
            recurring: recurring_intents(
                &worked,
                config.intent_threshold,
                config.pattern_min_sessions,
            ),
            sessions: older,
        };
        let tokens = |text: &str| self.tokens.count(text) as usize;
        let block = render_start_context(&context, config.start_budget, &tokens);
        let told = recent.iter().take(block.recent_shown).map(|w| w.detail.episode.id.clone());
        Ok((block.text, told.collect()))
    }

    /// Earlier episodes of `project` (not of the session `current`) whose words cover enough
    /// of `prompt`'s, within the configured budget; empty when none clears the bar.
    pub(crate) fn prompt_context(
        &self,
        tenant: &str,
        project: &str,
        current: &str,
        prompt: &str,
    ) -> Result<String, EngineError> {
        let ids = self.prompt_episodes(tenant, project, current, prompt)?;
        self.prompt_block(tenant, project, &ids)
    }

    /// The block telling of `ids` (episodes of `project`), within the configured budget;
    /// empty for none.
    pub(crate) fn prompt_block(
        &self,
        tenant: &str,
        project: &str,
        ids: &[EpisodeId],
    ) -> Result<String, EngineError> {
        if ids.is_empty() {
            return Ok(String::new());
        }
        let config = &self.config.work;
        let scope = project_scope(tenant, project);
        let work = self.work_of(&scope, ids)?;
        let items: Vec<WorkItem<'_>> = work.iter().map(Work::item).collect();
        let tokens = |text: &str| self.tokens.count(text) as usize;
        Ok(render_prompt_context(&items, config.prompt_budget, &tokens))
    }

    /// The episodes [`Engine::prompt_context`] tells of, best first, at most three of
    /// `project`'s (not of the session `current`): chosen by recall, words and meaning both,
    /// when this engine has an embedder ([`Engine::prompt_episodes_recalled`]), else by the
    /// keywords they share with `prompt` ([`Engine::prompt_episodes_by_words`]).
    pub(crate) fn prompt_episodes(
        &self,
        tenant: &str,
        project: &str,
        current: &str,
        prompt: &str,
    ) -> Result<Vec<EpisodeId>, EngineError> {
        if self.embedder.is_some() {
            self.prompt_episodes_recalled(tenant, project, current, prompt)
        } else {
            self.prompt_episodes_by_words(tenant, project, current, prompt)
        }
    }

    /// The episodes of `project` (not of the session `current`) whose titles and keywords
    /// share enough of `prompt`'s keywords, best first, at most three: no search index and no
    /// embedder, which a hook, a process started for one event, has no time to open.
    pub(crate) fn prompt_episodes_by_words(
        &self,
        tenant: &str,
        project: &str,
        current: &str,
        prompt: &str,
    ) -> Result<Vec<EpisodeId>, EngineError> {
        let config = &self.config.work;
        let episodes: Vec<Episode> = self
            .store
            .episodes(&project_scope(tenant, project), None, Some(config.prompt_episodes))?
            .into_iter()
            .filter(|e| e.conversation.conversation != current)
            .collect();
        let words: Vec<(&str, &[String])> =
            episodes.iter().map(|e| (e.title.as_str(), &e.keywords[..])).collect();
        let found =
            prompt_matches(prompt, &words, config.prompt_min_shared, config.prompt_min_overlap);
        Ok(found.iter().take(PROMPT_EPISODES).map(|m| episodes[m.index].id.clone()).collect())
    }

    /// The episodes of `project` (not of the session `current`) that recall finds for
    /// `prompt` and that words and meaning agree on ([`prompt_recalled`]), best first, at most
    /// three. Nothing is recorded as a review: the agent is told of them, not shown them.
    pub(crate) fn prompt_episodes_recalled(
        &self,
        tenant: &str,
        project: &str,
        current: &str,
        prompt: &str,
    ) -> Result<Vec<EpisodeId>, EngineError> {
        if prompt.trim().is_empty() {
            return Ok(Vec::new());
        }
        let config = &self.config.work;
        let query = RecallQuery::new(project_scope(tenant, project), prompt, PROMPT_RECALLED);
        let (hits, _) = self.rank_episodes(&query)?;
        let kept: Vec<&RecallHit> =
            hits.iter().filter(|h| h.episode.conversation.conversation != current).collect();
        let weighed: Vec<PromptHit> = kept
            .iter()
            .map(|h| PromptHit { similarity: h.similarity, lexical_rank: h.lexical_rank })
            .collect();
        let chosen =
            prompt_recalled(&weighed, config.prompt_min_similarity, config.prompt_word_rank);
        Ok(chosen.into_iter().map(|i| kept[i].episode.id.clone()).collect())
    }

    /// Recurring intents and repeated failures across the sessions of `project`, from its
    /// newest `episodes` episodes.
    pub(crate) fn patterns(
        &self,
        tenant: &str,
        project: &str,
        episodes: usize,
    ) -> Result<Patterns, EngineError> {
        let config = &self.config.work;
        let work = self.project_work(tenant, project, episodes)?;
        let sessions = session_work(&by_session(&work));
        Ok(Patterns {
            intents: recurring_intents(
                &sessions,
                config.intent_threshold,
                config.pattern_min_sessions,
            ),
            failures: failure_patterns(&sessions, config.pattern_min_sessions),
            sessions: sessions.len(),
            episodes: work.len(),
        })
    }

    /// The newest `limit` episodes of `project`, newest first, with their messages.
    fn project_work(
        &self,
        tenant: &str,
        project: &str,
        limit: usize,
    ) -> Result<Vec<Work>, EngineError> {
        let scope = project_scope(tenant, project);
        let ids: Vec<_> =
            self.store.episodes(&scope, None, Some(limit))?.into_iter().map(|e| e.id).collect();
        self.work_of(&scope, &ids)
    }

    /// The episodes `ids`, with their messages and skeletons, in that order.
    fn work_of(&self, scope: &Scope, ids: &[EpisodeId]) -> Result<Vec<Work>, EngineError> {
        Ok(self
            .store
            .episode_details(scope, ids)?
            .into_iter()
            .map(|detail| Work { skeleton: skeleton(&detail.messages), detail })
            .collect())
    }
}

/// A project's sessions: the conversations whose agent is the project.
pub fn project_scope(tenant: &str, project: &str) -> Scope {
    Scope { agent: Some(project.to_owned()), ..Scope::tenant(tenant) }
}

/// Work grouped by session, sessions in the order their newest episode comes.
/// The standing rules the user set in `work` (newest first), each sentence once, at the
/// newest time it was said: a rule said again is still one rule.
fn rules_set(work: &[Work]) -> Vec<RuleLine> {
    let mut rules: Vec<RuleLine> = Vec::new();
    for w in work {
        let messages = &w.detail.messages;
        let set = standing_instructions(messages.iter().map(|m| (m.role, m.content.as_str())));
        // Newest first within the episode too.
        for (message, _) in messages.iter().zip(set).rev().filter(|(_, set)| *set) {
            for sentence in rule_sentences(&message.content) {
                if !rules.iter().any(|r| r.text.eq_ignore_ascii_case(sentence)) {
                    rules.push(RuleLine { at: message.timestamp, text: sentence.to_owned() });
                }
            }
        }
    }
    rules
}

fn by_session(work: &[Work]) -> Vec<(&str, Vec<&Work>)> {
    let mut order: Vec<&str> = Vec::new();
    let mut groups: HashMap<&str, Vec<&Work>> = HashMap::new();
    for w in work {
        let c = w.detail.episode.conversation.conversation.as_str();
        if !groups.contains_key(c) {
            order.push(c);
        }
        groups.entry(c).or_default().push(w);
    }
    order.into_iter().map(|c| (c, groups.remove(c).unwrap_or_default())).collect()
}

fn session_work(sessions: &[(&str, Vec<&Work>)]) -> Vec<SessionWork> {
    sessions
        .iter()
        .map(|(conversation, work)| {
            let mut failed: Vec<String> = Vec::new();
            for m in work.iter().flat_map(|w| &w.detail.messages) {
                if let Some(action) = Action::of_metadata(&m.metadata).filter(|a| a.failed) {
                    let what = action.what();
                    if !failed.contains(&what) {
                        failed.push(what);
                    }
                }
            }
            let episodes = work.iter().map(|w| &w.detail.episode);
            SessionWork {
                conversation: conversation.to_string(),
                start: episodes.clone().map(|e| e.start).min().unwrap_or(Timestamp(0)),
                end: episodes.clone().map(|e| e.end).max().unwrap_or(Timestamp(0)),
                intents: episodes.map(|e| (e.title.clone(), e.keywords.clone())).collect(),
                failed,
            }
        })
        .collect()
}
