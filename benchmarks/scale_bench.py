"""Scale benchmark: a generated corpus of many abstracts, embedded and server mode.

The corpus is recombined from real abstracts (the bundled corpus and, when
present, BEIR SciFact): each generated abstract is 4-8 sentences drawn at random
(seeded), so texts look like abstracts and no two are the same.

Measured, printing numbers:
  * ingest docs/s of the whole corpus into an embedded store (`paperbot ingest`);
  * ingest docs/s of a 1,000-abstract sample, embedded vs through a `chroma run`
    server, in the same run (the ratio is what matters on a shared machine);
  * warm search p50/p95 over the large store, embedded and through the server
    (the server serves the very same store folder, so nothing is embedded twice);
  * peak RSS of a bot process (`paperbot chat` answering questions from stdin) in both modes.

    .venv/bin/python -m benchmarks.scale_bench --papers 20000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import REPO, SCIFACT, chroma_server, peak_rss
from ingest.parse import discover, parse_file
from paperbot.settings import BUNDLED_CORPUS
from paperbot.text import split_sentences


def sentence_pool(scifact: Path | None) -> list[str]:
    texts = [p.abstract for f in discover([BUNDLED_CORPUS]) for p in parse_file(f)]
    if scifact and (scifact / "corpus.jsonl").exists():
        texts += [json.loads(line)["text"] for line in (scifact / "corpus.jsonl").read_text().splitlines() if line]
    return [t[s.start:s.end] for t in texts for s in split_sentences(t) if 40 <= s.end - s.start <= 400]


def write_corpus(path: Path, n: int, pool: list[str], seed: int) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        f.write("Generated abstracts\n")
        for _ in range(n):
            f.write("\n" + " ".join(rng.sample(pool, rng.randint(4, 8))) + "\n")


def paperbot(env: dict, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], input=stdin, capture_output=True, text=True,
                          env=env)


def timed_ingest(env: dict, path: Path, n: int) -> float:
    t = time.perf_counter()
    proc = paperbot(env, "ingest", str(path))
    if proc.returncode:
        raise SystemExit(f"ingest failed: {proc.stderr[-500:]}")
    return n / (time.perf_counter() - t)


def bot_rss_mb(env: dict, questions: list[str]) -> tuple[float, str]:
    mb, code, _, err = peak_rss([sys.executable, "-m", "bot.cli", "chat"], stdin="\n".join(questions) + "\nquit\n",
                                env=env)
    return mb, "ok" if code == 0 else f"exit {code}: {err.strip()}"


def search_latency(env: dict, questions: list[str], reps: int = 3) -> tuple[float, float]:
    """p50/p95 of warm searches, timed inside one process that keeps the model and index loaded."""
    code = (
        "import json, sys, time\n"
        "from paperbot.settings import Settings\nfrom bot.runtime import open_library\n"
        "qs = json.loads(sys.stdin.read())\n"
        "with open_library(Settings.from_env()) as lib:\n"
        "    lib.search(qs[0])\n"
        "    t = []\n"
        f"    for _ in range({reps}):\n"
        "        for q in qs:\n"
        "            s = time.perf_counter(); lib.search(q); t.append((time.perf_counter() - s) * 1000)\n"
        "t.sort(); print(t[len(t) // 2], t[int(0.95 * (len(t) - 1))])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], input=json.dumps(questions), capture_output=True, text=True,
                          env=env, cwd=REPO)
    if proc.returncode:
        raise SystemExit(f"search failed: {proc.stderr[-800:]}")
    p50, p95 = map(float, proc.stdout.split())
    return p50, p95


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--papers", type=int, default=20000)
    ap.add_argument("--sample", type=int, default=1000)
    ap.add_argument("--scifact", type=Path, default=SCIFACT)
    ap.add_argument("--workdir", type=Path, default=None, help="keep the generated corpus and stores here")
    args = ap.parse_args()
    questions = [json.loads(x)["question"] for x in
                 (REPO / "benchmarks/data/bundled_questions.jsonl").read_text().splitlines() if x]

    tmp = args.workdir or Path(tempfile.mkdtemp(prefix="paperbot-scale-"))
    tmp.mkdir(parents=True, exist_ok=True)
    pool = sentence_pool(args.scifact)
    big, sample = tmp / "generated.txt", tmp / "sample.txt"
    write_corpus(big, args.papers, pool, seed=1)
    write_corpus(sample, args.sample, pool, seed=2)
    print(f"corpus: {args.papers} generated abstracts from {len(pool)} sentences ({big.stat().st_size / 1e6:.1f} MB)")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CHROMA_", "PAPERBOT_"))}
    base.update(HF_HUB_OFFLINE="1", PAPERBOT_CACHE_DIR=str(tmp / "cache"), PAPERBOT_CORPUS=str(big))
    embedded = {**base, "CHROMA_PATH": str(tmp / "store")}

    rate = timed_ingest(embedded, big, args.papers)
    print(f"embedded ingest of {args.papers}: {rate:.1f} docs/s")
    sample_embedded = timed_ingest({**embedded, "CHROMA_COLLECTION": "sample"}, sample, args.sample)

    p50, p95 = search_latency(embedded, questions)
    rss, status = bot_rss_mb(embedded, questions[:10])
    print(f"embedded: warm search p50 {p50:.0f} ms, p95 {p95:.0f} ms; bot process peak RSS {rss:.0f} MB ({status})")

    with chroma_server(tmp / "store") as server_env:
        remote = {**base, **server_env, "CHROMA_PATH": str(tmp / "unused")}
        sample_server = timed_ingest({**remote, "CHROMA_COLLECTION": "sample-server"}, sample, args.sample)
        print(f"ingest of {args.sample}: embedded {sample_embedded:.1f} docs/s, server {sample_server:.1f} docs/s "
              f"(server/embedded {sample_server / sample_embedded:.2f}x)")
        s50, s95 = search_latency(remote, questions)
        srss, sstatus = bot_rss_mb(remote, questions[:10])
        print(f"server: warm search p50 {s50:.0f} ms, p95 {s95:.0f} ms (p50 {s50 / p50:.2f}x embedded); "
              f"bot process peak RSS {srss:.0f} MB ({sstatus})")
    print(f"work folder: {tmp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
