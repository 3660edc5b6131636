#!/usr/bin/env bash
# The coding agents the agent tests drive: Claude Code, Codex CLI, Gemini CLI and opencode from
# npm, at the versions agent-tests/package-lock.json pins (each runs headless against a scripted
# model on loopback; nothing reaches the internet). Installs them when missing or when the lock
# file changed; prints the folder of their programs. The npm cache it fills
# (agent-tests/npm-cache, beside node_modules) is where opencode installs its plugin package
# from, offline, when a test starts it.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v npm >/dev/null || { echo "the agent tests need npm (Node.js >= 20)" >&2; exit 1; }
major="$(node --version | sed 's/^v\([0-9]*\).*/\1/')"
if [ "$major" -lt 20 ]; then
    echo "the agent tests need Node.js >= 20 (this is $(node --version))" >&2
    exit 1
fi
stamp=agent-tests/node_modules/.epimem-lock
if ! cmp -s agent-tests/package-lock.json "$stamp" 2>/dev/null || [ ! -d agent-tests/npm-cache ]; then
    echo "installing the coding agents (npm) for the agent tests" >&2
    # `npm install` from the lock, not `npm ci`: npm's lock keeps only this platform's build of
    # opencode (an optional dependency per platform), which `npm ci` then calls out of sync.
    # The versions are exact in package.json, so the same ones are installed either way.
    npm install --prefix agent-tests --cache "$PWD/agent-tests/npm-cache" --no-save \
        --no-audit --no-fund --loglevel=error >&2
    cp agent-tests/package-lock.json "$stamp"
fi
echo "$PWD/agent-tests/node_modules/.bin"
