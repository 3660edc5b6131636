//! What people said stays off the spans unless the settings ask for it.

use std::time::Duration;

use opentelemetry::Context;
use opentelemetry_sdk::{
    Resource,
    error::OTelSdkResult,
    trace::{Span, SpanData, SpanProcessor},
};

/// The attributes that hold text someone wrote (the GenAI conventions' opt-in attributes):
/// the spans name them, and they leave the process only when content is captured.
pub const CONTENT_ATTRIBUTES: &[&str] = &[
    "gen_ai.memory.query.text",
    "gen_ai.memory.records",
    "gen_ai.retrieval.query.text",
    "gen_ai.retrieval.documents",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
];

fn is_content(key: &str) -> bool {
    CONTENT_ATTRIBUTES.contains(&key)
}

/// Hands each ended span to `next`, without its content attributes unless `keep` is set.
#[derive(Debug)]
pub(crate) struct ContentFilter<P> {
    next: P,
    keep: bool,
}

impl<P> ContentFilter<P> {
    pub(crate) fn new(next: P, keep: bool) -> Self {
        Self { next, keep }
    }
}

impl<P: SpanProcessor> SpanProcessor for ContentFilter<P> {
    fn on_start(&self, span: &mut Span, cx: &Context) {
        self.next.on_start(span, cx);
    }

    fn on_end(&self, mut span: SpanData) {
        if !self.keep {
            span.attributes.retain(|kv| !is_content(kv.key.as_str()));
            for event in span.events.events.iter_mut() {
                event.attributes.retain(|kv| !is_content(kv.key.as_str()));
            }
        }
        self.next.on_end(span);
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.next.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.next.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.next.set_resource(resource);
    }
}
