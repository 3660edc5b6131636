#!/usr/bin/env bash
# Writes an upgrade fixture: the SQLite database an earlier version of epimem writes for a
# fixed sample (crates/cli/tests/fixtures/upgrade/sample.jsonl, then pending.jsonl left open),
# and what that version itself answers about it, for crates/cli/tests/it/upgrade.rs.
#
#   scripts/upgrade-fixture.sh COMMIT
#
# With EPIMEM_FIXTURE_POSTGRES (a server's URL, as scripts/postgres.sh start prints it) the same
# sample is written to a schema of its own there too, and dumped as postgres.sql (pg_dump's
# plain SQL, from scripts/postgres.sh bin), with what that version answered about it
# (postgres-stats.json, postgres-episodes.json).
#
# Builds COMMIT from its own sources (target/upgrade) and writes
# crates/cli/tests/fixtures/upgrade/<commit>/: memory.db, and stats.json, episodes.json,
# recall.json (and, where that version has them, keys.json, versions.json, timeline.json,
# facts.json: a version that keeps facts runs with a scripted model, below).
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
has() { "$bin" --help | grep -q "^  $1 "; }
config=()
# A version that keeps facts is run with a scripted language model (a stub on loopback): it
# turns down every prompt but the facts' (so episodes are cut as without a model), answers
# those with one fact per call, and refuses the boat conversation's, whose job is then parked
# (one attempt allowed).
if has facts; then
    python3 - "$work/model.port" <<'PY' &
import http.server, json, re, sys

class Model(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        system, user = (m["content"] for m in body["messages"])
        if not system.startswith("You keep a list of lasting facts") or "zephyrsail" in user:
            self.send_response(400)
            self.end_headers()
            self.wfile.write(b'{"error": {"message": "not scripted"}}')
            return
        title = re.search(r"^e1: (.*?)(?: \u2014 |$)", user, re.M).group(1)
        fact = {"action": "new", "fact_id": "", "text": f"Maya recalls: {title}", "episode_ids": ["e1"]}
        answer = {"choices": [{"message": {"content": json.dumps({"actions": [fact]})}}],
                  "usage": {"prompt_tokens": 100, "completion_tokens": 20}}
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps(answer).encode())

server = http.server.HTTPServer(("127.0.0.1", 0), Model)
open(sys.argv[1], "w").write(str(server.server_address[1]))
server.serve_forever()
PY
    model=$!
    trap 'kill $model 2>/dev/null; rm -rf "$work"' EXIT
    while [ ! -s "$work/model.port" ]; do sleep 0.1; done
    cat >"$work/epimem.toml" <<TOML
[llm]
url = "http://127.0.0.1:$(cat "$work/model.port")/v1"
model = "scripted"
max_retries = 0
[consolidation]
every_episodes = 1
[jobs]
max_attempts = 1
TOML
    config=(--config "$work/epimem.toml")
fi
run() { "$bin" --db "$db" "${config[@]}" "$@"; }
run ingest "$fixtures/sample.jsonl" --flush >/dev/null
# The oldest episode is corrected: by the command where there is one, else over HTTP (an
# episode could be corrected before the command came).
first="$(run episodes --json --limit 100 | python3 -c '
import json, sys
episodes = [e for line in sys.stdin if line.strip() for e in json.loads(line).get("episodes", [json.loads(line)])]
print(min(episodes, key=lambda e: e["start"])["id"])')"
if has edit; then
    run edit "$first" --title "Lisbon offsite, corrected" >/dev/null
    run show "$first" --json >"$out/versions.json"
elif "$bin" serve --help >/dev/null 2>&1; then
    python3 - "$bin" "$db" "$first" "$out/versions.json" <<'PY'
import json, subprocess, sys, urllib.request
binary, db, episode, out = sys.argv[1:]
server = subprocess.Popen([binary, "--db", db, "serve", "--listen", "127.0.0.1:0"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
try:
    base = server.stdout.readline().strip().rsplit(" ", 1)[-1]
    patch = urllib.request.Request(f"{base}/v1/episodes/{episode}", method="PATCH",
                                   data=json.dumps({"title": "Lisbon offsite, corrected"}).encode(),
                                   headers={"content-type": "application/json"})
    try:
        urllib.request.urlopen(patch).read()
        shown = urllib.request.urlopen(f"{base}/v1/episodes/{episode}").read()
        open(out, "wb").write(shown)
    except urllib.error.HTTPError:
        pass  # this version could not correct an episode
finally:
    server.terminate()
    server.wait()
PY
fi
# A key last: once one exists, the server wants it.
if has keys; then run keys create --name ops >/dev/null; run keys list --json >"$out/keys.json"; fi
# Past days roll up into the timeline (where this version has one).
run tick >/dev/null
if has timeline; then run timeline --json >"$out/timeline.json"; fi
run ingest "$fixtures/pending.jsonl" >/dev/null
run stats --json >"$out/stats.json"
run episodes --json --limit 100 >"$out/episodes.json"
run recall "Who is vegetarian?" --budget 300 --json >"$out/recall.json"
if has facts; then run facts --json >"$out/facts.json"; fi
# One file: the log folded in, the index left out (it is derived, and rebuilt or caught up).
python3 - "$db" "$out/memory.db" <<'PY'
import sqlite3, sys
sqlite3.connect(sys.argv[1]).execute("VACUUM INTO ?", (sys.argv[2],))
PY
if [ -n "${EPIMEM_FIXTURE_POSTGRES:-}" ] && "$bin" --help | grep -q postgres; then
    pg="$(scripts/postgres.sh bin)"
    schema="fixture_$commit"
    "$pg/psql" "$EPIMEM_FIXTURE_POSTGRES" -qc "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema"
    db="$EPIMEM_FIXTURE_POSTGRES?options=-c%20search_path%3D$schema%2Cpublic"
    run ingest "$fixtures/sample.jsonl" --flush >/dev/null
    run tick >/dev/null
    run ingest "$fixtures/pending.jsonl" >/dev/null
    run stats --json >"$out/postgres-stats.json"
    run episodes --json --limit 100 >"$out/postgres-episodes.json"
    if has facts; then run facts --json >"$out/postgres-facts.json"; fi
    "$pg/pg_dump" --schema="$schema" --no-owner --no-privileges "$EPIMEM_FIXTURE_POSTGRES" >"$out/postgres.sql"
    "$pg/psql" "$EPIMEM_FIXTURE_POSTGRES" -qc "DROP SCHEMA $schema CASCADE"
fi
echo "$commit $(git log -1 --format=%cs "$commit")" >"$out/commit.txt"
echo "wrote $out" >&2
