"""Traces from the embedded Memory, as a receiver that is not ours decodes them (oteltest's,
from PyPI: scripts/otel-receiver.sh, whose Python EPIMEM_TEST_OTLP names)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from .conftest import ROOT

SAID = "Biscuit the beagle chewed the zebra-striped sofa"
ASKED = "what did Biscuit chew"


@pytest.fixture
def receiver():
    python = os.environ.get("EPIMEM_TEST_OTLP")
    if not python:
        if os.environ.get("EPIMEM_REQUIRE_OTLP"):
            pytest.fail("EPIMEM_REQUIRE_OTLP is set but EPIMEM_TEST_OTLP is not")
        pytest.skip("no OTLP receiver (EPIMEM_TEST_OTLP; scripts/otel-receiver.sh)")
    script = ROOT / "crates" / "cli" / "tests" / "otel" / "receive.py"
    process = subprocess.Popen([python, str(script)], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    port = json.loads(process.stdout.readline())["port"]
    spans: list[dict] = []
    reader = threading.Thread(
        target=lambda: spans.extend(json.loads(line) for line in process.stdout), daemon=True)
    reader.start()
    yield f"http://127.0.0.1:{port}", spans
    process.kill()
    process.wait()


def test_an_embedded_memory_sends_its_calls_as_traces_without_what_was_said(
        receiver, tmp_path: pathlib.Path) -> None:
    endpoint, spans = receiver
    program = textwrap.dedent(f"""
        import epimem
        with epimem.Memory({str(tmp_path / "m.db")!r}, background=False) as memory:
            memory.remember([{{"conversation": "c", "role": "user", "content": {SAID!r}}}])
            memory.flush("c")
            assert memory.recall({ASKED!r}).hits
    """)
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "50"}
    ran = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    # Sent at the interpreter's exit: they arrive a moment later.
    deadline = time.monotonic() + 30
    while not any(s["name"] == "python recall" for s in spans) and time.monotonic() < deadline:
        time.sleep(0.05)
    by_id = {s["span_id"]: s for s in spans}
    names = [s["name"] for s in spans]
    door = next((s for s in spans if s["name"] == "python recall"), None)
    assert door is not None, names
    assert door["parent_span_id"] == "" and door["resource"]["service.name"] == "epimem"
    search = [s for s in spans if s["parent_span_id"] == door["span_id"]]
    assert [s["name"] for s in search] == ["search_memory"], names
    assert search[0]["attributes"]["gen_ai.memory.store.id"] == "default"
    remember = next(s for s in spans if s["name"] == "create_memory"
                    and s["attributes"]["epimem.use_case"] == "remember")
    assert by_id[remember["parent_span_id"]]["name"] == "python add_messages"
    for span in spans:
        for word in ("Biscuit", "zebra", "sofa", "chew"):
            assert word not in json.dumps(span), f"{word!r} on {span}"


CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "b7ad6b7169203331"


def spans_until(spans: list, name: str) -> dict:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = [s for s in spans if s["name"] == name]
        if found:
            return found[0]
        time.sleep(0.05)
    pytest.fail(f"no span {name!r} in {[s['name'] for s in spans]}")


def test_an_embedded_memory_joins_the_callers_trace(receiver, tmp_path: pathlib.Path) -> None:
    pytest.importorskip("opentelemetry")
    endpoint, spans = receiver
    program = textwrap.dedent(f"""
        import epimem
        from opentelemetry import trace
        from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

        caller = SpanContext(int({CALLER_TRACE!r}, 16), int({CALLER_SPAN!r}, 16),
                             is_remote=True, trace_flags=TraceFlags(1))
        with epimem.Memory({str(tmp_path / "m.db")!r}, background=False) as memory:
            with trace.use_span(NonRecordingSpan(caller)):
                memory.recall({ASKED!r})
            memory.stats()
    """)
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "50"}
    ran = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    joined = spans_until(spans, "python recall")
    assert (joined["trace_id"], joined["parent_span_id"]) == (CALLER_TRACE, CALLER_SPAN)
    # Outside the caller's span, a call is a trace of its own.
    alone = spans_until(spans, "python get_stats")
    assert alone["parent_span_id"] == "" and alone["trace_id"] != CALLER_TRACE


def test_a_clients_call_joins_the_callers_trace_on_the_server(
        receiver, serve, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = pytest.importorskip("opentelemetry.trace")
    endpoint, spans = receiver
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
    server = serve(tmp_path / "served.db")
    caller = trace.SpanContext(int(CALLER_TRACE, 16), int(CALLER_SPAN, 16), is_remote=True,
                               trace_flags=trace.TraceFlags(1))
    import epimem

    with epimem.Client(server.url) as client:
        with trace.use_span(trace.NonRecordingSpan(caller)):
            client.recall(ASKED)
    server.stop()
    request = spans_until(spans, "POST /v1/recall")
    assert (request["trace_id"], request["parent_span_id"]) == (CALLER_TRACE, CALLER_SPAN)
