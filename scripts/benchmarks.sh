#!/usr/bin/env bash
# Measures again what docs/benchmarks.md and docs/experiments/ report, then fills their
# measured parts (`epimem bench page`): segmentation quality on DialSeg711, TIAGE (train + dev) and
# SuperDialseg (validation), every segmenter and baseline; evidence recall on LoCoMo and BEAM,
# tuning and test parts apart; MADial-Bench's conversational queries and new tasks asked of
# every memory; the relevance judgement's fit; recall latency over 100,000 episodes. All from
# the project's own harness.
#   scripts/benchmarks.sh                 # the static embedder (potion); about fifteen minutes
#   EMBEDDERS="potion minilm" scripts/benchmarks.sh   # also MiniLM (BERT on CPU; ~10 minutes)
#   MILLION=1 scripts/benchmarks.sh       # also recall over 1,000,000 episodes (~15 minutes, ~11 GB
#                                         # of disk in target/benchmarks/million.db, kept for reuse)
#   LLM=1 scripts/benchmarks.sh           # also the language-model path on a subset, with the small
#                                         # local model of scripts/local-llm.sh (~25 minutes)
#   POSTGRES=1 scripts/benchmarks.sh      # also ingest, recall latency and LoCoMo on PostgreSQL beside
#                                         # SQLite (scripts/postgres.sh's server; ~10 minutes)
# Data: ../shared/data (DATA=... to point elsewhere). Models: scripts/fetch-models.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root="${DATA:-../shared/data}"
data="$root/segmentation"
embedders="${EMBEDDERS:-potion}"
scripts/fetch-models.sh >/dev/null
cargo build --release -p epimem --quiet
bin=target/release/epimem

# Raw results stay here, so the page can be filled again (RENDER_ONLY=1, or `epimem bench page`)
# without the runs.
tmp=target/benchmarks
mkdir -p "$tmp"

if [ -z "${RENDER_ONLY:-}" ]; then
for e in $embedders; do
  "$bin" --embedder "$e" eval segmentation --dataset dialseg711 --path "$data/dialseg711.json" --json --online > "$tmp/dialseg711.$e.jsonl"
  "$bin" --embedder "$e" eval segmentation --dataset tiage --path "$data/tiage.json" --json --online > "$tmp/tiage.$e.jsonl"
  "$bin" --embedder "$e" eval segmentation --dataset superdialseg --path "$data/superdialseg_validation.jsonl" --json --online > "$tmp/superdialseg.$e.jsonl"
done
# Coding-agent sessions (ours, labelled): the default beside the work-unit rules it replaced.
printf '[segmentation.work]\ndiscourse_cues = false\nthreshold = 0.4\n' > "$tmp/work.keywords.toml"
printf '[segmentation.work]\nthreshold = 0.4\n' > "$tmp/work.cues.toml"
for part in tuning test; do
  for rules in keywords cues default; do
    config=(); [ "$rules" = default ] || config=(--config "$tmp/work.$rules.toml")
    "$bin" "${config[@]}" --embedder potion eval segmentation --dataset agent --segmenter default \
      --path crates/eval/data/agent-sessions.jsonl --set "$part" --json --online > "$tmp/agent.$part.$rules.jsonl"
  done
done
# What else the machine was doing during the quality runs (their latency is printed beside them).
cut -d' ' -f1-3 /proc/loadavg > "$tmp/loadavg_quality"
for e in $embedders; do
  # Beside each question its own conversation answers, the questions it cannot (another
  # conversation's, BEAM's), and the relevance settings' curve: what a block holds and leaves empty.
  "$bin" --embedder "$e" eval recall --dataset locomo --path "$root/memory/locomo10.json" \
    --negatives "$root/memory/beam500k_locomo.json.gz" --new-tasks "$root/prompts/new-tasks.dev.jsonl" \
    --misspelled --curve --json > "$tmp/locomo.$e.json"
done
# BEAM's 38,058 turns with the static embedder only (MiniLM would take most of an hour).
"$bin" --embedder potion eval recall --dataset beam --path "$root/memory/beam500k_locomo.json.gz" \
  --negatives "$root/memory/locomo10.json" --new-tasks "$root/prompts/new-tasks.dev.jsonl" \
  --misspelled --curve --json > "$tmp/beam.potion.json"
# MADial-Bench: memory a conversation implies, asked as next-turn asks, and new tasks of it.
"$bin" --embedder potion eval recall --dataset madial --path "$root/memory/madial-bench" \
  --new-tasks "$root/prompts/new-tasks.dev.jsonl" --curve --json > "$tmp/madial.potion.json"
# The relevance judgement fitted again on every kind of query (its weights are the defaults').
"$bin" --embedder potion eval fit-relevance --locomo "$root/memory/locomo10.json" \
  --beam "$root/memory/beam500k_locomo.json.gz" --madial "$root/memory/madial-bench" \
  --new-tasks "$root/prompts/new-tasks.dev.jsonl" --agent-sessions crates/eval/data/agent-sessions.jsonl \
  --agent-questions crates/eval/data/agent-questions.jsonl > "$tmp/fit_relevance.txt"
# Our coding-agent sessions, asked about as a later session of the project would ask.
"$bin" --embedder potion eval recall --dataset agent --path crates/eval/data/agent-sessions.jsonl \
  --questions crates/eval/data/agent-questions.jsonl --json > "$tmp/agent.potion.json"
"$bin" --embedder potion bench recall > "$tmp/bench_recall.txt"
# The same episodes with the vectors searched by groups, against the exact scan.
"$bin" --embedder potion bench recall --approximate-from 0 --db "$tmp/grouped.db" > "$tmp/bench_recall_grouped.txt"
rm -rf "$tmp/grouped.db" "$tmp/grouped.db.search" "$tmp/grouped.db-wal" "$tmp/grouped.db-shm"
# The server on loopback: adds and recalls at once for 90 s.
"$bin" --embedder potion bench serve 2>/dev/null > "$tmp/bench_serve.txt"
# The same without searching the open tail, and with a short one ("What was just said").
for lines in 0 200; do
  printf '[ranking]\nopen_tail_lines = %s\n' "$lines" > "$tmp/tail$lines.toml"
  "$bin" --embedder potion --config "$tmp/tail$lines.toml" bench serve 2>/dev/null > "$tmp/bench_serve_tail$lines.txt"
done
# Coding agents' hooks: one process per event, as Claude Code runs them.
"$bin" bench hook 2>/dev/null > "$tmp/bench_hook.txt"
"$bin" bench hook --server 2>/dev/null > "$tmp/bench_hook_server.txt"
for agent in codex gemini opencode; do
    "$bin" bench hook --agent "$agent" 2>/dev/null > "$tmp/bench_hook_$agent.txt"
done
if [ -n "${MILLION:-}" ]; then
  "$bin" --embedder potion bench recall --episodes 1000000 --db "$tmp/million.db" > "$tmp/bench_recall_million.txt"
fi
if [ -n "${LLM:-}" ]; then
  # The language model's cuts on a subset (it takes seconds a window), beside the LLM-free
  # path on the same dialogues and conversation. Consolidation is off: it only adds calls here.
  url="$(scripts/local-llm.sh start)"
  printf '[consolidation]\nevery_episodes = 1000000\nflashbulb_surprise = 2.0\n' > "$tmp/no-consolidation.toml"
  llm=(--config "$tmp/no-consolidation.toml" --llm-url "$url" --llm-model qwen --embedder potion)
  "$bin" "${llm[@]}" eval segmentation --dataset dialseg711 --path "$data/dialseg711.json" --segmenter llm --limit 10 2>/dev/null > "$tmp/llm_dialseg711_10.txt"
  "$bin" --embedder potion eval segmentation --dataset dialseg711 --path "$data/dialseg711.json" --online --limit 10 2>/dev/null > "$tmp/llm_free_dialseg711_10.txt"
  "$bin" "${llm[@]}" eval recall --dataset locomo --path "$root/memory/locomo10.json" --limit 1 --split tuning 2>/dev/null > "$tmp/llm_locomo_1.txt"
  "$bin" --embedder potion eval recall --dataset locomo --path "$root/memory/locomo10.json" --limit 1 --split tuning 2>/dev/null > "$tmp/llm_free_locomo_1.txt"
fi
if [ -n "${POSTGRES:-}" ]; then
  url="$(scripts/postgres.sh start)"
  pg="${url%/*}/epimem_bench"
  # A new database: a change log that already holds the tenant's earlier runs would be replayed.
  psql=(target/postgres/pgserver-*/pgserver/pginstall/bin/psql "${url%/*}/postgres" -q)
  "${psql[@]}" -c "DROP DATABASE IF EXISTS epimem_bench" -c "CREATE DATABASE epimem_bench"
  "$bin" --embedder potion bench ingest --postgres "$pg" 2>/dev/null > "$tmp/postgres_bench_ingest.txt"
  "$bin" --embedder potion bench recall --episodes 20000 --queries 300 --postgres "$pg" 2>/dev/null > "$tmp/postgres_bench_recall.txt"
  "$bin" --embedder potion eval recall --dataset locomo --path "$root/memory/locomo10.json" --json --postgres "$pg" > "$tmp/postgres_locomo.json"
  "$bin" --embedder potion eval recall --dataset agent --path crates/eval/data/agent-sessions.jsonl \
    --questions crates/eval/data/agent-questions.jsonl --json --postgres "$pg" > "$tmp/postgres_agent.json"
fi
# Throughput of the whole DialSeg711 evaluation, model loading and embedding included.
start=$(date +%s%N)
"$bin" --embedder potion eval segmentation --dataset dialseg711 --path "$data/dialseg711.json" >/dev/null
whole_ms=$(( ($(date +%s%N) - start) / 1000000 ))
whole="$((whole_ms / 1000)).$(printf '%03d' $((whole_ms % 1000)))"
echo "$whole" > "$tmp/dialseg711_whole_seconds"
fi
# The measured parts of the page, rendered from the raw results; the prose around them is
# written by hand in the page itself.
"$bin" bench page --results "$tmp"
