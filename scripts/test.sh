#!/usr/bin/env bash
# Every test: fetches the embedding models, installs what the browser tests need
# (scripts/browser.sh: Chromium and playwright-core; without them those tests skip, unless
# EPIMEM_REQUIRE_BROWSER is set), the coding agents the agent tests drive (scripts/agents.sh:
# Claude Code, Codex CLI, Gemini CLI; likewise, EPIMEM_REQUIRE_AGENTS) and the OTLP receiver
# the trace tests send to (scripts/otel-receiver.sh; EPIMEM_REQUIRE_OTLP), starts a PostgreSQL
# server for the tests of the PostgreSQL backend (scripts/postgres.sh), runs `cargo test
# --workspace` with any arguments given, then the Python package's tests (scripts/python.sh)
# and the TypeScript client's (scripts/typescript.sh), and stops the server again (if this
# script started it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/fetch-models.sh
if browser="$(scripts/browser.sh)"; then
    export EPIMEM_TEST_BROWSER="$browser"
fi
if agents="$(scripts/agents.sh)"; then
    export EPIMEM_TEST_AGENTS="$agents"
fi
if otlp="$(scripts/otel-receiver.sh)"; then
    export EPIMEM_TEST_OTLP="$otlp"
fi
started=""
if ! scripts/postgres.sh url >/dev/null 2>&1; then
    scripts/postgres.sh start >/dev/null
    started=yes
fi
stop() { if [ -n "$started" ]; then scripts/postgres.sh stop; fi; }
trap stop EXIT
export EPIMEM_TEST_POSTGRES="$(scripts/postgres.sh url)"
export EPIMEM_TEST_POSTGRES_BIN="$(scripts/postgres.sh bin)"
cargo test --workspace "$@"
scripts/python.sh
scripts/typescript.sh
