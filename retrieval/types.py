"""Small typed results shared by the CLI, the bot and the LLM layer."""

from __future__ import annotations

from dataclasses import dataclass

from paperbot import bibtex
from paperbot.records import Paper
from retrieval.decision import Evidence, QuestionEvidence
from retrieval.filters import Filters


@dataclass(frozen=True)
class Quote:
    """A verbatim sentence of an abstract: abstract[start:end] == text."""

    text: str
    start: int
    end: int


class _OfPaper:
    """What hits and citations read from their paper."""

    paper: Paper

    @property
    def paper_id(self) -> str:
        return self.paper.paper_id

    @property
    def label(self) -> str:
        return self.paper.label

    @property
    def where(self) -> str:
        return self.paper.where


@dataclass(frozen=True)
class Hit(_OfPaper):
    """One paper found for a query, with the sentences that best answer it (best first)."""

    paper: Paper
    score: float
    quotes: tuple[Quote, ...]
    dense: float = 0.0
    lexical: float = 0.0
    relevant: bool = True
    answer: float | None = None  # how well its best sentence answers the query (retrieval/snippets.py); None: no abstract
    confidence: float | None = None  # the probability that it answers (retrieval/decision.py); None: no abstract
    plausible: bool | None = None  # worth showing an LLM (a looser bar than `relevant`); None: as `relevant`
    evidence: Evidence | None = None  # what that probability was computed from

    @property
    def snippet(self) -> str:
        """The quotes in abstract order; ' … ' marks text left out between them."""
        parts: list[str] = []
        last_end = None
        for q in sorted(self.quotes, key=lambda q: q.start):
            if parts and last_end is not None and q.start > last_end + 1:
                parts.append("…")
            parts.append(q.text)
            last_end = q.end
        return " ".join(parts)

    def to_json(self) -> dict:
        return {**paper_json(self.paper), "snippet": self.snippet, "score": round(self.score, 4)}


# A search's reason to abstain that the answer names (retrieval/search.py GENERAL_WORDS): the question names nothing
# that picks one paper out ("model").
TOO_GENERAL = "every word of the question is in many papers"


@dataclass(frozen=True)
class SearchResult:
    query: str
    hits: list[Hit]
    abstained: bool
    reason: str = ""
    filters: Filters | None = None  # the metadata filters the candidates were restricted to
    notice: str = ""  # shown instead of the usual abstention: the filters matched no paper, and nearest values
    question: QuestionEvidence | None = None  # what the question-level check read (None: not made)
    answered: float | None = None  # its probability that the question is answered (retrieval/decision.py)
    unsaid: tuple[str, ...] = ()  # an abstention's words, as typed, that no paper the question may see uses

    def to_json(self) -> dict:
        out = {"query": self.query, "abstained": self.abstained, "hits": [h.to_json() for h in self.hits]}
        if self.filters:
            out["filters"] = self.filters.to_json()
        if self.notice:
            out["notice"] = self.notice
        return out


@dataclass(frozen=True)
class Similar:
    """A paper near another paper (or a pasted abstract), with the key terms both share as the reason."""

    paper: Paper
    score: float
    shared_terms: tuple[str, ...]
    dense: float = 0.0

    @property
    def paper_id(self) -> str:
        return self.paper.paper_id

    def to_json(self) -> dict:
        return {**paper_json(self.paper), "score": round(self.score, 4), "shared_terms": list(self.shared_terms)}


@dataclass(frozen=True)
class Citation(_OfPaper):
    """[n] in an answer: a paper and the verbatim sentence(s) that support the claim."""

    n: int
    paper: Paper
    quote: str

    def to_json(self) -> dict:
        return {"n": self.n, **paper_json(self.paper), "quote": self.quote}


@dataclass(frozen=True)
class Removed:
    """A sentence of the LLM's reply that is not shown: its text (redacted), the removal kind and why, in words."""

    text: str
    kind: str  # unsupported, uncited, filler, fact, uncheckable, echo, repeated
    why: str

    @property
    def reason(self) -> str:
        """The name of the public reason in paperbot/messages.py (what the footer says)."""
        return _REMOVAL_REASONS.get(self.kind, "REMOVED_UNSUPPORTED")

    def to_json(self) -> dict:
        return {"text": self.text, "reason": self.why, "kind": self.kind}


_REMOVAL_REASONS = {"fact": "REMOVED_FACT", "uncheckable": "REMOVED_UNCHECKABLE", "echo": "REMOVED_DEBRIS",
                    "repeated": "REMOVED_DEBRIS"}


@dataclass(frozen=True)
class Answer:
    question: str
    text: str
    abstained: bool
    citations: list[Citation]
    hits: list[Hit]
    mode: str = "extractive"
    fallback_reason: str | None = None  # why the LLM's answer is not shown: short, public, in `language`
    model: str | None = None  # the model that answered, as the endpoint named it
    latency_ms: float | None = None
    tokens: int | None = None
    search_query: str | None = None  # what was searched, when a rewrite of the question was used
    dropped_citations: tuple[int, ...] = ()  # citation numbers the LLM made up (removed from its text)
    filters: Filters | None = None
    notice: str = ""  # the filters matched no paper: say so (with the nearest values) instead of abstaining
    fallback_detail: str | None = None  # for the operator: what failed, without endpoint or server text
    notes: tuple[str, ...] = ()  # short remarks for the footer, in `language`
    language: str = "en"  # the language of the fixed text shown with this answer (paperbot.messages)
    removed: tuple[Removed, ...] = ()  # sentences of the LLM's reply that are not shown, redacted

    def to_json(self) -> dict:
        out = {"question": self.question, "answer": self.text, "abstained": self.abstained, "mode": self.mode,
               "citations": [c.to_json() for c in self.citations]}
        if self.fallback_reason:
            out["fallback_reason"] = self.fallback_reason
        if self.fallback_detail:
            out["fallback_detail"] = self.fallback_detail
        if self.notes:
            out["notes"] = list(self.notes)
        if self.model:
            out["model"] = self.model
        if self.search_query:
            out["search_query"] = self.search_query
        if self.latency_ms is not None:
            out["latency_ms"] = round(self.latency_ms)
        if self.tokens is not None:
            out["tokens"] = self.tokens
        if self.filters:
            out["filters"] = self.filters.to_json()
        if self.notice:
            out["notice"] = self.notice
        if self.removed:
            out["removed"] = [r.to_json() for r in self.removed]
        return out


def paper_json(paper: Paper) -> dict:
    """The paper fields every hit and citation carries in JSON output (a stable contract); text as in the source."""
    return {"paper_id": paper.paper_id, "source": paper.source, "position": paper.position, "label": paper.label,
            "title": paper.title, "authors": list(paper.authors), "url": paper.url, "area": paper.area,
            "type": paper.presentation, "track": paper.track, "keywords": list(paper.keywords),
            "slots": [slot.to_json() for slot in paper.slots], "title_zh": paper.title_zh,
            "bibtex": bibtex.entry(paper)}
