#!/usr/bin/env bash
# Writes python/epimem/models.py from the API's OpenAPI document (`epimem openapi`), so the
# Python types cannot drift from what the server answers. Needs datamodel-code-generator
# (`pip install datamodel-code-generator`) and the epimem binary (EPIMEM_BIN, else
# target/debug/epimem). `--check` writes nothing and fails when the file is not what the
# document gives.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${EPIMEM_BIN:-$here/../../target/debug/epimem}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$bin" openapi > "$work/openapi.json"
PYTHONWARNINGS=ignore::FutureWarning datamodel-codegen --input "$work/openapi.json" --input-file-type openapi \
    --output "$work/models.py" --output-model-type pydantic_v2.BaseModel \
    --target-python-version 3.10 --no-use-union-operator --no-use-standard-collections \
    --use-schema-description --use-field-description \
    --use-double-quotes --disable-timestamp --formatters black isort \
    --custom-file-header '"""The API'"'"'s request and answer types, generated from its OpenAPI document by
generate-models.sh: do not edit."""'
if [ "${1:-}" = "--check" ]; then
    diff -u "$here/python/epimem/models.py" "$work/models.py"
else
    cp "$work/models.py" "$here/python/epimem/models.py"
fi
