#!/usr/bin/env bash
# What the browser tests need: Chromium (Debian's package) and playwright-core (npm, pinned
# in ui-tests/package-lock.json). Installs what is missing; prints the Chromium to drive.
#
# As root, Chromium is installed with apt-get; otherwise this says how, and fails.
set -euo pipefail
cd "$(dirname "$0")/.."
chromium="${EPIMEM_TEST_BROWSER:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing chromium (Debian) for the browser tests" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null ||
            { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
    else
        echo "the browser tests need Chromium: sudo apt-get install chromium" >&2
        exit 1
    fi
fi
if [ ! -d ui-tests/node_modules/playwright-core ]; then
    command -v npm >/dev/null || { echo "the browser tests need npm (Node.js)" >&2; exit 1; }
    echo "installing playwright-core (npm) for the browser tests" >&2
    npm ci --prefix ui-tests --no-audit --no-fund --loglevel=error >&2
fi
echo "$chromium"
