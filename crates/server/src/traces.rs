//! A span per request (OpenTelemetry's HTTP server conventions), continuing the caller's trace
//! when it sends W3C trace context. The use case's spans nest under it.

use axum::{
    extract::{MatchedPath, Request},
    middleware::Next,
    response::Response,
};
use tracing::{Instrument as _, field::Empty};

/// The span of the HTTP request a handler serves.
#[derive(Debug, Clone)]
pub(crate) struct RequestSpan(pub(crate) tracing::Span);

/// Runs the request in its span and records the status it was answered with.
pub(crate) async fn trace(request: Request, next: Next) -> Response {
    let route = request.extensions().get::<MatchedPath>().map(|p| p.as_str().to_owned());
    let method = request.method().as_str().to_owned();
    let span = tracing::info_span!(
        "http",
        otel.name = %format_args!(
            "{method}{}{}",
            if route.is_some() { " " } else { "" },
            route.as_deref().unwrap_or("")
        ),
        otel.kind = "server",
        otel.status_code = Empty,
        http.request.method = %method,
        http.route = route.as_deref(),
        http.response.status_code = Empty,
        url.scheme = "http",
    );
    epimem_telemetry::continue_trace(&span, request.headers());
    // An MCP tool call runs on a task of the MCP library's: it finds its request's span here.
    let mut request = request;
    request.extensions_mut().insert(RequestSpan(span.clone()));
    let response = next.run(request).instrument(span.clone()).await;
    let status = response.status();
    span.record("http.response.status_code", i64::from(status.as_u16()));
    if status.is_server_error() {
        span.record("otel.status_code", "error");
    }
    response
}
