"""Corpus files → Paper records.

Formats (JSON is recognised by its content, whatever the file is called, ``.txt`` included):

* ``.txt`` / ``.md`` – the abstract-collection format: one header line (any
  language), then abstracts separated by blank lines, no titles.
* ``.jsonl`` / ``.json`` – one JSON object per line, a JSON array, or an object
  holding a list (``{"notes": [...]}``, the conference site's ``{"count", "results": [...]}``).
  Each record is one of:
  - an OpenReview note (API v2 ``content.<field>.value`` or API v1 plain ``content.<field>``);
  - a conference-site program entry (``name``, ``authors`` as ``{fullname, institution}``,
    ``topic`` "Area->Subarea", ``decision``, ``eventtype``, ``paper_url`` …);
  - a paper-list record (papercopilot/paperlists: ``author`` "A; B", ``status``, ``site``, ``bibtex``;
    one file per paper with ``links.openreview``, ``or_id``, ``title_zh``) or any flat record.
  An object mapping ids to abstracts (``{"123": "We ..."}``), or records holding only an
  id and an abstract, supply the abstracts of papers listed elsewhere (see `load_papers`).
* ``.csv`` – a header row naming the columns (comma, tab or semicolon separated), then one paper per row.

Which names each field goes by is the table in `ingest.fields`; fields no entry names are counted
and reported as ignored. Entries repeating an id (orals are listed twice in a program) are merged
into one paper; a repeat whose abstract differs keeps the first and is reported, naming both records.

Decisions: withdrawn, rejected and desk-rejected submissions and "Submitted to …" venues (a
rejected submission's) are skipped and counted: labs ingest the accepted papers. A ``Workshop``
status is ingested with the track "Workshop"; any other status (``Active``…) is ingested as it is.

A record that fails (a field of the wrong type, an abstract too short to be one) does not sink its
file: it is skipped, or kept title-only when it has a title, with a warning naming file, record and
reason. A file where most records fail is refused with the first reasons; ``strict`` refuses a file
at its first failing record. Control characters (NUL, terminal escape sequences, bidirectional
overrides) are removed from every value and the records that had them counted.
"""

from __future__ import annotations

import csv
import errno
import hashlib
import html
import io
import json
import re
import stat
import unicodedata
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ingest import fields as F
from ingest.labels import derive_label, find_links
from paperbot.errors import InputError
from paperbot.records import Paper, Slot
from paperbot.text import strip_control

SUPPORTED_SUFFIXES = (".txt", ".md", ".jsonl", ".json", ".csv")
MAX_FILE_BYTES = 200 * 1024 * 1024
MIN_ABSTRACT_CHARS = 20
MAX_NESTING = 64  # deeper JSON is not a paper list (and would exhaust the parser's recursion)
# JSON texts longer than this are decoded a record at a time (see _decode_in_parts).
DECODE_IN_PARTS_CHARS = 1 << 20
REASONS_SHOWN = 3  # failing records named when a file is refused
OPENREVIEW = "https://openreview.net"
CONFERENCE_SITE = "https://neurips.cc"
_ABSTRACT_KEYS = F.names("abstract")
_ID_KEYS = F.names("id")
_TITLE_KEYS = F.names("title")
_AREA_KEYS = F.names("area")
_TYPE_KEYS = F.names("type")
_TRACK_KEYS = F.names("track")[1:]  # the first is the track as written; the rest are parsed for one
_TLDR_KEYS = F.names("tldr")
_URL_KEYS = F.names("url")
_PDF_KEYS = F.names("pdf_url")
_SITE_KEYS = F.names("site_url")
_START_KEYS, _END_KEYS = F.names("start"), F.names("end")
_ROOM_KEYS, _POSTER_KEYS = F.names("room"), F.names("poster")
# A record with only these keys (and an abstract) supplies the abstract of a paper listed elsewhere.
_SUPPLEMENT_KEYS = set(_ID_KEYS) | set(_ABSTRACT_KEYS)
_LIST_KEYS = ("notes", "results", "papers", "data", "items", "records")
_ENTITY = re.compile(r"&(#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|amp|lt|gt|quot|apos|nbsp);")
_BARE_HOST = re.compile(r"^[\w-]+(\.[\w-]+)*\.[a-z]{2,}(/\S*)?$", re.IGNORECASE)
_ID_SAFE = re.compile(r"[^A-Za-z0-9._:-]+")
_PRESENTATION = re.compile(r"\b(oral|spotlight|poster)s?\b", re.IGNORECASE)
_TRACK_IN_PATH = re.compile(r"/([A-Za-z][A-Za-z_]*?)_Track\b")
_NOT_ACCEPTED = re.compile(r"\b(withdrawn?|desk[ _-]?rejected?|rejected)([ _]submission)?\b|^\s*(reject|withdraw)\b"
                           r"|^\s*submitted\s+to\b", re.IGNORECASE)
class UnreadableFile(InputError):
    """A corpus file that cannot be read at all (permissions, a special file, a broken link): skipped and named."""


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
    not_accepted: list[str] = field(default_factory=list)  # where each withdrawn or rejected submission was
    decisions: Counter[str] = field(default_factory=Counter)  # the not-accepted decisions, as written
    records: int = 0
    skipped: list[str] = field(default_factory=list)  # "file record 3: reason" for each record left out
    title_only: list[str] = field(default_factory=list)  # the same for records kept with their title only
    conflicts: list[str] = field(default_factory=list)  # repeated ids whose abstracts differ (the first kept)
    ignored: Counter[str] = field(default_factory=Counter)  # fields no table entry reads, with their counts
    cleaned: int = 0  # records whose text had control characters removed


def text_id(text: str) -> str:
    """Content-derived paper id: the same abstract always gets the same id."""
    norm = " ".join(unicodedata.normalize("NFC", text).split()).lower()
    return "p" + hashlib.sha256(norm.encode("utf-8")).hexdigest()[:15]


def discover(paths: list[Path]) -> list[Path]:
    """Expand folders into their supported files (sorted); reject unknown files."""
    return discover_all(paths)[0]


def discover_all(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The corpus files in `paths`, and what a folder held that cannot be read (broken links, loops, FIFOs).

    A path given by name that is not a readable file is an error; inside a folder it is skipped and named.
    """
    files: list[Path] = []
    unreadable: list[str] = []
    for path in paths:
        if path.is_dir():
            found = []
            for p in sorted(path.iterdir()):
                if p.suffix.lower() not in SUPPORTED_SUFFIXES:
                    continue
                problem = _not_a_file(p)
                if problem is None:
                    found.append(p)
                elif problem != "a folder":
                    unreadable.append(f"{p}: {problem}")
            if not found and not unreadable:
                raise InputError(str(path), f"no corpus files ({', '.join(SUPPORTED_SUFFIXES)}) in this folder")
            files.extend(found)
        elif path.is_file():
            if path.suffix.lower() not in SUPPORTED_SUFFIXES:
                raise InputError(str(path), f"unsupported file type {path.suffix or '(none)'!r}; "
                                 f"use one of {', '.join(SUPPORTED_SUFFIXES)}")
            files.append(path)
        else:
            problem = _not_a_file(path)
            raise InputError(str(path), "no such file or folder" if problem in (None, "missing") else problem)
    names: dict[str, Path] = {}
    for f in files:
        if f.name in names and names[f.name] != f:
            raise InputError(str(f), f"two corpus files share the name {f.name!r} ({names[f.name]}); "
                             "sources are identified by file name, rename one")
        names[f.name] = f
    return files, unreadable


def _not_a_file(path: Path) -> str | None:
    """Why `path` is not a regular file that can be read, or None when it is one."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link loop"
        if path.is_symlink():
            try:
                path.resolve(strict=True)
            except RuntimeError:  # Python before 3.13 reports a loop this way
                return "a symbolic link loop"
            except OSError as inner:
                if inner.errno == errno.ELOOP:
                    return "a symbolic link loop"
            return "a symbolic link to a missing file"
        return "missing" if isinstance(exc, FileNotFoundError) else f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISDIR(mode):
        return "a folder"
    if not stat.S_ISREG(mode):
        kind = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        return f"not a regular file ({kind})"
    return None


def parse_file(path: Path, strict: bool = False) -> list[Paper]:
    """Parse one corpus file; raise InputError naming the file and line (or record) on bad input.

    Abstract-only records count as papers of their own here; `read_file` keeps them apart.
    """
    parsed = read_file(path, strict=strict)
    papers = parsed.papers + [supplement_paper(s) for s in parsed.abstracts]
    return sorted(papers, key=lambda p: p.position)


def read_file(path: Path, strict: bool = False) -> ParsedFile:
    """One corpus file's papers, and the abstracts it supplies for papers listed elsewhere."""
    source = path.name
    problem = _not_a_file(path)
    if problem is not None:
        raise UnreadableFile(str(path), "no such file" if problem == "missing" else problem)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InputError(str(path), f"file is {size // 2**20} MB, larger than the {MAX_FILE_BYTES // 2**20} MB "
                             "limit")
        raw = path.read_bytes()
    except OSError as exc:
        raise UnreadableFile(str(path), f"cannot be read ({exc.strerror or exc})") from None
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
    if suffix in (".jsonl", ".json") or _looks_like_json(text):
        return _structured(_json_records(text, where, suffix), source, where, strict)
    if suffix == ".csv":
        records = [(line, n, rec) for n, (line, rec) in enumerate(_csv_records(text, where), start=1)]
    else:
        records = [(line, n, rec) for n, (line, rec) in enumerate(_text_records(text, where), start=1)]
    if not records:
        raise InputError(where, "contains no abstracts")
    return _structured((records, False), source, where, strict, by_line=True)


def _looks_like_json(text: str) -> bool:
    """A text file holding JSON (lines of objects, or an array): read as JSON, not as abstracts."""
    first = next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
    if first.startswith("{"):
        return _parses(first) or _parses(text)
    return first.startswith("[") and _parses(text)


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


def _loads(text: str, where: str, line: int | None = None) -> Any:
    """json.loads with a nesting limit: a deeply nested file is one clear error, never a RecursionError."""
    try:
        data = json.loads(text) if len(text) < DECODE_IN_PARTS_CHARS else _decode_in_parts(text)
    except RecursionError:
        data = None
        depth = MAX_NESTING + 1
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # an integer of thousands of digits
        raise InputError(where, f"invalid JSON ({str(exc).split(';')[0]})", line=line) from None
    else:
        depth = _depth(data)
    if depth > MAX_NESTING:
        raise InputError(where, f"JSON nested more than {MAX_NESTING} levels deep; a paper list is an array of "
                         "flat objects", line=line)
    return data


_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _decode_in_parts(text: str) -> Any:
    """What json.loads gives for `text`, its errors included, with the top two levels (a list of
    records, or an object holding one) decoded an element at a time.

    json.loads holds the GIL for the whole text: for a 15 MB program, 250 ms in which a bot's event
    loop cannot run while a /reindex reads the file. Between two elements other threads get their turn.
    """

    def skip(i: int) -> int:
        m = _SPACE.match(text, i)  # matches everywhere: it may match nothing
        return m.end() if m else i

    def fail(message: str, i: int):
        raise json.JSONDecodeError(message, text, i)

    def value(i: int, depth: int) -> tuple[Any, int]:
        opener = text[i:i + 1]
        if depth >= 2 or opener not in ("[", "{"):
            return _DECODER.raw_decode(text, i)
        closer = "]" if opener == "[" else "}"
        out: Any = [] if opener == "[" else {}
        i = skip(i + 1)
        if text[i:i + 1] == closer:
            return out, i + 1
        while True:
            if opener == "[":
                item, i = value(i, depth + 1)
                out.append(item)
            else:
                if text[i:i + 1] != '"':
                    fail("Expecting property name enclosed in double quotes", i)
                key, i = _DECODER.raw_decode(text, i)
                i = skip(i)
                if text[i:i + 1] != ":":
                    fail("Expecting ':' delimiter", i)
                out[key], i = value(skip(i + 1), depth + 1)
            i = skip(i)
            if text[i:i + 1] == closer:
                return out, i + 1
            if text[i:i + 1] != ",":
                fail("Expecting ',' delimiter", i)
            i = skip(i + 1)

    if text.startswith("\ufeff"):
        fail("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)
    data, end = value(skip(0), 0)
    end = skip(end)
    if end != len(text):
        fail("Extra data", end)
    return data


def _depth(value: Any, limit: int = MAX_NESTING + 1) -> int:
    """How deeply `value` nests (counted up to `limit`), without recursion."""
    stack = [(value, 1)]
    deepest = 0
    while stack:
        item, d = stack.pop()
        deepest = max(deepest, d)
        if d >= limit:
            return d
        if isinstance(item, dict):
            stack.extend((v, d + 1) for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, d + 1) for v in item if isinstance(v, (dict, list)))
    return deepest


def _json_records(text: str, where: str, suffix: str) -> tuple[_Records, bool]:
    """The records of a JSON or JSONL file, and whether it was an {id: abstract} mapping."""
    if not text.strip():
        raise InputError(where, "file is empty")
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if suffix == ".jsonl" and _parses(lines[0]):
        return list(_jsonl_records(text, where)), False
    try:
        data = _loads(text, where)
    except json.JSONDecodeError as exc:
        if len(lines) > 1 and _parses(lines[0]):
            return list(_jsonl_records(text, where)), False
        raise InputError(where, f"invalid JSON ({exc.msg} at column {exc.colno})", line=exc.lineno) from None
    if isinstance(data, list):
        return [(None, i, rec) for i, rec in enumerate(data, start=1)], False
    if not isinstance(data, dict):
        raise InputError(where, f"expected a JSON object or array, got {type(data).__name__}")
    if data and all(isinstance(v, str) for v in data.values()) and not _is_paper(data):
        return [(None, i, {"id": k, "abstract": v}) for i, (k, v) in enumerate(data.items(), start=1)], True
    lists = [k for k in _LIST_KEYS if isinstance(data.get(k), list)]
    lists += [k for k, v in data.items() if k not in lists and isinstance(v, list) and v and isinstance(v[0], dict)]
    if lists and not _is_paper(data):
        return [(None, i, rec) for i, rec in enumerate(data[lists[0]], start=1)], False
    if "content" in data or _is_paper(data):
        return [(None, 1, data)], False
    raise InputError(where, "a JSON object without a list of papers or notes (expected \"notes\", \"results\" or "
                     f"an array; found keys: {', '.join(sorted(map(str, data))[:8]) or 'none'})")


def _is_paper(data: dict) -> bool:
    """One paper's object (a folder of one file per paper): it has a title or an abstract."""
    rec = F.normalize(data)
    return any(isinstance(rec.get(k), str) and rec.get(k) for k in _TITLE_KEYS + _ABSTRACT_KEYS)


def _parses(line: str) -> bool:
    try:
        json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


def _jsonl_records(text: str, where: str):
    n_rec = 0
    for n, ln in enumerate(text.split("\n"), start=1):
        if not ln.strip():
            continue
        try:
            rec = _loads(ln, where, line=n)
        except json.JSONDecodeError as exc:
            raise InputError(where, f"invalid JSON ({exc.msg} at column {exc.colno})", line=n) from None
        if not isinstance(rec, dict):
            raise InputError(where, f"expected a JSON object, got {type(rec).__name__}", line=n)
        n_rec += 1
        yield n, n_rec, rec


def _structured(found: tuple[_Records, bool], source: str, where: str, strict: bool = False,
                by_line: bool = False) -> ParsedFile:
    """Records → papers, one per id (repeated entries merged), and abstract supplements.

    A failing record is skipped (kept title-only when it has a title) and named; `strict` raises at the
    first one. When most records fail the file is refused, naming the first few.
    """
    records, mapping = found
    if not records:
        raise InputError(where, "contains no papers")
    out = ParsedFile(records=len(records))
    merged: dict[str, tuple[int | None, int, dict]] = {}
    order: list[str | Supplement] = []  # papers (by key) and abstracts, in the order of their first record
    failures: list[InputError] = []
    for line, n, rec in records:
        ref_n = None if by_line else n
        try:
            if isinstance(rec, _TooManyCells):
                raise _fail(where, line, ref_n, str(rec))
            if not isinstance(rec, dict):
                raise _fail(where, line, ref_n, f"expected a JSON object, got {type(rec).__name__}")
            rec, cleaned = _clean(rec)
            out.cleaned += cleaned
            raw_note = _unwrap_note(rec)
            out.ignored.update(F.ignored(raw_note))
            note = F.normalize(raw_note)
            decision = _not_accepted(note)
            if decision:
                out.not_accepted.append(f"{where}:{line}" if line is not None else f"{where} record {n}")
                out.decisions[decision] += 1
                continue
            flat = None
            try:
                flat = _flat(note, where, line, ref_n)
                if mapping or (flat["id"] and set(note) <= _SUPPLEMENT_KEYS and flat["abstract"]):
                    if not flat["abstract"]:
                        raise _fail(where, line, ref_n, f"the abstract of {flat['id'][:40]!r} is empty")
                    _check_abstract(flat["abstract"], where, line, ref_n)
                    order.append(Supplement(_safe_id(flat["id"]), flat["abstract"], source, 0,
                                            _record_ref(where, line, n)))
                    continue
                _check_record(flat, where, line, ref_n)
            except InputError as exc:
                title = note.get("title") or note.get("name")
                if strict or not isinstance(title, str) or not title.strip() or mapping:
                    raise
                failures.append(exc)
                out.title_only.append(f"{exc} (kept with its title only)")
                if flat is not None and flat["title"]:  # only the abstract failed: keep everything else
                    flat["abstract"] = ""
                else:
                    flat = _title_only(note, where, line, ref_n)
        except InputError as exc:
            if strict:
                raise
            failures.append(exc)
            out.skipped.append(str(exc))
            continue
        key = flat["id"] or f"\x00{n}"
        if key in merged:
            first_line, first_n, first = merged[key]
            if first["abstract"] and flat["abstract"] and text_id(first["abstract"]) != text_id(flat["abstract"]):
                problem = (f"{_record_ref(where, line, n)} repeats the id {flat['id']!r} of "
                           f"{_record_ref(where, first_line, first_n)} with a different abstract; the first is kept")
                if strict:
                    raise InputError(where, problem.removeprefix(where).lstrip(": ") or problem, line=line)
                out.conflicts.append(problem)
            merged[key] = (first_line, first_n, _merge(first, flat))
        else:
            merged[key] = (line, n, flat)
            order.append(key)
    if failures and len(records) == 1:
        raise failures[0]
    if failures and len(failures) * 2 > len(records):
        shown = "; ".join((f"line {e.line}: " if e.line is not None else "") + e.problem
                          for e in failures[:REASONS_SHOWN])
        more = len(failures) - REASONS_SHOWN
        raise InputError(where, f"{len(failures)} of {len(records)} records failed, so the file is refused: "
                         f"{shown}" + (f"; and {more} more" if more > 0 else ""))
    for position, entry in enumerate(order, start=1):
        if isinstance(entry, Supplement):
            out.abstracts.append(replace(entry, position=position))
        else:
            line, n, flat = merged[entry]
            out.papers.append(_to_paper(flat, source, position, where, line, None if by_line else n))
    return out


def _clean(rec: dict) -> tuple[dict, int]:
    """The record with control characters removed from every text in it (1 when something was removed), and
    HTML entities read as the characters they stand for."""
    changed = False

    def walk(value: Any, depth: int) -> Any:
        nonlocal changed
        if isinstance(value, str):
            cleaned = strip_control(value)
            changed = changed or cleaned != value
            # HTML entities some scrapers leave ("D&#x27;Amour"; a ";" inside would split an author list).
            return _ENTITY.sub(lambda m: html.unescape(m.group()), cleaned) if "&" in cleaned else cleaned
        if depth > MAX_NESTING:
            return value
        if isinstance(value, dict):
            return {walk(k, depth + 1) if isinstance(k, str) else k: walk(v, depth + 1) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, depth + 1) for v in value]
        return value

    out = walk(rec, 0)
    return out, int(changed)


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


def _not_accepted(rec: dict) -> str:
    """The decision of a withdrawn or rejected submission ("Reject", "Submitted to NeurIPS 2024"), else ""."""
    for key in F.names("decision"):
        value = rec.get(key)
        if isinstance(value, str) and _NOT_ACCEPTED.search(value):
            return " ".join(value.split())[:60]
    return ""


def _merge(first: dict, again: dict) -> dict:
    """A repeated entry fills what the first one lacked; the strongest presentation type wins."""
    out = {k: (v if v else again.get(k, v)) for k, v in first.items()}
    rank = {"": 0, "poster": 1, "spotlight": 2, "oral": 3}
    out["type"] = max(first["type"], again["type"], key=lambda t: rank.get(t, 0))
    out["slots"] = tuple(dict.fromkeys(first["slots"] + again["slots"]))  # a talk and its poster: both kept
    out["links"] = tuple(dict.fromkeys(first["links"] + again["links"]))
    return out


# -- one record → one Paper ----------------------------------------------------------------------------


def _record_ref(where: str, line: int | None, n: int | None) -> str:
    return where if line is not None or n is None else f"{where} record {n}"


def _fail(where: str, line: int | None, n: int | None, problem: str) -> InputError:
    prefix = f"record {n}: " if n is not None and line is None else ""
    return InputError(where, prefix + problem, line=line)


def _text(rec: dict, keys: tuple[str, ...], where: str, line: int | None, n: int | None) -> str:
    """The first of `keys` the record gives, as one line of text ("" when none)."""
    for key in keys:
        value = F.lookup(rec, key)
        if value is None or value == "":
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str):
            raise _fail(where, line, n, f"field {key!r} must be text, got {type(value).__name__}")
        return " ".join(value.split())
    return ""


def _first(rec: dict, keys: tuple[str, ...]) -> tuple[str, Any]:
    """The first of `keys` the record gives a value for, and that value."""
    for key in keys:
        value = F.lookup(rec, key)
        if value not in (None, "", []):
            return key, value
    return keys[0], None


def _names(value: Any, where: str, line: int | None, n: int | None, key: str) -> tuple[list[str], list[str]]:
    """Authors (or keywords) from a string, a list of strings, or a list of {fullname, institution} objects."""
    if value is None or value == "":
        return [], []
    if isinstance(value, str):
        sep = ";" if ";" in value else ","
        parts = [p for chunk in value.split(sep) for p in (re.split(r"\s+and\s+", chunk) if key in F.names("authors")
                                                            else [chunk])]
        return [" ".join(p.split()) for p in parts if p.strip()], []
    if not isinstance(value, list):
        raise _fail(where, line, n, f"field {key!r} must be text or a list, got {type(value).__name__}")
    names, places = [], []
    for item in value:
        if isinstance(item, dict):
            item = F.normalize(item)
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


def _affiliations(value: Any, authors: list[str], where: str, line: int | None, n: int | None,
                  key: str) -> list[str]:
    """One affiliation per author: a list, or text with ";" between them (paperlists' `aff`)."""
    if isinstance(value, str):
        places = [" ".join(p.split()) for p in value.split(";")]
    else:
        places, _ = _names(value, where, line, n, key)
    return places if len(places) == len(authors) and any(places) else []


def _links(rec: dict, abstract: str) -> tuple[str, ...]:
    """Code, project and preprint pages the record names, then the links found in the abstract."""
    named = []
    for key in F.names("links"):
        value = F.lookup(rec, key)
        for url in (value if isinstance(value, list) else [value]):
            url = url.strip() if isinstance(url, str) else ""
            if _BARE_HOST.match(url):  # "github.com/org/repo" as some lists write it
                url = "https://" + url
            if url.startswith(("http://", "https://")) and " " not in url:
                named.append(url)
    return tuple(dict.fromkeys(named + list(find_links(abstract))))


def _url(rec: dict, where: str, line: int | None, n: int | None) -> str:
    """The paper's page: a URL, or an OpenReview forum id made into its forum's URL."""
    key, value = _first(rec, _URL_KEYS)
    url = _text(rec, (key,), where, line, n) if value is not None else ""
    if url and not url.startswith(("http://", "https://", "/")) and key in ("forum", "or_id"):
        return f"{OPENREVIEW}/forum?id={url}"
    if not url:
        or_id = _text(rec, ("or_id",), where, line, n)
        if or_id and _ID_SAFE.sub("", or_id) == or_id:
            return f"{OPENREVIEW}/forum?id={or_id}"
    return url


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
    """The canonical fields of one (normalized) record, whichever format it came from."""
    abstract = " ".join(_text(rec, _ABSTRACT_KEYS, where, line, n).split())
    author_key, author_value = _first(rec, F.names("authors"))
    authors, places = _names(author_value, where, line, n, author_key)
    if not places:
        aff_key, aff_value = _first(rec, F.names("affiliations"))
        if aff_value is not None:
            places = _affiliations(aff_value, authors, where, line, n, aff_key)
    keywords, _ = _names(_first(rec, F.names("keywords"))[1], where, line, n, "keywords")
    area = _text(rec, _AREA_KEYS, where, line, n)
    subarea = _text(rec, F.names("subarea"), where, line, n)
    if "->" in area:
        area, _, sub = (part.strip() for part in area.partition("->"))
        subarea = subarea or sub
    kind = ""
    for key in _TYPE_KEYS:
        kind = _presentation(_text(rec, (key,), where, line, n))
        if kind:
            break
    track = _text(rec, F.names("track")[:1], where, line, n)
    if track.islower() and " " not in track:  # paperlists' "main"
        track = track.capitalize()
    for key in _TRACK_KEYS:
        track = track or _track(_text(rec, (key,), where, line, n))
    if any(_text(rec, (k,), where, line, n).lower() == "workshop" for k in ("status", "decision")):
        track = "Workshop"  # accepted to the conference's workshop track (ICLR 2018)
    pdf = _text(rec, _PDF_KEYS, where, line, n)
    if pdf.startswith("/"):
        pdf = OPENREVIEW + pdf
    site = _text(rec, _SITE_KEYS, where, line, n)
    if site.startswith("/"):  # the conference site's program gives paths on its own site
        site = CONFERENCE_SITE + site
    url = _url(rec, where, line, n)
    if site.startswith(OPENREVIEW):  # an OpenReview forum given as the "site" is the paper's own page
        url, site = url or site, ""
    venue = _text(rec, ("venue",), where, line, n)
    if not venue:
        venue = " ".join(v for v in (_text(rec, F.names("conference"), where, line, n),
                                      _text(rec, F.names("year"), where, line, n)) if v)
    bibtex = F.lookup(rec, "bibtex") or F.lookup(rec, "_bibtex") or F.lookup(rec, "bib") or ""
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
        "venue": venue,
        "tldr": _text(rec, _TLDR_KEYS, where, line, n),
        "url": url or site,
        "pdf_url": pdf,
        "site_url": site,
        "links": _links(rec, abstract),
        "bibtex": bibtex.strip() if isinstance(bibtex, str) else "",
        "title_zh": _text(rec, F.names("title_zh"), where, line, n),
        "slots": _slot(rec, kind, where, line, n),
    }


def _title_only(rec: dict, where: str, line: int | None, n: int | None) -> dict:
    """What is kept of a failing record that has a title: its id and title."""
    flat: dict[str, Any] = dict.fromkeys(("abstract", "area", "subarea", "type", "track", "venue", "tldr", "url",
                                          "pdf_url", "site_url", "bibtex", "title_zh"), "")
    flat.update(authors=(), affiliations=(), keywords=(), links=(), slots=())
    for key, keys in (("id", _ID_KEYS), ("title", _TITLE_KEYS)):
        _, value = _first(rec, keys)
        flat[key] = " ".join(str(value).split()) if isinstance(value, (str, int)) else ""
    return flat


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
    # The entry's own event type (a talk or its poster), else what its session says, else the paper's type;
    # "Spotlight Poster" is a poster.
    slot_kind = (_event_kind(_text(rec, ("eventtype", "event_type"), where, line, n)) or _event_kind(session)
                 or ("poster" if poster else kind))
    return (Slot(session=session, start=start, end=end, room=room, poster_position=poster, kind=slot_kind),)


def _event_kind(text: str) -> str:
    return "poster" if re.search(r"\bposters?\b", text, re.IGNORECASE) else _presentation(text)


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _time(rec: dict, keys: tuple[str, ...], where: str, line: int | None, n: int | None) -> str:
    """An ISO 8601 time with its UTC offset, as in the source; "" when absent."""
    value = _text(rec, keys, where, line, n)
    if not value:
        return ""
    key = next(k for k in keys if F.lookup(rec, k) not in (None, ""))
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


def _check_record(flat: dict, where: str, line: int | None, n: int | None) -> None:
    """A record is a paper when it has a title or an abstract long enough to be one."""
    if not flat["abstract"] and not flat["title"]:
        raise _fail(where, line, n, "abstract is missing; every record needs an 'abstract' field "
                    "(or at least a 'title' when the abstract is not yet published)")
    _check_abstract(flat["abstract"], where, line, n)


def _to_paper(flat: dict, source: str, position: int, where: str, line: int | None, n: int | None) -> Paper:
    abstract, title = flat["abstract"], flat["title"]
    _check_record(flat, where, line, n)
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
        links=flat["links"],
        keywords=flat["keywords"],
        area=flat["area"],
        subarea=flat["subarea"],
        presentation=flat["type"],
        track=flat["track"],
        tldr=flat["tldr"],
        pdf_url=flat["pdf_url"],
        site_url=flat["site_url"],
        slots=tuple(sorted(flat["slots"], key=Slot.order)),
        bibtex=flat["bibtex"],
        title_zh=flat["title_zh"],
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
    """Rows of a CSV file (comma, tab or semicolon separated) whose first row names the columns."""
    first = next((ln for ln in text.split("\n") if ln.strip()), "")
    if not first:
        raise InputError(where, "CSV file is empty (no header row)")
    delimiter = max(",\t;", key=first.count) if any(d in first for d in ",\t;") else ","
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = reader.fieldnames
    except csv.Error as exc:
        raise InputError(where, f"malformed CSV: {exc}", line=1) from None
    if not header:
        raise InputError(where, "CSV file is empty (no header row)")
    columns = {f.strip().lower() for f in header if f}
    known = {name for f in F.FIELDS for name in f.names}
    if not columns & known:
        cells = [c for c in (f.strip() for f in header) if c]
        raise InputError(where, f"CSV file has no header row naming its columns (its first row has {len(cells)} "
                         f"cells, starting {cells[0][:30]!r}); add a first row such as 'title,authors,abstract'",
                         line=1)
    if not columns & (set(_ABSTRACT_KEYS) | set(_TITLE_KEYS)):
        raise InputError(where, f"CSV header has no 'abstract' or 'title' column (found: "
                         f"{', '.join(sorted(columns))[:200]})", line=1)
    try:
        for row in reader:
            if None in row:
                yield reader.line_num, _TooManyCells("row has more fields than the header")
                continue
            yield reader.line_num, {k.strip().lower(): v for k, v in row.items() if k}
    except csv.Error as exc:
        raise InputError(where, f"malformed CSV: {exc}", line=reader.line_num) from None


class _TooManyCells(str):
    """A CSV row that cannot be a record (more cells than the header names): skipped with this reason."""
