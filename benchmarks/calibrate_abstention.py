"""Calibrate the abstention thresholds (RETRIEVAL_MIN_DENSE, RETRIEVAL_MIN_LEXICAL) on data.

Answerable questions: benchmarks/data/bundled_questions.jsonl, each naming the
paper of the bundled corpus that answers it. Unanswerable questions: everyday
off-topic questions (benchmarks/data/offtopic_questions.txt) and biomedical
claims from BEIR SciFact, which this ML corpus cannot answer.

For each question the best paper's two signals are recorded; the script then
prints, for a grid of thresholds, how many answerable questions would be
answered and how many unanswerable ones would not be refused, and picks the
pair that refuses the most unanswerable questions while answering at least
95% of the answerable ones.

    .venv/bin/python benchmarks/calibrate_abstention.py [--scifact ../shared/bench/scifact]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bot.runtime import open_library  # noqa: E402
from paperbot.settings import Settings  # noqa: E402
from retrieval.library import Library  # noqa: E402


def best_signals(lib: Library, question: str, k: int = 5) -> tuple[float, float, list[tuple[str, int]]]:
    ranked = lib.retriever.rank(question)[:k]
    papers = lib.retriever.view().papers
    top = [(papers[r.paper_id].source, papers[r.paper_id].position) for r in ranked]
    return max(r.dense for r in ranked), max(r.lexical for r in ranked), top


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scifact", type=Path, default=REPO.parent / "shared" / "bench" / "scifact")
    ap.add_argument("--scifact-queries", type=int, default=300)
    ap.add_argument("--target", type=float, default=0.95, help="share of answerable questions to keep answering")
    args = ap.parse_args()

    data = REPO / "benchmarks" / "data"
    positives = [json.loads(line) for line in (data / "bundled_questions.jsonl").read_text().splitlines() if line]
    negatives = [line for line in (data / "offtopic_questions.txt").read_text().splitlines() if line.strip()]
    sf = args.scifact / "queries.jsonl"
    if sf.exists():
        negatives += [json.loads(line)["text"] for line in sf.read_text().splitlines()[: args.scifact_queries]]

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.from_env({"CHROMA_PATH": f"{tmp}/chroma", "PAPERBOT_CACHE_DIR": f"{tmp}/cache"})
        with open_library(settings) as lib:
            lib.ingest()
            pos, hit1, hit3 = [], 0, 0
            for p in positives:
                d, lx, top = best_signals(lib, p["question"])
                pos.append((d, lx))
                want = (p["source"], p["position"])
                hit1 += top[0] == want
                hit3 += want in top[:3]
            neg = [best_signals(lib, q)[:2] for q in negatives]

    pos_a, neg_a = np.array(pos), np.array(neg)
    print(f"answerable questions: {len(pos)}   top-1 {hit1 / len(pos):.3f}   top-3 {hit3 / len(pos):.3f}")
    print(f"unanswerable questions: {len(neg)}")
    for name, arr in (("answerable", pos_a), ("unanswerable", neg_a)):
        for col, sig in ((0, "dense"), (1, "lexical")):
            q = np.percentile(arr[:, col], [5, 25, 50, 75, 95])
            print(f"  {name:<13} {sig:<8} p5 {q[0]:.3f}  p25 {q[1]:.3f}  p50 {q[2]:.3f}  p75 {q[3]:.3f}  p95 {q[4]:.3f}")

    best = None
    print("\nmin_dense  min_lexical  answered(answerable)  not-refused(unanswerable)")
    for td in np.arange(0.25, 0.60, 0.025):
        for tl in (0.5, 0.6, 0.7, 0.8, 0.9, 1.01):
            keep = ((pos_a[:, 0] >= td) | (pos_a[:, 1] >= tl)).mean()
            leak = ((neg_a[:, 0] >= td) | (neg_a[:, 1] >= tl)).mean()
            if keep >= args.target and (best is None or keep - leak > best[3] - best[2] + 1e-9):
                best = (round(float(td), 3), tl, leak, keep)
            if tl in (0.6, 1.01):
                print(f"  {td:.3f}      {tl:<5}        {keep:.3f}                {leak:.3f}")
    if best:
        print(f"\nchosen: RETRIEVAL_MIN_DENSE={best[0]} RETRIEVAL_MIN_LEXICAL={best[1]}  "
              f"answers {best[3]:.3f} of answerable, lets through {best[2]:.3f} of unanswerable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
