"""The ingest pipeline against the model alone on the same chunk texts, in one process (ratios in one run).

A generated NeurIPS-length program (as conference_bench.py makes it, from SciFact's
sentences) is ingested into a fresh temporary store by `Library.ingest`, and the chunk
texts that ingest embeds are encoded by the same embedder alone; rounds alternate.
Process start and model load are left out, so the ratio is the pipeline's own cost (the
store's opening and closing included).

    .venv/bin/python -m benchmarks.pipeline_ratio [--papers 500] [--rounds 2] [--program FILE]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from benchmarks.common import SCIFACT
from ingest.embed import Embedder
from ingest.parse import parse_file
from ingest.pipeline import paper_chunks
from paperbot.records import indexed_text
from paperbot.settings import Settings
from retrieval.library import Library


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--papers", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--program", type=Path, default=None, help="a program JSON to ingest instead of a generated one")
    ap.add_argument("--scifact", type=Path, default=SCIFACT)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        program = args.program
        if program is None:
            from benchmarks.conference_bench import generate_program
            from benchmarks.scale_bench import sentence_pool

            program = Path(tmp) / "program.json"
            program.write_text(json.dumps(generate_program(args.papers, sentence_pool(args.scifact), seed=7)))
        embedder = Embedder()
        embedder.encode(["warm up"] * 8)
        papers = parse_file(program)
        texts = [indexed_text(p.title, text, p.keywords) for p in papers for _, text, *_ in paper_chunks(p, embedder)]
        print(f"{len(papers)} papers, {len(texts)} chunks")
        for r in range(args.rounds):
            t = time.perf_counter()
            embedder.encode(texts)
            model = time.perf_counter() - t
            settings = Settings.from_env({"CHROMA_PATH": f"{tmp}/store{r}", "PAPERBOT_CACHE_DIR": f"{tmp}/cache"})
            t = time.perf_counter()  # opening and closing the store count: no write is left for later
            with Library(settings, embedder=embedder) as lib:
                lib.ingest([program])
            pipeline = time.perf_counter() - t
            print(f"round {r + 1}: model alone {model:.1f} s, ingest {pipeline:.1f} s = {model / pipeline:.3f}x "
                  "the model alone (goal >= 0.95x)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
