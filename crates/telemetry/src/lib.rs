//! Traces over OTLP, when a collector is configured with OpenTelemetry's standard variables.
//!
//! The other crates only open `tracing` spans (the door, the use case, the store and index
//! calls, the embedding, each model call, the worker's jobs), named and attributed as the
//! OpenTelemetry GenAI conventions name memory, retrieval, embedding and chat operations. With
//! no collector configured nothing here runs and no subscriber is installed: a span costs a
//! check of one static. [`start`] installs a subscriber that sends epimem's spans (no other
//! crate's) to the collector, and drops every content attribute unless asked to keep them.

mod content;
mod http_client;

use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::{
    Resource,
    trace::{BatchSpanProcessor, SdkTracerProvider},
};
use tracing_subscriber::{Layer as _, filter::Targets, layer::SubscriberExt as _};

pub use content::CONTENT_ATTRIBUTES;
pub use http_client::FailureReport;

/// What traces are sent where: read once by the entry point from the process's environment
/// (`OTEL_EXPORTER_OTLP_ENDPOINT` and the other standard variables) and its configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Settings {
    /// Whether any trace is sent: a collector's endpoint is set and the SDK is not disabled.
    pub enabled: bool,
    /// Keep the query's and the messages' text on spans (`telemetry.capture_content`, or
    /// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`). Off by default: a trace
    /// then holds ids, counts, names of models and timings, never what anyone said.
    pub capture_content: bool,
}

/// Why traces could not be set up: the process does not start with a configuration it would
/// silently ignore.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// A standard variable asks for something this build does not do.
    #[error("{variable}={value:?}: {why}")]
    Unsupported { variable: &'static str, value: String, why: &'static str },
    /// The exporter could not be built (a malformed endpoint, for one).
    #[error("the OTLP exporter could not be set up: {0}")]
    Exporter(String),
    /// Another part of the process installed a tracing subscriber first.
    #[error("a tracing subscriber is already installed in this process")]
    AlreadyInstalled,
}

impl TelemetryError {
    /// A stable code for the error's kind.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unsupported { .. } => "telemetry_unsupported",
            Self::Exporter(_) => "telemetry_exporter",
            Self::AlreadyInstalled => "telemetry_already_installed",
        }
    }
}

impl Settings {
    /// The settings this process's environment asks for, with `capture_content` from the
    /// configuration file.
    pub fn from_env(capture_content: bool) -> Result<Self, TelemetryError> {
        Self::from_vars(|name| std::env::var(name).ok(), capture_content)
    }

    /// The settings the variables given by `var` ask for (`std::env::var` in a process),
    /// with `capture_content` from the configuration file.
    pub fn from_vars(
        var: impl Fn(&str) -> Option<String>,
        capture_content: bool,
    ) -> Result<Self, TelemetryError> {
        let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let truthy = |name: &str| set(name).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        let endpoint = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .or_else(|| set("OTEL_EXPORTER_OTLP_ENDPOINT"))
            .is_some();
        let exporter = set("OTEL_TRACES_EXPORTER");
        if let Some(value) = exporter.as_deref().filter(|v| !matches!(v.trim(), "otlp" | "none")) {
            return Err(TelemetryError::Unsupported {
                variable: "OTEL_TRACES_EXPORTER",
                value: value.to_owned(),
                why: "epimem sends traces over OTLP only (\"otlp\", or \"none\" for no traces)",
            });
        }
        let enabled = endpoint
            && !truthy("OTEL_SDK_DISABLED")
            && exporter.as_deref().is_none_or(|v| v.trim() != "none");
        if enabled {
            for variable in ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"] {
                if let Some(value) = set(variable) {
                    if value.trim() != "http/protobuf" {
                        return Err(TelemetryError::Unsupported {
                            variable,
                            value,
                            why: "epimem sends OTLP over HTTP with protobuf (\"http/protobuf\"); \
                                  point the endpoint at the collector's OTLP/HTTP port (4318)",
                        });
                    }
                    break;
                }
            }
        }
        let capture_content =
            capture_content || truthy("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT");
        Ok(Self { enabled, capture_content })
    }
}

/// Traces being sent. Dropping it sends what is still buffered, waiting for the collector no
/// longer than [`start`] was told, and stops.
#[derive(Debug)]
pub struct Telemetry {
    provider: SdkTracerProvider,
    wait: Duration,
}

impl Telemetry {
    /// Sends what is buffered and stops (for a process that never drops it: a host's). Spans
    /// that end after it are not sent.
    pub fn finish(&self) {
        // A collector that is down must not hold the process: what it did not take is lost.
        let _ = self.provider.shutdown_with_timeout(self.wait);
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Starts sending traces as `settings` ask (nothing when they are not enabled). `service` names
/// the process when `OTEL_SERVICE_NAME` does not; at the end, what is buffered is sent within
/// `wait` or dropped (a coding agent's hook cannot wait long). The first failure to send is
/// told to `report`.
pub fn start(
    settings: &Settings,
    service: &str,
    wait: Duration,
    report: FailureReport,
) -> Result<Option<Telemetry>, TelemetryError> {
    if !settings.enabled {
        return Ok(None);
    }
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_http_client(http_client::UreqClient::new(report))
        .with_timeout(Duration::from_secs(5))
        .build()
        .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
    let batch = BatchSpanProcessor::builder(exporter).build();
    let processor = content::ContentFilter::new(batch, settings.capture_content);
    let mut resource = Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name(service.to_owned());
    }
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_resource(resource.build())
        .build();
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("epimem"))
        .with_location(false)
        .with_target(false)
        .with_threads(false)
        .with_tracked_inactivity(false)
        // Only epimem's own spans: the HTTP and MCP libraries' would bury them.
        .with_filter(Targets::new().with_target("epimem", tracing::Level::INFO));
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
        .map_err(|_| TelemetryError::AlreadyInstalled)?;
    Ok(Some(Telemetry { provider, wait }))
}

/// Makes `span` (a request's) a child of the caller's trace when the request carries W3C
/// trace context (`traceparent`, `tracestate`): an agent's trace then holds what its memory
/// did.
pub fn continue_trace(span: &tracing::Span, headers: &http::HeaderMap) {
    let field = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    continue_trace_from(span, field("traceparent"), field("tracestate"));
}

/// [`continue_trace`] from the two W3C fields as a caller hands them over (a Python program,
/// from its own OpenTelemetry context).
pub fn continue_trace_from(span: &tracing::Span, traceparent: Option<&str>, state: Option<&str>) {
    use opentelemetry::propagation::TextMapPropagator as _;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    let Some(traceparent) = traceparent.filter(|_| !span.is_disabled()) else { return };
    let mut fields = std::collections::HashMap::from([("traceparent".into(), traceparent.into())]);
    if let Some(state) = state {
        fields.insert("tracestate".to_owned(), state.to_owned());
    }
    let propagator = opentelemetry_sdk::propagation::TraceContextPropagator::new();
    // A malformed field leaves the call a trace of its own.
    let _ = span.set_parent(propagator.extract(&fields));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(vars: &[(&str, &str)], capture: bool) -> Result<Settings, TelemetryError> {
        Settings::from_vars(
            |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned()),
            capture,
        )
    }

    #[test]
    fn off_unless_an_endpoint_is_set() {
        assert_eq!(settings(&[], false).unwrap(), Settings::default());
        let on = settings(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")], false);
        assert!(on.unwrap().enabled);
        let traces =
            settings(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c/v1/traces")], false);
        assert!(traces.unwrap().enabled);
        let disabled = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"), ("OTEL_SDK_DISABLED", "true")];
        assert!(!settings(&disabled, false).unwrap().enabled);
        let none = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"), ("OTEL_TRACES_EXPORTER", "none")];
        assert!(!settings(&none, false).unwrap().enabled);
    }

    #[test]
    fn a_protocol_or_exporter_it_cannot_speak_is_named() {
        let grpc =
            [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"), ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")];
        let error = settings(&grpc, false).unwrap_err();
        assert!(error.to_string().contains("OTEL_EXPORTER_OTLP_PROTOCOL=\"grpc\""), "{error}");
        assert_eq!(error.code(), "telemetry_unsupported");
        // The traces' own variable wins over the general one.
        let both = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ];
        assert!(settings(&both, false).unwrap().enabled);
        let zipkin = [("OTEL_TRACES_EXPORTER", "zipkin")];
        assert!(settings(&zipkin, false).is_err());
    }

    #[test]
    fn content_is_kept_only_when_asked() {
        let on = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c")];
        assert!(!settings(&on, false).unwrap().capture_content);
        assert!(settings(&on, true).unwrap().capture_content);
        let asked = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"),
            ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "TRUE"),
        ];
        assert!(settings(&asked, false).unwrap().capture_content);
    }
}
