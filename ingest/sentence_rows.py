"""The sentence vectors behind snippets, in the store's companion collection, and the move from their earlier layout.

    SnippetRows      one row per paper version: its sentences' spans and float16 vectors, packed in the
                     metadata (the row's 1-number embedding is a placeholder, never searched), so reading a few
                     papers' rows never loads every sentence vector into memory
    LegacySentences  the earlier layout (one row per sentence, its vector in the vector index), moved into
                     SnippetRows by the next ingest and then deleted

Both work through their `Store`, which maps Chroma's errors (`Store.errors`) and paces writes.
"""

from __future__ import annotations

import base64
import json
from collections import defaultdict
from typing import TYPE_CHECKING

import numpy as np

from paperbot.records import snippet_hash_of, snippet_id

if TYPE_CHECKING:
    from ingest.store import Store

# The companion collection holding every abstract sentence's vector, for snippets without query-time embedding:
# one row per paper version, its sentences' spans and float16 vectors packed in the metadata. Chroma's vector
# index is not used for them (each row's 1-number embedding is a placeholder), so reading a few papers' rows
# never loads every sentence vector into memory.
SNIPPETS_SUFFIX = "-snippets"
# The earlier layout: one row per sentence, its vector in the vector index (reading any row loaded them all).
# The next ingest moves it into the snippets collection and deletes it.
LEGACY_SENTENCES_SUFFIX = "-sentences"
IDS_PAGE = 5000  # row ids read per request (no metadata: cheap)
LEGACY_PAGE = 2000  # rows of the earlier layout read per request, vectors included


class SnippetRows:
    """The sentence vectors of each stored paper version; a store made before they existed has none (`missing`)."""

    def __init__(self, store: Store, rows) -> None:
        self._store = store
        self._rows = rows

    @property
    def missing(self) -> bool:
        return self._rows is None

    def upsert(self, rows: list[tuple[str, str, list[tuple[int, int]], np.ndarray]]) -> None:
        """Store, per paper version (paper id, content hash), its sentences' spans and vectors (one row each)."""
        if self._rows is None:
            return
        step = self._store.max_batch()
        for i in self._store.write_offsets(len(rows)):
            page = rows[i:i + step]
            with self._store.errors("write sentence vectors"):
                self._rows.upsert(
                    ids=[snippet_id(pid, h) for pid, h, _, _ in page],
                    embeddings=[[int(h[:8], 16) / 2**32] for _, h, _, _ in page],  # a placeholder, never searched
                    metadatas=[{"paper_id": pid, "content_hash": h, "spans": json.dumps([list(s) for s in spans]),
                                "vectors": base64.b64encode(np.asarray(vectors, dtype=np.float16).tobytes()).decode()}
                               for pid, h, spans, vectors in page])

    def delete(self, content_hashes: list[str]) -> None:
        """Remove the sentence vectors of these paper versions."""
        if self._rows is None:
            return
        step = self._store.max_batch()
        for i in self._store.write_offsets(len(content_hashes)):
            with self._store.errors("delete sentence vectors"):
                self._rows.delete(where={"content_hash": {"$in": content_hashes[i:i + step]}})

    def count(self) -> int:
        """How many paper versions have their sentence vectors stored."""
        with self._store.errors("count sentence vectors"):
            return self._rows.count() if self._rows is not None else 0

    def hashes(self) -> set[str]:
        """The paper versions (content hashes) whose sentence vectors are stored (ids only are read)."""
        found: set[str] = set()
        offset = 0
        while self._rows is not None:
            with self._store.errors("read sentence vectors"):
                page = self._rows.get(include=[], limit=IDS_PAGE, offset=offset)
            found.update(snippet_hash_of(i) for i in page["ids"])
            if len(page["ids"]) < IDS_PAGE:
                break
            offset += IDS_PAGE
        return found

    def vectors(self, versions: dict[str, str]) -> dict[str, list[tuple[int, int, np.ndarray]]]:
        """For papers given as {paper id: content hash}: their sentences' (start, end, vector), abstract order;
        vectors in float16, as stored."""
        if self._rows is None or not versions:
            return {}
        with self._store.errors("read sentence vectors"):
            page = self._rows.get(ids=[snippet_id(pid, h) for pid, h in versions.items()], include=["metadatas"])
        out: dict[str, list[tuple[int, int, np.ndarray]]] = {}
        for meta in page["metadatas"]:
            spans = json.loads(meta["spans"])
            vectors = np.frombuffer(base64.b64decode(meta["vectors"]), dtype=np.float16)
            vectors = vectors.reshape(len(spans), -1) if spans else vectors.reshape(0, self._store.dimension)
            out[str(meta["paper_id"])] = [(int(a), int(b), v) for (a, b), v in zip(spans, vectors)]
        return out


class LegacySentences:
    """Sentence vectors stored one row per sentence, as an earlier version did."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def migrate(self) -> int:
        """Move sentence vectors stored one row per sentence (the earlier layout) into the snippets
        collection, then delete the old collection; returns the number of paper versions moved.

        Reading the old collection loads its vector index once, here, instead of in every bot.
        """
        name = self._store.settings.collection + LEGACY_SENTENCES_SUFFIX
        with self._store.errors(f"open collection {name!r}"):
            legacy = self._store.existing_collection(name)
        if legacy is None or self._store.snippets.missing:
            return 0
        by_version: dict[tuple[str, str], list[tuple[int, int, np.ndarray]]] = defaultdict(list)
        offset = 0
        while True:
            with self._store.errors("read sentence vectors"):
                page = legacy.get(include=["metadatas", "embeddings"], limit=LEGACY_PAGE, offset=offset)
            for meta, vector in zip(page["metadatas"], page["embeddings"]):
                key = (str(meta["paper_id"]), str(meta["content_hash"]))
                by_version[key].append((int(meta["start"]), int(meta["end"]), np.asarray(vector, dtype=np.float16)))
            if len(page["ids"]) < LEGACY_PAGE:
                break
            offset += LEGACY_PAGE
        rows = []
        for (pid, h), sentences in by_version.items():
            sentences.sort(key=lambda r: r[0])
            rows.append((pid, h, [(a, b) for a, b, _ in sentences], np.asarray([v for _, _, v in sentences])))
        self._store.snippets.upsert(rows)
        with self._store.errors(f"delete collection {name!r}"):
            self._store.delete_collection(name)
        return len(rows)
