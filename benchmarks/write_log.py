"""What the length of Chroma's write-ahead log costs a bot's write calls (ratios in one run).

Chroma keeps a collection's writes in its log until it next saves the collection's vector
index (its default: every 1,000 entries), and every write call reads the log back with
the GIL held. The store keeps it to `LOG_ENTRIES` (ingest/store.py). Generated
NeurIPS-length papers (conference_bench's program, from SciFact's sentences) are chunked
as ingest chunks them and written as a bot writes them (`Store.upsert` and
`SnippetRows.upsert`, 16-row calls with a pause between; random unit vectors, since the
model is not what is measured) into a copy of a store already holding `--before` papers,
with Chroma's default log and with the store's, rounds alternating. A thread beside the
writes sleeps 10 ms at a time, as a bot's event loop would; how late it woke is its lag.

`--child` adds the store served by a child process, as the bot serves it (CHROMA_CHILD,
ingest/chroma_child.py): its calls go over HTTP, up to 256 rows each, without pauses.

Printed per variant and kind of row: total write time (ratio to the default's), median,
95th percentile and largest call, calls over 100 ms; and the sleeping thread's largest lag.

    .venv/bin/python -m benchmarks.write_log [--papers 1500] [--before 3000] [--rounds 2] [--entries 100,50] [--alone]
        [--child]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from benchmarks.common import SCIFACT, percentile
from ingest import store as store_module
from ingest.pipeline import batch_chunks
from ingest.store import Store
from paperbot.records import Paper
from paperbot.settings import EmbeddingSettings, StoreSettings

CHROMA_DEFAULT = 1000  # Chroma's own sync_threshold
BATCH = 64  # papers per embedded batch, as a bot's ingest writes them


def rows_of(papers: list[Paper], seed: int) -> list[tuple[list, np.ndarray, list[tuple]]]:
    """Per batch of BATCH papers: its chunk rows, their vectors and its sentence rows, as ingest writes them."""
    from ingest.embed import Embedder

    embedder = Embedder(EmbeddingSettings.from_env())  # its tokenizer sizes the chunks
    rng = np.random.default_rng(seed)
    out = []
    for i in range(0, len(papers), BATCH):
        chunked = batch_chunks(papers[i:i + BATCH], embedder)
        rows = [row for c in chunked for row in c.rows]
        vectors = rng.standard_normal((len(rows), embedder.dimension)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        snippets = [(c.paper.paper_id, c.paper.content_hash, [(s.start, s.end) for s in c.sentences],
                     rng.standard_normal((len(c.sentences), embedder.dimension)).astype(np.float32))
                    for c in chunked if c.sentences]
        out.append((rows, vectors, snippets))
    return out


def put(store: Store, batches) -> None:
    """Write `batches` (from `rows_of`) through the store, a batch's chunks and then its sentence rows, as ingest does."""
    for rows, vectors, snippets in batches:
        store.upsert([r.chunk_id for r in rows], vectors, [r.metadata for r in rows])
        store.snippets.upsert(snippets)


def timed(method, times: list[float]):
    """`method`, each call's seconds appended to `times`."""
    def call(**kw):
        t = time.perf_counter()
        try:
            return method(**kw)
        finally:
            times.append(time.perf_counter() - t)
    return call


def write(path: Path, batches, log_entries: int, alone: bool = False, child: bool = False) -> dict[str, list[float]]:
    """Write `batches` into the store at `path` as a bot does (or, `alone`, as a lone `paperbot ingest`: no
    other thread, so calls of up to 256 rows without a pause; `child`, served by a child process), its log kept
    to `log_entries`; seconds per call."""
    store_module.LOG_ENTRIES = log_entries
    times: dict[str, list[float]] = {"chunks": [], "sentences": [], "lag": []}
    stop = threading.Event()

    def sleeper() -> None:  # a bot's event loop, and the other thread that makes the store write as in a bot
        while not stop.is_set():
            t = time.perf_counter()
            time.sleep(0.01)
            times["lag"].append(time.perf_counter() - t - 0.01)

    thread = threading.Thread(target=sleeper, daemon=True)
    try:
        with Store(StoreSettings(path=path), "all-MiniLM-L6-v2", 384, child=child) as store:
            store.query(batches[0][1][0], n=5)  # a serving bot has both collections loaded already
            store.snippets._rows.query(query_embeddings=[[0.5]], n_results=1)
            if not alone:
                thread.start()
            store._collection.upsert = timed(store._collection.upsert, times["chunks"])
            store.snippets._rows.upsert = timed(store.snippets._rows.upsert, times["sentences"])
            put(store, batches)
    finally:
        stop.set()
        if thread.is_alive():
            thread.join()
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--papers", type=int, default=1500, help="papers written per round")
    ap.add_argument("--before", type=int, default=3000, help="papers the store holds before the timed writes")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--entries", default=None,
                    help="log lengths to compare after Chroma's default, comma-separated (default: the store's)")
    ap.add_argument("--alone", action="store_true", help="write as a lone `paperbot ingest` does, not as a bot")
    ap.add_argument("--child", action="store_true", help="also the store's log, served by a child process")
    ap.add_argument("--scifact", type=Path, default=SCIFACT)
    args = ap.parse_args()
    from benchmarks.conference_bench import generate_program
    from benchmarks.scale_bench import sentence_pool
    from ingest.parse import parse_file

    now = store_module.LOG_ENTRIES
    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / "program.json"
        program.write_text(json.dumps(generate_program(args.before + args.papers, sentence_pool(args.scifact),
                                                       seed=7)))
        papers = parse_file(program)
        seed_batches = rows_of(papers[:args.before], seed=0)
        batches = rows_of(papers[args.before:], seed=1)
        seed = Path(tmp) / "seed"
        store_module.LOG_ENTRIES = CHROMA_DEFAULT
        with Store(StoreSettings(path=seed), "all-MiniLM-L6-v2", 384) as store:  # written alone: big calls
            put(store, seed_batches)
        print(f"{args.papers} papers written ({sum(len(b[0]) for b in batches)} chunk rows, "
              f"{sum(len(b[2]) for b in batches)} sentence rows) into a store of {args.before} papers")
        variants = {f"Chroma's default log ({CHROMA_DEFAULT})": (CHROMA_DEFAULT, False)}
        for entries in ([int(e) for e in args.entries.split(",")] if args.entries else [now]):
            variants[f"the store's ({entries})" if entries == now else f"a log of {entries}"] = (entries, False)
        if args.child:
            variants[f"the store's ({now}), served by a child process"] = (now, True)
        results: dict[str, dict[str, list[list[float]]]] = {name: {} for name in variants}
        for r in range(args.rounds):
            for name, (entries, child) in variants.items():
                path = Path(tmp) / f"round{r}-{entries}{'-child' if child else ''}"
                shutil.copytree(seed, path)
                for kind, spent in write(path, batches, entries, args.alone, child).items():
                    results[name].setdefault(kind, []).append(spent)
                shutil.rmtree(path)
        store_module.LOG_ENTRIES = now
        base = next(iter(results.values()))
        for name, by_kind in results.items():
            print(name)
            for kind in ("chunks", "sentences"):
                totals = [sum(t) for t in by_kind[kind]]
                ms = [t * 1000 for spent in by_kind[kind] for t in spent]
                ratio = statistics.median(totals) / statistics.median(sum(t) for t in base[kind])
                print(f"  {kind:9s} written in {' / '.join(f'{t:.2f}' for t in totals)} s ({ratio:.2f}x), "
                      f"call median {statistics.median(ms):.0f} ms, p95 {percentile(ms, 95):.0f} ms, "
                      f"largest {max(ms):.0f} ms, {sum(t > 100 for t in ms)} of {len(ms)} over 100 ms")
            lags = [max(spent, default=0) * 1000 for spent in by_kind["lag"]]
            if not args.alone:
                print(f"  the sleeping thread's largest lag: {' / '.join(f'{t:.0f}' for t in lags)} ms", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
