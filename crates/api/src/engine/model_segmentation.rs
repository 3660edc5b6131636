//! Cutting a batch with a language model: one call per window of at most `triggers.window_max`
//! messages, each window's last segment carried into the next. Any failure gives `None`, and
//! the job cuts the batch without the model instead.

use epimem_core::{
    ConversationKey, LlmStage, Message, Scope,
    llm::{
        ParsedSegmentation, ProposedSegment, SegmentationWindow, Story, WindowMessage,
        parse_segmentation, parse_story, segmentation_prompt, story_prompt,
    },
};
use epimem_llm::ChatModel;

use crate::engine::{Engine, EngineError, consolidation::model_failure_apart};

/// What the model made of a batch: its segments, tiling the batch, and what had to be repaired.
#[derive(Debug)]
pub(crate) struct ModelCut {
    pub(crate) segments: Vec<ProposedSegment>,
    pub(crate) repaired: Option<String>,
}

impl Engine {
    /// The model's segments of `pending`, tiling it, with what had to be repaired; or why the
    /// model did not cut it (it failed, or there was nothing to cut). What every call cost is
    /// recorded either way.
    pub(crate) fn model_segments(
        &self,
        chat: &dyn ChatModel,
        conversation: &ConversationKey,
        pending: &[Message],
    ) -> Result<Result<ModelCut, String>, EngineError> {
        // One message is one episode: there is nothing to cut, and its own words tell it.
        if pending.len() < 2 {
            return Ok(Err("a single message: nothing for the model to cut".into()));
        }
        let scope = Scope::tenant(&conversation.tenant)
            .with_conversation(Some(conversation.conversation.clone()));
        let mut previous =
            self.store.episodes(&scope, None, Some(1))?.into_iter().next().map(|e| e.summary);
        let window = usize::try_from(self.config.triggers.window_max).unwrap_or(usize::MAX).max(2);
        let mut segments: Vec<ProposedSegment> = Vec::new();
        let mut repaired: Option<String> = None;
        let mut start = 0;
        while start < pending.len() {
            let end = pending.len().min(start + window);
            let parsed =
                match self.ask(chat, conversation, &pending[start..end], previous.as_deref())? {
                    Ok(parsed) => parsed,
                    Err(why) => return Ok(Err(why)),
                };
            repaired = repaired.or(parsed.repaired);
            let mut cut = parsed.segments;
            if end < pending.len() && cut.len() > 1 {
                // More messages follow: the window's last segment may go on past its end.
                cut.pop();
            }
            start += cut.iter().map(|s| s.len).sum::<usize>();
            previous = cut.last().map(|s| s.summary.clone());
            segments.extend(cut);
        }
        Ok(Ok(ModelCut { segments, repaired }))
    }

    fn ask(
        &self,
        chat: &dyn ChatModel,
        conversation: &ConversationKey,
        messages: &[Message],
        previous_summary: Option<&str>,
    ) -> Result<Result<ParsedSegmentation, String>, EngineError> {
        let window: Vec<WindowMessage<'_>> = messages.iter().map(WindowMessage::from).collect();
        let prompt =
            segmentation_prompt(&SegmentationWindow { messages: &window, previous_summary });
        model_failure_apart(self.ask_model(
            chat,
            conversation,
            LlmStage::Segmentation,
            &prompt,
            |text| parse_segmentation(text, window.len()),
        ))
    }

    /// An episode of agent work told as a story by the model, or why not.
    pub(crate) fn tell_story(
        &self,
        chat: &dyn ChatModel,
        conversation: &ConversationKey,
        messages: &[Message],
    ) -> Result<Result<Story, String>, EngineError> {
        let window: Vec<WindowMessage<'_>> = messages.iter().map(WindowMessage::from).collect();
        let prompt = story_prompt(&window);
        model_failure_apart(self.ask_model(
            chat,
            conversation,
            LlmStage::Summary,
            &prompt,
            parse_story,
        ))
    }
}
