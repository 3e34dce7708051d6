"""Corpus files → Paper records.

Formats, chosen by file extension:

* ``.txt`` / ``.md`` – the abstract-collection format: one header line (any
  language), then abstracts separated by blank lines, no titles.
* ``.jsonl`` – one JSON object per line.
* ``.csv`` – a header row, then one paper per row.

JSONL and CSV records use these fields (only ``abstract`` is required; ``text``
and ``summary`` are accepted as its synonyms, ``_id`` / ``paper_id`` for ``id``):
``id``, ``title``, ``abstract``, ``authors`` (a string or a list), ``url``, ``venue``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import unicodedata
from pathlib import Path

from ingest.labels import derive_label, find_links
from paperbot.errors import InputError
from paperbot.records import Paper

SUPPORTED_SUFFIXES = (".txt", ".md", ".jsonl", ".csv")
MAX_FILE_BYTES = 200 * 1024 * 1024
MIN_ABSTRACT_CHARS = 20
_ABSTRACT_KEYS = ("abstract", "text", "summary")
_ID_KEYS = ("id", "_id", "paper_id")
_ID_SAFE = re.compile(r"[^A-Za-z0-9._:-]+")


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
    """Parse one corpus file; raise InputError naming the file and line on bad input."""
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
    if suffix == ".jsonl":
        records = list(_jsonl_records(text, str(path)))
    elif suffix == ".csv":
        records = list(_csv_records(text, str(path)))
    else:
        records = list(_text_records(text, str(path)))
    if not records:
        raise InputError(str(path), "contains no abstracts")
    return [_to_paper(rec, source, i + 1, str(path), line) for i, (line, rec) in enumerate(records)]


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


def _jsonl_records(text: str, where: str):
    for n, ln in enumerate(text.split("\n"), start=1):
        if not ln.strip():
            continue
        try:
            rec = json.loads(ln)
        except json.JSONDecodeError as exc:
            raise InputError(where, f"invalid JSON ({exc.msg} at column {exc.colno})", line=n) from None
        if not isinstance(rec, dict):
            raise InputError(where, f"expected a JSON object, got {type(rec).__name__}", line=n)
        yield n, rec


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


def _field(rec: dict, keys: tuple[str, ...], where: str, line: int) -> str:
    for key in keys:
        if key in rec and rec[key] is not None:
            value = rec[key]
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return str(value)
            if not isinstance(value, str):
                raise InputError(where, f"field {key!r} must be text, got {type(value).__name__}", line=line)
            return value.strip()
    return ""


def _to_paper(rec: dict, source: str, position: int, where: str, line: int) -> Paper:
    abstract = " ".join(_field(rec, _ABSTRACT_KEYS, where, line).split())
    if len(abstract) < MIN_ABSTRACT_CHARS:
        what = "is missing" if not abstract else f"is too short ({len(abstract)} characters)"
        raise InputError(where, f"abstract {what}; every record needs an 'abstract' field", line=line)
    title = " ".join(_field(rec, ("title",), where, line).split())
    authors_raw = rec.get("authors", "")
    if isinstance(authors_raw, list):
        authors = ", ".join(str(a).strip() for a in authors_raw if str(a).strip())
    else:
        authors = _field(rec, ("authors",), where, line)
    own_id = _ID_SAFE.sub("-", _field(rec, _ID_KEYS, where, line)).strip("-")[:120]
    url = _field(rec, ("url",), where, line)
    links = find_links(abstract)
    return Paper(
        paper_id=own_id or text_id(abstract),
        source=source,
        position=position,
        abstract=abstract,
        label=title or derive_label(abstract),
        title=title,
        authors=authors,
        url=url,
        venue=_field(rec, ("venue",), where, line),
        links=links,
    )
