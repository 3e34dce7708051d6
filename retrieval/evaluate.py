"""Retrieval quality on a BEIR-format folder: nDCG@10 and recall@100, lexical vs dense vs hybrid.

The folder holds ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``
(``_id``, ``text``) and ``qrels/test.tsv`` (query-id, corpus-id, score, with a
header row). The corpus is ingested with the configured model into a fresh
store of its own under PAPERBOT_CACHE_DIR, so the user's store is never touched
and ingest speed (docs/s) is measured on every run.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import time
from dataclasses import replace
from pathlib import Path

from ingest.embed import Embedder
from ingest.pipeline import Progress
from paperbot.errors import InputError
from paperbot.settings import Settings

MODES = ("lexical", "dense", "hybrid")


def load_beir(folder: Path, limit: int | None = None) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """Queries that have relevance judgements, and the judgements."""
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        if not (folder / name).is_file():
            raise InputError(str(folder / name), "missing: a BEIR folder needs corpus.jsonl, queries.jsonl "
                             "and qrels/test.tsv")
    qrels: dict[str, dict[str, int]] = {}
    for n, line in enumerate(_lines(folder / "qrels" / "test.tsv"), start=1):
        parts = line.rstrip("\n").split("\t")
        if n == 1 and not parts[-1].strip().lstrip("-").isdigit():
            continue  # header row
        if len(parts) < 3:
            raise InputError(str(folder / "qrels/test.tsv"), "expected query-id<TAB>corpus-id<TAB>score", line=n)
        try:
            score = int(parts[2])
        except ValueError:
            raise InputError(str(folder / "qrels/test.tsv"), f"score {parts[2]!r} is not a whole number",
                             line=n) from None
        if score > 0:
            qrels.setdefault(parts[0], {})[parts[1]] = score
    queries: dict[str, str] = {}
    for n, line in enumerate(_lines(folder / "queries.jsonl"), start=1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
            qid, text = str(q["_id"]), q["text"]
        except (ValueError, KeyError, TypeError):
            raise InputError(str(folder / "queries.jsonl"), "expected a JSON object with _id and text",
                             line=n) from None
        if not isinstance(text, str) or not text.strip():
            raise InputError(str(folder / "queries.jsonl"), f"query {qid!r}: text must be a non-empty string",
                             line=n)
        if qid in qrels:
            queries[qid] = text
    ids = sorted(queries, key=lambda q: (len(q), q))
    if limit:
        ids = ids[:limit]
    return {q: queries[q] for q in ids}, {q: qrels[q] for q in ids}


def _lines(path: Path) -> list[str]:
    """The lines of a UTF-8 file (an InputError naming the line where it is not UTF-8)."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(str(path), f"is not UTF-8 text (byte {data[exc.start]:#04x})",
                         line=data[:exc.start].count(b"\n") + 1) from None


def ndcg_at(ranked: list[str], rel: dict[str, int], k: int = 10) -> float:
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rel.values(), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], rel: dict[str, int], k: int = 100) -> float:
    return len(set(ranked[:k]) & set(rel)) / len(rel) if rel else 0.0


def evaluate(folder: Path, settings: Settings, limit: int | None = None, progress: Progress | None = None,
             embedder: Embedder | None = None) -> dict:
    """Ingest the folder's corpus into a fresh store and score every mode on its queries."""
    from retrieval.library import Library

    folder = Path(folder)
    queries, qrels = load_beir(folder, limit)
    embedder = embedder or Embedder(settings.embedding)
    # One store per folder and embedder: Chroma keeps a client per path for the life of the process,
    # so evaluating two embedders in one run must not reuse the path.
    key = hashlib.sha256(f"{folder.resolve()}\0{embedder.name}".encode()).hexdigest()[:12]
    eval_path = settings.cache_dir / "eval" / key
    shutil.rmtree(eval_path, ignore_errors=True)
    store = replace(settings.store, path=eval_path, host=None, collection=f"eval-{key}")
    lib = Library(replace(settings, store=store), embedder=embedder)
    try:
        lib.embedder.encode(["warm up"])
        t0 = time.perf_counter()
        summary = lib.ingest([folder / "corpus.jsonl"], progress=progress)
        elapsed = time.perf_counter() - t0
        report = score(lib, queries, qrels)
        report["docs_per_s"] = round((summary.added + summary.updated) / elapsed, 2) if elapsed else 0.0
        report["queries"] = len(queries)
        return report
    finally:
        lib.close()
        shutil.rmtree(eval_path, ignore_errors=True)


def score(lib, queries: dict[str, str], qrels: dict[str, dict[str, int]]) -> dict:
    """Mean nDCG@10 and recall@100 of every mode over `queries` on an ingested library."""
    ndcg = {m: 0.0 for m in MODES}
    recall = {m: 0.0 for m in MODES}
    for qid, text in queries.items():
        qvec = lib.embedder.encode([text])[0]
        for mode in MODES:
            ranked = [r.paper_id for r in lib.retriever.rank(text, depth=100, query_vector=qvec, mode=mode)]
            ndcg[mode] += ndcg_at(ranked, qrels[qid])
            recall[mode] += recall_at(ranked, qrels[qid])
    n = max(len(queries), 1)
    return {
        "ndcg@10": {m: round(v / n, 4) for m, v in ndcg.items()},
        "recall@100": {m: round(v / n, 4) for m, v in recall.items()},
    }
