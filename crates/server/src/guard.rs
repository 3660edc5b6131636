//! What every request must be before anything else reads it, on every route (the API, MCP, the
//! browser's files):
//!
//! - Without API keys, only local programs may call: the `Host` must be a loopback name or
//!   address, so a page that rebinds its own name to 127.0.0.1 is refused.
//! - A browser's request (it carries `Origin`) must come from this server's own pages or an
//!   origin in `server.allowed_origins`: a page the user happens to visit cannot write to the
//!   memory, even with a "simple" request that browsers send without asking first.
//! - A body must be JSON (`Content-Type: application/json`), which no HTML form and no simple
//!   cross-site request can send. A request without a body (a `POST …/flush`) needs none.
//! - A URI longer than [`MAX_URI`] is refused with 414 before any route parses it.
//!
//! Whether keys are required is asked of the store on every request: a key created while the
//! server runs is enforced on the next one.

use std::net::IpAddr;

use axum::{
    extract::{Request, State},
    http::{
        HeaderMap,
        header::{CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN, TRANSFER_ENCODING},
    },
    middleware::Next,
    response::{IntoResponse, Response},
};

use crate::{Access, App, error::ApiError, routes::blocking};

/// The longest URI served; a longer one is answered 414.
pub(crate) const MAX_URI: usize = 8 * 1024;

/// Whether this request must carry an API key, as the guard found it (read by `auth`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeysRequired(pub(crate) bool);

pub(crate) async fn guard(State(app): State<App>, mut request: Request, next: Next) -> Response {
    let uri_len = request.uri().to_string().len();
    if uri_len > MAX_URI {
        return ApiError::of_status(
            axum::http::StatusCode::URI_TOO_LONG,
            format!("the URI is {uri_len} bytes; at most {MAX_URI} are served"),
        )
        .into_response();
    }
    let keys = match app.access {
        Access::ApiKeys => true,
        Access::SingleUser => match blocking(&app, |memory| Ok(memory.api_keys_exist()?)).await {
            Ok(exist) => exist,
            Err(e) => return e.into_response(),
        },
    };
    if let Err(refusal) = check(request.headers(), keys, &app.allowed_origins) {
        return refusal.into_response();
    }
    request.extensions_mut().insert(KeysRequired(keys));
    next.run(request).await
}

/// The guard's rules over a request's headers.
fn check(headers: &HeaderMap, keys: bool, allowed_origins: &[String]) -> Result<(), ApiError> {
    let host = headers.get(HOST).map(|h| h.to_str().unwrap_or("").to_ascii_lowercase());
    if !keys
        && let Some(host) = &host
        && !is_loopback_host(host)
    {
        return Err(ApiError::forbidden(format!(
            "Host {host:?} is not a loopback name: without API keys this server answers only \
             local programs (127.0.0.1, ::1, localhost)"
        )));
    }
    if let Some(origin) = headers.get(ORIGIN) {
        let origin = origin.to_str().unwrap_or("").trim_end_matches('/').to_ascii_lowercase();
        let own = host.as_deref().is_some_and(|host| {
            origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) == Some(host)
        });
        if !own && !allowed_origins.contains(&origin) {
            return Err(ApiError::forbidden(format!(
                "a page from {origin:?} may not call this server: only its own pages and the \
                 origins in server.allowed_origins may"
            )));
        }
    }
    if carries_body(headers) {
        let kind = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
        let essence = kind.split(';').next().unwrap_or("").trim();
        if !essence.eq_ignore_ascii_case("application/json") {
            return Err(ApiError::of_status(
                axum::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!(
                    "a request body must be JSON (Content-Type: application/json), not {:?}",
                    if kind.is_empty() { "none" } else { kind }
                ),
            ));
        }
    }
    Ok(())
}

/// A body is announced by a length above zero or by a transfer encoding.
fn carries_body(headers: &HeaderMap) -> bool {
    let length = headers.get(CONTENT_LENGTH).and_then(|v| v.to_str().ok());
    headers.contains_key(TRANSFER_ENCODING)
        || length.is_some_and(|l| l.trim().parse::<u64>().map_or(true, |n| n > 0))
}

/// `localhost` (and names under it), or a loopback address, with or without a port.
fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(name, port)| {
            if port.chars().all(|c| c.is_ascii_digit()) { name } else { host }
        })
    };
    let name = name.trim_end_matches('.');
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn code(pairs: &[(&'static str, &str)], keys: bool) -> Option<&'static str> {
        let allowed = ["https://app.example.com".to_owned()];
        check(&headers(pairs), keys, &allowed).err().map(|e| e.code())
    }

    #[test]
    fn loopback_hosts() {
        for host in [
            "127.0.0.1:7878",
            "localhost",
            "LOCALHOST:80",
            "[::1]:7878",
            "127.1.2.3",
            "a.localhost:1",
        ] {
            assert!(is_loopback_host(&host.to_ascii_lowercase()), "{host}");
        }
        for host in [
            "evil.example:7878",
            "10.0.0.1",
            "[2001:db8::1]:80",
            "localhost.evil.example",
            "127.0.0.1.nip.io",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn without_keys_only_loopback_hosts_and_own_origins() {
        assert_eq!(code(&[("host", "127.0.0.1:7878")], false), None);
        assert_eq!(code(&[("host", "evil.example:7878")], false), Some("forbidden"));
        // With keys a rebinding page has no key to send: any Host may call.
        assert_eq!(code(&[("host", "memory.example.com")], true), None);
        let own = [("host", "127.0.0.1:7878"), ("origin", "http://127.0.0.1:7878")];
        assert_eq!(code(&own, false), None);
        let cross = [("host", "127.0.0.1:7878"), ("origin", "http://evil.example")];
        assert_eq!(code(&cross, false), Some("forbidden"));
        assert_eq!(code(&cross, true), Some("forbidden"));
        let opaque = [("host", "127.0.0.1:7878"), ("origin", "null")];
        assert_eq!(code(&opaque, false), Some("forbidden"));
        let listed = [("host", "memory.example.com"), ("origin", "https://app.example.com")];
        assert_eq!(code(&listed, true), None);
    }

    #[test]
    fn a_body_must_be_json() {
        let host = ("host", "localhost:7878");
        let plain = [host, ("content-type", "text/plain"), ("content-length", "5")];
        assert_eq!(code(&plain, false), Some("unsupported_media_type"));
        let none = [host, ("content-length", "5")];
        assert_eq!(code(&none, true), Some("unsupported_media_type"));
        let chunked = [host, ("transfer-encoding", "chunked")];
        assert_eq!(code(&chunked, false), Some("unsupported_media_type"));
        let json =
            [host, ("content-type", "application/json; charset=utf-8"), ("content-length", "5")];
        assert_eq!(code(&json, false), None);
        // A bodyless POST (flush) needs no content type.
        assert_eq!(code(&[host, ("content-length", "0")], false), None);
        assert_eq!(code(&[host], false), None);
    }
}
