"""What the Python binding costs beside the engine, in a table.

1. Recall: the same episode recalls (top 10) through ``epimem.Memory.recall`` and timed inside
   the engine; the difference is what Python adds (the request and answer as JSON, the
   interpreter's lock, the answer read into its types).
2. Remembering N messages and flushing them (stored, cut into episodes, indexed): through
   ``Memory`` in batches of 1,000, against ``epimem ingest --flush`` of the same messages.

Build the package with ``maturin develop --release`` first; EPIMEM_BIN names the release
binary (default target/release/epimem).

    python bindings/python/bench.py [--episodes 100000] [--queries 1000] [--messages 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import statistics
import subprocess
import tempfile
import time

import epimem

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORDS = ("boiler pressure garden tomato invoice river venue lisbon porto sister bike tyre "
         "kubernetes deploy cache latency ticket refund recipe lemon tea school exam piano "
         "concert harbour saxophone walrus budget meeting flight hotel passport").split()


def percentile(values: list, p: float) -> float:
    ordered = sorted(values)
    return ordered[round((len(ordered) - 1) * p)]


def recall(binary: str, work: pathlib.Path, episodes: int, queries: int) -> list:
    db = work / "recall.db"
    subprocess.run([binary, "--embedder", "potion", "bench", "recall", "--episodes", str(episodes),
                    "--queries", "1", "--db", str(db)], check=True, capture_output=True)
    rows = []
    with epimem.Memory(db, tenant="bench", embedder="potion", background=False) as memory:
        titles = []
        cursor = None
        while len(titles) < queries:
            page = memory.episodes(limit=1000, cursor=cursor)
            titles += [e.title for e in page.episodes]
            if not page.next_cursor:
                break
            cursor = page.next_cursor
        rng = random.Random(7)
        asked = [" ".join(rng.choice(titles).replace(":", " ").replace(",", " ").split()[:3])
                 for _ in range(queries)]
        memory.recall(asked[0], limit=10)  # the index opened, the model warm
        whole, engine = [], []
        for query in asked:
            # What Memory.recall does, with the engine's own time read from inside the call.
            started = time.perf_counter()
            request = json.dumps({"path": {}, "query": {}, "body": {"query": query, "limit": 10}})
            answer, inside = memory._native.timed_call("recall", request)
            epimem.RecallOut.model_validate_json(answer)
            whole.append((time.perf_counter() - started) * 1000)
            engine.append(inside * 1000)
        public = []
        for query in asked:
            started = time.perf_counter()
            memory.recall(query, limit=10)
            public.append((time.perf_counter() - started) * 1000)
    rows.append(("engine (Memory::recall, timed inside the call)", engine))
    rows.append(("the same recalls, timed from Python", whole))
    rows.append(("what Python adds, call by call", [w - e for w, e in zip(whole, engine)]))
    rows.append(("Memory.recall (the same queries again)", public))
    return rows


def remember(binary: str, work: pathlib.Path, messages: int) -> list:
    rng = random.Random(11)
    lines = []
    for i in range(messages):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18)))
        lines.append({"conversation": f"c{i % 100}", "role": "user" if i % 2 == 0 else "assistant",
                      "content": f"{words}.", "id": f"m{i}",
                      "timestamp": f"2026-01-{1 + (i // 100) % 28:02d}T{(i // 10) % 24:02d}:{i % 60:02d}:00Z"})
    jsonl = work / "messages.jsonl"
    jsonl.write_text("".join(json.dumps(line) + "\n" for line in lines))
    started = time.perf_counter()
    subprocess.run([binary, "--db", str(work / "cli.db"), "--embedder", "potion", "ingest",
                    str(jsonl), "--flush"], check=True, capture_output=True)
    cli = time.perf_counter() - started
    started = time.perf_counter()
    with epimem.Memory(work / "py.db", embedder="potion", background=False) as memory:
        for at in range(0, len(lines), 1000):
            memory.remember(lines[at:at + 1000])
        memory.flush()
        episodes = memory.stats().episodes
    python = time.perf_counter() - started
    return [("epimem ingest --flush (one process)", messages / cli, None),
            ("Memory.remember + flush (open included)", messages / python, episodes)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=10_000)
    args = parser.parse_args()
    binary = os.environ.get("EPIMEM_BIN", str(ROOT / "target" / "release" / "epimem"))
    with tempfile.TemporaryDirectory() as folder:
        work = pathlib.Path(folder)
        print(f"{args.queries} episode recalls (top 10) over {args.episodes} episodes"
              f"{'':14}p50 ms    p99 ms")
        for name, values in recall(binary, work, args.episodes, args.queries):
            print(f"{name:<58}{statistics.median(values):8.3f}  {percentile(values, 0.99):8.3f}")
        print(f"\n{args.messages} messages remembered and flushed{'':27}messages/s")
        rates = remember(binary, work, args.messages)
        for name, rate, _ in rates:
            print(f"{name:<58}{rate:10.0f}")
        share = rates[1][1] / rates[0][1]
        print(f"Python at {share:.0%} of the command's rate (target: at least 50%)")


if __name__ == "__main__":
    main()
