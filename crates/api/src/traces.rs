//! Spans for the use cases, named as OpenTelemetry's GenAI conventions name memory operations
//! (`search_memory`, `create_memory`, `update_memory`, `delete_memory`, `delete_memory_store`;
//! `gen_ai.memory.store.id` is the tenant), and for the worker's jobs. Without a tracing
//! subscriber each costs a check of one static.

use epimem_core::{Job, JobKind};
use tracing::{Span, field::Empty};

use crate::MemoryError;

/// A use case that is a GenAI memory `operation` of `tenant`'s memory.
pub(crate) fn memory(operation: &'static str, use_case: &'static str, tenant: &str) -> Span {
    tracing::info_span!(
        "memory",
        otel.name = operation,
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = operation,
        gen_ai.memory.store.id = tenant,
        gen_ai.memory.record.id = Empty,
        gen_ai.memory.record.count = Empty,
        gen_ai.memory.query.text = Empty,
        gen_ai.conversation.id = Empty,
        epimem.use_case = use_case,
        error.type = Empty,
    )
}

/// A use case that is no memory operation of the conventions' (reading what is held).
pub(crate) fn reading(use_case: &'static str, tenant: &str) -> Span {
    tracing::info_span!(
        "memory",
        otel.name = %format_args!("epimem {use_case}"),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.memory.store.id = tenant,
        gen_ai.memory.record.count = Empty,
        gen_ai.conversation.id = Empty,
        epimem.use_case = use_case,
        error.type = Empty,
    )
}

/// Runs `f` in `span`, which records the error's stable code if it fails.
pub(crate) fn within<T>(
    span: Span,
    f: impl FnOnce(&Span) -> Result<T, MemoryError>,
) -> Result<T, MemoryError> {
    let result = span.in_scope(|| f(&span));
    if let Err(e) = &result {
        span.record("error.type", e.code());
        span.record("otel.status_code", "error");
    }
    result
}

/// A span for running `job`: a segmentation creates episodes, a review updates the strength
/// of those recalled, a consolidation creates or updates facts.
pub(crate) fn job(job: &Job) -> Span {
    let operation = match job.kind {
        JobKind::Segment { .. } => "create_memory",
        JobKind::Review { .. } => "update_memory",
        _ => "upsert_memory",
    };
    let conversation = job.kind.conversation();
    tracing::info_span!(
        "job",
        otel.name = %format_args!("job {}", job.kind.name()),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = operation,
        gen_ai.memory.store.id = %conversation.tenant,
        gen_ai.memory.record.count = Empty,
        gen_ai.conversation.id = %conversation.conversation,
        epimem.job.id = job.id.0,
        epimem.job.kind = job.kind.name(),
        epimem.job.attempt = i64::from(job.attempts),
        error.type = Empty,
    )
}
