"""Word pieces the model embeds per word piece of the abstracts (the cost of titles and chunk overlaps).

Ingest embeds each chunk as "title. chunk" (ingest/pipeline.py), chunks filling at most
80 % of the model's window and overlapping by one sentence, so that no sentence is cut.
This prints, for the bundled corpus and for a generated NeurIPS-length program (the
sentences of BEIR SciFact recombined, as benchmarks/conference_bench.py makes it):
word pieces embedded / word pieces of the abstracts alone, and how the extra splits
into titles and overlap. Only the tokenizer runs: nothing is embedded.

    .venv/bin/python -m benchmarks.chunk_waste [--program-papers 500]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from benchmarks.common import SCIFACT
from ingest.embed import Embedder
from ingest.parse import parse_file
from ingest.pipeline import load_papers, paper_chunks
from paperbot.records import indexed_text
from paperbot.settings import BUNDLED_CORPUS, EmbeddingSettings


def measure(name: str, papers, embedder: Embedder) -> None:
    count = embedder.count_tokens
    specials = count("")  # [CLS] and [SEP], counted once per text
    abstract = embedded = titled = chunks = 0
    for p in papers:
        if not p.abstract:
            continue
        abstract += count(p.abstract) - specials
        for _, text, *_ in paper_chunks(p, embedder):
            chunks += 1
            embedded += count(indexed_text(p.title, text, p.keywords)) - specials
            titled += count(text) - specials
    papers_n = sum(1 for p in papers if p.abstract)
    print(f"{name}: {papers_n} papers, {chunks / papers_n:.2f} chunks per paper; word pieces per paper: abstract "
          f"{abstract / papers_n:.0f}, embedded {embedded / papers_n:.0f} = {embedded / abstract:.3f}x the abstract "
          f"(overlap {(titled - abstract) / abstract:+.1%}, titles {(embedded - titled) / abstract:+.1%})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--program-papers", type=int, default=500)
    ap.add_argument("--scifact", type=Path, default=SCIFACT)
    args = ap.parse_args()
    embedder = Embedder(EmbeddingSettings.from_env())
    measure("bundled corpus", load_papers([BUNDLED_CORPUS]).papers, embedder)
    if (args.scifact / "corpus.jsonl").exists() and args.program_papers:
        import json

        from benchmarks.conference_bench import generate_program
        from benchmarks.scale_bench import sentence_pool

        program = generate_program(args.program_papers, sentence_pool(args.scifact), seed=7)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "program.json"
            path.write_text(json.dumps(program, ensure_ascii=False))
            measure(f"generated program (NeurIPS length, {args.program_papers})", parse_file(path), embedder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
