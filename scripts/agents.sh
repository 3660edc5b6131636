#!/usr/bin/env bash
# The coding agents the agent tests drive: Claude Code, Codex CLI and Gemini CLI from npm, at
# the versions agent-tests/package-lock.json pins (each runs headless against a scripted model
# on loopback; nothing reaches the internet). Installs them when missing or when the lock file
# changed; prints the folder of their programs.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v npm >/dev/null || { echo "the agent tests need npm (Node.js >= 20)" >&2; exit 1; }
major="$(node --version | sed 's/^v\([0-9]*\).*/\1/')"
if [ "$major" -lt 20 ]; then
    echo "the agent tests need Node.js >= 20 (this is $(node --version))" >&2
    exit 1
fi
stamp=agent-tests/node_modules/.epimem-lock
if ! cmp -s agent-tests/package-lock.json "$stamp" 2>/dev/null; then
    echo "installing the coding agents (npm) for the agent tests" >&2
    npm ci --prefix agent-tests --no-audit --no-fund --loglevel=error >&2
    cp agent-tests/package-lock.json "$stamp"
fi
echo "$PWD/agent-tests/node_modules/.bin"
