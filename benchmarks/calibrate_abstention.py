"""Calibrate when a paper answers a question (RETRIEVAL_MIN_ANSWER, RETRIEVAL_ANSWER_MARGIN) on data.

A paper is cited when its best sentence's answer score (retrieval/snippets.py: cosine
to the question + COVERAGE_WEIGHT × its share of the question's distinctive terms)
reaches RETRIEVAL_MIN_ANSWER and is within RETRIEVAL_ANSWER_MARGIN of the best
paper's; a search where no paper is cited abstains.

Data: the labelled questions of benchmarks/data/extractive_questions.jsonl (the
papers that answer each, off-corpus questions, follow-ups), the everyday questions
of benchmarks/data/offtopic_questions.txt, and benchmarks/data/bundled_questions.jsonl
(each answered by its labelled paper, which must keep being cited). Every question is
searched once with the rule switched off, so the answer scores of its hits are kept,
then every pair of thresholds on a grid is applied to them. The pair chosen maximizes
cited-paper precision + recall + abstention accuracy on the labelled and everyday
questions, among the pairs that answer at least --target of the bundled questions
(of pairs within 0.01 of the best, the one with the widest margin);
the same choice made on half of the labelled questions is then scored on the other
half, to show how much the numbers owe to calibrating on the set itself.

    .venv/bin/python -m benchmarks.calibrate_abstention [--target 0.95]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace

import numpy as np

from benchmarks.extractive_bench import DATA, corpus_library, load_set, offtopic, search_for
from retrieval.answer import MAX_CITED_PAPERS
from retrieval.snippets import COVERAGE_WEIGHT, answering

GRID_MIN = np.round(np.arange(0.50, 1.301, 0.025), 3)
GRID_MARGIN = (0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 3.0)
TIE = 0.01  # sums of the three shares closer than this are a tie


def cited(hits: list[dict], min_answer: float, margin: float) -> list[str]:
    """The papers an answer cites under these thresholds (relevant hits in rank order, at most 3)."""
    verdicts = answering([h["answer"] for h in hits], min_answer, margin)
    return [h["pid"] for h, v in zip(hits, verdicts) if (h["relevant"] if v is None else v)][:MAX_CITED_PAPERS]


def scores(rows: list[dict], min_answer: float, margin: float) -> tuple[float, float, float]:
    """(cited-paper precision, recall, abstention accuracy), as benchmarks/extractive_bench.py counts them."""
    n_cited = right = wanted = found = abstain_ok = 0
    for r in rows:
        c = cited(r["hits"], min_answer, margin)
        n_cited += len(c)
        right += len(set(c) & set(r["answers"] + r["also"]))
        wanted += min(len(r["answers"]), MAX_CITED_PAPERS)
        found += len(set(c) & set(r["answers"]))
        abstain_ok += (not c) == (not r["answers"])
    return (right / n_cited if n_cited else 1.0, found / wanted if wanted else 1.0, abstain_ok / len(rows))


def choose(rows: list[dict], bundled: list[dict], target: float) -> tuple[float, float, tuple, float] | None:
    """The best pair; within TIE of the best sum, the widest margin (a question several papers answer)."""
    found = []
    for t in GRID_MIN:
        for m in GRID_MARGIN:
            kept = float(np.mean([r["pid"] in cited(r["hits"], t, m) for r in bundled]))
            if kept >= target:
                found.append((float(t), m, scores(rows, t, m), kept))
    if not found:
        return None
    top = max(sum(f[2]) for f in found)
    return max((f for f in found if sum(f[2]) >= top - TIE), key=lambda f: (f[1], sum(f[2])))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", type=float, default=0.95, help="share of bundled questions that must stay answered")
    args = ap.parse_args()
    items = load_set() + [{"question": q, "answers": [], "also": [], "kind": "everyday"} for q in offtopic()]
    bundled_items = [json.loads(x) for x in (DATA / "bundled_questions.jsonl").read_text().splitlines() if x]

    with tempfile.TemporaryDirectory() as tmp, corpus_library(tmp) as lib:
        retriever = lib.retriever
        retriever.settings = replace(retriever.settings, min_answer=-10.0, answer_margin=100.0)

        def hits_of(item: dict) -> list[dict]:
            return [{"pid": h.paper_id, "answer": h.answer, "relevant": h.relevant}
                    for h in search_for(lib, item).hits]

        rows = [{**item, "hits": hits_of(item)} for item in items]
        bundled = []
        for item in bundled_items:
            want = next(p.paper_id for p in lib.papers() if (p.source, p.position) == (item["source"], item["position"]))
            bundled.append({"pid": want, "hits": hits_of(item)})

    print(f"labelled questions: {len(rows) - len(offtopic())} + {len(offtopic())} everyday; "
          f"bundled questions: {len(bundled)}; answer score = cosine + {COVERAGE_WEIGHT} x term share")
    print("\nmin_answer  margin  precision  recall  abstention  bundled answered")
    for t in GRID_MIN[::2]:
        for m in (0.3, 0.4, 3.0):
            p, r, a = scores(rows, t, m)
            kept = np.mean([b["pid"] in cited(b["hits"], t, m) for b in bundled])
            print(f"  {t:.3f}     {m:<4}    {p:.3f}      {r:.3f}   {a:.3f}       {kept:.3f}")
    best = choose(rows, bundled, args.target)
    if best is None:
        print(f"\nno thresholds keep {args.target:.0%} of the bundled questions answered")
        return 1
    t, m, (p, r, a), kept = best
    print(f"\nchosen: RETRIEVAL_MIN_ANSWER={t} RETRIEVAL_ANSWER_MARGIN={m}  precision {p:.3f} recall {r:.3f} "
          f"abstention accuracy {a:.3f}; bundled questions answered {kept:.3f}")
    for name, train, test in (("even rows → odd rows", rows[0::2], rows[1::2]),
                              ("odd rows → even rows", rows[1::2], rows[0::2])):
        half = choose(train, bundled, args.target)
        if half:
            p, r, a = scores(test, half[0], half[1])
            print(f"  chosen on {name}: {half[0]}, {half[1]}; on the held-out half precision {p:.3f} recall {r:.3f}"
                  f" abstention accuracy {a:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
