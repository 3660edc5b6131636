//! Every failure a request can meet, mapped to an HTTP status and `{"error": {"code",
//! "message"}}` here and nowhere else. Codes are the engine's stable error kinds, plus the
//! transport's own (`forbidden`, `payload_too_large`, `timeout`, …: [`ApiError::of_status`]).
//! A response that a layer below our handlers answered in another shape (an extractor's plain
//! text, an empty 405 or 408, the MCP transport's text) is made one of these by [`json_errors`].

use axum::{
    Json,
    extract::{
        Request,
        rejection::{BytesRejection, QueryRejection},
    },
    http::{
        StatusCode,
        header::{CONTENT_LENGTH, CONTENT_TYPE},
    },
    middleware::Next,
    response::{IntoResponse, Response},
};
use epimem_core::ErrorKind;
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

    /// What the server refuses to serve to this caller (a cross-site page): 403 `forbidden`.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::of_status(StatusCode::FORBIDDEN, message)
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

    /// An error told by its status alone: a refusal of the transport or of a request guard.
    pub fn of_status(status: StatusCode, message: impl Into<String>) -> Self {
        let code = match status {
            StatusCode::BAD_REQUEST => ErrorKind::BadInput.code(),
            StatusCode::UNAUTHORIZED => "unauthorized",
            StatusCode::FORBIDDEN => "forbidden",
            StatusCode::NOT_FOUND => ErrorKind::NotFound.code(),
            StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
            StatusCode::REQUEST_TIMEOUT => "timeout",
            StatusCode::CONFLICT => ErrorKind::Conflict.code(),
            StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
            StatusCode::URI_TOO_LONG => "uri_too_long",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
            StatusCode::SERVICE_UNAVAILABLE => ErrorKind::Unavailable.code(),
            s if s.is_client_error() => ErrorKind::BadInput.code(),
            _ => ErrorKind::Internal.code(),
        };
        Self { status, code, message: message.into() }
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

impl From<epimem_api::MemoryError> for ApiError {
    fn from(e: epimem_api::MemoryError) -> Self {
        Self::of_kind(e.kind(), e.message().to_owned())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        Self::bad_input(rejection.body_text())
    }
}

impl From<BytesRejection> for ApiError {
    fn from(rejection: BytesRejection) -> Self {
        Self::of_status(rejection.status(), rejection.body_text())
    }
}

/// The body of every error response.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable and machine-readable: `bad_input`, `unauthorized`, `forbidden`, `not_found`,
    /// `method_not_allowed`, `timeout`, `conflict`, `payload_too_large`, `uri_too_long`,
    /// `unsupported_media_type`, `unavailable`, `internal`.
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

/// The most of a non-JSON error body kept as the message (a layer's short text).
const PLAIN_ERROR_MAX: usize = 4096;

/// Makes every error response `{"error": {"code", "message"}}`, whatever answered it: the
/// text (or, when there is none, the status's reason) becomes the message, the status the code,
/// and the other headers (`Allow`, `Connection`, `Retry-After`) stay.
pub(crate) async fn json_errors(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, PLAIN_ERROR_MAX)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_owned())
        .unwrap_or_default();
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_lowercase()
    } else {
        text
    };
    let mut out = ApiError::of_status(status, message).into_response();
    parts.headers.remove(CONTENT_TYPE);
    parts.headers.remove(CONTENT_LENGTH);
    out.headers_mut().extend(parts.headers);
    out
}

#[cfg(test)]
mod tests {
    use epimem_api::MemoryError;

    use super::*;

    #[test]
    fn memory_kinds_map_to_statuses() {
        let cases = [
            (MemoryError::bad_input("x"), StatusCode::BAD_REQUEST, "bad_input"),
            (MemoryError::not_found("x"), StatusCode::NOT_FOUND, "not_found"),
            (MemoryError::conflict("x"), StatusCode::CONFLICT, "conflict"),
            (
                MemoryError::new(ErrorKind::Unavailable, "x"),
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
