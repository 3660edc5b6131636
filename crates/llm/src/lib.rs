//! The chat model port of epimem and its client for any OpenAI-compatible server (OpenAI,
//! vLLM, llama.cpp's `llama-server`, Ollama).
//!
//! A call returns what it cost whether it succeeded or not, so usage adds up to what the server
//! saw, retries included. Prompts and the reading of answers are core's pure functions; this
//! crate only carries them.

mod config;
mod error;
mod limit;
mod openai;
mod retry;
#[cfg(feature = "test-support")]
pub mod scripted;

pub use config::LlmConfig;
pub use error::LlmError;
pub use openai::OpenAiChat;

use epimem_core::{ChatPrompt, LlmStage, LlmUsage};

/// A chat model that answers prompts with JSON text.
pub trait ChatModel: Send + Sync + std::fmt::Debug {
    /// Asks the model serving `stage`; retries what is worth retrying before giving up.
    fn complete(&self, stage: LlmStage, prompt: &ChatPrompt) -> ChatResult;

    /// The model that serves `stage`, as recorded with what it wrote.
    fn model_for(&self, stage: LlmStage) -> &str;
}

/// The answer's text (not yet validated: the caller parses it) and what it cost.
#[derive(Debug)]
pub struct ChatResult {
    pub answer: Result<String, LlmError>,
    pub usage: LlmUsage,
}
