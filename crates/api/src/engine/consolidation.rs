//! Consolidation: the episodes of a conversation distilled into lasting facts by the language
//! model, a few episodes per call, each step committed with the conversation's mark.

use epimem_core::{
    ConversationKey, EpisodeId, Job, LlmStage, Message,
    facts::{Fact, FactScore, SourceEpisode, plan_fact_changes, rank_facts},
    llm::{EpisodeToConsolidate, WindowMessage, consolidation_prompt, parse_consolidation},
};
use epimem_llm::ChatModel;
use epimem_store::{ConsolidationCommit, ConsolidationRule};

use crate::engine::{Engine, EngineError, RecallQuery, segmentation::RunReport};

/// Messages of one episode shown to the model, at most (its first ones: the rest is in its
/// summary).
const MESSAGES_PER_EPISODE: usize = 40;
/// How often one prompt is asked before the model is taken to have failed: an unreadable
/// answer is often followed by a good one, a second rarely.
const ANSWER_ATTEMPTS: u32 = 2;

/// A fact recalled for a query.
#[derive(Debug, Clone, PartialEq)]
pub struct FactHit {
    pub fact: Fact,
    pub score: FactScore,
}

impl Engine {
    /// When closing episodes should queue a consolidation: never without a model.
    pub(crate) fn consolidation_rule(&self) -> Option<ConsolidationRule> {
        let config = &self.config.consolidation;
        self.chat.as_ref().map(|_| ConsolidationRule {
            every: config.every_episodes,
            flashbulb: config.flashbulb_surprise,
        })
    }

    pub(crate) fn consolidate(
        &self,
        job: &Job,
        conversation: &ConversationKey,
        upto_seq: u64,
    ) -> Result<RunReport, EngineError> {
        let config = &self.config.consolidation;
        let mut report = RunReport { jobs_run: 1, ..RunReport::default() };
        let fingerprint = self.embedder.as_ref().map(|e| e.fingerprint().to_owned());
        loop {
            let batch = self.store.consolidation_batch(
                conversation,
                upto_seq,
                config.episodes_per_call.max(1),
                config.known_facts,
                fingerprint.as_deref(),
            )?;
            let (Some(chat), Some(last)) = (&self.chat, batch.episodes.last()) else {
                // Nothing left, or no model any more: done; what is left waits for a model.
                let through = if self.chat.is_some() { upto_seq } else { 0 };
                self.store.commit_consolidation(&ConsolidationCommit {
                    job: Some(job.id),
                    conversation: conversation.clone(),
                    changes: Vec::new(),
                    vectors: Vec::new(),
                    fingerprint: None,
                    through_seq: through,
                    finished: true,
                })?;
                return Ok(report);
            };
            let through = last.episode.last_seq;
            let windows: Vec<Vec<WindowMessage<'_>>> =
                batch.episodes.iter().map(|d| window(&d.messages)).collect();
            let episodes: Vec<EpisodeToConsolidate<'_>> = batch
                .episodes
                .iter()
                .zip(&windows)
                .map(|(d, w)| EpisodeToConsolidate {
                    title: &d.episode.title,
                    summary: &d.episode.summary,
                    messages: w,
                })
                .collect();
            let known: Vec<&str> = batch.facts.iter().map(|f| f.fact.text.as_str()).collect();
            let prompt = consolidation_prompt(&episodes, &known);
            let parsed = self.ask_model(
                chat.as_ref(),
                conversation,
                LlmStage::Consolidation,
                &prompt,
                |text| parse_consolidation(text, known.len(), episodes.len()),
            )?;
            let texts: Vec<Option<&str>> = parsed
                .actions
                .iter()
                .map(|a| match a {
                    epimem_core::facts::FactAction::New { text, .. }
                    | epimem_core::facts::FactAction::Update { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            let new_vectors = self.embed_optional(&texts)?;
            let facts: Vec<Fact> = batch.facts.iter().map(|f| f.fact.clone()).collect();
            let fact_vectors: Vec<Option<Vec<f32>>> =
                batch.facts.iter().map(|f| f.vector.clone()).collect();
            let ids: Vec<&EpisodeId> = batch.episodes.iter().map(|d| &d.episode.id).collect();
            let sources: Vec<SourceEpisode<'_>> = batch
                .episodes
                .iter()
                .zip(&ids)
                .map(|(d, id)| SourceEpisode { id, end: d.episode.end })
                .collect();
            let changes = plan_fact_changes(
                &parsed.actions,
                &facts,
                &fact_vectors,
                &sources,
                &new_vectors,
                conversation,
                through,
            );
            // An inserted fact's id is made from its action's place (`fact_id`): its vector goes
            // by that id (the store keeps those of the facts it inserts).
            let vectors = new_vectors
                .into_iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    Some((epimem_core::facts::fact_id(conversation, through, i), v?))
                })
                .collect();
            let finished =
                through >= upto_seq || batch.episodes.len() < config.episodes_per_call.max(1);
            report.facts_changed += changes.len() as u64;
            self.crash.point("consolidate.before_commit");
            self.store.commit_consolidation(&ConsolidationCommit {
                job: Some(job.id),
                conversation: conversation.clone(),
                changes,
                vectors,
                fingerprint: fingerprint.clone(),
                through_seq: through,
                finished,
            })?;
            self.crash.point("consolidate.after_commit");
            if finished {
                return Ok(report);
            }
        }
    }

    /// Asks `chat` (twice at most when the answer cannot be read), recording what each call
    /// cost; the model's failure is `EngineError::Model` (a consolidation is then retried
    /// later; segmentation and review fall back to their LLM-free paths).
    pub(crate) fn ask_model<T>(
        &self,
        chat: &dyn ChatModel,
        conversation: &ConversationKey,
        stage: LlmStage,
        prompt: &epimem_core::ChatPrompt,
        parse: impl Fn(&str) -> Result<T, epimem_core::AnswerError>,
    ) -> Result<T, EngineError> {
        let mut last = String::new();
        for _ in 0..ANSWER_ATTEMPTS {
            let mut result = chat.complete(stage, prompt);
            let outcome = match result.answer {
                Err(e) => Err((e.to_string(), false)),
                Ok(text) => parse(&text).map_err(|e| (e.to_string(), true)),
            };
            if outcome.is_err() {
                result.usage.failures += u64::from(matches!(outcome, Err((_, true))));
            }
            self.store.record_llm_usage(&conversation.tenant, stage, &result.usage)?;
            match outcome {
                Ok(parsed) => return Ok(parsed),
                Err((why, ask_again)) => {
                    last = why;
                    if !ask_again {
                        break;
                    }
                }
            }
        }
        Err(EngineError::Model(format!("{} of {conversation} failed: {last}", stage.as_str())))
    }

    /// Takes each message of `conversation` already closed into an episode as a lasting fact,
    /// said as it is (another memory's facts, imported): its text, true from its time, sourced
    /// by its episode. A message taken before is not taken twice. Returns how many were taken.
    pub(crate) fn take_as_facts(
        &self,
        conversation: &ConversationKey,
    ) -> Result<usize, EngineError> {
        let Some(held) = self.store.conversation_messages(conversation, None, usize::MAX)? else {
            return Err(EngineError::NotFound(format!("conversation {conversation}")));
        };
        let closed: Vec<(&Message, &EpisodeId)> =
            held.iter().filter_map(|(m, e)| e.as_ref().map(|e| (m, e))).collect();
        let texts: Vec<Option<&str>> =
            closed.iter().map(|(m, _)| Some(m.content.as_str())).collect();
        let vectors = self.embed_optional(&texts)?;
        let facts: Vec<Fact> = closed
            .iter()
            .map(|(m, episode)| Fact {
                id: epimem_core::facts::fact_id(conversation, m.seq, 0),
                conversation: conversation.clone(),
                text: m.content.clone(),
                valid_at: m.timestamp,
                invalid_at: None,
                sources: vec![(*episode).clone()],
                reinforced: 0,
            })
            .collect();
        let vectors =
            facts.iter().zip(vectors).filter_map(|(f, v)| Some((f.id.clone(), v?))).collect();
        let scope = epimem_core::Scope::tenant(&conversation.tenant)
            .with_conversation(Some(conversation.conversation.clone()));
        let before = self.store.facts(&scope, true, None, None)?.len();
        self.store.commit_consolidation(&ConsolidationCommit {
            job: None,
            conversation: conversation.clone(),
            changes: facts.into_iter().map(epimem_core::facts::FactChange::Insert).collect(),
            vectors,
            fingerprint: self.embedder.as_ref().map(|e| e.fingerprint().to_owned()),
            through_seq: 0,
            finished: false,
        })?;
        Ok(self.store.facts(&scope, true, None, None)?.len() - before)
    }

    /// Unit vectors of the texts given (`None` where there is no text or no embedder).
    fn embed_optional(&self, texts: &[Option<&str>]) -> Result<Vec<Option<Vec<f32>>>, EngineError> {
        let Some(embedder) = &self.embedder else { return Ok(vec![None; texts.len()]) };
        let present: Vec<&str> = texts.iter().flatten().copied().collect();
        let mut vectors = embedder.embed(&present)?.into_iter();
        Ok(texts.iter().map(|t| t.and_then(|_| vectors.next())).collect())
    }

    /// The valid facts that bear on a recall's query, best first.
    pub(crate) fn recall_facts(&self, query: &RecallQuery) -> Result<Vec<FactHit>, EngineError> {
        let limit = self.config.consolidation.recalled_facts;
        if limit == 0 || query.text.trim().is_empty() {
            return Ok(Vec::new());
        }
        let fingerprint = self.embedder.as_ref().map(|e| e.fingerprint());
        let stored = self.store.facts(&query.scope, false, None, fingerprint)?;
        if stored.is_empty() {
            return Ok(Vec::new());
        }
        let vector = match (&query.vector, &self.embedder) {
            (Some(v), _) => Some(v.clone()),
            (None, Some(embedder)) => embedder.embed(&[query.text.as_str()])?.pop(),
            (None, None) => None,
        };
        let with: Vec<(&Fact, Option<&[f32]>)> =
            stored.iter().map(|f| (&f.fact, f.vector.as_deref())).collect();
        Ok(rank_facts(&query.text, vector.as_deref(), &with, limit)
            .into_iter()
            .map(|score| FactHit { fact: stored[score.index].fact.clone(), score })
            .collect())
    }

    /// The facts `scope` may see, newest first; invalidated ones too with `with_invalid`.
    pub(crate) fn facts(
        &self,
        scope: &epimem_core::Scope,
        with_invalid: bool,
        limit: Option<usize>,
    ) -> Result<Vec<Fact>, EngineError> {
        Ok(self
            .store
            .facts(scope, with_invalid, limit, None)?
            .into_iter()
            .map(|f| f.fact)
            .collect())
    }
}

fn window(messages: &[Message]) -> Vec<WindowMessage<'_>> {
    messages.iter().take(MESSAGES_PER_EPISODE).map(WindowMessage::from).collect()
}

/// The model's failure set apart as the inner `Err` (its reason), for the paths that fall back
/// without a model; every other error stays an error.
pub(crate) fn model_failure_apart<T>(
    asked: Result<T, EngineError>,
) -> Result<Result<T, String>, EngineError> {
    match asked {
        Ok(answer) => Ok(Ok(answer)),
        Err(EngineError::Model(why)) => Ok(Err(why)),
        Err(e) => Err(e),
    }
}
