"""Ranking on real conference data, per question style: the hybrid, each of its two signals, and bm25s.

Sets (each over its own corpus, built once under --workdir as benchmarks/answer_bench.py builds them):

* `neurips24-dev`: the answerable questions of benchmarks/data/neurips2024_questions.jsonl's dev split (a
  reader's, over the 800 real NeurIPS 2024 papers), per style: how, which, keyword, number, topic;
* `keywords`: each stored paper's own keyword list as the query, the paper its one relevant result;
* `shared-dev`: ../shared/labelled/seed_questions.dev.jsonl over the bundled corpus;
* `topics-dev`: benchmarks/data/neurips2024_topics.jsonl's dev split: topic questions a lab asks (how, which,
  keyword), each with every relevant paper of the 800 graded 2 (directly about it) or 1 (partly), written by
  a reader who had not seen the code.

Methods: `hybrid` (what paperbot ranks by), `dense` and `lexical` (its two signals alone, `Retriever.rank`'s
modes) and `bm25s` (the bm25s library over the same tokens of "title. abstract", one document per paper).
Printed per set and style: MRR@10, nDCG@10 (graded where the set grades, else binary), the first result
relevant, and all of the first three relevant. Test splits are never read here. SciFact is benchmarks/retrieval_bench.py.

    .venv/bin/python -m benchmarks.ranking_bench [--workdir DIR] [--sets neurips24-dev,keywords,shared-dev,topics-dev]
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

from benchmarks.answer_bench import LABELLED, library_for, neurips, shared_dev
from benchmarks.keyword_bench import build_bm25s
from retrieval.keyword import tokenize

METHODS = ("hybrid", "dense", "lexical", "bm25s")
SETS = ("neurips24-dev", "keywords", "shared-dev", "topics-dev")
TOPICS = Path(__file__).resolve().parent / "data" / "neurips2024_topics.jsonl"


def keyword_queries(stored: set[str]) -> list[dict]:
    """Each stored labelled paper's own keywords, joined, as a query whose one relevant paper is that paper
    (papers the store leaves out, withdrawn or rejected, have none to find)."""
    items = []
    for path in sorted((LABELLED / "neurips2024_papers").glob("*.json")):
        d = json.loads(path.read_text(encoding="utf-8"))
        raw = d.get("keywords") or "[]"
        words = ast.literal_eval(raw) if isinstance(raw, str) else raw
        if words and d["id"] in stored:
            items.append({"q": ", ".join(words), "kind": "keywords", "gold": [d["id"]]})
    return items


def topic_queries(split: str) -> list[dict]:
    """The topic set's questions of `split`, each with its graded relevant papers."""
    items = []
    for line in TOPICS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            if d["split"] == split:
                items.append({"q": d["q"], "kind": d["style"], "gold": dict(d["relevant"])})
    return items


def scores(ranked: list[str], gold: dict[str, int]) -> tuple[float, float, float, float]:
    """(reciprocal rank within 10, nDCG@10 with the graded gains, the first result relevant, the first three
    all relevant)."""
    top = ranked[:10]
    rr = next((1 / (i + 1) for i, pid in enumerate(top) if gold.get(pid, 0) > 0), 0.0)
    dcg = sum(gold.get(pid, 0) / math.log2(i + 2) for i, pid in enumerate(top))
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(sorted(gold.values(), reverse=True)[:10]))
    first = float(bool(top) and gold.get(top[0], 0) > 0)
    three = float(len(top) >= 3 and all(gold.get(pid, 0) > 0 for pid in top[:3]))
    return rr, dcg / ideal if ideal else 0.0, first, three


def run(lib, items: list[dict]) -> dict[str, dict[str, list[tuple[float, float, float, float]]]]:
    """Per method, per style: each question's scores."""
    papers = lib.papers()
    ids = [p.paper_id for p in papers]
    index, vocab = build_bm25s([f"{p.title or p.label}. {p.abstract}" for p in papers])
    out: dict[str, dict[str, list[tuple[float, float, float, float]]]] = {m: defaultdict(list) for m in METHODS}
    for item in items:
        gold = item["gold"] if isinstance(item["gold"], dict) else {pid: 1 for pid in item["gold"]}
        vector = lib.embedder.encode([item["q"]])[0]
        for mode in ("hybrid", "dense", "lexical"):
            ranked = [r.paper_id for r in lib.retriever.rank(item["q"], depth=10, query_vector=vector, mode=mode)]
            out[mode][item["kind"]].append(scores(ranked, gold))
        tokens = [vocab[t] for t in tokenize(item["q"]) if t in vocab]
        if tokens:
            found, _ = index.retrieve([tokens], k=min(10, len(ids)), show_progress=False)
            ranked = [ids[int(i)] for i in np.asarray(found)[0]]
        else:
            ranked = []
        out["bm25s"][item["kind"]].append(scores(ranked, gold))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, help="where the stores are kept (default: a temp dir)")
    ap.add_argument("--sets", default=",".join(SETS))
    args = ap.parse_args()
    wanted = args.sets.split(",")
    unknown = set(wanted) - set(SETS)
    if unknown:
        raise SystemExit(f"unknown sets: {sorted(unknown)} (known: {', '.join(SETS)})")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        results = {}
        if {"neurips24-dev", "keywords", "topics-dev"} & set(wanted):
            with library_for(workdir, "neurips24") as lib:
                if "neurips24-dev" in wanted:
                    results["neurips24-dev"] = run(lib, [i for i in neurips(lib, "neurips24-dev") if i["gold"]])
                if "keywords" in wanted:
                    results["keywords"] = run(lib, keyword_queries({p.paper_id for p in lib.papers()}))
                if "topics-dev" in wanted:
                    results["topics-dev"] = run(lib, topic_queries("dev"))
        if "shared-dev" in wanted:
            with library_for(workdir, "bundled") as lib:
                results["shared-dev"] = run(lib, [{**i, "kind": "all"} for i in shared_dev(lib)])
    print("per method: MRR@10 / nDCG@10 / first relevant / first three all relevant")
    print(f"{'set / style':<22} {'n':>4}  " + "  ".join(f"{m:>31}" for m in METHODS))
    for name in wanted:
        by_method = results[name]
        styles = sorted(by_method["hybrid"])
        for label, kinds in [(name, styles)] + [(f"  {k}", [k]) for k in styles]:
            n = sum(len(by_method["hybrid"][k]) for k in kinds)
            cells = []
            for m in METHODS:
                values = np.array([s for k in kinds for s in by_method[m][k]]).reshape(-1, 4)
                mrr, ndcg, first, three = values.mean(axis=0) if len(values) else (0.0, 0.0, 0.0, 0.0)
                cells.append(f"{mrr:.3f} / {ndcg:.3f} / {100 * first:5.1f}% / {100 * three:5.1f}%")
            print(f"{label:<22} {n:>4}  " + "  ".join(f"{c:>31}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
