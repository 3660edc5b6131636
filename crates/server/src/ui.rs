//! The memory browser under `/ui`: three static files compiled into the binary (no build step,
//! no Node at run time), which read memory through the same API and the same keys as any
//! client. The files themselves hold no memory and are public; every request they make for
//! data is authenticated like any other.

use axum::{
    Router,
    http::{HeaderValue, header},
    response::{IntoResponse, Redirect, Response},
    routing::get,
};

const INDEX: &str = include_str!("../ui/index.html");
const SCRIPT: &str = include_str!("../ui/app.js");
const STYLE: &str = include_str!("../ui/app.css");

/// What the browser may load and from where: this server only, no inline script.
const POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
                      img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";

pub(crate) fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/ui", get(|| async { asset(INDEX, "text/html; charset=utf-8") }))
        .route("/ui/", get(|| async { Redirect::permanent("/ui") }))
        .route("/ui/app.js", get(|| async { asset(SCRIPT, "text/javascript; charset=utf-8") }))
        .route("/ui/app.css", get(|| async { asset(STYLE, "text/css; charset=utf-8") }))
}

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    // Compiled into this build: a new build may change them.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}
