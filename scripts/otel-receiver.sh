#!/usr/bin/env bash
# What the trace tests need: an OTLP receiver that is not ours, oteltest's (PyPI, pinned in
# crates/cli/tests/otel/requirements.txt), in target/python/venv-otel (kept while the pins
# stay the same). Prints the Python that runs crates/cli/tests/otel/receive.py.
set -euo pipefail
cd "$(dirname "$0")/.."
pins=crates/cli/tests/otel/requirements.txt
venv=target/python/venv-otel
if ! cmp -s "$pins" "$venv/pins.txt"; then
    command -v python3 >/dev/null || { echo "the trace tests need python3" >&2; exit 1; }
    echo "installing oteltest (PyPI) for the trace tests" >&2
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$pins" >&2
    cp "$pins" "$venv/pins.txt"
fi
echo "$PWD/$venv/bin/python"
