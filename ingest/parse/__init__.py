"""Corpus files → Paper records.

Formats (JSON is recognised by its content, whatever the file is called, ``.txt`` included):

* ``.txt`` / ``.md`` – the abstract-collection format: one header line (any
  language), then abstracts separated by blank lines, no titles; a first line plainly an abstract is one.
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

The package's modules, by job: `discover` (which files), `read` (one file's checks and format),
`decode` (JSON), `tabular` (text and CSV), `merge` (a raw record cleaned, unwrapped, judged accepted; repeats
merged), `draft` (a record's fields → a typed `Draft` → a `Paper`), `place` (where a record is, for
messages), `collect` (records → papers, supplements and what was left out).
"""

from __future__ import annotations

from ingest.parse.collect import ParsedFile, Supplement, supplement_paper, with_abstract
from ingest.parse.discover import SUPPORTED_SUFFIXES, discover, discover_all
from ingest.parse.draft import text_id
from ingest.parse.read import UnreadableFile, parse_file, read_file

__all__ = [
    "SUPPORTED_SUFFIXES",
    "ParsedFile",
    "Supplement",
    "UnreadableFile",
    "discover",
    "discover_all",
    "parse_file",
    "read_file",
    "supplement_paper",
    "text_id",
    "with_abstract",
]
