"""Which names a corpus record's fields go by: one table every JSON, JSON Lines and CSV reader uses.

Conference lists name the same thing many ways (``author`` / ``authors`` / ``author_list``; ``status`` /
``decision`` / ``eventtype``; ``links.openreview`` / ``or_id``), so the names are data, not code: each
`Field` lists the names it accepts, first found wins, compared without regard to case; ``a.b`` is the
key ``b`` inside the object ``a``. A name in no field is reported as ignored by the ingest summary, so
nothing a file holds is dropped without a word. To read a new name, add it here (and run
``tests/ingest/test_fields.py``, which checks the README's field table against this one).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Field:
    """One field of the flat record the parser builds, and the names sources give it."""

    key: str
    names: tuple[str, ...]
    doc: str


FIELDS: tuple[Field, ...] = (
    Field("id", ("id", "_id", "paper_id", "uid", "or_id"), "the paper's id (kept, made safe for ids)"),
    Field("title", ("title", "name"), "the title"),
    Field("abstract", ("abstract", "text", "summary"), "the abstract (`abstract` or `title` is required)"),
    Field("authors", ("authors", "author", "author_list", "authors_str", "author_site"),
          "a string (`;`, `,` or ` and ` between names), a list of names, or a list of "
          "`{fullname|name, institution|affiliation}`"),
    Field("affiliations", ("affiliations", "aff"), "one per author: a list, or text with `;` between them"),
    Field("keywords", ("keywords", "keyword", "tags"), "a list, or text separated by `;` or `,`"),
    Field("area", ("area", "primary_area", "topic", "subject_area"), "the area; \"Area->Subarea\" is split"),
    Field("subarea", ("subarea",), "the subarea"),
    Field("type", ("type", "presentation", "status", "decision", "eventtype", "event_type", "session", "venue"),
          "the first of these that names oral, spotlight or poster"),
    Field("decision", ("status", "decision", "venue", "venueid"),
          "Reject, Withdraw(n), Desk Reject(ed), \"Submitted to …\": not ingested (counted); Workshop: track "
          "Workshop"),
    Field("track", ("track", "sourceurl", "venueid", "venue"), "the track (or derived from an OpenReview venue id)"),
    Field("venue", ("venue",), "the venue as written (\"NeurIPS 2024 poster\")"),
    Field("conference", ("conference",), "with `year`, the venue when there is no `venue`"),
    Field("year", ("year",), "the year (for the venue and the BibTeX)"),
    Field("tldr", ("tldr", "tl;dr", "tl_dr"), "a one-sentence summary"),
    Field("url", ("url", "paper_url", "forum_url", "links.openreview", "openreview", "forum", "oa"),
          "the paper's page (an OpenReview forum id becomes its forum URL; else the `site` below)"),
    Field("pdf_url", ("pdf_url", "paper_pdf_url", "pdf", "links.pdf"), "the PDF"),
    Field("site_url", ("site_url", "virtualsite_url", "site"),
          "the conference site's page (an OpenReview forum here is the paper's `url`)"),
    Field("links", ("github", "code", "code_url", "links.code", "links.github", "project", "project_page",
                    "links.project", "links.arxiv", "arxiv"),
          "code, project and preprint pages, with the links found in the abstract"),
    Field("bibtex", ("bibtex", "_bibtex", "bib"), "the source's BibTeX entry (else one is generated)"),
    Field("title_zh", ("title_zh", "title_cn", "zh_title"), "a Chinese translation of the title"),
    # The program: where and when the paper is presented (see records.Slot).
    Field("start", ("starttime", "start_time"), "a slot's start (ISO 8601 with its UTC offset)"),
    Field("end", ("endtime", "end_time"), "a slot's end"),
    Field("room", ("room_name", "room"), "a slot's room"),
    Field("poster", ("poster_position", "poster_number"), "a poster's board"),
)

BY_KEY: dict[str, Field] = {f.key: f for f in FIELDS}
# OpenReview notes keep their fields in `content`; the note's own keys the parser reads.
NOTE_KEYS = ("content", "forum")
_NAMES = {name for f in FIELDS for name in f.names} | set(NOTE_KEYS)
_TOP = {name.split(".", 1)[0] for name in _NAMES}


def names(key: str) -> tuple[str, ...]:
    """The names the field `key` accepts, in the order they are tried."""
    return BY_KEY[key].names


def normalize(rec: Mapping[str, Any]) -> dict[str, Any]:
    """The record with lower-case keys (and lower-case keys one level inside objects), as the table names them."""
    out: dict[str, Any] = {}
    for key, value in rec.items():
        if isinstance(value, Mapping):
            value = {str(k).lower(): v for k, v in value.items()}
        out.setdefault(str(key).lower(), value)
    return out


def lookup(rec: Mapping[str, Any], name: str) -> Any:
    """The value at `name` ("a.b" looks inside the object "a") in a normalized record, or None."""
    if "." in name and name not in rec:
        outer, inner = name.split(".", 1)
        inside = rec.get(outer)
        return inside.get(inner) if isinstance(inside, Mapping) else None
    return rec.get(name)


def ignored(rec: Mapping[str, Any]) -> Counter[str]:
    """The fields of a record that no field reads and that hold something (reported, not dropped),
    named as the record names them."""
    out: Counter[str] = Counter()
    for key, value in rec.items():
        low = str(key).lower()
        if _empty(value):
            continue
        if low not in _TOP:
            out[str(key)] += 1
        elif low not in _NAMES and isinstance(value, Mapping):
            out.update(f"{key}.{k}" for k, v in value.items()
                       if f"{low}.{str(k).lower()}" not in _NAMES and not _empty(v))
    return out


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def markdown_table() -> str:
    """The README's table of accepted field names (tests check the README holds exactly this)."""
    rows = ["| field | accepted names | what is read |", "|---|---|---|"]
    rows += [f"| {f.key} | {', '.join(f'`{n}`' for n in f.names)} | {f.doc} |" for f in FIELDS]
    return "\n".join(rows)
