"""Plain-text and CSV files → records: abstracts separated by blank lines under a header line, or CSV rows
under a header naming the columns. Each record comes with its line."""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Iterator
from typing import Any

from ingest import fields as F
from paperbot.errors import InputError
from paperbot.text import sentences

_ABSTRACT_KEYS = F.names("abstract")
_TITLE_KEYS = F.names("title")


def text_records(text: str, where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The abstracts of an abstract collection, each with the line it starts on."""
    lines = text.split("\n")
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None:
        raise InputError(where, "file is empty")
    # The first non-blank line is the collection's header, unless it is plainly an abstract (a file without one).
    block: list[str] = []
    start = 0
    for i in range(first + (0 if _opens_with_abstract(lines[first:]) else 1), len(lines) + 1):
        ln = lines[i] if i < len(lines) else ""
        if ln.strip():
            if not block:
                start = i + 1
            block.append(ln.strip())
        elif block:
            yield start, {"abstract": " ".join(block)}
            block = []


# A cell may be as long as a file may be (csv's default, 131,072 characters, refused long abstracts).
MAX_CELL_CHARS = 200 * 1024 * 1024


# A header is a line naming the collection; a first line this long, of two sentences or more, is an abstract.
HEADER_MAX_CHARS = 100


def _opens_with_abstract(lines: list[str]) -> bool:
    """Whether the file's first line (`lines[0]`) begins an abstract rather than naming the collection: it is
    long and of several sentences, or it breaks off mid-sentence (the next line goes on in lower case) in a
    first block that is."""
    def abstract_like(text: str) -> bool:
        return len(text) >= HEADER_MAX_CHARS and len(sentences(text)) >= 2

    head = lines[0].strip()
    if abstract_like(head):
        return True
    block = [ln.strip() for ln in itertools.takewhile(str.strip, lines)]
    return len(block) > 1 and block[1][:1].islower() and abstract_like(" ".join(block))


class BadRow(str):
    """A CSV row that cannot be a record (more cells than the header names, quotes that join rows): skipped with
    this reason."""


def csv_records(text: str, where: str) -> Iterator[tuple[int, dict[str, Any] | BadRow]]:
    """Rows of a CSV file (comma, tab or semicolon separated) whose first row names the columns, each with the
    line it starts on (a quoted cell may span lines)."""
    first = next((ln for ln in text.split("\n") if ln.strip()), "")
    if not first:
        raise InputError(where, "CSV file is empty (no header row)")
    delimiter = max(",\t;", key=first.count) if any(d in first for d in ",\t;") else ","
    csv.field_size_limit(max(csv.field_size_limit(), MAX_CELL_CHARS))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader, None)
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
    lines = text.split("\n")
    while True:
        start = reader.line_num + 1  # the line the next row starts on
        try:
            row = next(reader, None)
        except csv.Error as exc:
            raise InputError(where, f"malformed CSV: {exc}", line=start) from None
        if row is None:
            return
        if not row:  # a blank line
            continue
        end = reader.line_num
        if end > start or end >= len(lines) - 1:  # quotes that span lines, or the last row: checked strictly
            problem = _misquoted(lines, start, end, row, delimiter, where)
            if problem:
                yield start, problem
                continue
        if len(row) > len(header):
            yield start, BadRow("row has more fields than the header")
            continue
        padded: list[str | None] = [*row, *[None] * (len(header) - len(row))]  # missing cells: None
        yield start, {k.strip().lower(): v for k, v in zip(header, padded) if k}


def _misquoted(lines: list[str], start: int, end: int, row: list[str], delimiter: str, where: str) -> BadRow | None:
    """Why the row on lines `start`–`end` was read only because the csv module forgives a misplaced quote, or
    None. Read leniently, a quote never closed runs to the end of the file, and one closed by the next
    quote in the file (another row's) joins the rows between into one cell, both without a word: the
    first refuses the file, the second skips the row, naming its lines."""
    try:
        for _ in csv.reader(io.StringIO("\n".join(lines[start - 1:end]), newline=""), delimiter=delimiter,
                            strict=True):
            pass
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):
            opened = start + sum(cell.count("\n") for cell in row[:-1])  # the cell left open is the last
            after = sum(1 for ln in lines[opened:] if ln.strip())
            rest = ("" if not after else ", so the line after it would be part of one cell" if after == 1
                    else f", so the rest of the file ({after} lines) would be one cell")
            on = "" if opened == start else f" (on line {opened})"
            raise InputError(where, f"a quote opened in this row{on} is never closed{rest}; close it or remove it",
                             line=opened) from None
        if end > start:
            return BadRow(f"lines {start}–{end} were read as one row, joined by a quoted cell that ends in the "
                          f"middle of a cell ({exc}): a quote is probably missing; check the quotes on line {start}")
    return None
