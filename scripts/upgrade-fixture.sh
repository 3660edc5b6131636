#!/usr/bin/env bash
# Writes an upgrade fixture: the SQLite database an earlier version of epimem writes for a
# fixed sample (crates/cli/tests/fixtures/upgrade/sample.jsonl, then pending.jsonl left open),
# and what that version itself answers about it, for crates/cli/tests/it/upgrade.rs.
#
#   scripts/upgrade-fixture.sh COMMIT
#
# Builds COMMIT from its own sources (target/upgrade) and writes
# crates/cli/tests/fixtures/upgrade/<commit>/: memory.db, and stats.json, episodes.json,
# recall.json (and, where that version has them, keys.json, versions.json, timeline.json).
set -euo pipefail
cd "$(dirname "$0")/.."
commit="$(git rev-parse --short=7 "$1")"
fixtures="$PWD/crates/cli/tests/fixtures/upgrade"
out="$fixtures/$commit"
src="$PWD/target/upgrade/src-$commit"
bin="$PWD/target/upgrade/bin-$commit"
if [ ! -x "$bin" ]; then
    rm -rf "$src" && mkdir -p "$src"
    git archive "$commit" | tar -x -C "$src"
    echo "building epimem at $commit (once)" >&2
    CARGO_TARGET_DIR="$PWD/target/upgrade/build-$commit" CARGO_PROFILE_DEV_DEBUG=false \
        cargo build --quiet -p epimem --manifest-path "$src/Cargo.toml"
    cp "$PWD/target/upgrade/build-$commit/debug/epimem" "$bin"
fi
rm -rf "$out" && mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
db="$work/memory.db"
export EPIMEM_EMBEDDER=hash
unset EPIMEM_TENANT EPIMEM_CONFIG EPIMEM_LLM_URL EPIMEM_LLM_MODEL EPIMEM_DB
run() { "$bin" --db "$db" "$@"; }
has() { "$bin" --help | grep -q "^  $1 "; }
run ingest "$fixtures/sample.jsonl" --flush >/dev/null
if has keys; then run keys create --name ops >/dev/null; run keys list --json >"$out/keys.json"; fi
if has edit; then
    first="$(run episodes --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["episodes"][-1]["id"])')"
    run edit "$first" --title "Lisbon offsite, corrected" >/dev/null
    run show "$first" --json >"$out/versions.json"
fi
# Past days roll up into the timeline (where this version has one).
run tick >/dev/null
if has timeline; then run timeline --json >"$out/timeline.json"; fi
run ingest "$fixtures/pending.jsonl" >/dev/null
run stats --json >"$out/stats.json"
run episodes --json --limit 100 >"$out/episodes.json"
run recall "Who is vegetarian?" --budget 300 --json >"$out/recall.json"
# One file: the log folded in, the index left out (it is derived, and rebuilt or caught up).
python3 - "$db" "$out/memory.db" <<'PY'
import sqlite3, sys
sqlite3.connect(sys.argv[1]).execute("VACUUM INTO ?", (sys.argv[2],))
PY
echo "$commit $(git log -1 --format=%cs "$commit")" >"$out/commit.txt"
echo "wrote $out" >&2
