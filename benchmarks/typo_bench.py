"""Readers' questions with typos: the answers they get, with and without typos read (retrieval/spelling.py).

Every question of the readers' sets (shared-dev and the real-paper English sets by default; `--sets` takes any
answer_bench set, the Chinese ones' English words misspelt) is asked as written and with typos made the way hands
make them: in one word, or in two, of five letters or more (a letter dropped,
doubled, two swapped, or a neighbouring key struck; `--slips 2` puts two in the same word). A typo is drawn by a fixed
seed per question, so every run asks the same misspelt questions. Both readings, with the typo reader and without it,
are measured in the same run over the same stores:

    .venv/bin/python -m benchmarks.typo_bench --workdir /tmp/ab

"same" is the share of questions answered as their clean spelling is (the same first citation, or both abstain);
the other columns are answer_bench's.
"""

from __future__ import annotations

import argparse
import random
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import retrieval.search
from benchmarks.answer_bench import HEADER, NEURIPS_SETS, library_for, line, neurips, score, shared_dev, totals
from retrieval.spelling import _NEAR

SETS = ["shared-dev", "neurips24-dev", "neurips24-test", "neurips24-test2", "neurips24-test3"]
_WORD = re.compile(r"(?<![A-Za-z0-9_'’-])[a-z]{5,}(?![A-Za-z0-9_'’-])")  # "用diffusion" too


def misspelt(question: str, seed: str, words: int, slips: int) -> str:
    """`question` with `slips` slips in each of `words` of its lower-case words of five letters or more."""
    rng = random.Random(seed)
    spans = [m.span() for m in _WORD.finditer(question)]
    for start, end in sorted(rng.sample(spans, min(words, len(spans))), reverse=True):
        word = question[start:end]
        for _ in range(slips):
            word = _slip(word, rng)
        question = question[:start] + word + question[end:]
    return question


def _slip(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 1)  # hands rarely miss a word's first letter
    kind = rng.choice(["drop", "double", "swap", "neighbour"])
    if kind == "drop":
        return word[:i] + word[i + 1:]
    if kind == "double":
        return word[:i] + word[i] + word[i:]
    if kind == "swap":
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    return word[:i] + rng.choice(sorted(_NEAR[word[i]])) + word[i + 1:]


@contextmanager
def typos_read(on: bool) -> Iterator[None]:
    """Retrieval with (the shipped code) or without the typo reader."""
    shipped = retrieval.search.typos
    if not on:
        retrieval.search.typos = lambda *args: {}
    try:
        yield
    finally:
        retrieval.search.typos = shipped


def same(clean: list[dict], other: list[dict]) -> float:
    """The share of questions answered as their clean spelling is (first citation, or abstention)."""
    agree = sum((a["abstained"] and b["abstained"]) or (not a["abstained"] and not b["abstained"]
                and a["cited"][:1] == b["cited"][:1]) for a, b in zip(clean, other))
    return agree / len(clean) if clean else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, help="where the stores are kept between runs (default: a temp dir)")
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated answer_bench sets (default: "
                    f"{', '.join(SETS)})")
    ap.add_argument("--words", type=int, default=1, help="misspelt words per question (default 1)")
    ap.add_argument("--slips", type=int, default=1, help="slips per misspelt word (default 1)")
    args = ap.parse_args()
    sets = [s for s in args.sets.split(",") if s]
    unknown = [s for s in sets if s != "shared-dev" and s not in NEURIPS_SETS]
    if unknown:
        ap.error(f"unknown set {unknown[0]!r}; choose from shared-dev, {', '.join(NEURIPS_SETS)}")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        print(f"{HEADER} {'same':>6}")
        for name in sets:
            with library_for(workdir, "bundled" if name == "shared-dev" else "neurips24") as lib:
                items = shared_dev(lib) if name == "shared-dev" else neurips(lib, name)
                typed = [{**item, "q": misspelt(item["q"], f"{name}:{item['q']}", args.words, args.slips)}
                         for item in items]
                clean = score(lib, items, name)
                print(line(f"{name} as written", totals(clean)))
                for on in (False, True):
                    with typos_read(on):
                        rows = score(lib, typed, name)
                    changed = sum(t["q"] != i["q"] for t, i in zip(typed, items))
                    label = f"  {changed} misspelt, {'read' if on else 'not read'}"
                    print(f"{line(label, totals(rows))} {100 * same(clean, rows):5.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
