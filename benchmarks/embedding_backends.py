"""fp32 torch vs onnx-int8 embeddings on a BEIR folder (default: SciFact), in one run.

1. Encoding speed: the same texts (title. abstract, as ingest embeds them) are
   encoded by both backends in alternating blocks, so both see the same machine
   load; prints docs/s for each, their ratio, and how close the vectors are.
2. Retrieval quality: `retrieval.evaluate.evaluate` (fresh store, full ingest,
   every query) with each backend; prints nDCG@10 / recall@100 and the
   end-to-end ingest docs/s.

    .venv/bin/python -m benchmarks.embedding_backends                       # full SciFact
    .venv/bin/python -m benchmarks.embedding_backends --limit-docs 1000     # quick: a subset, its queries
    .venv/bin/python -m benchmarks.embedding_backends --speed-docs 1000     # speed on 1000 docs, eval on all

Goal (issue 5): onnx-int8 ≥ 2× the docs/s of fp32 with nDCG@10 (hybrid and dense) at most 0.01 lower.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.common import SCIFACT

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np

from ingest.embed import Embedder
from paperbot.settings import Settings
from retrieval.evaluate import evaluate

DEFAULT_DATA = SCIFACT
BACKENDS = ("torch", "onnx-int8")
BLOCK = 128


def read_corpus(folder: Path, limit: int | None) -> list[dict]:
    docs = []
    with open(folder / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                docs.append(json.loads(line))
                if limit and len(docs) >= limit:
                    break
    return docs


def subset_folder(folder: Path, docs: list[dict], out: Path) -> Path:
    """A BEIR folder with only `docs` and the judgements (and queries) that point into them."""
    ids = {str(d["_id"]) for d in docs}
    (out / "qrels").mkdir(parents=True)
    with open(out / "corpus.jsonl", "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d) + "\n")
    kept = set()
    with open(folder / "qrels" / "test.tsv", encoding="utf-8") as src, \
            open(out / "qrels" / "test.tsv", "w", encoding="utf-8") as dst:
        for n, line in enumerate(src):
            parts = line.rstrip("\n").split("\t")
            if n == 0 or parts[1] in ids:
                dst.write(line)
                if n:
                    kept.add(parts[0])
    with open(folder / "queries.jsonl", encoding="utf-8") as src, \
            open(out / "queries.jsonl", "w", encoding="utf-8") as dst:
        for line in src:
            if line.strip() and str(json.loads(line)["_id"]) in kept:
                dst.write(line)
    return out


def embedders(settings: Settings, batch_size: int) -> dict[str, Embedder]:
    out = {}
    for backend in BACKENDS:
        t0 = time.perf_counter()
        e = Embedder(replace(settings.embedding, backend=backend, batch_size=batch_size))
        e.encode(["warm up"] * 4)
        print(f"loaded {e.name} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        out[backend] = e
    return out


def measure_speed(models: dict[str, Embedder], texts: list[str]) -> dict:
    """Alternate blocks between backends (order flipped every block) so load spikes hit both alike."""
    seconds = dict.fromkeys(models, 0.0)
    vectors: dict[str, list[np.ndarray]] = {b: [] for b in models}
    names = list(models)
    for i in range(0, len(texts), BLOCK):
        block = texts[i:i + BLOCK]
        for b in names if (i // BLOCK) % 2 == 0 else names[::-1]:
            t0 = time.perf_counter()
            vectors[b].append(models[b].encode(block))
            seconds[b] += time.perf_counter() - t0
        done = min(i + BLOCK, len(texts))
        print(f"  speed: {done}/{len(texts)} docs  " + "  ".join(
            f"{b} {done / seconds[b]:.1f} docs/s" for b in names), file=sys.stderr, flush=True)
    a, b = (np.concatenate(vectors[n]) for n in names)
    cos = (a * b).sum(axis=1)
    return {
        "docs": len(texts),
        "docs_per_s": {n: round(len(texts) / seconds[n], 2) for n in names},
        "ratio": round(seconds[names[0]] / seconds[names[1]], 2),
        "cosine_min": round(float(cos.min()), 4),
        "cosine_mean": round(float(cos.mean()), 4),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="BEIR folder (default: %(default)s)")
    ap.add_argument("--limit-docs", type=int, default=None, help="use only the first N documents (and their queries)")
    ap.add_argument("--speed-docs", type=int, default=None, help="encode only the first N documents in the speed test")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--skip-eval", action="store_true", help="only the speed test")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args(argv)

    settings = Settings.from_env()
    models = embedders(settings, args.batch_size)
    docs = read_corpus(args.data, args.limit_docs)
    texts = [f"{d.get('title')}. {d['text']}" if d.get("title") else d["text"] for d in docs]
    report: dict = {"data": str(args.data), "docs": len(docs), "batch_size": args.batch_size,
                    "cpus": os.cpu_count(), "load_before": os.getloadavg()[0]}
    report["speed"] = measure_speed(models, texts[:args.speed_docs] if args.speed_docs else texts)

    if not args.skip_eval:
        with tempfile.TemporaryDirectory() as tmp:
            folder = subset_folder(args.data, docs, Path(tmp) / "beir") if args.limit_docs else args.data
            report["eval"] = {}
            for backend, model in models.items():
                t0 = time.perf_counter()
                result = evaluate(folder, settings, embedder=model)
                result["seconds"] = round(time.perf_counter() - t0, 1)
                report["eval"][backend] = result
                print(f"  eval {backend}: {json.dumps(result)}", file=sys.stderr, flush=True)
    report["load_after"] = os.getloadavg()[0]
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


def print_report(r: dict) -> None:
    s = r["speed"]
    print(f"data: {r['data']} ({r['docs']} docs), batch size {r['batch_size']}, {r['cpus']} CPUs, "
          f"load average {r['load_before']:.1f} → {r['load_after']:.1f}")
    print(f"encoding speed ({s['docs']} docs, alternating blocks of {BLOCK}):")
    for b, v in s["docs_per_s"].items():
        print(f"  {b:10s} {v:8.1f} docs/s")
    print(f"  ratio onnx-int8 / torch: {s['ratio']:.2f}×   (goal ≥ 2×)")
    print(f"  cosine(int8, fp32) per doc: min {s['cosine_min']:.4f}, mean {s['cosine_mean']:.4f}")
    if "eval" in r:
        e = r["eval"]
        print(f"retrieval quality ({e['torch']['queries']} queries):")
        print(f"  {'':10s} {'nDCG@10 lex/dense/hybrid':>28s} {'recall@100 dense/hybrid':>25s} {'ingest docs/s':>14s}")
        for b, v in e.items():
            n, rc = v["ndcg@10"], v["recall@100"]
            print(f"  {b:10s} {n['lexical']:8.4f} {n['dense']:8.4f} {n['hybrid']:8.4f}"
                  f" {rc['dense']:12.4f} {rc['hybrid']:10.4f} {v['docs_per_s']:14.2f}")
        for mode in ("dense", "hybrid"):
            diff = e["onnx-int8"]["ndcg@10"][mode] - e["torch"]["ndcg@10"][mode]
            print(f"  nDCG@10 {mode} difference (int8 - fp32): {diff:+.4f}   (goal ≥ -0.01)")
        ratio = e["onnx-int8"]["docs_per_s"] / e["torch"]["docs_per_s"] if e["torch"]["docs_per_s"] else 0.0
        print(f"  end-to-end ingest docs/s ratio: {ratio:.2f}× (sequential runs; noisier than the speed test)")


if __name__ == "__main__":
    raise SystemExit(main())
