"""Retrieval quality and speed, printed as numbers (benchmarks are not tests).

In one run, on this machine:
  1. BEIR SciFact test: nDCG@10 and recall@100 for lexical, dense and hybrid; ingest docs/s.
  2. Warm search latency (p50/p95) on the SciFact store and on the bundled corpus,
     against the bare dense query (embed + Chroma) measured in the same run as a baseline.
  3. Unchanged re-ingest of the bundled corpus: chunks embedded and time, against the first ingest.
  4. Peak RSS of a `paperbot search` process answering queries from stdin.

    .venv/bin/python -m benchmarks.retrieval_bench [--scifact DIR] [--limit-queries N] [--skip-scifact]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import REPO, SCIFACT, peak_rss, percentile
from bot.runtime import open_library
from paperbot.settings import Settings
from retrieval.evaluate import load_beir, score
from retrieval.library import Library


def latency(lib: Library, queries: list[str], reps: int = 1) -> tuple[list[float], list[float]]:
    """Milliseconds per search (with snippets) and per bare dense query, interleaved."""
    full, bare = [], []
    lib.search(queries[0])  # warm: model, keyword index
    for _ in range(reps):
        for q in queries:
            t = time.perf_counter()
            lib.search(q)
            full.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            lib.store.query(lib.embedder.encode([q])[0], n=10)
            bare.append((time.perf_counter() - t) * 1000)
    return full, bare


def show_latency(name: str, full: list[float], bare: list[float]) -> None:
    print(f"{name}: search p50 {percentile(full, 50):.0f} ms, p95 {percentile(full, 95):.0f} ms "
          f"(bare dense query p50 {percentile(bare, 50):.0f} ms; ratio {percentile(full, 50) / percentile(bare, 50):.1f}x)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scifact", type=Path, default=SCIFACT)
    ap.add_argument("--limit-queries", type=int, default=None)
    ap.add_argument("--skip-scifact", action="store_true")
    ap.add_argument("--keep", type=Path, default=None,
                    help="keep the SciFact store here (CHROMA_PATH), e.g. for startup_scale --store")
    args = ap.parse_args()
    questions = [json.loads(x)["question"] for x in
                 (REPO / "benchmarks/data/bundled_questions.jsonl").read_text().splitlines() if x]
    results: dict = {}

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.from_env({"CHROMA_PATH": f"{tmp}/chroma", "PAPERBOT_CACHE_DIR": f"{tmp}/cache"})

        # -- bundled corpus: first vs unchanged ingest, latency -------------------------
        with open_library(settings) as lib:
            lib.embedder.encode(["warm up"])
            t = time.perf_counter()
            first = lib.ingest()
            t_first = time.perf_counter() - t
            t = time.perf_counter()
            again = lib.ingest()
            t_again = time.perf_counter() - t
            print(f"bundled ingest: first {t_first:.1f} s ({first.chunks_embedded} chunks embedded); unchanged "
                  f"re-ingest {t_again:.2f} s ({again.chunks_embedded} chunks embedded) = "
                  f"{t_again / t_first:.3f}x the first")
            full, bare = latency(lib, questions, reps=3)
            show_latency("bundled corpus (57 papers)", full, bare)
            results["bundled"] = {"first_ingest_s": t_first, "reingest_s": t_again,
                                  "reingest_chunks_embedded": again.chunks_embedded,
                                  "search_p50_ms": percentile(full, 50), "search_p95_ms": percentile(full, 95),
                                  "bare_p50_ms": percentile(bare, 50)}

        # -- peak RSS of a search process --------------------------------------------------
        env = {**os.environ, "CHROMA_PATH": f"{tmp}/chroma", "PAPERBOT_CACHE_DIR": f"{tmp}/cache",
               "HF_HUB_OFFLINE": "1"}
        rss, code, lines, err = peak_rss([sys.executable, "-m", "bot.cli", "search", "--json"],
                                         stdin="\n".join(questions), env=env, cwd=tmp)
        ok = code == 0 and lines == len(questions)
        print(f"search process peak RSS: {rss:.0f} MB over {len(questions)} queries "
              f"({'ok' if ok else 'FAILED: ' + err})")
        results["search_process_peak_rss_mb"] = rss

        # -- SciFact -------------------------------------------------------------------------
        if not args.skip_scifact:
            queries, qrels = load_beir(args.scifact, args.limit_queries)
            sf = Settings.from_env({"CHROMA_PATH": str(args.keep or f"{tmp}/scifact"),
                                    "PAPERBOT_CACHE_DIR": f"{tmp}/cache"})
            with open_library(sf) as lib:
                lib.embedder.encode(["warm up"])
                t = time.perf_counter()
                summary = lib.ingest([args.scifact / "corpus.jsonl"])
                elapsed = time.perf_counter() - t
                report = score(lib, queries, qrels)
                print(f"SciFact ({summary.added} docs, {len(queries)} queries): ingest {summary.added / elapsed:.1f} docs/s")
                for metric in ("ndcg@10", "recall@100"):
                    print(f"  {metric:<11}" + "  ".join(f"{m} {v:.4f}" for m, v in report[metric].items()))
                full, bare = latency(lib, list(queries.values()))
                show_latency(f"SciFact corpus ({summary.added} papers)", full, bare)
                results["scifact"] = {**report, "docs_per_s": summary.added / elapsed,
                                      "search_p50_ms": percentile(full, 50), "search_p95_ms": percentile(full, 95),
                                      "bare_p50_ms": percentile(bare, 50), "queries": len(queries)}
    print(json.dumps(results, indent=1, default=lambda x: round(x, 4)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
