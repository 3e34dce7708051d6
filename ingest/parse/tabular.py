"""Plain-text and CSV files → records: abstracts separated by blank lines under a header line, or CSV rows
under a header naming the columns. Each record comes with its line."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

from ingest import fields as F
from paperbot.errors import InputError

_ABSTRACT_KEYS = F.names("abstract")
_TITLE_KEYS = F.names("title")


def text_records(text: str, where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The abstracts of an abstract collection, each with the line it starts on."""
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


# A cell may be as long as a file may be (csv's default, 131,072 characters, refused long abstracts).
MAX_CELL_CHARS = 200 * 1024 * 1024


def _unclosed(text: str, after_line: int, delimiter: str) -> bool:
    """Whether the row starting after the first `after_line` lines of `text` opens a quote it never closes (csv
    reads such a row to the end of the file): read strictly, it ends inside the quote."""
    rest = text.split("\n", after_line)[-1] if after_line else text
    try:
        for _ in csv.reader(io.StringIO(rest, newline=""), delimiter=delimiter, strict=True):
            pass
    except csv.Error as exc:
        return "unexpected end of data" in str(exc)
    return False


class TooManyCells(str):
    """A CSV row that cannot be a record (more cells than the header names): skipped with this reason."""


def csv_records(text: str, where: str) -> Iterator[tuple[int, dict[str, Any] | TooManyCells]]:
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
    lines = text.count("\n") + (not text.endswith("\n"))
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
        if reader.line_num >= lines and reader.line_num > start and _unclosed(text, start - 1, delimiter):
            raise InputError(where, "a quote opened in this row is never closed, so the rest of the file "
                             "would be one cell; close it or remove it", line=start)
        if len(row) > len(header):
            yield start, TooManyCells("row has more fields than the header")
            continue
        padded: list[str | None] = [*row, *[None] * (len(header) - len(row))]  # missing cells: None
        yield start, {k.strip().lower(): v for k, v in zip(header, padded) if k}
