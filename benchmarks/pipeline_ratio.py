"""The ingest pipeline against the model alone on the same chunk texts, in one process (ratios in one run).

A generated NeurIPS-length program (as conference_bench.py makes it, from SciFact's
sentences) is ingested into a fresh temporary store by `Library.ingest`, and the chunk
texts that ingest embeds are encoded by the same embedder alone; rounds alternate.
Process start and model load are left out, so the ratio is the pipeline's own cost (the
store's opening and closing included). Starting Chroma (its import and runtime, which the first
store a process opens pays) is process start too: a scratch store is opened before the rounds.

With --compare-unpinned every round also ingests with the store's own threads left free to
run on any core while it writes (`ingest/cores.py`), the two orders alternating.

    .venv/bin/python -m benchmarks.pipeline_ratio [--papers 500] [--rounds 2] [--program FILE] [--compare-unpinned]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.common import SCIFACT
from ingest import cores
from ingest.embed import Embedder
from ingest.parse import parse_file
from ingest.pipeline import paper_chunks
from paperbot.records import indexed_text
from paperbot.settings import EmbeddingSettings, Settings
from retrieval.library import Library


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--papers", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--program", type=Path, default=None, help="a program JSON to ingest instead of a generated one")
    ap.add_argument("--scifact", type=Path, default=SCIFACT)
    ap.add_argument("--compare-unpinned", action="store_true",
                    help="also ingest with Chroma's threads left unpinned during writes, alternating")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        program = args.program
        if program is None:
            from benchmarks.conference_bench import generate_program
            from benchmarks.scale_bench import sentence_pool

            program = Path(tmp) / "program.json"
            program.write_text(json.dumps(generate_program(args.papers, sentence_pool(args.scifact), seed=7)))
        embedder = Embedder(EmbeddingSettings.from_env())
        embedder.encode(["warm up"] * 8)
        papers = parse_file(program)
        texts = [indexed_text(p.title, text, p.keywords) for p in papers for _, text, *_ in paper_chunks(p, embedder)]
        print(f"{len(papers)} papers, {len(texts)} chunks")
        scratch = Settings.from_env({"CHROMA_PATH": f"{tmp}/scratch", "PAPERBOT_CACHE_DIR": f"{tmp}/cache"})
        Library(scratch, embedder=embedder).close()
        ratios: dict[bool, list[float]] = {True: [], False: []}
        writes: dict[bool, list[float]] = {True: [], False: []}
        for r in range(args.rounds):
            order = (True, False) if r % 2 == 0 else (False, True)
            for pinned in order if args.compare_unpinned else (True,):
                cores.ENABLED = pinned
                t = time.perf_counter()
                embedder.encode(texts)
                model = time.perf_counter() - t
                settings = Settings.from_env({"CHROMA_PATH": f"{tmp}/store{r}{pinned}",
                                              "PAPERBOT_CACHE_DIR": f"{tmp}/cache"})
                t = time.perf_counter()  # opening and closing the store count: no write is left for later
                with Library(settings, embedder=embedder) as lib:
                    summary = lib.ingest([program])
                pipeline = time.perf_counter() - t
                ratios[pinned].append(model / pipeline)
                writes[pinned].append(summary.write_seconds)
                print(f"round {r + 1}{_label(pinned, args.compare_unpinned)}: model alone {model:.1f} s, ingest "
                      f"{pipeline:.1f} s = {model / pipeline:.3f}x the model alone (goal >= 0.95x); its writes "
                      f"{summary.write_seconds:.2f} s", flush=True)
        cores.ENABLED = True
        for pinned, values in ratios.items():
            if values:
                print(f"median of {len(values)} rounds{_label(pinned, args.compare_unpinned)}: "
                      f"{statistics.median(values):.3f}x, writes {statistics.median(writes[pinned]):.2f} s")
    return 0


def _label(pinned: bool, compared: bool) -> str:
    return "" if not compared else " (threads pinned)" if pinned else " (unpinned)"


if __name__ == "__main__":
    raise SystemExit(main())
