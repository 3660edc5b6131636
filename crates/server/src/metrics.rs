//! Prometheus metrics at `/metrics`: requests and their latency by route, and what the store
//! holds (read when scraped). Counts only, never content, and summed over tenants.

use std::time::Instant;

use axum::{
    extract::{MatchedPath, Request, State},
    http::header::CONTENT_TYPE,
    middleware::Next,
    response::{IntoResponse, Response},
};
use prometheus_client::{
    encoding::{EncodeLabelSet, text::encode},
    metrics::{
        counter::Counter,
        family::Family,
        gauge::Gauge,
        histogram::{Histogram, exponential_buckets},
    },
    registry::Registry,
};

use crate::{App, error::ApiError, routes::blocking};

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StageLabels {
    stage: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabels {
    state: &'static str,
}

type Latency = Family<RouteLabels, Histogram, fn() -> Histogram>;

/// The server's metrics and their registry.
#[derive(Debug)]
pub(crate) struct Metrics {
    registry: Registry,
    requests: Family<StatusLabels, Counter>,
    latency: Latency,
    conversations: Gauge,
    messages: Gauge,
    pending: Gauge,
    episodes: Gauge,
    jobs: Family<JobLabels, Gauge>,
    index_vectors: Gauge,
    /// Language model usage per stage: running totals kept in the store (every process's
    /// calls), so gauges rather than this process's counters.
    llm: [Family<StageLabels, Gauge>; 5],
}

fn latency_histogram() -> Histogram {
    // 0.25 ms to about 4 s.
    Histogram::new(exponential_buckets(0.000_25, 2.0, 15))
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("epimem");
        let requests = Family::<StatusLabels, Counter>::default();
        let latency: Latency = Family::new_with_constructor(latency_histogram);
        let gauges: [Gauge; 5] = Default::default();
        let jobs = Family::<JobLabels, Gauge>::default();
        registry.register("http_requests", "HTTP requests answered", requests.clone());
        registry.register(
            "http_request_duration_seconds",
            "Time to answer an HTTP request",
            latency.clone(),
        );
        let [conversations, messages, pending, episodes, index_vectors] = gauges;
        registry.register("conversations", "Conversations stored", conversations.clone());
        registry.register("messages", "Messages stored", messages.clone());
        registry.register("pending_messages", "Messages not yet in an episode", pending.clone());
        registry.register("episodes", "Episodes stored", episodes.clone());
        registry.register("jobs", "Background jobs by state", jobs.clone());
        registry.register(
            "index_vectors",
            "Message vectors in the loaded search indexes",
            index_vectors.clone(),
        );
        let llm: [Family<StageLabels, Gauge>; 5] = Default::default();
        let names = [
            ("llm_calls", "Language model calls (HTTP requests, retries included), by stage"),
            ("llm_failures", "Language model calls that gave no usable answer, by stage"),
            ("llm_prompt_tokens", "Prompt tokens the language model reported, by stage"),
            ("llm_completion_tokens", "Completion tokens the language model reported, by stage"),
            ("llm_latency_milliseconds", "Time spent waiting for the language model, by stage"),
        ];
        for ((name, help), family) in names.into_iter().zip(&llm) {
            registry.register(name, help, family.clone());
        }
        Self {
            registry,
            llm,
            requests,
            latency,
            conversations,
            messages,
            pending,
            episodes,
            jobs,
            index_vectors,
        }
    }
}

/// Counts and times every request by the route it matched.
pub(crate) async fn track(State(app): State<App>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let response = next.run(request).await;
    let labels = RouteLabels { method, route };
    app.metrics.latency.get_or_create(&labels).observe(started.elapsed().as_secs_f64());
    let status = response.status().as_u16();
    let labels = StatusLabels { method: labels.method, route: labels.route, status };
    app.metrics.requests.get_or_create(&labels).inc();
    response
}

/// `GET /metrics`: the Prometheus (OpenMetrics) text.
pub(crate) async fn scrape(State(app): State<App>) -> Response {
    let counts = blocking(&app, |memory| {
        Ok((memory.counts(None)?, memory.indexed_vectors(), memory.llm_usage(None)?))
    })
    .await;
    let (stats, vectors, llm) = match counts {
        Ok(counts) => counts,
        Err(e) => return e.into_response(),
    };
    let m = &app.metrics;
    let set = |gauge: &Gauge, n: u64| gauge.set(i64::try_from(n).unwrap_or(i64::MAX));
    set(&m.conversations, stats.conversations);
    set(&m.messages, stats.messages);
    set(&m.pending, stats.pending_messages);
    set(&m.episodes, stats.episodes);
    set(&m.jobs.get_or_create(&JobLabels { state: "queued" }), stats.queued_jobs);
    set(&m.jobs.get_or_create(&JobLabels { state: "failed" }), stats.failed_jobs);
    set(&m.index_vectors, vectors as u64);
    for (stage, usage) in llm {
        let labels = StageLabels { stage: stage.as_str() };
        let values = [
            usage.calls,
            usage.failures,
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.latency_ms,
        ];
        for (family, value) in m.llm.iter().zip(values) {
            set(&family.get_or_create(&labels), value);
        }
    }
    let mut text = String::new();
    if let Err(e) = encode(&mut text, &m.registry) {
        return ApiError::internal(format!("cannot encode the metrics: {e}")).into_response();
    }
    let kind = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    ([(CONTENT_TYPE, kind)], text).into_response()
}
