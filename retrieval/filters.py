"""Metadata filters (author, area, presentation type, track, keyword), applied before ranking.

Matching ignores case and accents ("rodola" finds "Emanuele Rodolà") and works on
whole words in order, so "Rodola" matches any author named Rodolà but "Rod" does
not; "learning" matches the area "Deep Learning". A paper passes when every
given filter matches it (an author filter matches when any of its authors does).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from paperbot import messages
from paperbot.records import PRESENTATION_TYPES, Paper

FIELDS = ("author", "area", "type", "track", "keyword")
SUGGESTIONS = 3


def fold(text: str) -> str:
    """Lower case without accents, spaces collapsed: the form names and areas are compared in."""
    decomposed = unicodedata.normalize("NFKD", text)
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).casefold().split())


def _words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\w+", fold(text)))


def values_of(paper: Paper, name: str) -> tuple[str, ...]:
    """The values a paper has for one filter field (what autocomplete offers)."""
    if name == "author":
        return paper.authors
    if name == "area":
        return tuple(v for v in (paper.area, paper.subarea) if v)
    if name == "type":
        return (paper.presentation,) if paper.presentation else ()
    if name == "track":
        return (paper.track,) if paper.track else ()
    if name == "keyword":
        return paper.keywords
    raise ValueError(f"unknown filter {name!r}")


@dataclass(frozen=True)
class Filters:
    author: str = ""
    area: str = ""
    type: str = ""
    track: str = ""
    keyword: str = ""

    def __post_init__(self) -> None:
        for name in FIELDS:
            object.__setattr__(self, name, " ".join((getattr(self, name) or "").split()))

    def __bool__(self) -> bool:
        return any(self.given())

    def given(self) -> dict[str, str]:
        return {k: v for k, v in asdict(self).items() if v}

    def to_json(self) -> dict[str, str]:
        return self.given()

    def describe(self) -> str:
        return ", ".join(f"{k} “{v}”" for k, v in self.given().items())

    def matches(self, paper: Paper, terms: PaperTerms | None = None) -> bool:
        """Whether `paper` passes every given filter; `terms` are its precomputed `paper_terms`."""
        terms = terms if terms is not None else paper_terms(paper)
        return all(_matches_one(terms, name, value) for name, value in self.given().items())


PaperTerms = dict[str, tuple[tuple[str, ...], ...]]


def paper_terms(paper: Paper) -> PaperTerms:
    """A paper's filterable values as folded words, computed once per paper (a store's view caches them)."""
    out = {name: tuple(_words(v) for v in values_of(paper, name)) for name in FIELDS}
    if paper.area and paper.subarea:
        out["area"] += (_words(f"{paper.area} {paper.subarea}"),)
    return out


def _matches_one(terms: PaperTerms, name: str, value: str) -> bool:
    if name == "type":
        wanted = fold(value)
        wanted = wanted[:-1] if wanted.endswith("s") and wanted[:-1] in PRESENTATION_TYPES else wanted
        return terms["type"] == ((wanted,),)
    needle = _words(value)
    n = len(needle)
    return bool(n) and any(words[i:i + n] == needle for words in terms[name] for i in range(len(words) - n + 1))


def select(papers: Iterable[Paper], filters: Filters) -> list[Paper]:
    """The papers passing `filters`, as a list is read: orals first, then spotlights, posters, by title."""
    rank = {t: i for i, t in enumerate(PRESENTATION_TYPES)}
    found = [p for p in papers if filters.matches(p)]
    return sorted(found, key=lambda p: (rank.get(p.presentation, len(rank)), p.label.casefold(), p.paper_id))


def facets(papers: Iterable[Paper]) -> dict[str, Counter[str]]:
    """For each filter field, how many papers have each value."""
    out: dict[str, Counter[str]] = {name: Counter() for name in FIELDS}
    for p in papers:
        for name in FIELDS:
            out[name].update(set(values_of(p, name)))
    return out


def nearest(value: str, candidates: Iterable[str], n: int = SUGGESTIONS) -> list[str]:
    """The corpus values closest to what was typed (for "did you mean")."""
    by_fold: dict[str, str] = {}
    for c in candidates:
        by_fold.setdefault(fold(c), c)
    typed = fold(value)
    close = difflib.get_close_matches(typed, list(by_fold), n=n, cutoff=0.5)
    # Also compare with single words of multi-word values ("rodolfo" vs "emanuele rodolà").
    if len(close) < n:
        scored = []
        for f in by_fold:
            best = max((difflib.SequenceMatcher(None, typed, w).ratio() for w in f.split()), default=0.0)
            if best >= 0.6 and f not in close:
                scored.append((-best, f))
        close += [f for _, f in sorted(scored)[: n - len(close)]]
    return [by_fold[f] for f in close]


def no_match_notice(filters: Filters, papers: list[Paper]) -> str:
    """Why a filtered search found nothing, with the nearest values of each filter that matches no paper."""
    lines = [messages.NO_PAPER_MATCHES.format(filters=filters.describe())]
    corpus = facets(papers)
    for name, value in filters.given().items():
        if any(_matches_one(paper_terms(p), name, value) for p in papers):
            continue
        near = nearest(value, corpus[name])
        if near:
            lines.append(messages.NEAREST_VALUES.format(field=name, values=", ".join(near)))
        else:
            lines.append(messages.NO_VALUES.format(field=name))
    if len(lines) == 1:
        lines.append(messages.FILTERS_DISJOINT)
    return "\n".join(lines)


def choices(counts: Counter[str], typed: str, limit: int = 25) -> list[str]:
    """Autocomplete: values that start with, then contain, what was typed (accents and case ignored); common first."""
    needle = fold(typed)
    ranked = []
    for value, n in counts.items():
        f = fold(value)
        if not needle or f.startswith(needle) or any(w.startswith(needle) for w in f.split()):
            rank = 0
        elif needle in f:
            rank = 1
        else:
            continue
        ranked.append((rank, -n, f, value))
    ranked.sort()
    return [v for *_, v in ranked[:limit]]
