//! The exporter's HTTP client: ureq, which the binary already carries for the language model
//! (the exporter's own choices would add reqwest or hyper's client beside it).

use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use opentelemetry_http::{HttpClient, HttpError};

/// Largest answer read from a collector (it answers with a small status message).
const MAX_ANSWER: u64 = 4 << 20;

#[derive(Debug)]
pub(crate) struct UreqClient(ureq::Agent);

impl UreqClient {
    pub(crate) fn new() -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(5)))
            .build()
            .new_agent();
        Self(agent)
    }
}

#[async_trait::async_trait]
impl HttpClient for UreqClient {
    // Blocking inside `async` is sound here: the batch processor calls the exporter on a
    // thread of its own and waits for it there.
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let mut answer = self.0.run(Request::from_parts(parts, body.to_vec()))?;
        let body = answer.body_mut().with_config().limit(MAX_ANSWER).read_to_vec()?;
        let (parts, _) = answer.into_parts();
        Ok(Response::from_parts(parts, Bytes::from(body)))
    }
}
