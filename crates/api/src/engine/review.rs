//! The review job: the memories recalled in a conversation, rated against what followed, and
//! only then their memory strength moved (review ≠ retrieval).

use epimem_core::{
    ConversationKey, Episode, EpisodeId, Job, LlmStage, Message, Scope,
    fsrs::{Rating, ReviewItem, aggregate_reviews, may_review, rate_by_use},
    llm::{MemoryToReview, WindowMessage, parse_review, review_prompt},
};
use epimem_llm::ChatModel;
use epimem_store::ReviewedMemory;

use crate::engine::{
    Engine, EngineError, consolidation::model_failure_apart, segmentation::RunReport,
};

/// The most messages of what followed a reviewer reads (the latest ones).
const FOLLOWING_AT_MOST: usize = 60;

impl Engine {
    pub(crate) fn review(
        &self,
        job: &Job,
        conversation: &ConversationKey,
        following: &[EpisodeId],
    ) -> Result<RunReport, EngineError> {
        let items = aggregate_reviews(&self.store.reviews_of_job(job.id)?);
        let scope = Scope::tenant(&conversation.tenant);
        let ids: Vec<EpisodeId> = items.iter().map(|i| i.id.clone()).collect();
        let found = self.store.episodes_by_id(&scope, &ids)?;
        let min_interval = self.config.memory.min_review_interval_ms();
        // Forgotten memories are gone; stale and too recent reviews are skipped.
        let due: Vec<(&ReviewItem, &Episode)> = items
            .iter()
            .filter_map(|item| {
                let episode = found.iter().find(|e| e.id == item.id)?;
                may_review(&episode.fsrs, item.at, min_interval).then_some((item, episode))
            })
            .collect();
        let mut reviewed = Vec::new();
        if let Some(since) = due.iter().map(|(item, _)| item.at).min() {
            let messages: Vec<Message> = self
                .store
                .episode_details(&scope, following)?
                .into_iter()
                .flat_map(|d| d.messages)
                .collect();
            // What followed the first recall; all of it if the clocks disagree.
            let after: Vec<&Message> = match messages.iter().position(|m| m.timestamp >= since) {
                Some(first) => messages[first..].iter().collect(),
                None => messages.iter().collect(),
            };
            let after = &after[after.len().saturating_sub(FOLLOWING_AT_MOST)..];
            let rated = match &self.chat {
                Some(chat) => self.model_ratings(chat.as_ref(), conversation, after, &due)?,
                None => None,
            };
            let rated = rated.unwrap_or_else(|| {
                let texts: Vec<&str> = after.iter().map(|m| m.content.as_str()).collect();
                (0..due.len())
                    .filter_map(|i| rate_by_use(&due[i].1.keywords, &texts).map(|r| (i, r)))
                    .collect()
            });
            for (i, rating) in rated {
                let (item, episode) = due[i];
                reviewed.push(ReviewedMemory {
                    id: episode.id.clone(),
                    reviewed_against: episode.fsrs.last_review,
                    state: self.memory.review(&episode.fsrs, rating, item.at),
                });
            }
        }
        let changed = self.store.finish_review(job.id, &conversation.tenant, &reviewed)?;
        Ok(RunReport { jobs_run: 1, memories_reviewed: changed as u64, ..RunReport::default() })
    }

    /// The reviewer's ratings by index into `due`, or `None` when the model failed (what every
    /// call cost is recorded either way).
    fn model_ratings(
        &self,
        chat: &dyn ChatModel,
        conversation: &ConversationKey,
        following: &[&Message],
        due: &[(&ReviewItem, &Episode)],
    ) -> Result<Option<Vec<(usize, Rating)>>, EngineError> {
        let window: Vec<WindowMessage<'_>> =
            following.iter().map(|m| WindowMessage::from(*m)).collect();
        let memories: Vec<MemoryToReview<'_>> = due
            .iter()
            .map(|(item, e)| MemoryToReview {
                title: &e.title,
                summary: &e.summary,
                queries: &item.queries,
            })
            .collect();
        let prompt = review_prompt(&window, &memories);
        let asked = self.ask_model(chat, conversation, LlmStage::Review, &prompt, |text| {
            parse_review(text, memories.len())
        });
        Ok(model_failure_apart(asked)?.ok())
    }
}
