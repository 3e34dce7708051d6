"""One corpus file → its records and papers: the checks every file passes (a regular file, a size limit,
text in UTF-8), then its format, told by its content (JSON whatever the file is called) or its suffix."""

from __future__ import annotations

from pathlib import Path

from ingest.parse.collect import ParsedFile, collect, supplement_paper
from ingest.parse.decode import Records, json_records, looks_like_json
from ingest.parse.discover import not_a_file
from ingest.parse.tabular import csv_records, text_records
from paperbot.errors import InputError
from paperbot.records import Paper

MAX_FILE_BYTES = 200 * 1024 * 1024


class UnreadableFile(InputError):
    """A corpus file that cannot be read at all (permissions, a special file, a broken link): skipped and named."""


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
    problem = not_a_file(path)
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
    encoding = _wide_encoding(raw)
    if encoding:
        raise InputError(str(path), f"is {encoding} text, not UTF-8; re-save the file as UTF-8")
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
    if suffix in (".jsonl", ".json") or looks_like_json(text):
        return collect(json_records(text, where, suffix), source, where, strict)
    if suffix == ".csv":
        records: Records = [(line, n, rec) for n, (line, rec) in enumerate(csv_records(text, where), start=1)]
    else:
        records = [(line, n, rec) for n, (line, rec) in enumerate(text_records(text, where), start=1)]
    if not records:
        raise InputError(where, "contains no abstracts")
    return collect((records, False), source, where, strict, by_line=True)



_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"), (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
         (b"\xff\xfe", "UTF-16 (little-endian)"), (b"\xfe\xff", "UTF-16 (big-endian)"))


def _wide_encoding(raw: bytes) -> str:
    """The name of the encoding of text saved in UTF-16 or UTF-32 (as Windows tools save "Unicode" text), told by
    its BOM or by the NUL byte beside every ASCII character; "" for other bytes. Such text is not binary."""
    for bom, name in _BOMS:
        if raw.startswith(bom):
            return name
    sample = raw[:8192]
    even, odd = sample[0::2], sample[1::2]
    if len(odd) < 2:
        return ""
    if odd.count(0) * 4 >= len(odd) * 3 and not even.count(0):
        return "UTF-16 (little-endian)"
    if even.count(0) * 4 >= len(even) * 3 and not odd.count(0):
        return "UTF-16 (big-endian)"
    return ""
