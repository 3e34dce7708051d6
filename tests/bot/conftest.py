"""Bot test fixtures: a small in-memory library (where retrieval is beside the point) and bot builders."""

from __future__ import annotations

import re
import threading
from dataclasses import replace

import pytest

from bot.app.client import PaperBot
from bot.runtime import Services
from ingest.pipeline import IngestSummary
from paperbot.records import Paper, Reach
from retrieval.library import SeenLibrary, Stats
from retrieval.types import Hit, Quote, SearchResult
from tests.conftest import make_settings
from tests.fakes import HashEmbedder

ABSTRACTS = [
    ("BMT", "We study sparse fine-tuning. Zeroing fewer than 0.05% of weights with a learned binary mask "
            "matches full fine-tuning. We call the method Bit-Mask Tuning."),
    ("NV-CoT", "Multimodal models reason over images with visual chain-of-thought. We let models emit "
               "continuous numerical coordinates as actions."),
    ("@everyone", "A *markdown* heavy abstract with <@123456789012345678> and @here inside. "
                  "It studies masking of attention heads."),
] + [(f"P{i:02d}", f"Paper number {i} studies topic {i} with method {i}. It reports results on benchmark {i}.")
     for i in range(40)]


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 3}


class StubLibrary:
    """The Library interface over a few fixed abstracts, ranked by shared words.

    `ingest` can be made to block (`hold_ingest`) to test what happens while it runs.
    """

    def __init__(self) -> None:
        self.records = [Paper(paper_id=f"p{i:04d}", source="stub.txt", position=i + 1, label=label,
                              abstract=text) for i, (label, text) in enumerate(ABSTRACTS)]
        self.version = "v1"
        self.embedder = HashEmbedder()  # what LLM replies are checked with (bag-of-words token vectors)
        self.hold_ingest = threading.Event()
        self.hold_ingest.set()
        self.ingest_started = threading.Event()
        self._ingesting = threading.Lock()
        self.ingests = 0
        self.reports: list = []  # FileReports the next ingest's summary carries
        self.searches: list[str] = []
        self.filters: list = []
        self.reaches: list[Reach] = []

    def search(self, query: str, k: int | None = None, filters=None, within=None,
               reach: Reach = Reach.ALL) -> SearchResult:
        from retrieval.translate import english_query

        query = english_query(query)  # as PaperLibrary.search: a Chinese query is searched in English
        self.searches.append(query)
        self.filters.append(filters)
        self.reaches.append(reach)
        want = _words(query)
        hits = []
        for r in [r for r in self.records if reach.sees(r) and (within is None or r.paper_id in within)]:
            sentences = [s for s in re.split(r"(?<=\.)\s+", r.abstract) if s]
            scored = sorted(((len(want & _words(s)), s) for s in sentences), key=lambda t: -t[0])
            score = sum(n for n, _ in scored)
            if score == 0:
                continue
            best = scored[0][1]
            start = r.abstract.index(best)
            hits.append(Hit(paper=r, score=float(score), quotes=(Quote(best, start, start + len(best)),)))
        hits.sort(key=lambda h: -h.score)
        hits = hits[: k or 5]
        if not hits:
            closest = [Hit(paper=r, score=0.01,
                           quotes=(Quote(r.abstract.split(". ")[0], 0, len(r.abstract.split(". ")[0])),),
                           relevant=False) for r in self.records[:3]]
            return SearchResult(query=query, hits=closest, abstained=True, reason="no paper is close enough")
        return SearchResult(query=query, hits=hits, abstained=False)

    def paper(self, paper_id: str, reach: Reach = Reach.ALL) -> Paper | None:
        return next((r for r in self.records if r.paper_id == paper_id and reach.sees(r)), None)

    def papers(self, reach: Reach = Reach.ALL) -> list[Paper]:
        return [r for r in self.records if reach.sees(r)]

    def seen_from(self, reach: Reach) -> SeenLibrary:
        return SeenLibrary(self, reach)  # type: ignore[arg-type]  # the stub has what SeenLibrary calls

    def content_version(self) -> str:
        return self.version

    def stats(self, reach: Reach = Reach.ALL) -> Stats:
        return Stats(papers=len(self.records), chunks=len(self.records) * 2, sources=["stub.txt"], model="stub",
                     store="memory")

    def ingest_running(self) -> bool:
        return self._ingesting.locked()

    def ingest(self, paths=None, progress=None) -> IngestSummary:
        with self._ingesting:
            self.ingest_started.set()
            self.hold_ingest.wait(30)
            self.ingests += 1
            return IngestSummary(unchanged=len(self.records), sources=["stub.txt"], files=list(self.reports))

    def store_child(self) -> tuple[str, int]:
        return "", 0

    def close(self) -> None:
        pass


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def stub_library() -> StubLibrary:
    return StubLibrary()


@pytest.fixture
def make_bot(tmp_path, stub_library):
    """make_bot(library=None, **env): a PaperBot over the stub (or the given) library, settings from env."""

    def build(library=None, **env: str) -> PaperBot:
        settings = make_settings(tmp_path, **env)
        return PaperBot(Services(settings, library if library is not None else stub_library))

    return build


def replace_settings(settings, **discord):
    return replace(settings, discord=replace(settings.discord, **discord))
