#!/usr/bin/env bash
# The TypeScript client's tests: installs its development tools (openapi-typescript,
# typescript) from npm, builds it, and runs Node's test runner against a real `epimem serve`
# (target/debug/epimem), including the check that its types are what the server's OpenAPI
# document gives.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet -p epimem
export EPIMEM_BIN="$PWD/target/debug/epimem"
cd clients/typescript
if [ -f package-lock.json ]; then npm ci --silent --no-audit --no-fund; else npm install --silent --no-audit --no-fund; fi
npm run --silent build
npm test --silent
