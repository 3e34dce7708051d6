"""Similar-paper quality on BEIR SciFact, and the cost of a metadata filter, printed as numbers.

Quality: a SciFact claim cites one or more abstracts. For every claim citing at least
two, each cited abstract in turn is the query paper (`Retriever.similar`), and we
measure how many of the claim's *other* cited abstracts rank in the top 10
(recall@10, and hit@10: at least one of them in the top 10). The same run scores
the similar-papers ranking with only its BM25 side (the paper's key terms) as the
baseline, and with only its dense side.

Filter cost: the corpus is ingested with synthetic metadata (a presentation type
drawn from the document id: about 10% oral, 20% spotlight, the rest poster; one of
200 invented authors), so that filtered searches (type=oral, author=…) can be timed
against unfiltered ones on the same store.

    .venv/bin/python -m benchmarks.similar_bench [--scifact DIR] [--store DIR] [--limit-docs N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import SCIFACT
from bot.runtime import open_library
from paperbot.settings import Settings
from retrieval.filters import Filters

MODES = ("hybrid", "lexical", "dense")
K = 10


def synthetic_metadata(doc_id: str) -> dict:
    h = int(hashlib.sha256(doc_id.encode()).hexdigest(), 16)
    kind = "oral" if h % 10 == 0 else "spotlight" if h % 10 < 3 else "poster"
    return {"type": kind, "authors": [f"Author {h % 200:03d}"]}


def write_corpus(scifact: Path, out: Path, wanted: set[str] | None) -> int:
    """SciFact's corpus as flat JSON records with synthetic metadata (only `wanted` ids when given)."""
    records = []
    with open(scifact / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            if wanted is not None and doc["_id"] not in wanted:
                continue
            records.append({"id": doc["_id"], "title": doc.get("title", ""), "abstract": doc["text"],
                            **synthetic_metadata(doc["_id"])})
    out.write_text(json.dumps(records), encoding="utf-8")
    return len(records)


def claims(scifact: Path) -> dict[str, list[str]]:
    """Claim id → the abstracts it cites, for claims citing at least two."""
    cited: dict[str, list[str]] = {}
    with open(scifact / "qrels" / "test.tsv", encoding="utf-8") as f:
        for n, line in enumerate(f):
            parts = line.rstrip("\n").split("\t")
            if n == 0 and not parts[-1].isdigit():
                continue
            if int(parts[2]) > 0:
                cited.setdefault(parts[0], []).append(parts[1])
    return {c: docs for c, docs in cited.items() if len(docs) >= 2}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scifact", type=Path, default=SCIFACT)
    ap.add_argument("--store", type=Path, default=None, help="keep the store here (re-runs embed nothing)")
    ap.add_argument("--limit-docs", type=int, default=None,
                    help="ingest only the cited abstracts plus the first N others (faster, easier task)")
    args = ap.parse_args()
    groups = claims(args.scifact)
    tmp = tempfile.TemporaryDirectory()
    base = args.store or Path(tmp.name)
    wanted = None
    if args.limit_docs is not None:
        wanted = {d for docs in groups.values() for d in docs}
        with open(args.scifact / "corpus.jsonl", encoding="utf-8") as f:
            for n, line in enumerate(f):
                if n >= args.limit_docs:
                    break
                wanted.add(json.loads(line)["_id"])
    base.mkdir(parents=True, exist_ok=True)
    n_docs = write_corpus(args.scifact, base / "scifact_program.json", wanted)
    settings = Settings.from_env({"CHROMA_PATH": str(base / "chroma"), "PAPERBOT_CACHE_DIR": str(base / "cache"),
                                  "CHROMA_COLLECTION": "similar-bench"})
    results: dict = {"docs": n_docs, "claims": len(groups)}
    with open_library(settings) as lib:
        lib.embedder.encode(["warm up"])
        t = time.perf_counter()
        summary = lib.ingest([base / "scifact_program.json"])
        print(f"ingest: {summary.line()} in {time.perf_counter() - t:.0f} s")

        # -- similar-paper quality ---------------------------------------------------------
        recall = {m: [] for m in MODES}
        hit = {m: [] for m in MODES}
        t = time.perf_counter()
        for docs in groups.values():
            for query in docs:
                others = set(docs) - {query}
                for mode in MODES:
                    top = [s.paper_id for s in lib.similarity.similar(query, K, mode=mode)]
                    found = len(others & set(top))
                    recall[mode].append(found / len(others))
                    hit[mode].append(1.0 if found else 0.0)
        pairs = len(recall["hybrid"])
        per_query_ms = (time.perf_counter() - t) * 1000 / (pairs * len(MODES))
        print(f"similar papers on SciFact ({n_docs} abstracts; {len(groups)} claims citing ≥ 2 abstracts, "
              f"{pairs} query papers; ~{per_query_ms:.0f} ms per similar query):")
        for mode, name in (("hybrid", "similar (hybrid)"), ("lexical", "BM25-only baseline"),
                           ("dense", "dense-only")):
            print(f"  {name:<20} recall@10 {statistics.mean(recall[mode]):.3f}   hit@10 {statistics.mean(hit[mode]):.3f}")
        results["similar"] = {m: {"recall@10": round(statistics.mean(recall[m]), 4),
                                  "hit@10": round(statistics.mean(hit[m]), 4)} for m in MODES}
        results["query_papers"] = pairs

        # -- filter cost -------------------------------------------------------------------------
        queries = []
        with open(args.scifact / "queries.jsonl", encoding="utf-8") as f:
            queries = [json.loads(line)["text"] for line in f][:60]
        lib.search(queries[0])  # warm: keyword index, sentence cache
        timings: dict[str, list[float]] = {}
        cases = {"unfiltered": None, "type=oral": Filters(type="oral"), "type=poster": Filters(type="poster"),
                 "author=Author 007": Filters(author="Author 007")}
        for _ in range(2):
            for q in queries:
                for name, filters in cases.items():
                    t = time.perf_counter()
                    lib.search(q, 5, filters)
                    timings.setdefault(name, []).append((time.perf_counter() - t) * 1000)
        base_ms = statistics.median(timings["unfiltered"])
        print(f"search latency with filters ({len(queries)} SciFact claims × 2, median):")
        for name, values in timings.items():
            med = statistics.median(values)
            print(f"  {name:<18} {med:6.1f} ms  ({med / base_ms:.2f}× unfiltered)")
        results["filter_ms"] = {name: round(statistics.median(v), 1) for name, v in timings.items()}
    print(json.dumps(results))
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
