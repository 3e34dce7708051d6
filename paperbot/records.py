"""The paper record and the ingest ↔ query contract, in one place both sides import.

    Paper            one abstract with everything needed to cite it (parse builds it,
                     retrieval reassembles it from the store, front ends show it)
    chunk_id()       the id of one stored chunk: paper id, content hash, chunk index
    indexed_text()   what the model and the keyword index read for a chunk
    StoredChunk      one chunk as read back from the store, typed
    is_complete()    the rule for a paper whose chunks are all stored
    snippet_id()     the id of one paper version's stored sentence vectors (snippets)

    Slot             one presentation of a paper in the program (a talk, a poster), with its local time

A new paper field: the `Paper` field (PAPER_FIELDS, built from the dataclass, stores and reads it in chunks and
saved views; add it to `meta_hash` or `embed_hash`); its accepted names in
ingest/fields.py and its reading in ingest/parse/draft.py; `paper_json` (retrieval/types.py) for JSON output; and
where it is shown (bot/display.py, bot/app/embeds.py, bot/terminal.py). docs/architecture.md lists the steps.
Two hashes version a paper: `embed_hash` (what is embedded: a change re-embeds it) and
`meta_hash` (everything else shown: a change updates the stored metadata in place).
Metadata missing from chunks stored by older versions reads as empty. A chunk keeps its fields as one JSON
record (`chunk_metadata`); chunks stored before that keep them as separate keys, which are still read until
the next ingest moves them to a record.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, is_dataclass, replace
from datetime import datetime
from functools import cached_property
from typing import Any, ClassVar, get_args, get_origin, get_type_hints

PRESENTATION_TYPES = ("oral", "spotlight", "poster")
SLOT_FIELDS = ("session", "start", "end", "room", "poster_position", "kind")


@dataclass(frozen=True)
class Slot:
    """When and where a paper is presented: one talk or one poster of the program.

    `start` and `end` are ISO 8601 with the program's local offset, as in the source ("" when unknown),
    so the program's own local time is shown, and UTC is derived for calendars.
    """

    session: str = ""
    start: str = ""
    end: str = ""
    room: str = ""
    poster_position: str = ""
    kind: str = ""  # oral, spotlight, poster or ""

    @property
    def starts(self) -> datetime | None:
        """The start in the program's local time (with its offset), or None when unknown."""
        return _instant(self.start)

    @property
    def ends(self) -> datetime | None:
        return _instant(self.end)

    def order(self) -> tuple[float, str, str]:
        """Sort key: time order (unknown times last), then session and room."""
        starts = self.starts
        return (starts.timestamp() if starts is not None else float("inf"), self.session, self.room)

    def to_json(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in SLOT_FIELDS}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Slot:
        return cls(**{name: str(raw.get(name) or "") for name in SLOT_FIELDS})


@dataclass(frozen=True)
class Paper:
    """One paper with everything needed to cite it; `abstract` is "" when it is not yet published."""

    paper_id: str
    source: str  # the corpus file's name
    position: int  # 1-based position in that file, header not counted
    abstract: str
    label: str  # the title, or a short label derived from an untitled abstract
    title: str = ""
    authors: tuple[str, ...] = ()
    affiliations: tuple[str, ...] = ()  # one per author ("" when unknown), or empty
    url: str = ""  # the paper's page (the OpenReview forum when known)
    venue: str = ""
    links: tuple[str, ...] = ()  # code, models, project pages found in the abstract
    keywords: tuple[str, ...] = ()
    area: str = ""
    subarea: str = ""
    presentation: str = ""  # oral, spotlight, poster or ""
    track: str = ""
    tldr: str = ""
    pdf_url: str = ""
    site_url: str = ""  # the conference site's page
    slots: tuple[Slot, ...] = ()  # its talks and posters in the program, in time order
    bibtex: str = ""  # the source's own BibTeX entry, verbatim ("" when it gave none: see paperbot.bibtex)
    title_zh: str = ""  # a Chinese translation of the title, when the source gives one
    library: str = ""  # the server library holding it (a Discord server's id; see `Reach`), "" for the program

    @property
    def where(self) -> str:
        return f"{self.source} #{self.position}"

    @property
    def has_abstract(self) -> bool:
        return bool(self.abstract)

    @property
    def authors_line(self) -> str:
        return ", ".join(self.authors)

    @cached_property  # a paper is frozen; every chunk of a long abstract asks for it
    def embed_hash(self) -> str:
        """Changes when what is embedded changes (title, abstract; keywords stand in for a missing abstract)."""
        parts = [self.title, self.abstract] + ([] if self.abstract else list(self.keywords))
        return _hash(parts)

    @cached_property
    def meta_hash(self) -> str:
        """Changes when anything shown but not embedded changes (placement aside): updated in place."""
        # Slots join the hash only when there are any: papers without them keep the hash older stores hold.
        slots = ["\x1e", *(json.dumps(slot.to_json(), sort_keys=True) for slot in self.slots)] if self.slots else []
        return _hash([self.label, *self.authors, "\x1e", *self.affiliations, "\x1e", self.url, self.venue,
                      *self.links, "\x1e", *self.keywords, "\x1e", self.area, self.subarea, self.presentation,
                      self.track, self.tldr, self.pdf_url, self.site_url, *slots]
                     # Fields added later join the hash only when set, so papers without them keep their hash.
                     + (["\x1e", self.bibtex, self.title_zh] if self.bibtex or self.title_zh else [])
                     + (["\x1e", self.library] if self.library else []))

    @property
    def content_hash(self) -> str:
        """The version of the paper's chunks: they are re-embedded exactly when it changes."""
        return self.embed_hash


PROGRAM = ""  # `Paper.library` of the conference program, which every server and DM searches


@dataclass(frozen=True)
class Reach:
    """Which papers a question may see: the program and the server libraries in `libraries` (server ids), or
    everything (`ALL`: the operator's command line, the benchmarks). The bot builds one per interaction
    (bot/app/access.py `reach_of`): a server sees the program and its own library, a DM the program and the
    libraries of the servers that share theirs with their members' DMs."""

    libraries: frozenset[str] = frozenset()
    everything: bool = False
    ALL: ClassVar[Reach]  # every paper
    PROGRAM: ClassVar[Reach]  # the program alone

    @classmethod
    def server(cls, *library_ids: str | int) -> Reach:
        return cls(frozenset(str(i) for i in library_ids))

    def sees(self, paper: Paper) -> bool:
        return self.sees_library(paper.library)

    def sees_library(self, library: str) -> bool:
        return self.everything or library == PROGRAM or library in self.libraries

    def key(self) -> str:
        """A short stable name of the reach, for caches."""
        return "*" if self.everything else ",".join(sorted(self.libraries))


Reach.ALL = Reach(everything=True)
Reach.PROGRAM = Reach()


def _hash(parts: list[str]) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


# -- the Paper's fields, as the stores keep them ----------------------------------------------------


# Fields many papers repeat (or whose items they repeat): read back as one interned string per value.
SHARED_FIELDS = frozenset({"source", "venue", "area", "subarea", "presentation", "track", "authors", "affiliations",
                           "keywords", "library"})


@dataclass(frozen=True)
class PaperField:
    """One field of `Paper`, with how a chunk's record (`chunk_metadata`) and the saved view (retrieval/view.py)
    write and read it. `PAPER_FIELDS` is built from the dataclass, so a new field needs no list of names here."""

    name: str
    kind: str  # "text", "number", "texts" (a tuple of strings) or "records" (a tuple of `record`s: Slot)
    shared: bool = False  # see SHARED_FIELDS
    record: type | None = None

    @property
    def layout(self) -> str:
        """The field's name, with a record's own field names ("slots:session,start,…"): what a saved view lists."""
        if self.record is None:
            return self.name
        return f"{self.name}:{','.join(f.name for f in fields(self.record))}"

    def encode(self, value: Any) -> Any:
        """The value as a chunk's JSON record holds it."""
        if self.kind == "texts":
            return list(value)
        if self.kind == "records":
            return [item.to_json() for item in value]
        return value

    def decode(self, raw: Any) -> Any:
        """The value from a chunk's metadata (either layout; missing: empty)."""
        if self.kind == "number":
            return int(raw or 0)
        if self.kind == "records":
            return _loads_slots(raw)
        if self.kind == "texts":
            items = _loads_authors(raw) if self.name == "authors" else _loads_list(raw)
            return tuple(map(sys.intern, items)) if self.shared else tuple(items)
        text = "" if raw is None else str(raw)
        return sys.intern(text) if self.shared else text

    def from_row(self, value: Any) -> Any:
        """The value from a saved view's row (JSON: tuples as lists, records as their fields in order)."""
        if self.kind == "records":
            assert self.record is not None
            return tuple(self.record(*row) for row in value)
        if self.kind == "texts":
            return tuple(map(sys.intern, value)) if self.shared else tuple(value)
        return sys.intern(value) if self.shared and isinstance(value, str) else value


def _paper_fields() -> tuple[PaperField, ...]:
    hints = get_type_hints(Paper)
    out = []
    for f in fields(Paper):
        hint = hints[f.name]
        args = get_args(hint) if get_origin(hint) is tuple else ()
        if args and is_dataclass(args[0]):
            out.append(PaperField(f.name, "records", record=args[0]))  # type: ignore[arg-type]  # a dataclass type
        elif args:
            out.append(PaperField(f.name, "texts", f.name in SHARED_FIELDS))
        else:
            out.append(PaperField(f.name, "number" if hint is int else "text", f.name in SHARED_FIELDS))
    return tuple(out)


PAPER_FIELDS = _paper_fields()
# What a chunk's record holds of its paper: every field but the two stored apart (the id is a metadata key of its
# own, the abstract is cut into the chunks' texts).
RECORD_FIELDS = tuple(f for f in PAPER_FIELDS if f.name not in ("paper_id", "abstract"))


# -- how chunks are named and what is indexed ------------------------------------------------


def chunk_id(paper: Paper, index: int) -> str:
    """Carries the content hash, so a changed paper's new chunks never overwrite its old ones."""
    return f"{paper.paper_id}:{paper.content_hash[:10]}:{index}"


def paper_id_of(chunk: str) -> str:
    """The paper id inside a chunk id (paper ids may themselves contain ':')."""
    return chunk.rsplit(":", 2)[0]


def indexed_text(title: str, chunk: str, keywords: tuple[str, ...] | list[str] = ()) -> str:
    """What the model and the keyword index read: the title (if any) gives every chunk its context.

    A paper without an abstract has one empty chunk; its title and keywords are what is indexed.
    """
    if not chunk:
        return ". ".join(p for p in (title, ", ".join(keywords)) if p)
    return chunk_prefix(title) + chunk


def chunk_prefix(title: str) -> str:
    """What comes before a chunk's own text in `indexed_text`."""
    return f"{title}. " if title else ""


def snippet_id(paper_id: str, content_hash: str) -> str:
    """The id of the row holding the sentence vectors of one version of a paper."""
    return f"{paper_id}:{content_hash}"


def snippet_hash_of(row_id: str) -> str:
    """The content hash inside a snippet row id (paper ids may themselves contain ':')."""
    return row_id.rsplit(":", 1)[-1]


# -- the metadata stored with every chunk ---------------------------------------------------------


# Chroma indexes every metadata key of every row, one by one: a chunk's 29 fields as 29 keys made each write
# call about half again as costly as one JSON value does, and a Chroma document (full-text indexed, a search
# paperbot does not use: BM25 is its own) a quarter again (docs/benchmarks.md, "The stored layout"). So a
# chunk keeps the two ids one would filter by as keys, and everything else, its text too, as one JSON object
# under RECORD_KEY.
RECORD_KEY = "record"
# The keys chunks stored before RECORD_KEY existed hold their fields under (still read; the next ingest moves
# such chunks to a record and drops these keys).
FLAT_KEYS = (*(f.name for f in RECORD_FIELDS), "content_hash", "meta_hash", "abstract_chars", "chunk_index",
             "n_chunks", "start", "end")


def chunk_metadata(paper: Paper, *, index: int, n_chunks: int, start: int, end: int) -> dict[str, Any]:
    """The metadata Chroma keeps with one chunk of `paper`: its paper id and embed hash, and the rest (its text,
    abstract[start:end], too) as JSON."""
    record = {
        "text": paper.abstract[start:end],
        **{f.name: f.encode(getattr(paper, f.name)) for f in RECORD_FIELDS},
        "meta_hash": paper.meta_hash,
        "abstract_chars": len(paper.abstract),
        "chunk_index": index,
        "n_chunks": n_chunks,
        "start": start,
        "end": end,
    }
    return {"paper_id": paper.paper_id, "embed_hash": paper.embed_hash,
            RECORD_KEY: json.dumps(record, ensure_ascii=False, separators=(",", ":"))}


def stored_fields(meta: Mapping[str, Any]) -> Mapping[str, Any]:
    """A chunk's fields by name, from either layout (a record that is not a JSON object reads as empty fields:
    its meta_hash no longer matches, so the next ingest writes the paper's metadata again)."""
    raw = meta.get(RECORD_KEY)
    if raw is None:
        return meta
    try:
        record = json.loads(raw)
    except (TypeError, ValueError):
        record = None
    if not isinstance(record, dict):
        return {k: v for k, v in meta.items() if k in ("paper_id", "embed_hash")}
    return {**meta, **record}


@dataclass(frozen=True)
class StoredChunk:
    """One chunk read back from the store: its text is abstract[start:end] of its paper."""

    chunk_id: str
    text: str
    paper_id: str
    content_hash: str  # the embed hash (for chunks stored before it existed, the old whole-paper hash)
    index: int
    n_chunks: int
    start: int
    end: int
    abstract_chars: int
    fields: Paper  # the paper's metadata, with an empty abstract
    meta_hash: str = ""  # "" for chunks stored before metadata had its own hash
    legacy: bool = False  # stored before the embed hash existed: its content_hash is not comparable
    in_record: bool = True  # False: stored before records, one metadata key per field (rewritten by an ingest)

    @classmethod
    def from_metadata(cls, cid: str, document: str, meta: Mapping[str, Any]) -> StoredChunk:
        """A chunk from its stored metadata; its text is in the record, or (stored before records) the document."""
        in_record = RECORD_KEY in meta
        meta = stored_fields(meta)
        text = str(meta.get("text", document))
        start = int(meta.get("start", 0))

        fields = Paper(paper_id=str(meta.get("paper_id") or paper_id_of(cid)), abstract="",
                       **{f.name: f.decode(meta.get(f.name)) for f in RECORD_FIELDS})
        legacy = "embed_hash" not in meta
        return cls(chunk_id=cid, text=text, paper_id=fields.paper_id,
                   content_hash=str(meta.get("embed_hash") or meta.get("content_hash", "")),
                   index=int(meta.get("chunk_index", -1)), n_chunks=int(meta.get("n_chunks", -1)), start=start,
                   end=int(meta.get("end", start + len(text))), abstract_chars=int(meta.get("abstract_chars") or 0),
                   fields=fields, meta_hash=str(meta.get("meta_hash", "")), legacy=legacy,
                   in_record=in_record)

    def moved_to(self, paper: Paper) -> dict[str, Any]:
        """This chunk's metadata for `paper` (same embedded content; other metadata, file or position).

        Chroma merges an update into the stored metadata, so the keys of the earlier layout are set to None,
        which removes them."""
        return {**dict.fromkeys(FLAT_KEYS), **chunk_metadata(paper, index=self.index, n_chunks=self.n_chunks,
                                                                start=self.start, end=self.end)}


def is_complete(chunks: Iterable[StoredChunk]) -> bool:
    """True when every chunk of one paper version is stored (an interrupted ingest leaves some out)."""
    chunks = list(chunks)
    return bool(chunks) and len({c.index for c in chunks}) == chunks[0].n_chunks


def assemble(chunks: Iterable[StoredChunk]) -> Paper:
    """The whole paper from its stored chunks (they cover the abstract, overlapping)."""
    chunks = list(chunks)
    return assemble_parts(chunks[0], [(c.start, c.text) for c in chunks])


def assemble_parts(first: StoredChunk, parts: Iterable[tuple[int, str]]) -> Paper:
    """The whole paper from one of its chunks (for the metadata) and every chunk's (start, text)."""
    parts = list(parts)
    size = first.abstract_chars or max(start + len(text) for start, text in parts)
    buf = [" "] * size
    for start, text in parts:
        buf[start:start + len(text)] = text
    return replace(first.fields, abstract="".join(buf[:size]))


def _loads_authors(raw: Any) -> list[str]:
    """Authors as stored: a list, a JSON list, or (stores built before lists) one comma-separated string."""
    if isinstance(raw, str) and raw and not raw.startswith("["):
        return [a.strip() for a in raw.split(",") if a.strip()]
    return _loads_list(raw)


def _loads_list(raw: Any) -> list[str]:
    """A list as stored: in a record a list, in the earlier layout its JSON text."""
    if not raw:
        return []
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def _loads_slots(raw: Any) -> tuple[Slot, ...]:
    """Slots as stored (a JSON list of objects); chunks stored before slots existed have none."""
    if not raw:
        return ()
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return ()
    return tuple(Slot.from_json(v) for v in value if isinstance(v, dict)) if isinstance(value, list) else ()


def _instant(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None
    except ValueError:
        return None
