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

    /// A low-cardinality name for the failure (OpenTelemetry's `error.type`): `timeout`,
    /// `unreachable`, `malformed`, or the HTTP status.
    pub fn error_type(&self) -> std::borrow::Cow<'static, str> {
        match self {
            Self::Unreachable { .. } => "unreachable".into(),
            Self::Timeout { .. } => "timeout".into(),
            Self::Status { status, .. } => status.to_string().into(),
            Self::Malformed(_) => "malformed".into(),
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
