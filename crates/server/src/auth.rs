//! Who is calling: with API keys, the tenant of the bearer key (401 without a valid one);
//! without, the configured tenant. The tenant travels in the request's extensions, where every
//! handler and MCP tool takes it from; nothing a client sends can set it.

use std::sync::Arc;

use axum::{
    extract::{Request, State},
    http::header::AUTHORIZATION,
    middleware::Next,
    response::{IntoResponse, Response},
};
use epimem_store::Store;

use crate::{Access, App, error::ApiError, routes::blocking};

/// The tenant a request works in.
#[derive(Debug, Clone)]
pub(crate) struct Tenant(pub(crate) Arc<str>);

impl std::ops::Deref for Tenant {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

pub(crate) async fn authenticate<S: Store + 'static>(
    State(app): State<App<S>>,
    mut request: Request,
    next: Next,
) -> Response {
    let tenant = match app.access {
        Access::SingleUser => app.tenant.clone(),
        Access::ApiKeys => {
            let key = request
                .headers()
                .get(AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(|k| k.trim().to_owned());
            let Some(key) = key else {
                return ApiError::unauthorized("send an API key: Authorization: Bearer epm_…")
                    .into_response();
            };
            match blocking(&app, move |engine| Ok(engine.tenant_of_api_key(&key)?)).await {
                Ok(Some(tenant)) => Arc::from(tenant),
                Ok(None) => {
                    return ApiError::unauthorized("unknown or revoked API key").into_response();
                }
                Err(e) => return e.into_response(),
            }
        }
    };
    request.extensions_mut().insert(Tenant(tenant));
    next.run(request).await
}
