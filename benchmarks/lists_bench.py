"""Conference lists as labs have them: what each real list gives, and typed author names found.

1. Per list in tests/data/lists (see its README): papers added, records skipped or kept
   title-only, not-accepted records skipped (by decision), papers with authors / a link /
   a presentation type, and the fields reported as ignored. No store, no model: this is
   what `paperbot ingest` would add to an empty store.
2. Author names as users type them (benchmarks/data/author_names.jsonl, labelled by hand:
   the ASCII form typed, the author it means, or null for a name no paper has): hit rate
   (a filter finds a paper by that author) and precision (the papers it finds have that
   author), for the current `fold` against the accent-stripping fold it replaced (the
   baseline, measured in the same run).

    .venv/bin/python -m benchmarks.lists_bench
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from pathlib import Path

from ingest.pipeline import load_papers
from paperbot.errors import InputError
from retrieval import filters

ROOT = Path(__file__).resolve().parents[1]
LISTS = ROOT / "tests" / "data" / "lists"
NAMES = ROOT / "benchmarks" / "data" / "author_names.jsonl"


def lists_report() -> list:
    papers = []
    for path in sorted(p for p in LISTS.iterdir() if p.name != "README.md"):
        try:
            loaded = load_papers([path])
        except InputError as exc:
            print(f"{path.name}: refused: {exc.problem}")
            continue
        skipped = sum(len(f.skipped) for f in loaded.files)
        title_only = sum(len(f.title_only) for f in loaded.files)
        decisions = sum((f.decisions for f in loaded.files), Counter())
        ignored = sum((f.ignored for f in loaded.files), Counter())
        ps = loaded.papers
        papers += ps
        print(f"{path.name}: {len(ps)} added, {skipped} skipped, {title_only} title-only, "
              f"not accepted {dict(decisions) or 0}; with authors {sum(bool(p.authors) for p in ps)}, "
              f"url {sum(bool(p.url) for p in ps)}, type {dict(Counter(p.presentation for p in ps if p.presentation))}, "
              f"bibtex from source {sum(bool(p.bibtex) for p in ps)}; ignored fields {len(ignored)}: "
              + ", ".join(f"{k} ×{n}" for k, n in ignored.most_common(6)))
    return papers


def old_fold(text: str) -> str:
    """The fold before transliteration: accents stripped, case folded."""
    decomposed = unicodedata.normalize("NFKD", text)
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).casefold().split())


def old_matches(paper, typed: str) -> bool:
    needle = tuple(re.findall(r"\w+", old_fold(typed)))
    for author in paper.authors:
        words = tuple(re.findall(r"\w+", old_fold(author)))
        if any(words[i:i + len(needle)] == needle for i in range(len(words) - len(needle) + 1)):
            return True
    return False


def names_report(papers: list) -> None:
    labelled = [json.loads(line) for line in NAMES.read_text(encoding="utf-8").splitlines() if line.strip()]
    present = [x for x in labelled if x["author"]]
    absent = [x for x in labelled if not x["author"]]
    for name, matches in (("accent-stripping fold (baseline)", old_matches),
                          ("fold with transliteration", lambda p, t: filters.Filters(author=t).matches(p))):
        hits, found, right, false_hits = 0, 0, 0, 0
        misses = []
        for x in present:
            got = [p for p in papers if matches(p, x["typed"])]
            hit = any(x["author"] in p.authors for p in got)
            hits += hit
            if not hit:
                misses.append(x["typed"])
            found += len(got)
            right += sum(x["author"] in p.authors for p in got)
        for x in absent:
            false_hits += any(matches(p, x["typed"]) for p in papers)
        print(f"{name}: hit rate {hits}/{len(present)} = {hits / len(present):.3f}, precision "
              f"{right}/{found} = {right / max(found, 1):.3f}, names absent from the corpus found "
              f"{false_hits}/{len(absent)}; not found: {', '.join(misses) or 'none'}")


if __name__ == "__main__":
    names_report(lists_report())
