//! Every failure a request can meet, mapped to an HTTP status and `{"error": {"code",
//! "message"}}` here and nowhere else. Codes are the engine's stable error kinds, plus the
//! transport's own (`payload_too_large`).

use axum::{
    Json,
    extract::rejection::{BytesRejection, QueryRejection},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use epimem_core::ErrorKind;
use epimem_engine::EngineError;
use serde::Serialize;
use utoipa::ToSchema;

/// A failed request: its status, a stable code and a message naming what was wrong.
#[derive(Debug, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl ApiError {
    /// The request itself is wrong (a field, a value): 400 `bad_input`.
    pub fn bad_input(message: impl Into<String>) -> Self {
        Self::of_kind(ErrorKind::BadInput, message.into())
    }

    /// No API key, or one that is unknown or revoked: 401 `unauthorized`.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self { status: StatusCode::UNAUTHORIZED, code: "unauthorized", message: message.into() }
    }

    /// The request contradicts the state it works on: 409 `conflict`.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::of_kind(ErrorKind::Conflict, message.into())
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::of_kind(ErrorKind::NotFound, message.into())
    }

    /// A failure of the server itself (a worker thread that died): 500 `internal`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::of_kind(ErrorKind::Internal, message.into())
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn code(&self) -> &'static str {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    fn of_kind(kind: ErrorKind, message: String) -> Self {
        let status = match kind {
            ErrorKind::BadInput => StatusCode::BAD_REQUEST,
            ErrorKind::NotFound => StatusCode::NOT_FOUND,
            ErrorKind::Conflict => StatusCode::CONFLICT,
            ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            // A kind added later is a server-side failure until it is mapped here.
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self { status, code: kind.code(), message }
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        Self::of_kind(e.kind(), e.to_string())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        Self::bad_input(rejection.body_text())
    }
}

impl From<BytesRejection> for ApiError {
    fn from(rejection: BytesRejection) -> Self {
        let status = rejection.status();
        let code = match status {
            StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
            s if s.is_client_error() => ErrorKind::BadInput.code(),
            _ => ErrorKind::Internal.code(),
        };
        Self { status, code, message: rejection.body_text() }
    }
}

/// The body of every error response.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable and machine-readable: `bad_input`, `unauthorized`, `not_found`, `conflict`,
    /// `unavailable`, `internal`, `payload_too_large`.
    pub code: String,
    /// For people: names the field or the thing that was wrong.
    pub message: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body =
            ErrorBody { error: ErrorDetail { code: self.code.into(), message: self.message } };
        (self.status, Json(body)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use epimem_store::StoreError;

    use super::*;

    #[test]
    fn engine_kinds_map_to_statuses() {
        let cases = [
            (EngineError::Invalid("x".into()), StatusCode::BAD_REQUEST, "bad_input"),
            (EngineError::NotFound("x".into()), StatusCode::NOT_FOUND, "not_found"),
            (
                EngineError::Store(StoreError::Conflict("x".into())),
                StatusCode::CONFLICT,
                "conflict",
            ),
            (
                EngineError::Store(StoreError::Unavailable("x".into())),
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
            ),
        ];
        for (error, status, code) in cases {
            let api = ApiError::from(error);
            assert_eq!((api.status(), api.code()), (status, code));
        }
    }
}
