use epimem_core::ErrorKind;

/// Why a call to the model gave no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    #[error("the language model at {url} cannot be reached: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("the language model did not answer within {seconds} s")]
    Timeout { seconds: f64 },
    #[error("the language model answered HTTP {status}: {body}")]
    Status { status: u16, body: String },
    #[error("the language model's reply is not a chat completion: {0}")]
    Malformed(String),
}

impl LlmError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            // A refused key or a bad request fails the same way next time: the settings are wrong.
            Self::Status { status: 400..=428 | 430..=499, .. } => ErrorKind::BadInput,
            _ => ErrorKind::Unavailable,
        }
    }

    /// Whether asking again may succeed: timeouts, lost connections, rate limits, server
    /// errors and replies cut short.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            Self::Status { status, .. } => matches!(status, 408 | 429 | 500..=599),
            _ => true,
        }
    }
}
