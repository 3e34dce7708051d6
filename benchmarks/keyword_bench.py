"""The keyword index against bm25s on BEIR SciFact: same rankings, build time, nothing embedded.

Both indexes read the same tokens (retrieval/keyword.py's tokenizer) of every
"title. text" document; the 300 test claims are scored by each. Printed: nDCG@10 of
both, how many claims get the same top 10 in the same order, the largest score
difference, and each build's wall time (interleaved, best of `--repeat`).

    .venv/bin/python -m benchmarks.keyword_bench [--scifact DIR]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from benchmarks.common import SCIFACT
from retrieval.evaluate import load_beir, ndcg_at
from retrieval.keyword import BM25_B, BM25_K1, KeywordIndex, tokenize


def build_bm25s(texts: list[str]):
    import bm25s

    vocab: dict[str, int] = {}
    docs = [[vocab.setdefault(t, len(vocab)) for t in tokenize(x) or ["\x00empty"]] for x in texts]
    index = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    index.index((docs, vocab), show_progress=False)
    return index, vocab


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scifact", type=Path, default=SCIFACT)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    queries, qrels = load_beir(args.scifact)
    corpus = [json.loads(x) for x in (args.scifact / "corpus.jsonl").read_text().splitlines() if x.strip()]
    ids = [str(d["_id"]) for d in corpus]
    texts = [f"{d.get('title', '')}. {d.get('text', '')}" for d in corpus]

    ours_s, ref_s = [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        ours = KeywordIndex.build(ids, texts)
        ours_s.append(time.perf_counter() - t)
        t = time.perf_counter()
        ref, vocab = build_bm25s(texts)
        ref_s.append(time.perf_counter() - t)

    ndcg_ours = ndcg_ref = 0.0
    same_top10, max_diff = 0, 0.0
    for qid, text in queries.items():
        tokens = tokenize(text)
        a = ours.scores(tokens)
        known = [t for t in tokens if t in vocab]
        b = np.asarray(ref.get_scores(known), dtype=np.float32) if known else np.zeros(len(ids), np.float32)
        max_diff = max(max_diff, float(np.abs(a - b).max()))
        top_a = [ids[i] for i in np.argsort(-a, kind="stable")[:10]]
        top_b = [ids[i] for i in np.argsort(-b, kind="stable")[:10]]
        same_top10 += top_a == top_b
        ndcg_ours += ndcg_at(top_a, qrels[qid])
        ndcg_ref += ndcg_at(top_b, qrels[qid])
    n = len(queries)
    print(f"SciFact: {len(ids)} documents, {n} claims")
    print(f"nDCG@10 (BM25 over whole documents): ours {ndcg_ours / n:.4f}, bm25s {ndcg_ref / n:.4f}")
    print(f"same top 10 in the same order: {same_top10}/{n}; largest score difference {max_diff:.2e}")
    print(f"build: ours {min(ours_s):.2f} s, bm25s {min(ref_s):.2f} s ({min(ours_s) / min(ref_s):.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
