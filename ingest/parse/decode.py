"""JSON and JSON Lines text → records: decoding with a nesting limit, a long text an element at a time, and
the shapes a paper list comes in (an array, an object holding one, {id: abstract}, one paper per file)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ingest import fields as F
from paperbot.errors import InputError

MAX_NESTING = 64  # deeper JSON is not a paper list (and would exhaust the parser's recursion)
# JSON texts longer than this are decoded a record at a time (see _decode_in_parts).
DECODE_IN_PARTS_CHARS = 1 << 20
_LIST_KEYS = ("notes", "results", "papers", "data", "items", "records")
_PAPER_KEYS = F.names("title") + F.names("abstract")

Records = list[tuple[int | None, int, Any]]  # (line or None, record number, record)


JSON_LINES_PROBE = 50
# How a JSON text opens: an object with a key (or empty), an array of objects, arrays or strings, or a bracket on
# a line of its own. No header line of an abstract collection starts like this.
_JSON_OPENING = re.compile(r'[{\[]\s*($|["{\[\]}])')


def looks_like_json(text: str) -> bool:
    """A text file holding JSON (lines of objects, or an array): read as JSON, not as abstracts, so that a
    malformed one is reported as malformed JSON rather than read as one abstract of raw JSON."""
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    first = lines[0] if lines else ""
    if not first.startswith(("{", "[")):
        return False
    # JSON lines whose first is broken are JSON lines still, refused at that line
    return bool(_JSON_OPENING.match(first)) or _parses(first) or _parses(text) or _json_lines(lines)


def _json_lines(lines: list[str]) -> bool:
    """Whether most of the first lines (a few dozen) that open an object are JSON objects."""
    head = [ln for ln in lines[:JSON_LINES_PROBE] if ln.startswith("{")]
    return len(head) >= 2 and sum(map(_parses, head)) * 2 >= len(head)


def _loads(text: str, where: str, line: int | None = None) -> Any:
    """json.loads with a nesting limit: a deeply nested file is one clear error, never a RecursionError."""
    try:
        data = _DECODER.decode(text) if len(text) < DECODE_IN_PARTS_CHARS else _decode_in_parts(text)
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
def _where_in_line(exc: json.JSONDecodeError) -> str:
    """"Expecting value at column 3", "Unterminated string starting at column 47" (json's own wording ends in
    "at" for some errors)."""
    return f"{exc.msg}{'' if exc.msg.endswith(' at') else ' at'} column {exc.colno}"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text[:20]} is too large a number")
    return value


# NaN, Infinity and numbers past a float's range are not JSON: they would be stored as "nan" and "inf".
_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)


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


def json_records(text: str, where: str, suffix: str) -> tuple[Records, bool]:
    """The records of a JSON or JSONL file, and whether it was an {id: abstract} mapping."""
    if not text.strip():
        raise InputError(where, "file is empty")
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if suffix == ".jsonl" and _parses(lines[0]):
        return list(_jsonl_records(text, where)), False
    try:
        data = _loads(text, where)
    except json.JSONDecodeError as exc:
        if len(lines) > 1 and (_parses(lines[0]) or _json_lines(lines)):
            return list(_jsonl_records(text, where)), False
        raise InputError(where, f"invalid JSON ({_where_in_line(exc)})", line=exc.lineno) from None
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
    return any(isinstance(rec.get(k), str) and rec.get(k) for k in _PAPER_KEYS)


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
            raise InputError(where, f"invalid JSON ({_where_in_line(exc)})", line=n) from None
        if not isinstance(rec, dict):
            raise InputError(where, f"expected a JSON object, got {type(rec).__name__}", line=n)
        n_rec += 1
        yield n, n_rec, rec

