"""The one place that builds the services every front end uses, and closes them.

    async with open_services(settings) as services:
        services.library   # store + embedder + retriever (retrieval.library.Library)
        services.llm       # LLMClient over one httpx.AsyncClient, or None without LLM_BASE_URL

`paperbot run`, `chat`, `ask` and `search`, the mock-client harness and the
benchmarks all open their services here; the Discord client receives them and
never constructs its own. Nothing heavy happens at import time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass

from ingest.embed import Embedder
from ingest.pipeline import Progress
from ingest.store import Writes
from paperbot.memory import settle_long_lived, steady_heap
from paperbot.settings import Settings
from retrieval import spelling, translate
from retrieval.library import Library
from retrieval.llm import LLMClient

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Services:
    """What a front end needs to answer questions: settings, the library, and the LLM when configured."""

    settings: Settings
    library: Library
    llm: LLMClient | None = None


@contextmanager
def open_library(settings: Settings, embedder: Embedder | None = None) -> Iterator[Library]:
    """The library for synchronous callers (ingest, search, eval), whose writes are the process's only work;
    the store is closed on exit."""
    library = Library(settings, embedder=embedder, writes=Writes.ALONE)
    try:
        yield library
    finally:
        library.close()


@asynccontextmanager
async def open_services(settings: Settings, *, use_llm: bool = True, library: Library | None = None,
                        ingest_if_empty: bool = False, warm_up: bool = False, one_shot: bool = False,
                        serving: bool = False, progress: Progress | None = None) -> AsyncIterator[Services]:
    """Open the library (or use the given one, which the caller closes) and the LLM client.

    `one_shot` (one question, then exit: `paperbot ask`) turns the LLM client's cool-down off.

    `ingest_if_empty` ingests the configured corpus into an empty store first;
    `warm_up` loads the model, the keyword index, the Chinese dictionaries and the English word list before the
    first question;
    `serving` (the bot) serves an embedded store from a child process (CHROMA_CHILD, ingest/chroma_child.py).
    """
    steady_heap()  # a bot or a chat runs for days
    owned = library is None
    if library is None:
        library = await asyncio.to_thread(Library, settings, serving=serving)
    http = None
    try:
        if ingest_if_empty:
            summary = await asyncio.to_thread(library.ensure_ingested, progress)
            if summary is not None:
                log.info("indexed the corpus: %s", summary.line())
        if warm_up:
            await asyncio.to_thread(library.search, "warm up")
            await asyncio.to_thread(translate.warm)
            await asyncio.to_thread(spelling.english)  # the word list typos are read against
            log.debug("%d objects left out of the garbage collector's full passes", settle_long_lived())
        llm = None
        if use_llm and settings.llm.enabled:
            import httpx

            cfg = settings.llm
            http = httpx.AsyncClient(timeout=httpx.Timeout(cfg.read_timeout, connect=cfg.connect_timeout))
            llm = LLMClient(cfg, http, breaker=not one_shot)
        yield Services(settings=settings, library=library, llm=llm)
    finally:
        if http is not None:
            await http.aclose()
        if owned:
            await asyncio.to_thread(library.close)

