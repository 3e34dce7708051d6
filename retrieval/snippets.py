"""Which sentences of a paper answer a question, and whether any paper does.

A paper is ranked by its best chunk, but it is cited for one sentence, so the
sentence is what must answer. A sentence's answer score is its cosine similarity
to the question (from the sentence vectors stored at ingest) plus
COVERAGE_WEIGHT × the IDF-weighted share of the question's content terms that
the sentence contains (for the answer, read with its paper's title): the cosine
alone rewards sentences on the general subject, the coverage alone shared words.

A paper answers when its best sentence scores at least RETRIEVAL_MIN_ANSWER and
is within RETRIEVAL_ANSWER_MARGIN of the best paper's (a paper far behind the best
answer is on another subject that merely shares words). When no paper answers the
search abstains. A paper without an abstract (listed before it is published) has
no sentence to judge: its title and metadata decide, by the chunk-level rule
(cosine ≥ RETRIEVAL_MIN_DENSE or term share ≥ RETRIEVAL_MIN_LEXICAL). The weights
and thresholds come from benchmarks/calibrate_abstention.py
(docs/abstention-calibration.txt), measured by benchmarks/extractive_bench.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from retrieval.keyword import KeywordIndex, content_tokens, tokenize
from retrieval.types import Quote

COVERAGE_WEIGHT = 0.75
MAX_QUOTES = 2
SECOND_QUOTE_SHARE = 0.85  # a second sentence is quoted only when it scores this share of the first
SECOND_QUOTE_MAX_FIRST = 400  # ... and the first is shorter than this (characters)


@dataclass(frozen=True)
class ScoredSentence:
    quote: Quote
    cosine: float  # to the question
    coverage: float  # IDF-weighted share of the question's content terms in the sentence
    titled: float  # the same share counting the paper's title too (read as the sentence's context)

    @property
    def score(self) -> float:
        """How well the sentence itself matches: which sentences are quoted."""
        return answer_score(self.cosine, self.coverage)

    @property
    def answer(self) -> float:
        """How well it answers, read with its paper's title ("What does the Hider do in HSSP?")."""
        return answer_score(self.cosine, self.titled)


def answer_score(cosine: float, coverage: float) -> float:
    """How well a sentence answers the question: the thresholds are calibrated on this scale."""
    return cosine + COVERAGE_WEIGHT * coverage


def question_terms(keyword: KeywordIndex, question: str) -> dict[str, float]:
    """The question's content terms, each with its share of their total IDF (a term the corpus lacks weighs most)."""
    weights = {t: keyword.idf(t) for t in set(content_tokens(question))}
    total = sum(weights.values()) or 1.0
    return {t: w / total for t, w in weights.items()}


def score_sentences(quotes: Sequence[Quote], vectors: np.ndarray, qvec: np.ndarray, terms: dict[str, float],
                    title: str = "") -> list[ScoredSentence]:
    """The paper's sentences scored against the question, best quote first (ties keep abstract order).

    A sentence is quoted for what it says itself; the paper's title counts only in `answer`, so a
    sentence does not win the quote by repeating the title's words.
    """
    if not quotes:
        return []
    cosines = vectors.astype(np.float32) @ qvec.astype(np.float32)
    in_title = {t for t in tokenize(title)} if title else set()
    scored = []
    for quote, cosine in zip(quotes, cosines):
        tokens = set(tokenize(quote.text))
        coverage = sum(w for t, w in terms.items() if t in tokens)
        titled = coverage + sum(w for t, w in terms.items() if t in in_title and t not in tokens)
        scored.append(ScoredSentence(quote, float(cosine), coverage, titled))
    return sorted(scored, key=lambda s: -s.score)


def best_answer(scored: Sequence[ScoredSentence]) -> float | None:
    """The paper's answer score: its best sentence's, read with the title; None without sentences."""
    return max((s.answer for s in scored), default=None)


def quotes_of(scored: Sequence[ScoredSentence]) -> tuple[Quote, ...]:
    """The best sentence, and the second best when it is nearly as good (and the first is not long)."""
    if not scored:
        return ()
    best = [scored[0]]
    if (len(scored) > 1 and scored[1].score >= SECOND_QUOTE_SHARE * scored[0].score
            and len(scored[0].quote.text) < SECOND_QUOTE_MAX_FIRST):
        best.append(scored[1])
    return tuple(s.quote for s in best[:MAX_QUOTES])


def answering(scores: Sequence[float | None], min_answer: float, margin: float) -> list[bool | None]:
    """Per paper: does its best sentence answer the question? None for a paper with no sentence to judge."""
    known = [s for s in scores if s is not None]
    bar = max(min_answer, max(known) - margin) if known else min_answer
    return [None if s is None else s >= bar for s in scores]

