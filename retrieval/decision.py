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

Whether a new question is answered at all is decided by a second logistic model, fitted on the same questions,
one row a question (`QuestionEvidence`, `answered`). It reads the most probable paper's evidence and probability
with four signals computed for it alone (retrieval/support.py): how much of the question's vocabulary, word by
word in context, the paper speaks to; whether it never says one of the question's names; how much closer the
question comes to it with one word left out; and whether the question says the paper's own short name. It tells
a near miss (the paper shares the topic but not what is asked) from a paraphrase, which the per-paper model,
fitted to rank papers within a question, weighs little. That
paper (from RETRIEVAL_MIN_CHECKED) is cited when the question reaches RETRIEVAL_MIN_ANSWERED, even short of the
per-paper bar, and no paper is cited below it; follow-ups about papers already cited keep the per-paper decision.
Chinese questions searched as their word-by-word translation keep it too, at a bar of their own
(RETRIEVAL_MIN_CONFIDENCE_TRANSLATED), and the question-level model only abstains for them, below a far lower bar
(RETRIEVAL_MIN_ANSWERED_TRANSLATED, retrieval/search.py).
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
MEAN = (0.0000, 0.0000, 0.0000, 0.6443, -0.2859, 0.3273, 0.1921, 0.4403, 0.4482, 0.2852, 0.1557, 0.0000, 0.3561,
        -0.2310, -0.1186)
SCALE = (1.0000, 1.0000, 1.0000, 0.2389, 0.2607, 0.2019, 0.0931, 0.1373, 0.1320, 0.1860, 0.0805, 1.0000, 0.1985, 0.3488,
         0.1598)
WEIGHTS = (0.0000, 0.0000, 0.0000, 0.3582, 0.9451, 1.5339, -0.0829, -1.5845, 1.4220, -0.8333, 0.1895, 0.0000, -1.3462,
           0.8020, 1.6698)
BIAS = -6.3415


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
    return _logistic(e.vector(), weights, bias, mean, scale)


def _logistic(x: Sequence[float], weights: Sequence[float], bias: float, mean: Sequence[float],
              scale: Sequence[float]) -> float:
    """A fitted logistic model's probability for the features `x` (standardised by `mean` and `scale`)."""
    z = bias + sum(w * (v - m) / s for w, v, m, s in zip(weights, x, mean, scale))
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


# Fitted by benchmarks/calibrate_answers.py (the question-level model); feature order as QUESTION_FEATURES.
QUESTION_FEATURES = ("answer", "coverage", "missing", "dense", "cosine", "sentence_coverage",
                     "missing_known", "complement", "answer_margin", "dense_margin", "logit", "support", "unnamed",
                     "leave_out", "named", "joint")
QUESTION_MEAN = (0.9607, 0.5879, 0.1574, 0.5877, 0.5941, 0.5137, 0.1145, 0.0000, 0.2922, 0.1156, 0.8507, 0.6640, 0.1087,
                 0.0035, 0.0308, 0.6542)
QUESTION_SCALE = (0.2564, 0.2381, 0.0961, 0.1361, 0.1253, 0.2287, 0.0703, 1.0000, 0.2282, 0.1087, 2.7064, 0.1384,
                  0.3113, 0.0070, 0.1728, 0.1138)
QUESTION_WEIGHTS = (-0.6867, 0.1126, -0.2774, 0.6622, 0.1403, -0.7257, -0.6276, 0.0000, 0.4227, -0.0559, 1.7143, 1.3630,
                    -0.6179, -0.8661, 0.3961, -0.9861)
QUESTION_BIAS = 0.5606


@dataclass(frozen=True)
class QuestionEvidence:
    """The question-level model's inputs: the first paper's evidence and probability, and how much of the question
    it speaks to (retrieval/support.py)."""

    paper: Evidence
    probability: float
    support: float  # the IDF-weighted mean of each question word's best match among its tokens, in context
    unnamed: float  # 1 when it never says one of the question's names
    leave_out: float  # the most the question comes closer to it with one word left out (IDF share x rise)
    named: float  # 1 when the question says its short name
    # the question's cosine to itself read together with the paper's abstract; None (read as the fitted mean: no
    # evidence either way) for a question of one content word
    joint: float | None = None

    def vector(self) -> tuple[float, ...]:
        p = min(max(self.probability, 1e-6), 1 - 1e-6)
        values = {"logit": math.log(p / (1 - p)), "support": self.support, "unnamed": self.unnamed,
                  "leave_out": self.leave_out, "named": self.named,
                  "joint": QUESTION_MEAN[QUESTION_FEATURES.index("joint")] if self.joint is None else self.joint}
        return tuple(values[name] if name in values else getattr(self.paper, name) for name in QUESTION_FEATURES)


def answered(q: QuestionEvidence, weights: Sequence[float] = QUESTION_WEIGHTS, bias: float = QUESTION_BIAS,
             mean: Sequence[float] = QUESTION_MEAN, scale: Sequence[float] = QUESTION_SCALE) -> float:
    """The probability that the question is answered by the paper that would be cited first."""
    return _logistic(q.vector(), weights, bias, mean, scale)


def llm_candidates(hits: Sequence[Hit]) -> list[Hit]:
    """The papers an LLM is shown: those plausibly relevant (RETRIEVAL_LLM_MIN_CONFIDENCE, a looser bar than
    citing them extractively), in rank order."""
    return [h for h in hits if h.relevant or h.plausible]
