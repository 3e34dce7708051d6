"""Corpus files → Paper records.

Formats (JSON is recognised by its content, whatever the file is called):

* ``.txt`` / ``.md`` – the abstract-collection format: one header line (any
  language), then abstracts separated by blank lines, no titles.
* ``.jsonl`` / ``.json`` – one JSON object per line, a JSON array, or an object
  holding a list (``{"notes": [...]}``, the conference site's ``{"count", "results": [...]}``).
  Each record is one of:
  - an OpenReview note (API v2 ``content.<field>.value`` or API v1 plain ``content.<field>``);
  - a conference-site program entry (``name``, ``authors`` as ``{fullname, institution}``,
    ``topic`` "Area->Subarea", ``decision``, ``eventtype``, ``paper_url`` …);
  - a flat record with the fields below.
  An object mapping ids to abstracts (``{"123": "We ..."}``), or records holding only an
  id and an abstract, supply the abstracts of papers listed elsewhere (see `load_papers`).
* ``.csv`` – a header row, then one paper per row.

Flat fields (``abstract`` or ``title`` is required): ``id`` (``_id``, ``paper_id``),
``title`` (``name``), ``abstract`` (``text``, ``summary``), ``authors`` (a string, a list of
names, or a list of ``{fullname|name, institution|affiliation}``), ``keywords`` (a list, or
text separated by ``;`` or ``,``), ``area`` (``primary_area``, ``topic``; "Area->Subarea" is
split), ``type`` (``presentation``, ``decision``, ``eventtype``: oral / spotlight / poster),
``track`` (or derived from ``sourceurl`` / ``venueid``), ``venue``, ``tldr``, ``url``
(``paper_url``), ``pdf_url`` (``paper_pdf_url``, ``pdf``), ``site_url`` (``virtualsite_url``).
Entries repeating an id (orals are listed twice in a program) are merged into one paper.
Withdrawn and rejected submissions (an OpenReview ``venueid`` such as ``…/Rejected_Submission``,
a ``venue`` or ``decision`` saying so) are skipped and counted: labs ingest the accepted papers.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import unicodedata
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ingest.labels import derive_label, find_links
from paperbot.errors import InputError
from paperbot.records import Paper, Slot

SUPPORTED_SUFFIXES = (".txt", ".md", ".jsonl", ".json", ".csv")
MAX_FILE_BYTES = 200 * 1024 * 1024
MIN_ABSTRACT_CHARS = 20
OPENREVIEW = "https://openreview.net"
CONFERENCE_SITE = "https://neurips.cc"
_ABSTRACT_KEYS = ("abstract", "text", "summary")
_ID_KEYS = ("id", "_id", "paper_id", "uid")
_TITLE_KEYS = ("title", "name")
_AREA_KEYS = ("area", "primary_area", "topic", "subject_area")
_TYPE_KEYS = ("type", "presentation", "decision", "eventtype", "venue")
_TRACK_KEYS = ("sourceurl", "venueid", "venue")
_TLDR_KEYS = ("tldr", "TLDR", "TL;DR", "tl;dr")
_URL_KEYS = ("url", "paper_url", "forum_url")
_PDF_KEYS = ("pdf_url", "paper_pdf_url", "pdf")
_SITE_KEYS = ("site_url", "virtualsite_url")
_START_KEYS, _END_KEYS = ("starttime", "start_time"), ("endtime", "end_time")
_ROOM_KEYS, _POSTER_KEYS = ("room_name", "room"), ("poster_position", "poster_number")
# A record with only these keys (and an abstract) supplies the abstract of a paper listed elsewhere.
_SUPPLEMENT_KEYS = set(_ID_KEYS) | set(_ABSTRACT_KEYS)
_LIST_KEYS = ("notes", "results", "papers", "data", "items", "records")
_ID_SAFE = re.compile(r"[^A-Za-z0-9._:-]+")
_PRESENTATION = re.compile(r"\b(oral|spotlight|poster)s?\b", re.IGNORECASE)
_TRACK_IN_PATH = re.compile(r"/([A-Za-z][A-Za-z_]*?)_Track\b")
_NOT_ACCEPTED = re.compile(r"\b(withdrawn|desk[ _]rejected|rejected)([ _]submission)?\b|^\s*reject\b", re.IGNORECASE)


@dataclass(frozen=True)
class Supplement:
    """The abstract of a paper listed in another file (a program without abstracts)."""

    paper_id: str
    abstract: str
    source: str
    position: int
    where: str  # file and record, for messages


@dataclass
class ParsedFile:
    papers: list[Paper] = field(default_factory=list)
    abstracts: list[Supplement] = field(default_factory=list)
    not_accepted: list[str] = field(default_factory=list)  # withdrawn or rejected submissions skipped


def text_id(text: str) -> str:
    """Content-derived paper id: the same abstract always gets the same id."""
    norm = " ".join(unicodedata.normalize("NFC", text).split()).lower()
    return "p" + hashlib.sha256(norm.encode("utf-8")).hexdigest()[:15]


def discover(paths: list[Path]) -> list[Path]:
    """Expand folders into their supported files (sorted); reject unknown files."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES)
            if not found:
                raise InputError(str(path), f"no corpus files ({', '.join(SUPPORTED_SUFFIXES)}) in this folder")
            files.extend(found)
        elif path.is_file():
            if path.suffix.lower() not in SUPPORTED_SUFFIXES:
                raise InputError(str(path), f"unsupported file type {path.suffix or '(none)'!r}; "
                                 f"use one of {', '.join(SUPPORTED_SUFFIXES)}")
            files.append(path)
        else:
            raise InputError(str(path), "no such file or folder")
    names: dict[str, Path] = {}
    for f in files:
        if f.name in names and names[f.name] != f:
            raise InputError(str(f), f"two corpus files share the name {f.name!r} ({names[f.name]}); "
                             "sources are identified by file name, rename one")
        names[f.name] = f
    return files


def parse_file(path: Path) -> list[Paper]:
    """Parse one corpus file; raise InputError naming the file and line (or record) on bad input.

    Abstract-only records count as papers of their own here; `read_file` keeps them apart.
    """
    parsed = read_file(path)
    papers = parsed.papers + [supplement_paper(s) for s in parsed.abstracts]
    return sorted(papers, key=lambda p: p.position)


def read_file(path: Path) -> ParsedFile:
    """One corpus file's papers, and the abstracts it supplies for papers listed elsewhere."""
    source = path.name
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    if size > MAX_FILE_BYTES:
        raise InputError(str(path), f"file is {size // 2**20} MB, larger than the {MAX_FILE_BYTES // 2**20} MB limit")
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:
        raise InputError(str(path), "looks like a binary file, not text (contains NUL bytes)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(str(path), f"not valid UTF-8 (byte 0x{raw[exc.start]:02x}); "
                         "re-save the file as UTF-8", line=line) from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    suffix = path.suffix.lower()
    where = str(path)
    if suffix in (".jsonl", ".json"):
        return _structured(_json_records(text, where, suffix), source, where)
    if suffix == ".csv":
        records = list(_csv_records(text, where))
    else:
        records = list(_text_records(text, where))
    if not records:
        raise InputError(where, "contains no abstracts")
    return ParsedFile(papers=[_to_paper(_flat(rec, where, line, None), source, i + 1, where, line, None)
                              for i, (line, rec) in enumerate(records)])


def supplement_paper(s: Supplement) -> Paper:
    """An abstract whose paper is listed nowhere else: an untitled paper of its own."""
    return Paper(paper_id=s.paper_id, source=s.source, position=s.position, abstract=s.abstract,
                 label=derive_label(s.abstract), links=find_links(s.abstract))


def with_abstract(paper: Paper, abstract: str) -> Paper:
    """`paper` with the abstract published apart from it."""
    return replace(paper, abstract=abstract, links=tuple(dict.fromkeys(paper.links + find_links(abstract))),
                   label=paper.title or derive_label(abstract))


# -- JSON and JSON Lines -------------------------------------------------------------------------------

_Records = list[tuple[int | None, int, Any]]  # (line or None, record number, record)


def _json_records(text: str, where: str, suffix: str) -> tuple[_Records, bool]:
    """The records of a JSON or JSONL file, and whether it was an {id: abstract} mapping."""
    if not text.strip():
        raise InputError(where, "file is empty")
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if suffix == ".jsonl" and _parses(lines[0]):
        return list(_jsonl_records(text, where)), False
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if len(lines) > 1 and _parses(lines[0]):
            return list(_jsonl_records(text, where)), False
        raise InputError(where, f"invalid JSON ({exc.msg} at column {exc.colno})", line=exc.lineno) from None
    if isinstance(data, list):
        return [(None, i, rec) for i, rec in enumerate(data, start=1)], False
    if not isinstance(data, dict):
        raise InputError(where, f"expected a JSON object or array, got {type(data).__name__}")
    if data and all(isinstance(v, str) for v in data.values()):
        return [(None, i, {"id": k, "abstract": v}) for i, (k, v) in enumerate(data.items(), start=1)], True
    lists = [k for k in _LIST_KEYS if isinstance(data.get(k), list)]
    lists += [k for k, v in data.items() if k not in lists and isinstance(v, list) and v and isinstance(v[0], dict)]
    if lists:
        return [(None, i, rec) for i, rec in enumerate(data[lists[0]], start=1)], False
    if "content" in data or any(k in data for k in _TITLE_KEYS + _ABSTRACT_KEYS):
        return [(None, 1, data)], False
    raise InputError(where, "a JSON object without a list of papers or notes (expected \"notes\", \"results\" or "
                     f"an array; found keys: {', '.join(sorted(map(str, data))[:8]) or 'none'})")


def _parses(line: str) -> bool:
    try:
        json.loads(line)
    except json.JSONDecodeError:
        return False
    return True


def _jsonl_records(text: str, where: str):
    n_rec = 0
    for n, ln in enumerate(text.split("\n"), start=1):
        if not ln.strip():
            continue
        try:
            rec = json.loads(ln)
        except json.JSONDecodeError as exc:
            raise InputError(where, f"invalid JSON ({exc.msg} at column {exc.colno})", line=n) from None
        if not isinstance(rec, dict):
            raise InputError(where, f"expected a JSON object, got {type(rec).__name__}", line=n)
        n_rec += 1
        yield n, n_rec, rec


def _structured(found: tuple[_Records, bool], source: str, where: str) -> ParsedFile:
    """Records → papers, one per id (repeated entries merged), and abstract supplements."""
    records, mapping = found
    if not records:
        raise InputError(where, "contains no papers")
    merged: dict[str, tuple[int | None, int, dict]] = {}
    order: list[str | Supplement] = []  # papers (by key) and abstracts, in the order of their first record
    skipped: list[str] = []
    for line, n, rec in records:
        if not isinstance(rec, dict):
            raise InputError(where, f"record {n}: expected a JSON object, got {type(rec).__name__}", line=line)
        note = _unwrap_note(rec)
        if _not_accepted(note):
            skipped.append(f"{where}:{line}" if line is not None else f"{where} record {n}")
            continue
        flat = _flat(note, where, line, n)
        if mapping or (flat["id"] and set(rec) <= _SUPPLEMENT_KEYS and flat["abstract"]):
            _check_abstract(flat["abstract"], where, line, n)
            order.append(Supplement(_safe_id(flat["id"]), flat["abstract"], source, 0, _record_ref(where, line, n)))
            continue
        key = flat["id"] or f"\x00{n}"
        if key in merged:
            first_line, first_n, first = merged[key]
            merged[key] = (first_line, first_n, _merge(first, flat))
        else:
            merged[key] = (line, n, flat)
            order.append(key)
    out = ParsedFile(not_accepted=skipped)
    for position, entry in enumerate(order, start=1):
        if isinstance(entry, Supplement):
            out.abstracts.append(replace(entry, position=position))
        else:
            line, n, flat = merged[entry]
            out.papers.append(_to_paper(flat, source, position, where, line, n))
    return out


def _unwrap_note(rec: dict) -> dict:
    """An OpenReview note (v2: content.<field>.value; v1: content.<field>) as a flat record with a forum link."""
    content = rec.get("content")
    if not isinstance(content, dict):
        return rec
    flat = {k: (v["value"] if isinstance(v, dict) and "value" in v else v) for k, v in content.items()}
    note_id = rec.get("id") or rec.get("forum")
    forum = rec.get("forum") or note_id
    flat.setdefault("id", note_id)
    if isinstance(forum, str) and forum and not any(flat.get(k) for k in _URL_KEYS):
        flat["url"] = f"{OPENREVIEW}/forum?id={forum}"
    return flat


def _not_accepted(rec: dict) -> bool:
    """A withdrawn or rejected submission, by its venue id, venue or decision."""
    return any(isinstance(rec.get(k), str) and _NOT_ACCEPTED.search(rec[k]) for k in ("venueid", "venue", "decision"))


def _merge(first: dict, again: dict) -> dict:
    """A repeated entry fills what the first one lacked; the strongest presentation type wins."""
    out = {k: (v if v else again.get(k, v)) for k, v in first.items()}
    rank = {"": 0, "poster": 1, "spotlight": 2, "oral": 3}
    out["type"] = max(first["type"], again["type"], key=lambda t: rank.get(t, 0))
    out["slots"] = tuple(dict.fromkeys(first["slots"] + again["slots"]))  # a talk and its poster: both kept
    return out


# -- one record → one Paper ----------------------------------------------------------------------------


def _record_ref(where: str, line: int | None, n: int | None) -> str:
    return where if line is not None or n is None else f"{where} record {n}"


def _fail(where: str, line: int | None, n: int | None, problem: str) -> InputError:
    prefix = f"record {n}: " if n is not None and line is None else ""
    return InputError(where, prefix + problem, line=line)


def _text(rec: dict, keys: tuple[str, ...], where: str, line: int | None, n: int | None) -> str:
    for key in keys:
        value = rec.get(key)
        if value is None or value == "":
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str):
            raise _fail(where, line, n, f"field {key!r} must be text, got {type(value).__name__}")
        return " ".join(value.split())
    return ""


def _names(value: Any, where: str, line: int | None, n: int | None, key: str) -> tuple[list[str], list[str]]:
    """Authors (or keywords) from a string, a list of strings, or a list of {fullname, institution} objects."""
    if value is None or value == "":
        return [], []
    if isinstance(value, str):
        sep = ";" if ";" in value else ","
        parts = [p for chunk in value.split(sep) for p in (re.split(r"\s+and\s+", chunk) if key == "authors" else [chunk])]
        return [" ".join(p.split()) for p in parts if p.strip()], []
    if not isinstance(value, list):
        raise _fail(where, line, n, f"field {key!r} must be text or a list, got {type(value).__name__}")
    names, places = [], []
    for item in value:
        if isinstance(item, dict):
            name = item.get("fullname") or item.get("name") or item.get("full_name") or " ".join(
                str(item[k]) for k in ("first_name", "given", "last_name", "family") if item.get(k))
            place = item.get("institution") or item.get("affiliation") or ""
        else:
            name, place = item, ""
        name = " ".join(str(name or "").split())
        if name:
            names.append(name)
            places.append(" ".join(str(place).split()) if isinstance(place, str) else "")
    return names, places if any(places) else []


def _presentation(text: str) -> str:
    m = _PRESENTATION.search(text)
    return m.group(1).lower() if m else ""


def _track(text: str) -> str:
    m = _TRACK_IN_PATH.search(text)
    if m:
        return m.group(1).replace("_", " ")
    if re.search(r"/Conference\b", text):
        return "Main"
    m = re.search(r"([A-Z][\w ]*?)\s+Track\b", text)
    return m.group(1).strip() if m else ""


def _humanize(area: str) -> str:
    """OpenReview's "deep_learning_theory" as "Deep learning theory"; readable values stay as they are."""
    if "_" in area and " " not in area:
        area = area.replace("_", " ")
        return area[:1].upper() + area[1:]
    return area


def _flat(rec: dict, where: str, line: int | None, n: int | None) -> dict:
    """The canonical fields of one record, whichever format it came from."""
    abstract = " ".join(_text(rec, _ABSTRACT_KEYS, where, line, n).split())
    authors, places = _names(rec.get("authors"), where, line, n, "authors")
    if not places and rec.get("affiliations") is not None:
        places, _ = _names(rec.get("affiliations"), where, line, n, "affiliations")
        places = places if len(places) == len(authors) else []
    keywords, _ = _names(rec.get("keywords"), where, line, n, "keywords")
    area = _text(rec, _AREA_KEYS, where, line, n)
    subarea = _text(rec, ("subarea",), where, line, n)
    if "->" in area:
        area, _, sub = (part.strip() for part in area.partition("->"))
        subarea = subarea or sub
    kind = ""
    for key in _TYPE_KEYS:
        kind = _presentation(_text(rec, (key,), where, line, n))
        if kind:
            break
    track = _text(rec, ("track",), where, line, n)
    for key in _TRACK_KEYS:
        track = track or _track(_text(rec, (key,), where, line, n))
    pdf = _text(rec, _PDF_KEYS, where, line, n)
    if pdf.startswith("/"):
        pdf = OPENREVIEW + pdf
    site = _text(rec, _SITE_KEYS, where, line, n)
    if site.startswith("/"):  # the conference site's program gives paths on its own site
        site = CONFERENCE_SITE + site
    return {
        "id": _text(rec, _ID_KEYS, where, line, n),
        "title": _text(rec, _TITLE_KEYS, where, line, n),
        "abstract": abstract,
        "authors": tuple(authors),
        "affiliations": tuple(places),
        "keywords": tuple(dict.fromkeys(keywords)),
        "area": _humanize(area),
        "subarea": _humanize(subarea),
        "type": kind,
        "track": track,
        "venue": _text(rec, ("venue",), where, line, n),
        "tldr": _text(rec, _TLDR_KEYS, where, line, n),
        "url": _text(rec, _URL_KEYS, where, line, n) or site,
        "pdf_url": pdf,
        "site_url": site,
        "slots": _slot(rec, kind, where, line, n),
    }


def _slot(rec: dict, kind: str, where: str, line: int | None, n: int | None) -> tuple[Slot, ...]:
    """The record's place in the program (session, times with their offset, room, poster), if it has one."""
    session = _text(rec, ("session",), where, line, n)
    start, end = (_time(rec, keys, where, line, n) for keys in (_START_KEYS, _END_KEYS))
    if not (session or start):
        return ()
    if start and end and _when(end) < _when(start):
        raise _fail(where, line, n, f"ends ({end}) before it starts ({start})")
    room = _text(rec, _ROOM_KEYS, where, line, n)
    poster = _text(rec, _POSTER_KEYS, where, line, n)
    # The entry's own event type (a talk or its poster), else what its session says, else the paper's type.
    slot_kind = (_presentation(_text(rec, ("eventtype", "event_type"), where, line, n))
                 or _presentation(session) or kind)
    return (Slot(session=session, start=start, end=end, room=room, poster_position=poster, kind=slot_kind),)


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _time(rec: dict, keys: tuple[str, ...], where: str, line: int | None, n: int | None) -> str:
    """An ISO 8601 time with its UTC offset, as in the source; "" when absent."""
    value = _text(rec, keys, where, line, n)
    if not value:
        return ""
    key = next(k for k in keys if rec.get(k) not in (None, ""))
    try:
        parsed = _when(value)
    except ValueError:
        raise _fail(where, line, n, f"field {key!r} is not an ISO 8601 time: {value[:40]!r}") from None
    if parsed.utcoffset() is None:
        raise _fail(where, line, n, f"field {key!r} has no UTC offset: {value[:40]!r} "
                    "(write it as 2026-12-08T10:00:00-08:00)")
    return value


def _check_abstract(abstract: str, where: str, line: int | None, n: int | None) -> None:
    if 0 < len(abstract) < MIN_ABSTRACT_CHARS:
        raise _fail(where, line, n, f"abstract is too short ({len(abstract)} characters)")


def _safe_id(raw: str) -> str:
    return _ID_SAFE.sub("-", raw).strip("-")[:120]


def _to_paper(flat: dict, source: str, position: int, where: str, line: int | None, n: int | None) -> Paper:
    abstract, title = flat["abstract"], flat["title"]
    if not abstract and not title:
        raise _fail(where, line, n, "abstract is missing; every record needs an 'abstract' field "
                    "(or at least a 'title' when the abstract is not yet published)")
    _check_abstract(abstract, where, line, n)
    return Paper(
        paper_id=_safe_id(flat["id"]) or text_id(abstract or title),
        source=source,
        position=position,
        abstract=abstract,
        label=title or derive_label(abstract),
        title=title,
        authors=flat["authors"],
        affiliations=flat["affiliations"],
        url=flat["url"],
        venue=flat["venue"],
        links=find_links(abstract),
        keywords=flat["keywords"],
        area=flat["area"],
        subarea=flat["subarea"],
        presentation=flat["type"],
        track=flat["track"],
        tldr=flat["tldr"],
        pdf_url=flat["pdf_url"],
        site_url=flat["site_url"],
        slots=tuple(sorted(flat["slots"], key=Slot.order)),
    )


# -- text and CSV ---------------------------------------------------------------------------------------


def _text_records(text: str, where: str):
    lines = text.split("\n")
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None:
        raise InputError(where, "file is empty")
    # The first non-blank line is the collection's header, never an abstract.
    block: list[str] = []
    start = 0
    for i in range(first + 1, len(lines) + 1):
        ln = lines[i] if i < len(lines) else ""
        if ln.strip():
            if not block:
                start = i + 1
            block.append(ln.strip())
        elif block:
            yield start, {"abstract": " ".join(block)}
            block = []


def _csv_records(text: str, where: str):
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if not reader.fieldnames:
        raise InputError(where, "CSV file is empty (no header row)")
    fields = {f.strip().lower() for f in reader.fieldnames if f}
    if not fields & set(_ABSTRACT_KEYS):
        raise InputError(where, f"CSV header has no 'abstract' column (found: {', '.join(sorted(fields))})", line=1)
    try:
        for row in reader:
            if None in row:
                raise InputError(where, "row has more fields than the header", line=reader.line_num)
            yield reader.line_num, {k.strip().lower(): v for k, v in row.items() if k}
    except csv.Error as exc:
        raise InputError(where, f"malformed CSV: {exc}", line=reader.line_num) from None
