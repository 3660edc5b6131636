//! The native part of the `epimem` Python package: the embedded engine, opened as the CLI opens
//! it, with its background worker on a thread of its own while the object lives.
//!
//! Like every door it only parses its protocol, calls [`Memory`], and renders: a call names an
//! operation of the HTTP API (its `operationId`) and passes the same fields as one JSON
//! object; the answer is the same JSON the HTTP API gives. So `epimem.Memory` and
//! `epimem.Client` answer alike by construction, and the Python types serve both.

mod calls;
mod traces;

use std::{
    path::PathBuf,
    sync::{
        Mutex,
        atomic::{AtomicBool, Ordering},
    },
};

use epimem_api::{Memory, Worker};
use epimem_app::config::{AppConfig, Overrides};
use pyo3::{create_exception, exceptions::PyException, prelude::*};

create_exception!(
    _native,
    NativeError,
    PyException,
    "A call that failed: its args are the stable code (`bad_input`, `not_found`, …) and a message."
);

/// The embedded engine. Python code uses `epimem.Memory`, which wraps this.
#[pyclass(frozen, module = "epimem._native")]
struct Native {
    memory: Memory,
    tenant: String,
    /// The background worker; `None` once closed (or when asked for none).
    worker: Mutex<Option<Worker>>,
    closed: AtomicBool,
}

impl std::fmt::Debug for Native {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Native").field("tenant", &self.tenant).finish_non_exhaustive()
    }
}

#[pymethods]
impl Native {
    /// Opens the database (a SQLite file or a `postgres://` URL) as `epimem` would with the same
    /// flags; starts the background worker when `background`.
    #[new]
    #[pyo3(signature = (db=None, tenant=None, config=None, models=None, embedder=None, background=true))]
    fn new(
        py: Python<'_>,
        db: Option<PathBuf>,
        tenant: Option<String>,
        config: Option<PathBuf>,
        models: Option<PathBuf>,
        embedder: Option<String>,
        background: bool,
    ) -> PyResult<Self> {
        // What is not given is read from the environment, as the `epimem` command reads it.
        let environment = Overrides::from_environment();
        let overrides = Overrides {
            config: config.or(environment.config),
            db: db.or(environment.db),
            tenant: tenant.or(environment.tenant),
            embedder: embedder.or(environment.embedder),
            models: models.or(environment.models),
            ..environment
        };
        py.detach(|| open(&overrides, background))
            .map_err(|e| NativeError::new_err(("unavailable", format!("{e:#}"))))
    }

    /// Asks `operation` with `params` (a JSON object); answers with JSON. `traceparent` and
    /// `tracestate` are the caller's trace context (W3C), which the call's trace joins.
    #[pyo3(signature = (operation, params, traceparent=None, tracestate=None))]
    fn call(
        &self,
        py: Python<'_>,
        operation: &str,
        params: &str,
        traceparent: Option<&str>,
        tracestate: Option<&str>,
    ) -> PyResult<String> {
        let caller = calls::Caller { traceparent, tracestate };
        self.called(py, operation, params, caller).map(|(answer, _)| answer)
    }

    /// [`Native::call`], with the seconds the engine took (for the benchmark: what the binding
    /// adds is the rest).
    fn timed_call(&self, py: Python<'_>, operation: &str, params: &str) -> PyResult<(String, f64)> {
        self.called(py, operation, params, calls::Caller::default())
    }

    /// Stops the background worker (its current run finishes first). Calls after it fail.
    fn close(&self, py: Python<'_>) {
        self.closed.store(true, Ordering::Release);
        let worker = self.worker.lock().ok().and_then(|mut w| w.take());
        if let Some(worker) = worker {
            py.detach(|| worker.stop());
        }
    }

    /// The tenant every call works in.
    #[getter]
    fn tenant(&self) -> &str {
        &self.tenant
    }
}

impl Native {
    fn called(
        &self,
        py: Python<'_>,
        operation: &str,
        params: &str,
        caller: calls::Caller<'_>,
    ) -> PyResult<(String, f64)> {
        if self.closed.load(Ordering::Acquire) {
            return Err(NativeError::new_err(("unavailable", "this Memory is closed")));
        }
        let asked =
            || calls::call(&self.memory, &self.tenant, operation, params.as_bytes(), caller);
        py.detach(asked)
            .map(|(answer, took)| (answer, took.as_secs_f64()))
            .map_err(|e| NativeError::new_err((e.code(), e.message().to_owned())))
    }
}

impl Drop for Native {
    fn drop(&mut self) {
        if let Some(worker) = self.worker.get_mut().ok().and_then(Option::take) {
            worker.stop();
        }
    }
}

fn open(overrides: &Overrides, background: bool) -> anyhow::Result<Native> {
    let config = AppConfig::load(overrides)?;
    traces::start_once(&config)?;
    let database = config.database()?;
    // The index is opened and caught up by the first recall and before each one after, as a
    // command's is (not after every write, as a server's is): opening costs nothing a program
    // that only remembers does not need, and an import costs one catch-up, not one per episode.
    let memory = epimem_app::open_searching(&config, &database)?.memory;
    let worker = background
        .then(|| -> anyhow::Result<Worker> {
            let (tick, refresh) = (config.server.tick_every()?, config.server.index_refresh()?);
            Ok(Worker::spawn(memory.clone(), tick, refresh, report()))
        })
        .transpose()?;
    Ok(Native {
        memory,
        tenant: config.tenant.clone(),
        worker: Mutex::new(worker),
        closed: AtomicBool::new(false),
    })
}

/// The worker's failures, on standard error (a run that went well says nothing).
fn report() -> epimem_api::Report {
    Box::new(|outcome| {
        if let Err(e) = outcome {
            eprintln!("epimem: background worker: {e}");
        }
    })
}

/// Sends the traces still buffered, if any are sent (the package calls it at exit).
#[pyfunction]
fn flush_traces(py: Python<'_>) {
    py.detach(traces::finish);
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Native>()?;
    m.add_function(wrap_pyfunction!(flush_traces, m)?)?;
    m.add("NativeError", m.py().get_type::<NativeError>())?;
    Ok(())
}
