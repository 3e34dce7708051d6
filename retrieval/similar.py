"""Papers like one stored paper, or like a pasted text (the abstract of the lab's own project).

The paper's own chunk vectors (averaged), or the text's, search the vector index; its most distinctive
terms are the BM25 query; both are fused as in `Retriever.rank`, and the terms both papers share are
given as the reason.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from ingest.chunk import chunk_text
from paperbot.errors import EmptyCorpusError
from paperbot.records import Reach, indexed_text
from retrieval.keyword import KeywordIndex, content_tokens, tokenize
from retrieval.search import CANDIDATES, Retriever
from retrieval.types import Similar
from retrieval.view import CorpusView

KEY_TERMS = 30  # distinctive terms of a paper that make the BM25 side of a similar-papers query
SHARED_TERMS = 6  # shown as the reason a paper is similar
RELATED_MAX_CHARS = 8000


class Similarity:
    """Similar papers over one retriever (its view, store, embedder and ranking)."""

    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever

    def similar(self, paper_id: str, k: int = 10, mode: str = "hybrid",
                reach: Reach = Reach.ALL) -> list[Similar] | None:
        """The papers nearest to one stored paper, best first (None when there is no such paper).

        The paper's own chunk vectors (averaged) search the vector index; its most
        distinctive terms are the BM25 query; both are fused as in `rank`. Only papers `reach` sees are
        looked up and returned.
        """
        view = self.retriever.view()
        paper = view.papers.get(paper_id)
        if paper is None or not reach.sees(paper):
            return None
        chunk_idx = view.chunk_rows(paper_id)
        vectors = list(self.retriever.store.get_embeddings([view.chunk_ids[i] for i in chunk_idx]).values())
        if not vectors:  # removed since the view was built
            return None
        qvec = _unit(np.asarray(vectors, dtype=np.float32).mean(axis=0))
        text = indexed_text(paper.title, paper.abstract, paper.keywords)
        return self._like(view, text, qvec, k, exclude=paper_id, mode=mode, reach=reach)

    def related(self, text: str, k: int = 10, mode: str = "hybrid", reach: Reach = Reach.ALL) -> list[Similar]:
        """The papers closest to a text such as the abstract of the lab's own project."""
        text = " ".join(text.split())[:RELATED_MAX_CHARS]
        if not text:
            return []
        view = self.retriever.view()
        if not view.papers:
            raise EmptyCorpusError("the store holds no papers yet: run `paperbot ingest` first")
        pieces = [c.text for c in chunk_text(text, max_tokens=int(self.retriever.embedder.max_tokens * 0.8),
                                            count_tokens=self.retriever.embedder.count_tokens)] or [text]
        qvec = _unit(np.asarray(self.retriever.embedder.encode(pieces), dtype=np.float32).mean(axis=0))
        return self._like(view, text, qvec, k, exclude=None, mode=mode, reach=reach)

    def _like(self, view: CorpusView, text: str, qvec: np.ndarray, k: int, exclude: str | None,
              mode: str, reach: Reach) -> list[Similar]:
        terms = key_terms(view.keyword, text)
        ranked = self.retriever.rank(text, depth=max(CANDIDATES, k + 1), query_vector=qvec, view=view, mode=mode,
                                     allowed=view.reach_mask(reach), query_tokens=list(terms))
        ranked = [r for r in ranked if r.paper_id != exclude][:k]
        surface = surface_forms(text)
        out = []
        for r in ranked:
            other = view.papers[r.paper_id]
            theirs = set(tokenize(indexed_text(other.title, other.abstract, other.keywords)))
            shared = [surface.get(t, t) for t in terms if t in theirs][:SHARED_TERMS]
            out.append(Similar(paper=other, score=r.score, shared_terms=tuple(dict.fromkeys(shared)), dense=r.dense))
        return out


def key_terms(keyword: KeywordIndex, text: str, n: int = KEY_TERMS) -> list[str]:
    """The text's most distinctive indexed terms (frequency × IDF), best first."""
    counts = Counter(t for t in content_tokens(text) if keyword.idf(t) > 0 and keyword.df(t) > 0)
    ranked = sorted(counts, key=lambda t: (-counts[t] * keyword.idf(t), t))
    return ranked[:n]


def surface_forms(text: str) -> dict[str, str]:
    """Index token → the word as the text writes it ("diffus" → "diffusion"; acronyms keep their case)."""
    out: dict[str, str] = {}
    for m in re.finditer(r"[^\W_]+(?:[-'][^\W_]+)*", text):
        word = m.group(0)
        for tok in tokenize(word):
            out.setdefault(tok, word if sum(c.isupper() for c in word) >= 2 else word.lower())
    return out


def _unit(v: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(v))
    return v / norm if norm else v
