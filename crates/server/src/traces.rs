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
pub(crate) async fn trace(mut request: Request, next: Next) -> Response {
    // Fields are read only when the span is recorded: without traces, nothing is allocated.
    let span = {
        let route = request.extensions().get::<MatchedPath>().map(MatchedPath::as_str);
        let method = request.method().as_str();
        tracing::info_span!(
            "http",
            otel.name = %format_args!(
                "{method}{}{}",
                if route.is_some() { " " } else { "" },
                route.unwrap_or("")
            ),
            otel.kind = "server",
            otel.status_code = Empty,
            http.request.method = method,
            http.route = route,
            http.response.status_code = Empty,
            url.scheme = "http",
        )
    };
    if span.is_disabled() {
        return next.run(request).await;
    }
    epimem_telemetry::continue_trace(&span, request.headers());
    // An MCP tool call runs on a task of the MCP library's: it finds its request's span here.
    request.extensions_mut().insert(RequestSpan(span.clone()));
    let response = next.run(request).instrument(span.clone()).await;
    let status = response.status();
    span.record("http.response.status_code", i64::from(status.as_u16()));
    if status.is_server_error() {
        span.record("otel.status_code", "error");
    }
    response
}
