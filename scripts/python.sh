#!/usr/bin/env bash
# The Python package's tests, on the package as users install it: builds the abi3 wheel once
# (scripts/python-wheel.sh, reusing what cargo built), installs it into a fresh virtual
# environment (target/python/test-venv), checks the committed types against the API's OpenAPI
# document, and runs pytest against the embedded engine and a real `epimem serve`
# (target/debug/epimem). Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=target/python/venv
wheel="$(scripts/python-wheel.sh)"
cargo build --quiet -p epimem
export EPIMEM_BIN="$PWD/target/debug/epimem"
PATH="$PWD/$tools/bin:$PATH" bindings/python/generate-models.sh --check
venv=target/python/test-venv
rm -rf "$venv"
python3 -m venv "$venv"
# The OpenTelemetry API, for the tests of traces that join a caller's (the package does not
# need it).
"$venv/bin/pip" install --quiet --disable-pip-version-check "$wheel" "pytest>=8" \
    "opentelemetry-api==1.45.2"
"$venv/bin/python" -m pytest bindings/python/tests -q --ignore=bindings/python/tests/frameworks "$@"

# Each framework adapter in an environment of its own, as `pip install "epimem[<extra>]"`
# gives it, with the framework's versions pinned in tests/frameworks/<name>.txt (its tests:
# tests/frameworks/test_<name>*.py). The environment is kept between runs while the pins
# stay the same; the wheel is put in anew.
frameworks=bindings/python/tests/frameworks
for extra in langchain autogen llama-index openai-agents; do
  name="${extra//-/_}"
  venv="target/python/venv-$name"
  if ! cmp -s "$frameworks/$name.txt" "$venv/pins.txt"; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$frameworks/$name.txt" "pytest>=8"
    cp "$frameworks/$name.txt" "$venv/pins.txt"
  fi
  "$venv/bin/pip" uninstall --quiet --yes epimem 2>/dev/null || true
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$wheel[$extra]"
  # The frameworks' own deprecation warnings are theirs to fix, not ours to read.
  "$venv/bin/python" -m pytest "$frameworks"/test_"$name"*.py -q -W ignore::DeprecationWarning "$@"
done
