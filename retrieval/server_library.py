"""Server libraries: papers a Discord server's members add from chat (`/library add`), searched by that server only.

A server's papers live in the one store beside the conference program, marked with the server's id
(`Paper.library`); every search restricts its candidates to what the asking server sees (`Reach`) before
anything is ranked, as a filter does (retrieval/view.py `reach_mask`). One collection for everything, not
one per server: a filter over 20,000 papers costs one boolean mask (docs/benchmarks.md, "Server libraries"),
while a collection per server would open and hold an HNSW index per server and merge rankings across them.

An upload is hostile input: its size and paper count are bounded, its file name gives only a suffix and a
shown name (never a path), and it is read by `paperbot ingest`'s own reader, so a bad file is refused whole
(one line for the uploader) before anything is written. Ids and sources are namespaced by server: a server's
upload can neither replace a program paper nor another server's, and uploading a file of the same name again
replaces that file's papers (the ingest's incremental rules, per source).
"""

from __future__ import annotations

import re
import tempfile
import unicodedata
from dataclasses import dataclass, replace
from pathlib import Path

from ingest.parse import SUPPORTED_SUFFIXES
from ingest.pipeline import FileReport, IngestSummary, Loaded, Progress, ingest_loaded, load_papers
from ingest.store import Store
from paperbot.errors import InputError
from paperbot.protocols import TextEmbedder
from paperbot.records import Paper

NAME_CHARS = 80  # characters of an upload's shown name kept
_UNSAFE = re.compile(r"[^\w.\- ]+")
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


class UploadError(InputError):
    """An upload refused whole: nothing of it was stored. `str()` is the one line the uploader reads."""


@dataclass(frozen=True)
class Upload:
    """One file attached to `/library add`: the server it is for, its name as uploaded, its bytes."""

    library: str  # the server's id
    filename: str
    data: bytes


def library_prefix(library: str) -> str:
    """The prefix of a server's paper ids: "g" and the server id in base 36 (at most 14 characters), so that ids
    stay short enough for a Save button to carry several."""
    n, digits = int(library), ""
    while True:
        n, d = divmod(n, 36)
        digits = _DIGITS[d] + digits
        if not n:
            return f"g{digits}:"


def source_of(library: str, name: str) -> str:
    """How a server's upload is named in the store: the server's prefix and the shown name."""
    return library_prefix(library) + name


def upload_name(paper: Paper) -> str:
    """The shown name of the upload a server's paper came from (a program paper's source as it is)."""
    return paper.source.removeprefix(library_prefix(paper.library)) if paper.library else paper.source


def shown_name(filename: str) -> str:
    """The name an upload is listed and replaced by: the file name's last part, letters, digits, `._- `
    only, at most NAME_CHARS; refused when its suffix is not one `paperbot ingest` reads."""
    base = unicodedata.normalize("NFC", filename).replace("\\", "/").rsplit("/", 1)[-1]
    name = _UNSAFE.sub("_", base).strip(" ._")[:NAME_CHARS].strip(" ")
    suffix = Path(name).suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES or not Path(name).stem:
        raise UploadError(filename[:NAME_CHARS], f"unsupported file type {suffix or '(none)'!r}; attach one of "
                          + ", ".join(SUPPORTED_SUFFIXES))
    return name


def read_upload(upload: Upload, *, max_bytes: int, max_papers: int) -> Loaded:
    """The upload's papers, ids and source namespaced by its server; UploadError when it is refused whole."""
    name = shown_name(upload.filename)
    if len(upload.data) > max_bytes:
        raise UploadError(name, f"the file is {_size(len(upload.data))}, larger than this server's "
                          f"{_size(max_bytes)} limit")
    with tempfile.TemporaryDirectory(prefix="paperbot-upload-") as folder:
        path = Path(folder) / name
        path.write_bytes(upload.data)
        try:
            loaded = load_papers([path], strict=False)
        except InputError as exc:
            raise UploadError(name, _without(exc.problem, folder, name), line=exc.line) from None
    if not loaded.papers:
        raise UploadError(name, "no paper could be read from this file")
    if len(loaded.papers) > max_papers:
        raise UploadError(name, f"the file lists {len(loaded.papers):,} papers, more than this server's "
                          f"limit of {max_papers:,}")
    return _shelved(loaded, upload.library, name, folder)


def add_upload(upload: Upload, store: Store, embedder: TextEmbedder, *, max_bytes: int, max_papers: int,
               progress: Progress | None = None) -> IngestSummary:
    """Read and store one upload (replacing the papers an earlier upload of the same name gave; a paper with the
    id of one another upload gave, and another text, is skipped and named)."""
    summary = ingest_loaded(read_upload(upload, max_bytes=max_bytes, max_papers=max_papers), store, embedder,
                            progress)
    prefix = library_prefix(upload.library)
    summary.clashes = [c.replace(prefix, "") for c in summary.clashes]  # as the server names its uploads and ids
    return summary


def remove_source(library: str, name: str, store: Store, embedder: TextEmbedder) -> IngestSummary:
    """Remove every paper of one of a server's uploads (`summary.removed` of them)."""
    empty = Loaded(papers=[], sources=[source_of(library, name)], duplicates=[], not_accepted=[])
    return ingest_loaded(empty, store, embedder)


def _shelved(loaded: Loaded, library: str, name: str, folder: str) -> Loaded:
    source, prefix = source_of(library, name), library_prefix(library)

    def moved(p: Paper) -> Paper:
        return replace(p, paper_id=prefix + p.paper_id, source=source, library=library)

    files = tuple(FileReport(**{**vars(f), "name": name, "path": "",
                                "skipped": [_without(s, folder, name) for s in f.skipped],
                                "title_only": [_without(s, folder, name) for s in f.title_only],
                                "conflicts": [_without(s, folder, name) for s in f.conflicts]})
                  for f in loaded.files)
    return Loaded([moved(p) for p in loaded.papers], [source],
                  [_without(d, folder, name) for d in loaded.duplicates],
                  [_without(n, folder, name) for n in loaded.not_accepted], files, ())


def _without(text: str, folder: str, name: str) -> str:
    """A message about the temporary copy, naming the upload instead."""
    return text.replace(str(Path(folder) / name), name).replace(folder, "")


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{max(1, n // 1024)} KB"
