#!/usr/bin/env bash
# Regenerates docs/benchmarks.md: segmentation quality on DialSeg711, TIAGE (train + dev) and
# SuperDialseg (validation), every segmenter and baseline; evidence recall on LoCoMo; recall
# latency over 100,000 episodes. All from the project's own harness.
#   scripts/benchmarks.sh                 # the static embedder (potion); about five minutes
#   EMBEDDERS="potion minilm" scripts/benchmarks.sh   # also MiniLM (BERT on CPU; ~10 minutes)
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
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

for e in $embedders; do
  "$bin" --embedder "$e" eval segmentation --dataset dialseg711 --path "$data/dialseg711.json" --json > "$tmp/dialseg711.$e.jsonl"
  "$bin" --embedder "$e" eval segmentation --dataset tiage --path "$data/tiage.json" --json > "$tmp/tiage.$e.jsonl"
  "$bin" --embedder "$e" eval segmentation --dataset superdialseg --path "$data/superdialseg_validation.jsonl" --json > "$tmp/superdialseg.$e.jsonl"
done
for e in $embedders; do
  "$bin" --embedder "$e" eval recall --dataset locomo --path "$root/memory/locomo10.json" --json > "$tmp/locomo.$e.json"
done
"$bin" --embedder potion bench recall > "$tmp/bench_recall.txt"
# Throughput of the whole DialSeg711 evaluation, model loading and embedding included.
start=$(date +%s%N)
"$bin" --embedder potion eval segmentation --dataset dialseg711 --path "$data/dialseg711.json" >/dev/null
whole_ms=$(( ($(date +%s%N) - start) / 1000000 ))
whole="$((whole_ms / 1000)).$(printf '%03d' $((whole_ms % 1000)))"

python3 - "$tmp" "$embedders" "$whole" > "$out" <<'PY'
import json, sys, pathlib
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
print("segmenter never fires and `default` is the semantic segmenter plus the (idle) budget.\n")
print("The default configuration was tuned on TIAGE dev and SuperDialseg validation only;")
print("DialSeg711 is held out.\n")
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
print("\n## Recall on LoCoMo\n")
print("`epimem eval recall --dataset locomo --path ../shared/data/memory/locomo10.json`: each conversation")
print("ingested session by session (session dates as timestamps, speakers kept), segmented with the default")
print("policy and flushed; every question of categories 1-4 asked in its conversation. Evidence recall is")
print("the share of a question's evidence turns inside what was returned, averaged over questions")
print("(unresolvable evidence ids count as misses). R@k: the first k episodes recalled. ≤N t: the context")
print("block `recall --budget N` prints (cl100k tokens), which quotes the best single turns grouped by episode")
print("under the time it began; a turn counts only if it is quoted. Turn R@k: the first k single messages")
print("(BM25 over messages, line vectors and soft word matching, their scores scaled and summed, weighted")
print("by their episode's score, a date the query names and the person it names, spread to neighbouring")
print("turns, questions weighed down). The defaults were tuned on LoCoMo itself (there is no held-out")
print("split), so these numbers are optimistic for other conversations.\n")
print("| embedder | questions | R@1 | R@5 | R@10 | ≤500 t | ≤1,000 t | ≤2,000 t | turn R@5 | turn R@10 | turn R@25 |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
names = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}
for e in embedders:
    j = json.loads((tmp / f"locomo.{e}.json").read_text())
    for label, m in [("all", j["overall"])] + [(f"{c} {names.get(c, '')}", v) for c, v in j["by_category"].items()]:
        k, b, t = m["episode_recall_at_k"], m["recall_at_budget"], m["turn_recall_at_k"]
        print(f"| {e} · {label} | {m['questions']} | {k['1']:.3f} | {k['5']:.3f} | {k['10']:.3f} | {b['500']:.3f} | {b['1000']:.3f} | {b['2000']:.3f} | {t['5']:.3f} | {t['10']:.3f} | {t['25']:.3f} |")
    lat = j["latency_ms"]
    print(f"\nRecall latency on LoCoMo ({e}, query embedding included): p50 {lat['p50']:.2f} ms, p95 {lat['p95']:.2f} ms, p99 {lat['p99']:.2f} ms.\n")
print("Published (LoCoMo paper, Table 3, DRAGON retriever): dialogue turns R@5 56.7, R@10 66.2, R@25 76.7;")
print("session summaries R@5 72.1, R@10 84.7.\n")
print("## Recall latency over 100,000 episodes\n")
print("`cargo run --release -p epimem -- bench recall` (synthetic conversations, Zipfian vocabulary; BM25 is")
print("tantivy in memory, vectors are 8-bit and scanned exactly on the machine's cores, here two):\n")
print("```")
print((tmp / "bench_recall.txt").read_text().rstrip())
print("```")
print("\nOn a 2-core machine p99 moves by up to a few milliseconds between runs (6.9 to 10.4 ms seen for")
print("episode recall once the vector scan was compiled for AVX2, the highest when the machine was busy;")
print("8.5 to 12.2 ms before): the target is met in most runs, not every one.")
d = rows.get("default (potion)", {}).get("dialseg711")
t = rows.get("default (potion)", {}).get("tiage")
print("\n## Targets\n")
if d and t:
    print(f"- DialSeg711 Pk ≤ 0.25 with the default policy: **{d['pk']:.3f}**, " + ("met." if d['pk'] <= 0.25 else "not met."))
    print(f"- TIAGE Pk ≤ 0.40 with the default policy: **{t['pk']:.3f}**, " + ("met." if t['pk'] <= 0.40 else "not met."))
c = rows.get("cohesion (potion)", {}).get("dialseg711")
if c:
    print(f"- The cohesion segmenter (off by default) reaches Pk {c['pk']:.3f} on DialSeg711.")
lj = json.loads((tmp / "locomo.potion.json").read_text())["overall"] if (tmp / "locomo.potion.json").exists() else None
if lj:
    turn10, within1000 = lj['turn_recall_at_k']['10'], lj['recall_at_budget']['1000']
    print(f"- LoCoMo turn-level evidence R@10 ≥ 0.80: **{turn10:.4f}**, " + ("met" if turn10 >= 0.80 else "not met") + f" (margin {turn10 - 0.80:+.4f}).")
    print(f"- LoCoMo evidence recall within 1,000 tokens ≥ 0.85: **{within1000:.4f}**, " + ("met" if within1000 >= 0.85 else "not met") + f" (margin {within1000 - 0.85:+.4f}).")
    print("  Both with defaults tuned on these very questions; a margin this thin is within what retuning")
    print("  moves, so read them as \"at the target\", not above it.")
bench = (tmp / "bench_recall.txt").read_text()
p99 = [l for l in bench.splitlines() if l.startswith("episodes (")]
if p99:
    v = [float(x) for x in p99[0].split() if x.replace(".", "", 1).isdigit()][2]
    print(f"- Recall p99 over 100,000 episodes ≤ 10 ms (query embedding excluded): **{v:.1f} ms**, " + ("met." if v <= 10 else "not met."))
print(f"- The whole DialSeg711 evaluation (19,350 utterances, every segmenter, model load and embedding")
print(f"  included) takes **{whole:.1f} s** with the static embedder (target: under 10 s).")
PY
echo "wrote $out"
