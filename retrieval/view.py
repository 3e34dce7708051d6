"""The serving view: what retrieval keeps in memory, built from the store once and kept beside it.

A `CorpusView` holds every chunk's id and paper, the papers (abstracts reassembled),
the BM25 postings and, built on first use, the filter index. Building it reads every
chunk from Chroma and tokenizes it: 27 s at 20,000 papers on two cores. So the view
is written to a file next to the store (`view_file`) and every later start reads it
instead: the arrays are mapped from the file (pages are read when a query touches
them), the papers are JSON.

The file is versioned by the store's content version (which changes on every write),
a format number (bumped whenever the tokenizer, BM25 or the layout change) and the
paper record's field names; any mismatch, a truncated or damaged file (a CRC covers
the data) is rebuilt from the store, with a line in the log. Writers write a
temporary file and `os.replace` it, so a reader sees the old file or the new one,
never half of one, and two processes writing at once cannot mix their files.

Layout: ``MAGIC``, the sections (each 64-byte aligned), the header (JSON: format,
version, store, fields, sections with offset/dtype/shape, CRC-32 of everything
before the header), then the header's offset and length (two little-endian u64)
and ``MAGIC`` again.
"""

from __future__ import annotations

import json
import logging
import os
import re
import struct
import tempfile
import threading
import time
import zlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import astuple
from pathlib import Path

import numpy as np

from ingest.store import Store
from paperbot.memory import release_free_memory
from paperbot.records import PAPER_FIELDS, PROGRAM, Paper, Reach, StoredChunk, assemble_parts, indexed_text
from paperbot.settings import StoreSettings
from paperbot.text import stem, typed_words, words
from retrieval.filters import FilterIndex, Filters
from retrieval.keyword import BM25_B, BM25_K1, KeywordBuilder, KeywordIndex, tokenize
from retrieval.support import distinctive_name, paper_name

log = logging.getLogger(__name__)

VECTOR_PAGE = 2000  # chunk vectors read from the store at a time (float32 pages, float16 kept)
FORMAT = 1  # bump when tokenize(), BM25 or the file layout change: older files are rebuilt
MAGIC = b"PBVIEW01"
ALIGN = 64
_TRAILER = struct.Struct("<QQ8s")
# Chunks folded between two short sleeps while a view is built in a thread: the event loop of a bot
# (the other thread) gets the interpreter at least that often (a fold of 200 chunks takes about 10 ms).
YIELD_EVERY = 200
YIELD_SECONDS = 0.001
# The paper record's field names (nested records' fields too: any change makes saved views stale), each read
# back from a row by its PaperField (paperbot/records.py).
PAPER_LAYOUT = tuple(f.layout for f in PAPER_FIELDS)


class ViewFileError(Exception):
    """A view file that cannot be used; the view is rebuilt from the store.

    `kind`: missing, stale (an older content version), outdated (another format), foreign (another
    store's), damaged.
    """

    def __init__(self, problem: str, kind: str = "damaged") -> None:
        super().__init__(problem)
        self.kind = kind


_WORDS = re.compile(r"(?<![a-z0-9])[a-z]+(?![a-z0-9])")  # whole words: not "vec" of "word2vec"


class Words:
    """The words of several libraries, read as one set without copying them into one."""

    def __init__(self, parts: list[frozenset[str]]) -> None:
        self.parts = parts

    def __contains__(self, word: object) -> bool:
        return any(word in part for part in self.parts)

    def any_starting(self, prefix: str) -> bool:
        """Whether a word starts with `prefix` ("purif": "purification")."""
        return any(w.startswith(prefix) for part in self.parts for w in part)


class CorpusView:
    """What retrieval keeps in memory: chunk ids, their papers and the BM25 index."""

    def __init__(self, version: str, chunk_ids: list[str], papers: dict[str, Paper], keyword: KeywordIndex,
                 chunk_paper_idx: np.ndarray | None = None, chunk_paper: Iterable[str] | None = None) -> None:
        self.version = version
        self.chunk_ids = chunk_ids
        self.papers = papers
        self.keyword = keyword
        self.paper_index = {pid: i for i, pid in enumerate(papers)}
        if chunk_paper_idx is None:
            chunk_paper_idx = np.fromiter((self.paper_index[p] for p in chunk_paper or ()), dtype=np.int32,
                                          count=len(chunk_ids))
        self.chunk_paper_idx = chunk_paper_idx
        self._filter_index: FilterIndex | None = None
        # Each paper's server library (index into `_library_names`; 0 is the program), built on first use.
        self._library_codes: np.ndarray | None = None
        self._library_names: list[str] = []
        # Chunk vectors read so far (float16), packed in the order they were read; _slot maps a chunk row to
        # its place there, -1 while unread.
        self._slot = np.full(len(chunk_ids), -1, dtype=np.int32)
        self._vectors = np.zeros((0, 0), dtype=np.float16)
        self._vectors_lock = threading.Lock()
        # The words of each library's papers (`words`), built on first use.
        self._library_words: dict[str, frozenset[str]] = {}
        self._words_lock = threading.Lock()
        # Each distinctive short name → its papers (`called`), built on first use.
        self._short_names: dict[str, list[str]] | None = None
        # Each paper's title and label stems (`titled`), built on first use.
        self._title_stems: list[tuple[str, frozenset[str]]] | None = None

    def words(self, reach: Reach = Reach.ALL) -> Words:
        """Every word of the titles and abstracts of the papers `reach` sees, lower-cased: what typos are read
        against (retrieval/spelling.py), so that a question is never mended into a word only another server's
        library holds. Read per library on first use (about a second at 20,000 papers)."""
        with self._words_lock:
            if not self._library_words:
                by_library: dict[str, set[str]] = defaultdict(set)
                for paper in self.papers.values():
                    by_library[paper.library].update(_WORDS.findall(f"{paper.title} {paper.abstract}".lower()))
                self._library_words = {name: frozenset(words) for name, words in by_library.items()}
        return Words([words for name, words in self._library_words.items() if reach.sees_library(name)])

    def called(self, text: str) -> list[str]:
        """The papers whose own short name `text` says as written ("What is BMT?", "how does DiffAug
        work?"): a name before its title's colon, or a one- or two-word title or label, that no common word could
        be (`distinctive_name`), said case for case as a word of the text, and by no other paper (where another
        abstract says "DRL" for deep reinforcement learning, "DRL" names no one paper). Read on first use."""
        with self._words_lock:
            if self._short_names is None:
                short: dict[str, list[str]] = defaultdict(list)
                for paper in self.papers.values():
                    name = paper_name(paper)
                    if distinctive_name(name):
                        short[name].append(paper.paper_id)
                self._short_names = dict(short)
        out: list[str] = []
        for word in dict.fromkeys(typed_words(text)):
            named = self._short_names.get(word, ())
            if named and not self._said_elsewhere(word, named):
                out.extend(named)
        return out

    def titled(self, stems: frozenset[str]) -> list[str]:
        """The papers whose title or label holds every one of `stems` (`paperbot.text.topic_called`: "the
        sycophancy paper" is the paper whose title says "sycophancy", when no other title does). Every paper counts,
        whichever library holds it. Read on first use."""
        if not stems:
            return []
        with self._words_lock:
            if self._title_stems is None:
                self._title_stems = [(p.paper_id, frozenset(stem(w) for w in words(f"{p.title} {p.label}")))
                                     for p in self.papers.values()]
        return [pid for pid, held in self._title_stems if stems <= held]

    def _said_elsewhere(self, name: str, named: Sequence[str]) -> bool:
        """Whether a paper other than `named` says `name` as written in its title or abstract."""
        said = re.compile(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])")
        ids = list(self.papers)
        for token in tokenize(name)[:1]:  # the name whole, as the keyword index holds it
            chunks = self.keyword.chunks_with(token)
            for i in {int(p) for p in self.chunk_paper_idx[chunks]}:
                paper = self.papers[ids[i]]
                if paper.paper_id not in named and said.search(f"{paper.title} {paper.abstract}"):
                    return True
        return False

    # -- building from the store ----------------------------------------------------------------

    @classmethod
    def from_store(cls, store: Store, version: str, pause: bool = True) -> CorpusView:
        """Reads every chunk once (see `from_chunks`)."""
        return cls.from_chunks(store.iter_chunks(), version, pause=pause)

    @classmethod
    def from_chunks(cls, chunks: Iterable[StoredChunk], version: str, pause: bool = False) -> CorpusView:
        """Chunks are folded as they come: a paper keeps its first chunk (for the metadata) and
        every chunk's (start, text), the keyword index their token ids; nothing else outlives
        the page it was read in.

        `pause` (a build in a worker thread beside an event loop): a short sleep every
        YIELD_EVERY chunks, so the loop's thread is never kept waiting for the interpreter.
        """
        chunk_ids: list[str] = []
        chunk_paper: list[str] = []
        keyword = KeywordBuilder()
        first: dict[str, StoredChunk] = {}
        parts: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for n, chunk in enumerate(chunks, start=1):
            chunk_ids.append(chunk.chunk_id)
            chunk_paper.append(chunk.paper_id)
            keyword.add(indexed_text(chunk.fields.title, chunk.text, chunk.fields.keywords))
            first.setdefault(chunk.paper_id, chunk)
            parts[chunk.paper_id].append((chunk.start, chunk.text))
            if pause and n % YIELD_EVERY == 0:
                time.sleep(YIELD_SECONDS)
        papers = {}
        for n, (pid, chunk) in enumerate(first.items(), start=1):
            papers[pid] = assemble_parts(chunk, parts.pop(pid))
            if pause and n % YIELD_EVERY == 0:
                time.sleep(YIELD_SECONDS)
        del first
        view = cls(version, chunk_ids, papers, keyword.finish(chunk_ids), chunk_paper=chunk_paper)
        del chunk_paper
        # The build's temporaries (about 200 MB at 20,000 papers) go back to the OS; no full collection (it
        # would hold the interpreter for a few hundred ms at that size, and they are freed by reference counts).
        release_free_memory(collect=False)
        return view

    # -- the file beside the store ------------------------------------------------------------------

    def save(self, path: Path, store_id: str) -> None:
        """Write the view to `path` atomically (a temporary file in the same folder, then os.replace)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        kw = self.keyword
        arrays: dict[str, np.ndarray] = {"indptr": np.ascontiguousarray(kw.indptr, dtype=np.int64),
                  "postings": np.ascontiguousarray(kw.postings, dtype=np.int32),
                  "weights": np.ascontiguousarray(kw.weights, dtype=np.float32),
                  "chunk_paper_idx": np.ascontiguousarray(self.chunk_paper_idx, dtype=np.int32)}
        blobs: dict[str, bytes] = {"terms": _json_bytes(kw.terms()), "chunk_ids": _json_bytes(self.chunk_ids),
                 "papers": _json_array_bytes([list(astuple(p)) for p in self.papers.values()])}
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                crc = 0
                offset = 0
                sections: dict[str, dict] = {}

                def put(data: bytes | memoryview) -> None:
                    nonlocal crc, offset
                    f.write(data)
                    crc = zlib.crc32(data, crc)
                    offset += len(data)

                put(MAGIC)
                parts: list[tuple[str, np.ndarray | bytes]] = [*arrays.items(), *blobs.items()]
                for name, data in parts:
                    put(b"\0" * (-offset % ALIGN))
                    raw: bytes | memoryview = data.data.cast("B") if isinstance(data, np.ndarray) else data
                    sections[name] = {"offset": offset, "nbytes": len(raw)}
                    if isinstance(data, np.ndarray):
                        sections[name].update(dtype=data.dtype.str, shape=list(data.shape))
                    put(raw)
                header = _json_bytes({"format": FORMAT, "version": self.version, "store": store_id,
                                      "fields": list(PAPER_LAYOUT), "bm25": [BM25_K1, BM25_B], "crc32": crc,
                                      "chunks": len(self.chunk_ids), "papers": len(self.papers),
                                      "sections": sections})
                f.write(header)
                f.write(_TRAILER.pack(offset, len(header), MAGIC))
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide it from a server process run as another user
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    @classmethod
    def load(cls, path: Path, version: str, store_id: str) -> CorpusView:
        """The view written to `path` for exactly this store and content version; ViewFileError otherwise."""
        try:
            return cls._load(path, version, store_id)
        except ViewFileError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise ViewFileError(f"damaged ({type(exc).__name__}: {exc})") from None
        except OSError as exc:
            raise ViewFileError(f"unreadable ({exc.strerror or exc})") from None

    @classmethod
    def _load(cls, path: Path, version: str, store_id: str) -> CorpusView:
        header, data_end = read_header(path)
        if header.get("format") != FORMAT or header.get("fields") != list(PAPER_LAYOUT) \
                or header.get("bm25") != [BM25_K1, BM25_B]:
            raise ViewFileError(f"written by another version of paperbot (format {header.get('format')})",
                                "outdated")
        if header.get("store") != store_id:
            raise ViewFileError(f"written for another store ({header.get('store')})", "foreign")
        if header.get("version") != version:
            raise ViewFileError(f"stale (content version {header.get('version')}, the store is at {version})",
                                "stale")
        sections = header["sections"]
        with open(path, "rb") as f:
            crc, left = 0, data_end
            while left:  # read, not mapped: checking the file keeps none of it in this process's memory
                block = f.read(min(left, 1 << 20))
                if not block:
                    break
                crc = zlib.crc32(block, crc)
                left -= len(block)
            if left or crc != header.get("crc32"):
                raise ViewFileError("damaged (its checksum does not match)")

            def blob(name: str):
                s = sections[name]
                f.seek(s["offset"])
                return json.loads(f.read(s["nbytes"]))

            terms, chunk_ids, rows = blob("terms"), blob("chunk_ids"), blob("papers")
        arrays = {}
        for name in ("indptr", "postings", "weights", "chunk_paper_idx"):
            s = sections[name]
            count = int(np.prod(s["shape"]))
            arrays[name] = (np.memmap(path, dtype=np.dtype(s["dtype"]), mode="r", offset=s["offset"],
                                      shape=tuple(s["shape"])) if count else np.zeros(s["shape"], dtype=s["dtype"]))
        papers = {}
        for row in rows:
            paper = _paper_of(row)
            papers[paper.paper_id] = paper
        n_terms, n_chunks = len(terms), len(chunk_ids)
        if len(arrays["indptr"]) != n_terms + 1 or len(arrays["chunk_paper_idx"]) != n_chunks \
                or len(arrays["postings"]) != len(arrays["weights"]) or len(papers) != header.get("papers") \
                or (n_chunks and int(arrays["chunk_paper_idx"].max()) >= len(papers)) \
                or (n_terms and int(arrays["indptr"][-1]) != len(arrays["postings"])):
            raise ViewFileError("damaged (its parts do not fit together)")
        keyword = KeywordIndex(chunk_ids, {t: i for i, t in enumerate(terms)}, arrays["indptr"],
                               arrays["postings"], arrays["weights"])
        return cls(version, chunk_ids, papers, keyword, chunk_paper_idx=arrays["chunk_paper_idx"])

    # -- serving ------------------------------------------------------------------------------------

    @property
    def filter_index(self) -> FilterIndex:
        """The papers by filterable value, built on first use (the view is replaced when the store changes)."""
        if self._filter_index is None:
            self._filter_index = FilterIndex(self.papers.values())
        return self._filter_index

    def mask(self, filters: Filters) -> np.ndarray:
        """Which papers pass `filters`, aligned with `papers`."""
        return self.filter_index.mask(filters)

    def reach_mask(self, reach: Reach) -> np.ndarray | None:
        """Which papers `reach` sees, aligned with `papers`; None when it sees them all (no server library
        outside it is stored), so a store without server libraries costs nothing."""
        if reach.everything:
            return None
        if self._library_codes is None:
            names = {PROGRAM: 0}
            codes = np.fromiter((names.setdefault(p.library, len(names)) for p in self.papers.values()),
                                dtype=np.int32, count=len(self.papers))
            self._library_names, self._library_codes = list(names), codes
        if all(name in reach.libraries for name in self._library_names[1:]):
            return None
        seen = [i for i, name in enumerate(self._library_names) if i == 0 or name in reach.libraries]
        return np.isin(self._library_codes, seen)

    def chunk_rows(self, paper_id: str) -> np.ndarray:
        """The rows (into chunk_ids) of one paper's chunks."""
        return np.flatnonzero(self.chunk_paper_idx == self.paper_index[paper_id])

    def vectors_of(self, rows: np.ndarray, store: Store) -> np.ndarray:
        """The vectors (float16) of these chunk rows; the ones not read yet are read from the store once.

        Filtered searches score the allowed chunks exactly from these: a Chroma query restricted
        to thousands of paper ids costs several times an unrestricted one. Only the chunks of
        filters actually used are kept (every chunk at 20,000 papers would be about 45 MB).
        A chunk gone from the store since the view was built scores 0 (the next view drops it).
        """
        if not rows.size:
            return np.zeros((0, store.dimension), dtype=np.float16)
        with self._vectors_lock:
            unread = rows[self._slot[rows] < 0]
            if unread.size:
                unread = np.unique(unread)
                first = len(self._vectors)
                grown = np.zeros((first + len(unread), store.dimension), dtype=np.float16)
                if first:
                    grown[:first] = self._vectors
                for start in range(0, len(unread), VECTOR_PAGE):  # bounded: float32 pages, float16 kept
                    page = unread[start:start + VECTOR_PAGE]
                    got = store.get_embeddings([self.chunk_ids[k] for k in page])
                    for slot, k in enumerate(page, start=first + start):
                        vector = got.get(self.chunk_ids[k])
                        if vector is not None:
                            grown[slot] = vector
                self._slot[unread] = np.arange(first, first + len(unread), dtype=np.int32)
                self._vectors = grown
            return self._vectors[self._slot[rows]]

    def read_vectors_of(self, rows: np.ndarray) -> np.ndarray | None:
        """The vectors of these chunk rows if every one has been read for a filter, else None (no store call)."""
        with self._vectors_lock:
            slots = self._slot[rows]
            return None if not rows.size or (slots < 0).any() else self._vectors[slots]

    @property
    def vectors_read(self) -> int:
        """How many chunks' vectors filtered searches have read so far."""
        return len(self._vectors)

    def term_presence(self, tokens: Sequence[str]) -> np.ndarray:
        """(tokens, papers) booleans: True where the paper's title or abstract holds the token."""
        out = np.zeros((len(tokens), len(self.papers)), dtype=bool)
        for row, token in enumerate(tokens):
            out[row, self.chunk_paper_idx[self.keyword.chunks_with(token)]] = True
        return out


# -- where the file lives, and reading its header ---------------------------------------------------


def view_file(s: StoreSettings, cache_dir: Path) -> Path:
    """Beside an embedded store (in CHROMA_PATH, so it moves with it); for a Chroma server, in the
    cache folder, named after the server and collection."""
    if not s.is_server:
        return s.path / f"paperbot-view-{s.collection}.bin"
    host = "".join(c if c.isalnum() or c in ".-" else "_" for c in s.host or "")
    return cache_dir / "views" / f"{host}-{s.port}-{s.collection}.bin"


def store_identity(s: StoreSettings) -> str:
    """What a view file was written for: the server and collection, or the embedded store's collection."""
    return f"{s.host}:{s.port}/{s.collection}" if s.is_server else f"embedded/{s.collection}"


def read_header(path: Path) -> tuple[dict, int]:
    """The header of a view file and where its data ends; ViewFileError when the file is missing,
    truncated or not a view file."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < len(MAGIC) + _TRAILER.size:
                raise ViewFileError("empty" if size == 0 else "truncated")
            if f.read(len(MAGIC)) != MAGIC:
                raise ViewFileError("not a view file (damaged)")
            f.seek(size - _TRAILER.size)
            offset, length, magic = _TRAILER.unpack(f.read(_TRAILER.size))
            if magic != MAGIC or offset + length + _TRAILER.size != size:
                raise ViewFileError("truncated or damaged")
            f.seek(offset)
            header = json.loads(f.read(length))
    except FileNotFoundError:
        raise ViewFileError("missing", "missing") from None
    except OSError as exc:
        raise ViewFileError(f"unreadable ({exc.strerror or exc})") from None
    except ValueError:
        raise ViewFileError("damaged (its header does not read)") from None
    if not isinstance(header, dict) or not isinstance(header.get("sections"), dict):
        raise ViewFileError("damaged (its header does not read)")
    if any(s.get("offset", 0) + s.get("nbytes", 0) > offset for s in header["sections"].values()):
        raise ViewFileError("damaged (a section lies outside the file)")
    return header, offset


def _json_bytes(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _json_array_bytes(rows: list, every: int = 200) -> bytes:
    """`rows` as one JSON array, encoded `every` rows at a time with a short sleep between: one call over
    20,000 papers holds the GIL for a few hundred ms, a bot's event loop with it."""
    parts = []
    for i in range(0, len(rows), every):
        parts.append(json.dumps(rows[i:i + every], ensure_ascii=False, separators=(",", ":"))[1:-1])
        time.sleep(YIELD_SECONDS)
    return ("[" + ",".join(parts) + "]").encode("utf-8")


def _paper_of(row: list) -> Paper:
    if len(row) != len(PAPER_FIELDS):
        raise ViewFileError("damaged (a paper has the wrong number of fields)")
    return Paper(*[f.from_row(v) for f, v in zip(PAPER_FIELDS, row)])

