"""Metadata filters (author, area, presentation type, track, keyword), applied before ranking.

Matching ignores case and accents ("rodola" finds "Emanuele Rodolà"), and reads
letters as users type them in ASCII ("Soren" finds "Søren", "Lukasz" "Łukasz",
"Muller" and "Mueller" "Müller"; transliteration by anyascii), and works on
whole words in order, so "Rodola" matches any author named Rodolà but "Rod" does
not; "learning" matches the area "Deep Learning". A paper passes when every
given filter matches it (an author filter matches when any of its authors does).
"""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np
from anyascii import anyascii

from paperbot import messages
from paperbot.records import PRESENTATION_TYPES, Paper

FIELDS = ("author", "area", "type", "track", "keyword")
SUGGESTIONS = 3


def fold(text: str) -> str:
    """Lower case without accents, Latin letters in ASCII (ø is o, ł is l, æ is ae), spaces collapsed:
    the form names and areas are compared in. Other scripts (Chinese, Greek…) are kept as written."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    if not stripped.isascii():
        stripped = "".join(_latin_ascii(c) for c in stripped)
    return " ".join(stripped.casefold().split())


def folds(text: str) -> tuple[str, ...]:
    """Every form `text` may be typed in: `fold`, and with ä, ö, ü written ae, oe, ue (Müller as Mueller)."""
    first = fold(text)
    if not _UMLAUT.search(text):
        return (first,)
    german = fold(_UMLAUT.sub(lambda m: _UMLAUTS[m.group()], unicodedata.normalize("NFC", text)))
    return (first, german) if german != first else (first,)


_UMLAUTS = {"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue"}
_UMLAUT = re.compile("[äöüÄÖÜ]")


@functools.lru_cache(maxsize=4096)
def _latin_ascii(c: str) -> str:
    """A Latin letter without an accent to strip (ø, ł, đ, æ, ß) in ASCII; anything else unchanged."""
    if c.isascii() or not unicodedata.name(c, "").startswith("LATIN"):
        return c
    return anyascii(c) or c


def _words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\w+", fold(text)))


def _word_forms(text: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(re.findall(r"\w+", f)) for f in folds(text))


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

    def matches(self, paper: Paper) -> bool:
        """Whether `paper` passes every given filter."""
        terms = paper_terms(paper)
        return all(any(_matches_one(name, words, value) for words in terms[name])
                   for name, value in self.given().items())


PaperTerms = dict[str, tuple[tuple[str, ...], ...]]


def paper_terms(paper: Paper) -> PaperTerms:
    """A paper's filterable values as folded words."""
    out = {name: tuple(w for v in values_of(paper, name) for w in _word_forms(v)) for name in FIELDS}
    if paper.area and paper.subarea:
        out["area"] += (_words(f"{paper.area} {paper.subarea}"),)
    return out


def _needle(name: str, value: str) -> tuple[str, ...]:
    """What a typed filter value is compared as: its folded words ("orals" is the type "oral")."""
    if name == "type":
        wanted = fold(value)
        return (wanted[:-1] if wanted.endswith("s") and wanted[:-1] in PRESENTATION_TYPES else wanted,)
    return _words(value)


def _matches_one(name: str, words: tuple[str, ...], value: str, needle: tuple[str, ...] | None = None) -> bool:
    """Whether one of a paper's values (its folded `words`) matches the typed `value`."""
    needle = _needle(name, value) if needle is None else needle
    if name == "type":
        return words == needle
    n = len(needle)
    return bool(n) and any(words[i:i + n] == needle for i in range(len(words) - n + 1))


class FilterIndex:
    """The papers holding each distinct filterable value, so that a filter is compared with each distinct
    value once (a few thousand author names) instead of with every paper's values."""

    def __init__(self, papers: Iterable[Paper]) -> None:
        groups: dict[str, dict[tuple[str, ...], list[int]]] = {name: defaultdict(list) for name in FIELDS}
        self.size = 0
        for i, paper in enumerate(papers):
            for name, values in paper_terms(paper).items():
                for words in set(values):
                    groups[name][words].append(i)
            self.size = i + 1
        self._groups = {name: {w: np.asarray(ix, dtype=np.int64) for w, ix in g.items()} for name, g in groups.items()}

    def mask(self, filters: Filters) -> np.ndarray:
        """Which papers (in the order given) pass every given filter."""
        out = np.ones(self.size, dtype=bool)
        for name, value in filters.given().items():
            needle = _needle(name, value)
            hit = np.zeros(self.size, dtype=bool)
            for words, idx in self._groups[name].items():
                if _matches_one(name, words, value, needle):
                    hit[idx] = True
            out &= hit
        return out


def select(papers: list[Paper], filters: Filters, index: FilterIndex | None = None) -> list[Paper]:
    """The papers passing `filters`, as a list is read: orals first, then spotlights, posters, by title.

    `index`, when given, is the FilterIndex of exactly `papers`.
    """
    rank = {t: i for i, t in enumerate(PRESENTATION_TYPES)}
    if index is not None:
        found = [papers[i] for i in np.flatnonzero(index.mask(filters))]
    else:
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


def no_match_notice(filters: Filters, papers: list[Paper], index: FilterIndex | None = None) -> str:
    """Why a filtered search found nothing, with the nearest values of each filter that matches no paper.

    `index`, when given, is the FilterIndex of exactly `papers`.
    """
    index = index or FilterIndex(papers)
    lines = [messages.NO_PAPER_MATCHES.format(filters=filters.describe())]
    corpus = facets(papers)
    for name, value in filters.given().items():
        if index.mask(Filters(**{name: value})).any():
            continue
        near = nearest(value, corpus[name])
        if near:
            lines.append(messages.NEAREST_VALUES.format(field=name, values=", ".join(near)))
        else:
            lines.append(messages.NO_VALUES.format(field=name))
    if len(lines) == 1:
        lines.append(messages.FILTERS_DISJOINT)
    return "\n".join(lines)


class Choices:
    """Autocomplete over one field's values: each value folded once, most common first.

    Values that start with what was typed (or have a word that does) come before values
    that merely contain it; accents and case are ignored.
    """

    def __init__(self, counts: Counter[str]) -> None:
        self._entries = sorted((-n, folds(value), value) for value, n in counts.items())

    def __call__(self, typed: str, limit: int = 25) -> list[str]:
        needle = fold(typed)
        starts: list[str] = []
        contains: list[str] = []
        for _, forms, value in self._entries:
            if not needle or any(f.startswith(needle) or any(w.startswith(needle) for w in f.split()) for f in forms):
                starts.append(value)
                if len(starts) == limit:
                    break
            elif any(needle in f for f in forms) and len(contains) < limit:
                contains.append(value)
        return (starts + contains)[:limit]


def choices(counts: Counter[str], typed: str, limit: int = 25) -> list[str]:
    """Autocomplete once over `counts` (a bot keeps a `Choices` per field instead)."""
    return Choices(counts)(typed, limit)
