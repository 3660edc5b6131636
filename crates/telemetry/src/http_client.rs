//! The exporter's HTTP client: ureq, which the binary already carries for the language model
//! (the exporter's own choices would add reqwest or hyper's client beside it).

use std::{
    fmt,
    sync::atomic::{AtomicBool, Ordering},
    time::Duration,
};

use bytes::Bytes;
use http::{Request, Response};
use opentelemetry_http::{HttpClient, HttpError};

/// Largest answer read from a collector (it answers with a small status message).
const MAX_ANSWER: u64 = 4 << 20;

/// Where the first failure to send is told (once: a collector that is down would otherwise
/// be told of at every batch).
pub type FailureReport = Box<dyn Fn(&str) + Send + Sync>;

pub(crate) struct UreqClient {
    agent: ureq::Agent,
    report: FailureReport,
    told: AtomicBool,
}

impl fmt::Debug for UreqClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UreqClient").finish_non_exhaustive()
    }
}

impl UreqClient {
    pub(crate) fn new(report: FailureReport) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(5)))
            .build()
            .new_agent();
        Self { agent, report, told: AtomicBool::new(false) }
    }

    fn tell_once(&self, to: &http::Uri, what: &dyn fmt::Display) {
        if !self.told.swap(true, Ordering::Relaxed) {
            (self.report)(&format!("traces could not be sent to {to}: {what}"));
        }
    }
}

#[async_trait::async_trait]
impl HttpClient for UreqClient {
    // Blocking inside `async` is sound here: the batch processor calls the exporter on a
    // thread of its own and waits for it there.
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let to = parts.uri.clone();
        let mut answer = match self.agent.run(Request::from_parts(parts, body.to_vec())) {
            Ok(answer) => answer,
            Err(e) => {
                self.tell_once(&to, &e);
                return Err(e.into());
            }
        };
        if !answer.status().is_success() {
            self.tell_once(&to, &format_args!("the collector answered {}", answer.status()));
        }
        let body = answer.body_mut().with_config().limit(MAX_ANSWER).read_to_vec()?;
        let (parts, _) = answer.into_parts();
        Ok(Response::from_parts(parts, Bytes::from(body)))
    }
}
