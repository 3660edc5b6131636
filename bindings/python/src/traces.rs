//! Traces from the host's process: started by the first `Memory` opened when a collector is
//! configured (`OTEL_EXPORTER_OTLP_ENDPOINT`), sent at the interpreter's exit. The exporter is
//! the process's, as a tracing subscriber is: one for every `Memory` the host opens.

use std::{sync::Mutex, time::Duration};

use epimem_app::config::AppConfig;
use epimem_telemetry::{Settings, Telemetry, TelemetryError};

/// `None` until the first `Memory` opens; then whether traces are sent.
static TRACES: Mutex<Option<Option<Telemetry>>> = Mutex::new(None);

/// Starts sending traces, once per process, as the environment and `config` ask.
pub(crate) fn start_once(config: &AppConfig) -> anyhow::Result<()> {
    let mut traces = TRACES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if traces.is_some() {
        return Ok(());
    }
    let settings = Settings::from_env(config.telemetry.capture_content)?;
    let told = Box::new(|what: &str| eprintln!("epimem: {what}"));
    let started = match epimem_telemetry::start(&settings, "epimem", Duration::from_secs(5), told) {
        Ok(started) => started,
        // Another library of the host's took the process's subscriber: no traces of ours.
        Err(e @ TelemetryError::AlreadyInstalled) => {
            eprintln!("epimem: traces are not sent: {e}");
            None
        }
        Err(e) => return Err(e.into()),
    };
    *traces = Some(started);
    Ok(())
}

/// Sends what is buffered and stops sending (at the interpreter's exit).
pub(crate) fn finish() {
    let traces = TRACES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(Some(telemetry)) = traces.as_ref() {
        telemetry.finish();
    }
}
