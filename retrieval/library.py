"""The core as one object: store + embedder + retriever, used by every front end.

Everything here is synchronous and may be slow (model inference, Chroma I/O);
async front ends call it through ``asyncio.to_thread``.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ingest.embed import Embedder
from ingest.pipeline import IngestSummary, Progress, ingest
from ingest.store import Store, Writes
from paperbot.errors import EmptyCorpusError, IngestRunningError, StoreError
from paperbot.protocols import TextEmbedder
from paperbot.records import Paper, Reach
from paperbot.settings import Settings
from retrieval.filters import Filters, facets
from retrieval.search import Retriever
from retrieval.server_library import Upload, add_upload, remove_source, upload_name
from retrieval.similar import Similarity
from retrieval.spelling import mend
from retrieval.translate import english_query, has_chinese
from retrieval.types import SearchResult, Similar
from retrieval.view import view_file

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Stats:
    papers: int
    chunks: int
    sources: list[str]
    model: str
    store: str
    areas: dict[str, int] = field(default_factory=dict)  # papers per area, most first
    types: dict[str, int] = field(default_factory=dict)  # papers per presentation type


class Library:
    """The store (opened here, in the constructor: call it from a worker thread in async code), the
    embedder and the retriever over them; close() closes the store and releases its lock."""

    def __init__(self, settings: Settings, embedder: TextEmbedder | None = None, serving: bool = False,
                 writes: Writes = Writes.SHARED) -> None:
        """`serving` (the bot): an embedded store is served from a child process when CHROMA_CHILD is on.
        `writes`: whether its ingests are the process's only work (ingest.store.Writes)."""
        self.settings = settings
        self.embedder = embedder or Embedder(settings.embedding)
        self._ingest_lock = threading.Lock()
        self._store: Store | None = Store(settings.store, self.embedder.name, self.embedder.dimension,
                                          child=serving and settings.store.child, writes=writes)
        self.retriever = Retriever(self._store, self.embedder, settings.retrieval,
                                   view_file=view_file(settings.store, settings.cache_dir))
        self.similarity = Similarity(self.retriever)

    @property
    def store(self) -> Store:
        if self._store is None:
            raise StoreError("this library was closed; open a new one")
        return self._store

    def store_child(self) -> tuple[str, int]:
        """The child process serving the store: ("serving" or "restarting", times it was started again), or
        ("", 0) when the store has none (or is closed)."""
        store = self._store
        if store is None or store.child_state is None:
            return "", 0
        return store.child_state, store.child_restarts

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- ingest --------------------------------------------------------------------

    def ingest(self, paths: Iterable[Path] | None = None, progress: Progress | None = None,
               strict: bool = False, replace: bool = False) -> IngestSummary:
        """Ingest `paths` (default: the configured corpus). One ingest at a time per process.

        `strict` refuses a file at its first bad record (by default it is skipped and reported); `replace`
        lets a file replace papers stored from another file of its name, or of the same ids
        (ingest/pipeline.py `ingest`).
        """
        with self._ingesting():
            return ingest(list(paths or self.settings.corpus), self.store, self.embedder, progress=progress,
                          strict=strict, replace=replace)

    @contextmanager
    def _ingesting(self) -> Iterator[None]:
        if not self._ingest_lock.acquire(blocking=False):
            raise IngestRunningError("an ingest is already running; wait for it to finish")
        try:
            yield
        finally:
            self._ingest_lock.release()

    def ingest_running(self) -> bool:
        return self._ingest_lock.locked()

    def ensure_ingested(self, progress: Progress | None = None) -> IngestSummary | None:
        """On an empty store, ingest the configured corpus; otherwise do nothing."""
        if self.store.count() > 0:
            return None
        corpus = [p for p in self.settings.corpus if p.exists()]
        if not corpus:
            raise EmptyCorpusError(
                "the store is empty and no corpus was found at "
                + ", ".join(str(p) for p in self.settings.corpus)
                + "; set PAPERBOT_CORPUS or run `paperbot ingest PATH`")
        log.info("store is empty: ingesting %s", ", ".join(map(str, corpus)))
        return self.ingest(corpus, progress=progress)

    # -- questions -------------------------------------------------------------------

    def search(self, query: str, k: int | None = None, filters: Filters | None = None,
               within: Sequence[str] | None = None, reach: Reach = Reach.ALL) -> SearchResult:
        """Papers for `query`; `within` (paper ids) and `reach` (which server libraries it sees) restrict
        them, as `filters` do, before ranking.

        A Chinese query is searched in English (retrieval/translate.py), here for every front end; the
        result's `query` is what was searched. The question-level check reads a question's own words, as
        typed in English: a translation word by word is not checked, and has its own per-paper bar. The English
        words of a Chinese query are typed: their typos are mended before it is translated ("用flow maching")."""
        if has_chinese(query):
            query = mend(query, self.retriever.typos(query, reach))
        english = english_query(query)
        return self.retriever.search(english, k, filters, within=within, reach=reach, translated=english != query)

    def similar(self, paper_id: str, k: int = 10, reach: Reach = Reach.ALL) -> list[Similar] | None:
        """The papers nearest to a stored paper, with shared key terms; None when no paper has that id."""
        return self.similarity.similar(paper_id, k, reach=reach)

    def related(self, text: str, k: int = 10, reach: Reach = Reach.ALL) -> list[Similar]:
        """The papers closest to a pasted text (the abstract of the lab's own project)."""
        return self.similarity.related(text, k, reach=reach)

    def browse(self, filters: Filters, reach: Reach = Reach.ALL) -> list[Paper]:
        """Every paper passing `filters` (an author's papers, an area's papers), orals first."""
        return self.retriever.browse(filters, reach)

    def facets(self, reach: Reach = Reach.ALL) -> dict[str, Counter[str]]:
        """Per filter field (author, area, type, track, keyword), the corpus's values and their paper counts."""
        return facets(self.papers(reach))

    def paper(self, paper_id: str, reach: Reach = Reach.ALL) -> Paper | None:
        return self.retriever.paper(paper_id, reach)

    def papers(self, reach: Reach = Reach.ALL) -> list[Paper]:
        return self.retriever.papers(reach)

    def seen_from(self, reach: Reach) -> SeenLibrary:
        """This library as a question from `reach` sees it (what question answering and plans are given)."""
        return SeenLibrary(self, reach)

    # -- server libraries (retrieval/server_library.py) ---------------------------------------------

    def add_upload(self, upload: Upload, *, max_bytes: int, max_papers: int,
                   progress: Progress | None = None) -> IngestSummary:
        """Store a server's upload; one ingest at a time per process (PaperbotError while another runs)."""
        with self._ingesting():
            return add_upload(upload, self.store, self.embedder, max_bytes=max_bytes, max_papers=max_papers,
                              progress=progress)

    def remove_upload(self, library: str, name: str) -> int:
        """Remove the papers of one of a server's uploads; how many there were."""
        with self._ingesting():
            return remove_source(library, name, self.store, self.embedder).removed

    def uploads(self, library: str) -> Counter[str]:
        """A server's uploads (their shown names) and how many papers each holds now."""
        return Counter(upload_name(p) for p in self.retriever.papers() if p.library == library)

    def content_version(self) -> str:
        """Changes whenever any process writes the store: a cheap way to know cached papers are stale."""
        return self.store.content_version()

    def stats(self, reach: Reach = Reach.ALL) -> Stats:
        """What the store holds, as `reach` sees it (a server's uploads by their shown names)."""
        papers = self.papers(reach)
        view = self.retriever.view()
        mask = view.reach_mask(reach) if view.papers else None
        return Stats(
            papers=len(papers),
            chunks=self.store.count() if mask is None else int(mask[view.chunk_paper_idx].sum()),
            sources=sorted({upload_name(p) for p in papers}),
            model=self.embedder.name,
            store=self.store.where,
            areas=dict(Counter(p.area for p in papers if p.area).most_common()),
            types=dict(Counter(p.presentation for p in papers if p.presentation).most_common()),
        )


class SeenLibrary:
    """A library as one reach sees it: the same calls, each restricted to the papers `reach` sees (a
    `paperbot.protocols.PaperLibrary` for question answering, follow-ups and plans)."""

    def __init__(self, library: Library, reach: Reach) -> None:
        self.library, self.reach = library, reach

    @property
    def embedder(self) -> TextEmbedder:
        return self.library.embedder

    def search(self, query: str, k: int | None = None, filters: Filters | None = None,
               within: Sequence[str] | None = None) -> SearchResult:
        return self.library.search(query, k, filters, within, reach=self.reach)

    def related(self, text: str, k: int = 10) -> list[Similar]:
        return self.library.related(text, k, reach=self.reach)

    def paper(self, paper_id: str) -> Paper | None:
        return self.library.paper(paper_id, self.reach)
