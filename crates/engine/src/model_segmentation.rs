//! Cutting a batch with a language model: one call per window of at most `triggers.window_max`
//! messages, each window's last segment carried into the next. Any failure gives `None`, and
//! the job cuts the batch without the model instead.

use epimem_core::{
    ConversationKey, LlmStage, Message, Scope,
    llm::{
        ParsedSegmentation, ProposedSegment, SegmentationWindow, WindowMessage, parse_segmentation,
        segmentation_prompt,
    },
};
use epimem_llm::ChatModel;
use epimem_store::Store;

use crate::{Engine, EngineError};

impl<S: Store> Engine<S> {
    /// The model's segments of `pending`, tiling it, or `None` when the model failed (what
    /// every call cost is recorded either way).
    pub(crate) fn model_segments(
        &self,
        chat: &dyn ChatModel,
        conversation: &ConversationKey,
        pending: &[Message],
    ) -> Result<Option<Vec<ProposedSegment>>, EngineError> {
        // One message is one episode: there is nothing to cut, and its own words tell it.
        if pending.len() < 2 {
            return Ok(None);
        }
        let scope = Scope::tenant(&conversation.tenant)
            .with_conversation(Some(conversation.conversation.clone()));
        let mut previous =
            self.store.episodes(&scope, None, Some(1))?.into_iter().next().map(|e| e.summary);
        let window = usize::try_from(self.config.triggers.window_max).unwrap_or(usize::MAX).max(2);
        let mut segments: Vec<ProposedSegment> = Vec::new();
        let mut start = 0;
        while start < pending.len() {
            let end = pending.len().min(start + window);
            let Some(mut cut) = self
                .ask(chat, conversation, &pending[start..end], previous.as_deref())?
                .map(|p| p.segments)
            else {
                return Ok(None);
            };
            if end < pending.len() && cut.len() > 1 {
                // More messages follow: the window's last segment may go on past its end.
                cut.pop();
            }
            start += cut.iter().map(|s| s.len).sum::<usize>();
            previous = cut.last().map(|s| s.summary.clone());
            segments.extend(cut);
        }
        Ok(Some(segments))
    }

    fn ask(
        &self,
        chat: &dyn ChatModel,
        conversation: &ConversationKey,
        messages: &[Message],
        previous_summary: Option<&str>,
    ) -> Result<Option<ParsedSegmentation>, EngineError> {
        let window: Vec<WindowMessage<'_>> = messages
            .iter()
            .map(|m| WindowMessage {
                author: m.author(),
                timestamp: m.timestamp,
                content: &m.content,
            })
            .collect();
        let prompt =
            segmentation_prompt(&SegmentationWindow { messages: &window, previous_summary });
        let asked = self.ask_model(chat, conversation, LlmStage::Segmentation, &prompt, |text| {
            parse_segmentation(text, window.len())
        });
        match asked {
            Ok(parsed) => Ok(Some(parsed)),
            Err(EngineError::Model(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }
}
