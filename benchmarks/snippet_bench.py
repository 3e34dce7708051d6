"""Snippets at ingest cost: warm search latency and snippet choice, stored sentence vectors vs query-time embedding.

In one run, on one SciFact store (the documents the test claims cite, filled up
with others to --docs):

  1. Warm search p50/p95 over the distinct test claims, and over as many variants
     of one claim (whose papers' sentences a query-time cache would already hold):
     the goal is distinct ≤ 1.5× variants at p50 and ≤ 3× at p95.
  2. The same with the sentence vectors removed from the store, which is how a
     store built before they existed is served (sentences embedded at query time).
  3. Snippet choice: the share of hits whose first quoted sentence is the same
     with stored vectors as with query-time embedding (agreement with the old
     choice), and, for claims whose cited abstract is retrieved, the share where
     that abstract's first quote is the sentence sharing the most content words
     with the claim (a reader's pick, by proxy), for both.

    .venv/bin/python -m benchmarks.snippet_bench [--scifact DIR] [--docs N] [--queries N]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import SCIFACT, percentile
from bot.runtime import open_library
from paperbot.settings import Settings, default_cache_dir
from paperbot.text import split_sentences
from retrieval.evaluate import load_beir
from retrieval.keyword import content_tokens
from retrieval.library import Library


def timed(lib: Library, queries: list[str]) -> list[float]:
    out = []
    for q in queries:
        t = time.perf_counter()
        lib.search(q)
        out.append((time.perf_counter() - t) * 1000)
    return out


def first_quotes(lib: Library, queries: list[str]) -> dict[tuple[str, str], str]:
    return {(q, h.paper_id): h.quotes[0].text for q in queries for h in lib.search(q).hits if h.quotes}


def reader_pick(claim: str, abstract: str) -> str:
    """The abstract's sentence sharing the most content words with the claim."""
    words = set(content_tokens(claim))
    sentences = [abstract[s.start:s.end] for s in split_sentences(abstract)]
    return max(sentences, key=lambda s: len(words & set(content_tokens(s))))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scifact", type=Path, default=SCIFACT)
    ap.add_argument("--docs", type=int, default=1500, help="documents in the store (cited ones first)")
    ap.add_argument("--queries", type=int, default=300)
    args = ap.parse_args()

    queries, qrels = load_beir(args.scifact)
    with open(args.scifact / "corpus.jsonl", encoding="utf-8") as f:
        corpus = {(doc := json.loads(line))["_id"]: doc for line in f if line.strip()}
    claims = [(qid, queries[qid]) for qid in qrels if qid in queries][: args.queries]
    cited = [d for qid, _ in claims for d in qrels[qid] if d in corpus]
    rest = [d for d in corpus if d not in set(cited)]
    random.Random(0).shuffle(rest)
    keep = list(dict.fromkeys(cited + rest))[: max(args.docs, len(set(cited)))]
    tmp = Path(tempfile.mkdtemp(prefix="paperbot-snippets-"))
    path = tmp / "scifact.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for d in keep:
            doc = corpus[d]
            f.write(json.dumps({"id": d, "title": doc.get("title", ""), "abstract": doc["text"]}) + "\n")
    settings = Settings.from_env({"CHROMA_PATH": str(tmp / "chroma"), "PAPERBOT_CACHE_DIR": str(tmp / "cache"),
                                  "EMBEDDING_CACHE_DIR": str(default_cache_dir()), "PAPERBOT_CORPUS": str(path)})
    texts = [text for _, text in claims]
    variants = [f"{texts[0]} {w}" for w in ("", "?", "please", "papers", "evidence", "study")] * (len(texts) // 6 + 1)
    variants = variants[: len(texts)]
    print(f"store: {len(keep)} SciFact abstracts; {len(texts)} claims; backend {settings.embedding.backend}")

    with open_library(settings) as lib:
        t = time.perf_counter()
        summary = lib.ingest()
        took = time.perf_counter() - t
        print(f"ingest: {summary.line()} in {took:.0f} s ({len(keep) / took:.1f} docs/s)")
        lib.search("warm up")
        stored = {"distinct": timed(lib, texts), "variants": timed(lib, variants)}
        stored_quotes = first_quotes(lib, texts)
        papers = {p.paper_id: p for p in lib.papers()}
        lib.store.snippets.delete(list({p.content_hash for p in papers.values()}))  # as a store from before
    with open_library(settings) as lib:
        lib.search("warm up")
        live = {"distinct": timed(lib, texts), "variants": timed(lib, variants)}
        live_quotes = first_quotes(lib, texts)

    for name, runs in (("stored sentence vectors", stored), ("query-time embedding", live)):
        d, v = runs["distinct"], runs["variants"]
        print(f"{name}: distinct p50 {percentile(d, 50):.0f} ms p95 {percentile(d, 95):.0f} ms; variants p50 {percentile(v, 50):.0f} ms "
              f"p95 {percentile(v, 95):.0f} ms; ratio p50 {percentile(d, 50) / percentile(v, 50):.2f}x p95 {percentile(d, 95) / percentile(v, 95):.2f}x")
    print(f"distinct-claim p50, query-time / stored: {percentile(live['distinct'], 50) / percentile(stored['distinct'], 50):.1f}x")
    common = [k for k in stored_quotes if k in live_quotes]
    same = sum(stored_quotes[k] == live_quotes[k] for k in common)
    print(f"first quote identical to query-time embedding's: {same}/{len(common)} hits ({same / len(common):.0%})")
    for name, quotes in (("stored", stored_quotes), ("query-time", live_quotes)):
        picks = [(q, d) for (qid, q) in claims for d in qrels[qid] if (q, d) in quotes]
        hits = sum(quotes[(q, d)] == reader_pick(q, papers[d].abstract) for q, d in picks)
        print(f"{name}: cited abstract's first quote is the reader's pick (most shared content words) "
              f"{hits}/{len(picks)} ({hits / len(picks):.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
