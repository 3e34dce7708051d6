"""Whether a paper answers the question: one calibrated probability from the evidence retrieval already has.

Each ranked paper gets a few signals (`Evidence`): how well its best sentence answers (cosine plus term
share, retrieval/snippets.py) and by how much it stands out from the other papers' best, its best chunk's
cosine and margin, how much of the question's distinctive vocabulary it holds, the largest share it misses,
and how much of what it misses another ranked paper holds. A logistic model over them, fitted on readers'
labelled questions (benchmarks/calibrate_answers.py, dev splits only; its coefficients and the curve of
abstention against wrong answers are in docs/benchmarks.md), gives the probability that the paper answers.
The fused rank score, its lead and gap, and the question's length are computed too but weigh 0: their scale
follows the corpus size. A paper is cited when that probability reaches RETRIEVAL_MIN_CONFIDENCE (or, beside
a cited paper, 0.3 of its probability: retrieval/search.py `RELATIVE`); with an LLM configured, papers
reaching RETRIEVAL_LLM_MIN_CONFIDENCE are passed to it, and the model's own "the passages do not say" is the
abstention (retrieval/qa.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from retrieval.types import Hit

# Fitted by benchmarks/calibrate_answers.py on the dev splits of the readers' sets; feature order as FEATURES.
FEATURES = ("lead", "gap", "fused", "answer", "answer_lead", "coverage", "missing", "dense", "cosine",
            "sentence_coverage", "missing_known", "terms", "complement", "answer_margin", "dense_margin")
MEAN = (0.0000, 0.0000, 0.0000, 0.6086, -0.3693, 0.3318, 0.2198, 0.3996, 0.4118, 0.2878, 0.1729, 0.0000, 0.4051,
        -0.2945, -0.1367)
SCALE = (1.0000, 1.0000, 1.0000, 0.3003, 0.3130, 0.2546, 0.1249, 0.1605, 0.1567, 0.2372, 0.1073, 1.0000, 0.2563,
         0.4356, 0.1850)
WEIGHTS = (0.0000, 0.0000, 0.0000, 0.4279, 0.9282, 1.0522, 0.1859, -0.1922, 0.6210, 0.1261, -0.0512, 0.0000, -0.7988,
           1.7726, 1.5744)
BIAS = -6.0179


@dataclass(frozen=True)
class Evidence:
    """What retrieval knows about one paper for one question (the model's inputs, named)."""

    lead: float  # its fused rank score minus the best paper's (0 for the first)
    gap: float  # its fused score minus the next paper's: how clearly it stands out from those below it
    fused: float  # the fused score itself (z-scores over the candidates, summed)
    answer: float  # its best sentence's answer score (cosine + term share read with the title)
    answer_lead: float  # that score minus the best paper's
    coverage: float  # IDF-weighted share of the question's content terms found in the paper
    missing: float  # the largest share of any one question term the paper lacks (a focus word it never says)
    dense: float  # its best chunk's cosine to the question
    cosine: float  # its best sentence's cosine to the question
    sentence_coverage: float  # the largest term share one sentence holds (read with the title)
    missing_known: float  # the largest share of one question term the paper lacks and other papers have
    terms: float  # how many content terms the question has (log 1 + n)
    complement: float  # the largest share of the question's terms it lacks that one other ranked paper holds
    answer_margin: float  # its answer score minus the best other paper's: how far it stands out
    dense_margin: float  # its best chunk's cosine minus the best other paper's

    def vector(self) -> tuple[float, ...]:
        return tuple(getattr(self, name) for name in FEATURES)


def evidence(fused: Sequence[float], answers: Sequence[float | None], coverage: Sequence[float],
             missing: Sequence[float], dense: Sequence[float], cosine: Sequence[float],
             sentence_coverage: Sequence[float], missing_known: Sequence[float], terms: int,
             complement: Sequence[float]) -> list[Evidence | None]:
    """Per ranked paper (best first): its evidence, or None for a paper with no sentence to judge."""
    known = [a for a in answers if a is not None]
    best_answer = max(known) if known else 0.0
    best = fused[0] if fused else 0.0
    out: list[Evidence | None] = []
    for i, answer in enumerate(answers):
        if answer is None:
            out.append(None)
            continue
        below = fused[i + 1] if i + 1 < len(fused) else fused[i]
        out.append(Evidence(lead=fused[i] - best, gap=fused[i] - below, fused=fused[i], answer=answer,
                            answer_lead=answer - best_answer, coverage=coverage[i], missing=missing[i],
                            dense=dense[i], cosine=cosine[i], sentence_coverage=sentence_coverage[i],
                            missing_known=missing_known[i], terms=math.log1p(terms), complement=complement[i],
                            answer_margin=answer - max((a for j, a in enumerate(answers) if j != i and a is not None),
                                                       default=0.0),
                            dense_margin=dense[i] - max((d for j, d in enumerate(dense) if j != i), default=0.0)))
    return out


def confidence(e: Evidence, weights: Sequence[float] = WEIGHTS, bias: float = BIAS,
               mean: Sequence[float] = MEAN, scale: Sequence[float] = SCALE) -> float:
    """The probability that the paper answers the question (the fitted logistic model)."""
    z = bias + sum(w * (x - m) / s for w, x, m, s in zip(weights, e.vector(), mean, scale))
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def llm_candidates(hits: Sequence[Hit]) -> list[Hit]:
    """The papers an LLM is shown: those plausibly relevant (RETRIEVAL_LLM_MIN_CONFIDENCE, a looser bar than
    citing them extractively), in rank order."""
    return [h for h in hits if h.relevant or h.plausible]
