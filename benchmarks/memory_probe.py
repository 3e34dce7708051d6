"""Where a serving process's memory goes: RSS after each step of opening an ingested store.

Steps, in one process: imports; the store opened and the model loaded; the first read of
the chunk collection (Chroma loads its vector index then, whatever is read); the corpus
view (papers, abstracts, BM25); one search; three filtered searches (type oral,
type spotlight, the largest area: the vectors of their chunks are read and kept);
50 more searches. Each line prints the RSS and the step's share.

    .venv/bin/python -m benchmarks.memory_probe /tmp/conf20k/store
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from benchmarks.common import REPO, rss_mb


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("store", type=Path, help="an ingested embedded store (CHROMA_PATH)")
    args = ap.parse_args()
    last = rss_mb()

    def step(name: str, started: float) -> None:
        nonlocal last
        now = rss_mb()
        print(f"{name:<48} RSS {now:6.0f} MB  {now - last:+6.0f} MB  {time.perf_counter() - started:6.1f} s",
              flush=True)
        last = now

    t = time.perf_counter()
    from paperbot.memory import steady_heap
    from paperbot.settings import Settings
    from retrieval.library import Library

    step("imports", t)
    steady_heap()  # as the bot does
    t = time.perf_counter()
    library = Library(Settings.from_env({**os.environ, "CHROMA_PATH": str(args.store)}))
    retriever = library.retriever
    retriever.embedder.encode(["load the model"])
    step("store opened, model loaded", t)
    t = time.perf_counter()
    retriever.store.count()
    library.store._collection.get(include=[], limit=1)
    step("first read of the chunks (Chroma's vector index)", t)
    t = time.perf_counter()
    view = retriever.view()
    step(f"corpus view: {len(view.papers):,} papers, {len(view.chunk_ids):,} chunks", t)
    questions = [json.loads(x)["question"] for x in
                 (REPO / "benchmarks/data/bundled_questions.jsonl").read_text().splitlines() if x]
    t = time.perf_counter()
    library.search(questions[0])
    step("one search", t)
    t = time.perf_counter()
    from collections import Counter

    from retrieval.filters import Filters
    area = Counter(p.area for p in view.papers.values()).most_common(1)[0][0]
    for filters in (Filters(type="oral"), Filters(type="spotlight"), Filters(area=area)):
        library.search(questions[1], filters=filters)
    step(f"searches filtered by oral, spotlight, one area ({view.vectors_read:,} chunk vectors read)", t)
    t = time.perf_counter()
    for q in (questions * 2)[:50]:
        library.search(q)
    step("50 more searches", t)
    library.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
