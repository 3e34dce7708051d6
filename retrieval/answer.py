"""Extractive answers: the best verbatim sentences of the top papers, each cited [n]."""

from __future__ import annotations

from paperbot import messages
from retrieval.decision import llm_candidates
from retrieval.types import TOO_GENERAL, Answer, Citation, Hit, SearchResult

MAX_CITED_PAPERS = 3


def citations_for(hits: list[Hit], plausible: bool = False) -> list[Citation]:
    """Number the relevant papers [1], [2], … in rank order, quoting their best sentences; with `plausible`, the
    papers worth showing an LLM (retrieval/decision.py `llm_candidates`)."""
    chosen = llm_candidates(hits) if plausible else [h for h in hits if h.relevant]
    return [Citation(n=n, paper=h.paper, quote=h.snippet) for n, h in enumerate(chosen, start=1)][:MAX_CITED_PAPERS]


def extractive_answer(result: SearchResult, language: str = "en") -> Answer:
    """A few sentences, each the verbatim quote of one cited paper (its best sentence, or two), followed by its [n].

    An abstention says so in `language`; it carries no fallback reason, since nothing fell back.
    """
    if result.abstained or not result.hits:
        # a question too general to pick a paper says so, without the closest papers (any paper is as close)
        general = result.reason == TOO_GENERAL
        notice = messages.text("TOO_GENERAL", language) if general else result.notice
        return Answer(question=result.query, text=notice or messages.text("ABSTAIN", language), abstained=True,
                      citations=[], hits=[] if general else result.hits, filters=result.filters, notice=notice,
                      language=language)
    citations = citations_for(result.hits)
    by_id = {h.paper_id: h for h in result.hits}
    lines = []
    for c in citations:
        hit = by_id[c.paper_id]
        # A paper listed before its abstract is published is named, never quoted beyond its title.
        pending = messages.text("ABSTRACT_PENDING", language)
        best = hit.snippet if hit.quotes else f"{hit.paper.title} ({pending})"
        lines.append(f"{best} [{c.n}]")
    return Answer(question=result.query, text="\n".join(lines), abstained=False, citations=citations, hits=result.hits,
                  filters=result.filters, language=language)
