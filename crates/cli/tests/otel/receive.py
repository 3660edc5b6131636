"""The trace tests' OTLP receiver: oteltest's HttpSink (PyPI) on a free loopback port.

Prints {"port": N} once listening, then each span it receives as one JSON line: its name,
kind, ids (hex), status, attributes and its resource's attributes.
"""

import json
import logging
import sys

import oteltest.sink as sink
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status
from oteltest.sink.handler import RequestHandler


class LoopbackServer(sink.HTTPServer):
    """The sink's server, bound to loopback on a port the system picks (it binds every
    interface on a fixed one)."""

    def __init__(self, _address, handler):
        super().__init__(("127.0.0.1", 0), handler)
        print(json.dumps({"port": self.server_address[1]}), flush=True)


sink.HTTPServer = LoopbackServer


def value(any_value):
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return attributes(any_value.kvlist_value.values)
    return getattr(any_value, kind) if kind else None


def attributes(pairs):
    return {kv.key: value(kv.value) for kv in pairs}


class Spans(RequestHandler):
    def handle_trace(self, request, headers):
        for resource_spans in request.resource_spans:
            resource = attributes(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    print(json.dumps({
                        "name": span.name,
                        "kind": Span.SpanKind.Name(span.kind),
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "status": Status.StatusCode.Name(span.status.code),
                        "attributes": attributes(span.attributes),
                        "events": [e.name for e in span.events],
                        "resource": resource,
                    }), flush=True)

    def handle_metrics(self, request, headers):
        pass

    def handle_logs(self, request, headers):
        pass


sink.HttpSink(Spans(), logging.getLogger("receiver"), daemon=False).start()
