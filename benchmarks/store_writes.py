"""What a chunk write costs in embedded Chroma, by stored layout and rows per call (ratios in one run).

Generated NeurIPS-length papers (conference_bench's program, from SciFact's sentences) are
chunked as ingest chunks them; their rows (random unit vectors: the model is not what is
measured) are written into fresh embedded collections that already hold `--before` rows:

    per-key     the previous layout: each of a chunk's 29 fields its own metadata key, the text
                as the Chroma document (`previous_layout`)
    record      the fields as one JSON record, the text as the document
    record+text the fields and the text in the record, no document (what ingest writes)

Each layout is written in calls of each size, rounds alternating; the total for the same
rows, the median and the largest call are printed, with the total as a ratio of per-key's.

    .venv/bin/python -m benchmarks.store_writes [--papers 700] [--before 3000] [--sizes 16,256] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import SCIFACT
from ingest.pipeline import paper_chunks
from paperbot.records import RECORD_KEY, Paper


def previous_layout(paper: Paper, *, index: int, n_chunks: int, start: int, end: int) -> dict:
    """A chunk's metadata as the previous version wrote it: one key per field, lists as JSON text (tests
    build stores of that version with it)."""
    return {"paper_id": paper.paper_id, "source": paper.source, "position": paper.position, "label": paper.label,
            "title": paper.title, "authors": json.dumps(list(paper.authors)),
            "affiliations": json.dumps(list(paper.affiliations)), "url": paper.url, "venue": paper.venue,
            "links": json.dumps(list(paper.links)), "keywords": json.dumps(list(paper.keywords)), "area": paper.area,
            "subarea": paper.subarea, "presentation": paper.presentation, "track": paper.track, "tldr": paper.tldr,
            "pdf_url": paper.pdf_url, "site_url": paper.site_url,
            "slots": json.dumps([slot.to_json() for slot in paper.slots]), "bibtex": paper.bibtex,
            "title_zh": paper.title_zh, "content_hash": paper.embed_hash, "embed_hash": paper.embed_hash,
            "meta_hash": paper.meta_hash, "abstract_chars": len(paper.abstract), "chunk_index": index,
            "n_chunks": n_chunks, "start": start, "end": end}


def layouts(papers: list[Paper]) -> dict[str, tuple[list[str], list[str | None], list[dict]]]:
    """Per layout: the rows' ids, documents and metadata."""
    from ingest.embed import Embedder
    from paperbot.settings import EmbeddingSettings

    embedder = Embedder(EmbeddingSettings.from_env())  # its tokenizer sizes the chunks
    rows = [(p, row) for p in papers for row in paper_chunks(p, embedder)]
    counts = {p.paper_id: sum(q is p for q, _ in rows) for p in papers}
    ids = [row.chunk_id for _, row in rows]
    texts = [row.text for _, row in rows]
    per_key = [previous_layout(p, index=int(row.chunk_id.rsplit(":", 1)[1]), n_chunks=counts[p.paper_id],
                               start=row.start, end=row.end) for p, row in rows]
    with_text = [row.metadata for _, row in rows]
    without_text = []
    for meta in with_text:
        record = json.loads(meta[RECORD_KEY])
        record.pop("text")
        without_text.append({**meta, RECORD_KEY: json.dumps(record, ensure_ascii=False)})
    return {"per-key": (ids, texts, per_key), "record": (ids, texts, without_text),
            "record+text": (ids, [None] * len(ids), with_text)}


def write(folder: str, rows: tuple[list[str], list, list[dict]], before: int, size: int, seed: int) -> list[float]:
    """Seconds per call writing `rows` in calls of `size`, into a collection already holding `before` rows."""
    import chromadb
    from chromadb.config import Settings

    ids, docs, metas = rows
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((len(ids), 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    client = chromadb.PersistentClient(path=folder, settings=Settings(anonymized_telemetry=False))
    col = client.get_or_create_collection("bench", embedding_function=None, metadata={"hnsw:space": "cosine"})

    def put(lo: int, hi: int, prefix: str) -> None:
        col.upsert(ids=[prefix + i for i in ids[lo:hi]], embeddings=vectors[lo:hi],
                   documents=None if docs[0] is None else docs[lo:hi], metadatas=metas[lo:hi])

    for k in range(0, before, 500):  # what the store holds already (the same rows under other ids)
        lo = k % len(ids)
        put(lo, min(lo + 500, len(ids)), f"old{k}-")
    times = []
    for lo in range(0, len(ids), size):
        t = time.perf_counter()
        put(lo, lo + size, "")
        times.append(time.perf_counter() - t)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--papers", type=int, default=700)
    ap.add_argument("--before", type=int, default=3000, help="rows the collection holds before the timed writes")
    ap.add_argument("--sizes", default="16,256", help="rows per call, comma-separated")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--scifact", type=Path, default=SCIFACT)
    args = ap.parse_args()
    from benchmarks.conference_bench import generate_program
    from benchmarks.scale_bench import sentence_pool
    from ingest.parse import parse_file

    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / "program.json"
        program.write_text(json.dumps(generate_program(args.papers, sentence_pool(args.scifact), seed=7)))
        by_layout = layouts(parse_file(program))
        n = len(next(iter(by_layout.values()))[0])
        print(f"{args.papers} papers, {n} chunk rows; the collection holds {args.before} rows before")
        totals: dict[tuple[str, int], list[float]] = {}
        calls: dict[tuple[str, int], list[float]] = {}
        for r in range(args.rounds):
            for size in (int(s) for s in args.sizes.split(",")):
                for name, rows in by_layout.items():
                    times = write(f"{tmp}/{name}-{size}-{r}", rows, args.before, size, seed=r)
                    totals.setdefault((name, size), []).append(sum(times))
                    calls.setdefault((name, size), []).extend(times)
        for (name, size), spent in totals.items():
            base = statistics.median(totals[("per-key", size)])
            ms = [t * 1000 for t in calls[(name, size)]]
            print(f"{name:12s} {size:4d} rows/call: {' / '.join(f'{t:.2f}' for t in spent)} s "
                  f"({statistics.median(spent) / base:.2f}x per-key), median call {statistics.median(ms):.0f} ms, "
                  f"largest {max(ms):.0f} ms", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
