"""The paper record and the ingest ↔ query contract, in one place both sides import.

    Paper            one abstract with everything needed to cite it (parse builds it,
                     retrieval reassembles it from the store, front ends show it)
    chunk_id()       the id of one stored chunk: paper id, content hash, chunk index
    indexed_text()   what the model and the keyword index read for a chunk
    StoredChunk      one chunk as read back from the store, typed
    is_complete()    the rule for a paper whose chunks are all stored
    sentence_id()    the id of one abstract sentence's stored vector (snippets)

Adding a paper field touches `Paper` and its two metadata functions here, nothing else.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Paper:
    """One abstract with everything needed to cite it."""

    paper_id: str
    source: str  # the corpus file's name
    position: int  # 1-based position in that file, header not counted
    abstract: str
    label: str  # the title, or a short label derived from an untitled abstract
    title: str = ""
    authors: str = ""
    url: str = ""
    venue: str = ""
    links: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.source} #{self.position}"

    @property
    def content_hash(self) -> str:
        """Changes whenever anything that is embedded or shown changes."""
        payload = "\x1f".join([self.title, self.abstract, self.authors, self.url, self.venue, self.label])
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


# -- how chunks are named and what is indexed ------------------------------------------------


def chunk_id(paper: Paper, index: int) -> str:
    """Carries the content hash, so a changed paper's new chunks never overwrite its old ones."""
    return f"{paper.paper_id}:{paper.content_hash[:10]}:{index}"


def paper_id_of(chunk: str) -> str:
    """The paper id inside a chunk id (paper ids may themselves contain ':')."""
    return chunk.rsplit(":", 2)[0]


def indexed_text(title: str, chunk: str) -> str:
    """What the model and the keyword index read: the title (if any) gives every chunk its context."""
    return f"{title}. {chunk}" if title else chunk


def sentence_id(paper: Paper, index: int) -> str:
    return f"{paper.paper_id}:{paper.content_hash[:10]}:s{index}"


def sentence_metadata(paper: Paper, start: int, end: int) -> dict[str, Any]:
    """What is stored with a sentence vector: abstract[start:end] of this version of the paper."""
    return {"paper_id": paper.paper_id, "content_hash": paper.content_hash, "start": start, "end": end}


# -- the metadata stored with every chunk ---------------------------------------------------------


def chunk_metadata(paper: Paper, *, index: int, n_chunks: int, start: int, end: int) -> dict[str, Any]:
    """The flat metadata Chroma keeps with one chunk of `paper`."""
    return {
        "paper_id": paper.paper_id,
        "source": paper.source,
        "position": paper.position,
        "label": paper.label,
        "title": paper.title,
        "authors": paper.authors,
        "url": paper.url,
        "venue": paper.venue,
        "links": json.dumps(list(paper.links), ensure_ascii=False),
        "content_hash": paper.content_hash,
        "abstract_chars": len(paper.abstract),
        "chunk_index": index,
        "n_chunks": n_chunks,
        "start": start,
        "end": end,
    }


@dataclass(frozen=True)
class StoredChunk:
    """One chunk read back from the store: its text is abstract[start:end] of its paper."""

    chunk_id: str
    text: str
    paper_id: str
    content_hash: str
    index: int
    n_chunks: int
    start: int
    end: int
    abstract_chars: int
    fields: Paper  # the paper's metadata, with an empty abstract

    @classmethod
    def from_metadata(cls, cid: str, text: str, meta: Mapping[str, Any]) -> StoredChunk:
        start = int(meta.get("start", 0))
        fields = Paper(
            paper_id=str(meta.get("paper_id") or paper_id_of(cid)), source=str(meta.get("source", "")),
            position=int(meta.get("position", 0)), abstract="", label=str(meta.get("label", "")),
            title=str(meta.get("title", "")), authors=str(meta.get("authors", "")), url=str(meta.get("url", "")),
            venue=str(meta.get("venue", "")), links=tuple(_loads_list(meta.get("links"))),
        )
        return cls(chunk_id=cid, text=text, paper_id=fields.paper_id, content_hash=str(meta.get("content_hash", "")),
                   index=int(meta.get("chunk_index", -1)), n_chunks=int(meta.get("n_chunks", -1)), start=start,
                   end=int(meta.get("end", start + len(text))), abstract_chars=int(meta.get("abstract_chars") or 0),
                   fields=fields)

    def moved_to(self, paper: Paper) -> dict[str, Any]:
        """This chunk's metadata for `paper` (same content, another file or position)."""
        return chunk_metadata(paper, index=self.index, n_chunks=self.n_chunks, start=self.start, end=self.end)


def is_complete(chunks: Iterable[StoredChunk]) -> bool:
    """True when every chunk of one paper version is stored (an interrupted ingest leaves some out)."""
    chunks = list(chunks)
    return bool(chunks) and len({c.index for c in chunks}) == chunks[0].n_chunks


def assemble(chunks: Iterable[StoredChunk]) -> Paper:
    """The whole paper from its stored chunks (they cover the abstract, overlapping)."""
    chunks = list(chunks)
    size = chunks[0].abstract_chars or max(c.start + len(c.text) for c in chunks)
    buf = [" "] * size
    for c in chunks:
        buf[c.start:c.start + len(c.text)] = c.text
    fields = chunks[0].fields
    return Paper(paper_id=fields.paper_id, source=fields.source, position=fields.position,
                 abstract="".join(buf[:size]), label=fields.label, title=fields.title, authors=fields.authors,
                 url=fields.url, venue=fields.venue, links=fields.links)


def _loads_list(raw: Any) -> list[str]:
    if not raw:
        return []
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return []
    return [str(v) for v in value] if isinstance(value, list) else []
