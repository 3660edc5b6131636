"""The caller's OpenTelemetry trace context, as W3C fields (``traceparent``, ``tracestate``),
when the ``opentelemetry`` API is installed and a span is current: epimem's spans then join
the caller's trace. Nothing otherwise."""

from __future__ import annotations

from typing import Dict

try:
    from opentelemetry import propagate
except ImportError:  # the API is optional: without it there is no context to join
    propagate = None


def trace_context() -> Dict[str, str]:
    if propagate is None:
        return {}
    fields: Dict[str, str] = {}
    propagate.inject(fields)
    return {k: v for k, v in fields.items() if k in ("traceparent", "tracestate")}
