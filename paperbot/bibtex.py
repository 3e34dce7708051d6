"""BibTeX for a paper: the entry its source gave, else one made from its title, authors, year and url.

    entry(paper)      the paper's BibTeX (the source's, verbatim, when it gave one)
    generate(...)     a minimal @inproceedings from plain values (what `entry` falls back to)
    year_of(paper)    the publication year found in the venue, the BibTeX or the paper's links

Everything that shows or exports a citation (`/paper`, `paperbot papers --json`, saved-paper exports)
calls `entry`, so a paper is cited the same way everywhere.
"""

from __future__ import annotations

import re

from anyascii import anyascii

from paperbot.records import Paper

_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
_BIB_YEAR = re.compile(r"\byear\s*=\s*[{\"]?\s*((?:19|20)\d\d)", re.IGNORECASE)
_PRESENTATION_WORD = re.compile(r"\s*\b(oral|spotlight|poster)s?\b\s*$", re.IGNORECASE)
_SPECIAL = re.compile(r"(?<!\\)([&%#])")


def entry(paper: Paper) -> str:
    """The paper's BibTeX: the source's own entry when it gave one, else a generated one."""
    if paper.bibtex:
        return paper.bibtex
    return generate(title=paper.title or paper.label, authors=paper.authors, year=year_of(paper),
                    url=paper.url or paper.site_url or paper.pdf_url, venue=_booktitle(paper.venue),
                    key_hint=paper.paper_id)


def year_of(paper: Paper) -> str:
    """The year the paper appeared: from its venue ("NeurIPS 2024 poster"), its BibTeX, or its page's path."""
    m = _YEAR.search(paper.venue) or _BIB_YEAR.search(paper.bibtex)
    if m:
        return m.group(1)
    for url in (paper.site_url, paper.url, paper.pdf_url):
        m = re.search(r"/((?:19|20)\d\d)/", url)
        if m:
            return m.group(1)
    return ""


def generate(*, title: str, authors: tuple[str, ...] | list[str], year: str = "", url: str = "", venue: str = "",
             key_hint: str = "") -> str:
    """A minimal, valid @inproceedings entry (fields without a value are left out)."""
    fields = [("title", title), ("author", " and ".join(authors)), ("booktitle", venue), ("year", year),
              ("url", url)]
    body = ",\n".join(f"  {name} = {{{_value(value)}}}" for name, value in fields if value)
    return f"@inproceedings{{{citation_key(authors, year, title, key_hint)},\n{body}\n}}"


def citation_key(authors: tuple[str, ...] | list[str], year: str, title: str, fallback: str = "") -> str:
    """`lastname2024word`: the first author's family name, the year, the title's first long word (ASCII)."""
    family = authors[0].split()[-1] if authors and authors[0].split() else ""
    word = next((w for w in re.findall(r"[A-Za-z]+", anyascii(title)) if len(w) > 3), "")
    key = re.sub(r"[^a-z0-9]", "", anyascii(family + year + word).lower())
    return key or re.sub(r"[^A-Za-z0-9]", "", anyascii(fallback)) or "paper"


def _value(text: str) -> str:
    """A field value BibTeX reads back as written: one line, special characters escaped, braces balanced."""
    text = " ".join(text.split())
    text = _SPECIAL.sub(r"\\\1", text)
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            break
    if depth != 0:  # unbalanced braces would end the field early: drop them
        text = text.replace("{", "").replace("}", "")
    return text


def _booktitle(venue: str) -> str:
    """The venue without its presentation word ("NeurIPS 2024 poster" is "NeurIPS 2024")."""
    return _PRESENTATION_WORD.sub("", venue).strip()
