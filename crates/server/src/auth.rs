//! Who is calling: with API keys, the tenant of the bearer key (401 without a valid one);
//! without, the configured tenant. Whether keys are required is the guard's finding
//! (`guard::KeysRequired`): a key made while the server runs counts from the next request.
//! The tenant travels in the request's extensions, where every handler and MCP tool takes it
//! from; nothing a client sends can set it.

use std::sync::Arc;

use axum::{
    extract::{Request, State},
    http::{
        HeaderValue,
        header::{AUTHORIZATION, CONNECTION},
    },
    middleware::Next,
    response::{IntoResponse, Response},
};

use crate::{App, error::ApiError, guard::KeysRequired, routes::blocking};

/// The tenant a request works in.
#[derive(Debug, Clone)]
pub(crate) struct Tenant(pub(crate) Arc<str>);

impl std::ops::Deref for Tenant {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

pub(crate) async fn authenticate(
    State(app): State<App>,
    mut request: Request,
    next: Next,
) -> Response {
    let keys = request.extensions().get::<KeysRequired>().is_none_or(|k| k.0);
    let tenant = match keys {
        false => app.tenant.clone(),
        true => {
            let key = request
                .headers()
                .get(AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(|k| k.trim().to_owned());
            let Some(key) = key else {
                return refuse(ApiError::unauthorized(
                    "send an API key: Authorization: Bearer epm_…",
                ));
            };
            match blocking(&app, move |memory| Ok(memory.tenant_of_api_key(&key)?)).await {
                Ok(Some(tenant)) => Arc::from(tenant),
                Ok(None) => {
                    return refuse(ApiError::unauthorized("unknown or revoked API key"));
                }
                Err(e) => return e.into_response(),
            }
        }
    };
    request.extensions_mut().insert(Tenant(tenant));
    next.run(request).await
}

/// A refusal sent before the request's body is read. The server may then close the connection
/// without draining the body, so it says so: a keep-alive client that pooled the connection
/// would otherwise send its next request into a closed socket.
fn refuse(error: ApiError) -> Response {
    let mut response = error.into_response();
    response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_closes_the_connection() {
        let response = refuse(ApiError::unauthorized("no key"));
        assert_eq!(response.status(), 401);
        assert_eq!(response.headers()[CONNECTION], "close");
    }
}
