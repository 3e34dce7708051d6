"""Copy an ingested store and grow it to N papers by repeating its papers under new ids.

Vectors, texts and metadata are copied as stored (chunks and sentence vectors), so
nothing is embedded: a 20,000-paper store takes minutes instead of the better part of
an hour of model time. The copy is meant for memory and latency measurements that
depend on how much a store holds, not on what it says; e.g. the bot's RSS:

    .venv/bin/python -m scripts.grow_store /tmp/conf/store /tmp/conf20k/store --papers 20000
    .venv/bin/python -m benchmarks.conference_bench --serve /tmp/conf20k/store --soak-minutes 3
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

from paperbot.records import RECORD_KEY, paper_id_of
from paperbot.settings import Settings

PAGE = 2000


def records(col) -> list[tuple[list[str], list, list, list]]:
    out, offset = [], 0
    while True:
        got = col.get(limit=PAGE, offset=offset, include=["embeddings", "documents", "metadatas"])
        if not got["ids"]:
            return out
        out.append((got["ids"], got["embeddings"], got["documents"], got["metadatas"]))
        offset += len(got["ids"])


def copied(meta: dict, k: int, have: int) -> dict:
    """A chunk's metadata for its k-th copy: another paper id, a later position (either stored layout)."""
    out = {**meta, "paper_id": f"{meta['paper_id']}~{k}"}
    if RECORD_KEY in meta:
        record = json.loads(meta[RECORD_KEY])
        out[RECORD_KEY] = json.dumps({**record, "position": record["position"] + k * have}, ensure_ascii=False)
    else:
        out["position"] = meta["position"] + k * have
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", type=Path, help="an embedded store folder (CHROMA_PATH)")
    ap.add_argument("target", type=Path, help="where the grown copy goes (replaced)")
    ap.add_argument("--papers", type=int, default=20000)
    args = ap.parse_args()

    import chromadb

    name = Settings.from_env({}).store.collection
    shutil.rmtree(args.target, ignore_errors=True)
    shutil.copytree(args.source, args.target)
    client = chromadb.PersistentClient(path=str(args.target))
    chunks, sentences = client.get_collection(name), client.get_collection(f"{name}-snippets")
    chunk_pages, sentence_pages = records(chunks), records(sentences)
    have = len({m["paper_id"] for _, _, _, metas in chunk_pages for m in metas})
    copies = -(-args.papers // have) - 1
    t = time.perf_counter()
    added = 0
    for k in range(1, copies + 1):
        if have * k >= args.papers:
            break
        wanted = args.papers - have * k  # the last copy may be partial
        keep = sorted({m["paper_id"] for _, _, _, metas in chunk_pages for m in metas})[:wanted]
        keep_set = set(keep)
        for ids, vecs, docs, metas in chunk_pages:
            rows = [i for i, m in enumerate(metas) if m["paper_id"] in keep_set]
            if rows:
                chunks.add(ids=[f"{paper_id_of(ids[i])}~{k}:{ids[i].rsplit(':', 2)[1]}:{ids[i].rsplit(':', 1)[1]}"
                                for i in rows],
                           embeddings=[vecs[i] for i in rows], documents=[docs[i] for i in rows],
                           metadatas=[copied(metas[i], k, have) for i in rows])
        for ids, vecs, _, metas in sentence_pages:
            rows = [i for i, m in enumerate(metas) if m["paper_id"] in keep_set]
            if rows:
                sentences.add(ids=[f"{metas[i]['paper_id']}~{k}:{metas[i]['content_hash']}" for i in rows],
                              embeddings=[vecs[i] for i in rows],
                              metadatas=[{**metas[i], "paper_id": f"{metas[i]['paper_id']}~{k}"} for i in rows])
        added += len(keep)
        print(f"copy {k}: {have + added} papers ({time.perf_counter() - t:.0f} s)", flush=True)
    meta = dict(chunks.metadata or {})
    meta.pop("hnsw:space", None)  # fixed at creation; Chroma refuses to change it
    meta["content_version"] = f"grown-{args.papers}"
    chunks.modify(metadata=meta)
    print(f"{args.target}: {chunks.count()} chunks, sentence vectors of {sentences.count()} papers")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
