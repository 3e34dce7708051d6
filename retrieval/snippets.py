"""Which sentences of a paper answer a question, and how well the paper's best one does.

A paper is ranked by its best chunk, but it is cited for a sentence, so the sentence is what must
answer. Each sentence is scored against the question from the sentence vectors stored at ingest and
the question's content terms: its cosine, the IDF-weighted share of the question's terms it holds, the
same share weighted by how few of the paper's sentences hold each term (the question's focus words:
"discriminator" in "how do discriminators help flow matching models?", against the topic words every
sentence of the paper repeats), whether it speaks for the paper ("we show …") about those terms, where
it stands, whether it states a number the question asks for, for a question asking how, whether it
states the paper's method ("we propose …", "by training …") or its results ("experiments show …"), and,
for one asking what a named method is, whether it introduces the name ("We call the method Bit-Mask
Tuning (BMT): a …"). A conditional logit over these, fitted on the sentences readers marked as answering
(benchmarks/calibrate_quotes.py), orders the quotes. A sentence saying where the code is ("Our code is
available at https://…") is the quote for a question asking for the code, and quoted for no other; a sentence
that only reports results is not added to one stating the method, unless the question asks for a number.

Each paper's answer score, cosine + COVERAGE_WEIGHT × term share read with its title, is one of the
signals retrieval/decision.py weighs to decide whether the paper answers at all.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from paperbot.text import claims_for_paper, defines, points_elsewhere, states_method, states_number, states_result
from retrieval.instances import holding
from retrieval.keyword import KeywordIndex, content_tokens, tokenize
from retrieval.types import Quote

COVERAGE_WEIGHT = 0.75
MAX_QUOTES = 2
SECOND_QUOTE_SHARE = 0.7  # a second sentence is quoted only when its probability is this share of the first's
SECOND_QUOTE_MAX_FIRST = 400  # ... and the first is shorter than this (characters)
SHORT_QUOTE_WORDS = 12  # a first sentence this short ("We propose DRL.") names more than it says: a second follows


# Which sentence answers: a logistic model over the features below, fitted on the answering sentences readers
# labelled (benchmarks/calibrate_quotes.py, dev splits only; docs/benchmarks.md). Order as QUOTE_FEATURES.
QUOTE_FEATURES = ("cosine", "coverage", "focus", "untitled", "first", "position", "claim", "words", "cosine_lead",
                  "focus_lead", "number", "how_method", "how_result", "how_first", "define")
QUOTE_MEAN = (0.4964, 0.2177, 0.2711, 0.1254, 0.1244, 0.5000, 0.3839, 3.1159, -0.1242, -0.4654, 0.0567, 0.0592, 0.0426,
              0.0251, 0.0255)
QUOTE_SCALE = (0.1626, 0.2400, 0.2931, 0.2029, 0.3301, 0.3275, 0.4863, 0.4086, 0.1004, 0.3191, 0.2314, 0.2360, 0.2019,
               0.1565, 0.1577)
QUOTE_WEIGHTS = (0.0366, -0.1260, 0.2392, 0.2418, -0.3822, -0.1640, 0.5711, 0.1253, 0.0593, 0.2197, 0.3772, 0.4095,
                 -0.2365, -0.2259, 0.1031)
QUOTE_BIAS = -1.4478


@dataclass(frozen=True)
class ScoredSentence:
    quote: Quote
    cosine: float  # to the question
    coverage: float  # IDF-weighted share of the question's content terms in the sentence
    titled: float  # the same share counting the paper's title too (read as the sentence's context)
    focus: float = 0.0  # the share of the question's terms weighted by how few of the paper's sentences hold them
    untitled: float = 0.0  # the share of the question's terms that are not in the title (its focus, not its topic)
    first: float = 0.0  # 1 for the abstract's first sentence (its setting, most often)
    position: float = 0.0  # where it stands in the abstract, 0 (first) to 1 (last)
    claim: float = 0.0  # 1 when it speaks for the paper ("we", "our", "this paper") about the question's terms
    words: float = 0.0  # its length, log(1 + words)
    cosine_lead: float = 0.0  # its cosine minus the paper's best sentence's (0 for that one)
    focus_lead: float = 0.0  # its focus share minus the paper's best
    number: float = 0.0  # 1 when the question asks for a quantity and the sentence states a number
    how_method: float = 0.0  # 1 when the question asks how and the sentence states the paper's method
    how_result: float = 0.0  # 1 when the question asks how and the sentence reports results
    how_first: float = 0.0  # 1 when the question asks how and this is the abstract's first sentence
    define: float = 0.0  # 1 when the question asks what a name is and the sentence introduces it ("… (BMT): a …")
    # Not read by the model; which of the ordered sentences may be quoted (`quotes_of`):
    points: bool = False  # it says where the code or the paper's page is ("Code is available at https://…")
    method: bool = False  # it states the paper's method ("we propose …")
    results_only: bool = False  # it reports results and states no method, to a question not asking for a number

    @property
    def score(self) -> float:
        """How likely the sentence is the one that answers (the fitted model's log-odds): which are quoted."""
        z = QUOTE_BIAS
        for w, name, m, sd in zip(QUOTE_WEIGHTS, QUOTE_FEATURES, QUOTE_MEAN, QUOTE_SCALE, strict=True):
            z += w * (getattr(self, name) - m) / sd
        return z

    @property
    def probability(self) -> float:
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, self.score))))

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
                    title: str = "", quantity: bool = False, how: bool = False,
                    said: Mapping[str, tuple[frozenset[str], ...]] | None = None,
                    asked: Sequence[str] = ()) -> list[ScoredSentence]:
    """The paper's sentences scored against the question, best quote first (ties keep abstract order).

    A sentence is quoted for what it says itself; the paper's title counts only in `answer`, so a
    sentence does not win the quote by repeating the title's words. A question term that most of the
    paper's sentences hold (its topic) says less about which sentence answers than one a single
    sentence holds (its focus: "discriminator" in "how do discriminators help flow matching models?").
    `quantity`: the question asks for a number ("how much faster …?"), which a sentence stating one may give.
    `how`: the question asks how something is done, which the sentence stating the method answers, more than
    the one reporting results or setting the scene.
    `said`: the question's general terms and the names that say them (retrieval/instances.py): a sentence naming
    "Llama 3" holds "LLM".
    `asked`: the names the question asks to have explained ("What is BMT?": paperbot/text.py `asked_names`), which
    the sentence introducing them answers ("We call the method Bit-Mask Tuning (BMT): a learnable binary mask …"),
    more than one that only uses them ("BMT reaches FPT accuracy …").
    """
    if not quotes:
        return []
    cosines = vectors.astype(np.float32) @ qvec.astype(np.float32)
    said = said or {}
    in_title = holding(set(tokenize(title)), said) if title else set()
    tokens = [holding(set(tokenize(q.text)), said) for q in quotes]
    n = len(quotes)
    rarity = {t: w * (1 - sum(t in ts for ts in tokens) / n) for t, w in terms.items()}
    rare_total = sum(v for t, v in rarity.items() if any(t in ts for ts in tokens)) or 1.0
    off_title = sum(w for t, w in terms.items() if t not in in_title) or 1.0
    focus = [sum(v for t, v in rarity.items() if t in held) / rare_total for held in tokens]
    best_cosine, best_focus = float(cosines.max()), max(focus)
    scored = []
    for i, (quote, cosine, held) in enumerate(zip(quotes, cosines, tokens)):
        coverage = sum(w for t, w in terms.items() if t in held)
        method, result = states_method(quote.text), states_result(quote.text)
        titled = coverage + sum(w for t, w in terms.items() if t in in_title and t not in held)
        scored.append(ScoredSentence(
            quote, float(cosine), coverage, titled, focus=focus[i],
            untitled=sum(w for t, w in terms.items() if t in held and t not in in_title) / off_title,
            first=float(i == 0), position=i / (n - 1) if n > 1 else 0.0,
            claim=float(coverage > 0 and claims_for_paper(quote.text)), words=math.log1p(len(quote.text.split())),
            cosine_lead=float(cosine) - best_cosine, focus_lead=focus[i] - best_focus,
            number=float(quantity and states_number(quote.text)),
            how_method=float(how and method), how_result=float(how and result), how_first=float(how and i == 0),
            define=float(any(defines(quote.text, name) for name in asked)),
            points=points_elsewhere(quote.text), method=method,
            results_only=not quantity and result and not method))
    return sorted(scored, key=lambda s: -s.score)


def best_answer(scored: Sequence[ScoredSentence]) -> float | None:
    """The paper's answer score: its best sentence's, read with the title; None without sentences."""
    return max((s.answer for s in scored), default=None)


def quotes_of(scored: Sequence[ScoredSentence], code: bool = False) -> tuple[Quote, ...]:
    """The best sentence, and the second best when it is nearly as good (and the first is not long), or when the
    first is too short to say more than a name; never a sentence saying where the code is (unless there is
    nothing else), nor, beside one stating the method, one that only reports results. To a question asking for
    the code (`code`), the best sentence saying where it is, beside the best of the others."""
    pointing = [s for s in scored if s.points]
    others = [s for s in scored if not s.points]
    if code and pointing:
        return tuple(s.quote for s in [pointing[0], *others[:1]])
    scored = others or list(scored)
    if not scored:
        return ()
    best = [scored[0]]
    first = scored[0]
    if len(scored) > 1 and (len(first.quote.text.split()) < SHORT_QUOTE_WORDS
                            or (scored[1].probability >= SECOND_QUOTE_SHARE * first.probability
                                and len(first.quote.text) < SECOND_QUOTE_MAX_FIRST)) \
            and not (first.method and scored[1].results_only):
        best.append(scored[1])
    return tuple(s.quote for s in best[:MAX_QUOTES])
