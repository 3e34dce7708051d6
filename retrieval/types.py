"""Small typed results shared by the CLI, the bot and the LLM layer."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Quote:
    """A verbatim sentence of an abstract: abstract[start:end] == text."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Hit:
    """One paper found for a query, with the sentences that best answer it (best first)."""

    paper_id: str
    source: str
    position: int
    label: str
    score: float
    quotes: tuple[Quote, ...]
    dense: float = 0.0
    lexical: float = 0.0
    relevant: bool = True
    title: str = ""
    url: str = ""
    links: tuple[str, ...] = ()

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

    @property
    def where(self) -> str:
        return f"{self.source} #{self.position}"

    def to_json(self) -> dict:
        return {"paper_id": self.paper_id, "source": self.source, "position": self.position,
                "label": self.label, "snippet": self.snippet, "score": round(self.score, 4)}


@dataclass(frozen=True)
class SearchResult:
    query: str
    hits: list[Hit]
    abstained: bool
    reason: str = ""

    def to_json(self) -> dict:
        return {"query": self.query, "abstained": self.abstained, "hits": [h.to_json() for h in self.hits]}


@dataclass(frozen=True)
class Citation:
    """[n] in an answer: a paper and the verbatim sentence(s) that support the claim."""

    n: int
    paper_id: str
    source: str
    position: int
    label: str
    quote: str

    def to_json(self) -> dict:
        return {"n": self.n, "paper_id": self.paper_id, "source": self.source, "position": self.position,
                "label": self.label, "quote": self.quote}


@dataclass(frozen=True)
class Answer:
    question: str
    text: str
    abstained: bool
    citations: list[Citation]
    hits: list[Hit]
    mode: str = "extractive"
    fallback_reason: str | None = None
    model: str | None = None
    latency_ms: float | None = None
    tokens: int | None = None
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        out = {"question": self.question, "answer": self.text, "abstained": self.abstained, "mode": self.mode,
               "citations": [c.to_json() for c in self.citations]}
        if self.fallback_reason:
            out["fallback_reason"] = self.fallback_reason
        if self.model:
            out["model"] = self.model
        return out


@dataclass(frozen=True)
class PaperRecord:
    """A whole stored paper, reassembled from its chunks."""

    paper_id: str
    source: str
    position: int
    label: str
    abstract: str
    title: str = ""
    authors: str = ""
    url: str = ""
    venue: str = ""
    links: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.source} #{self.position}"
