"""The policy: what becomes of each sentence of a reply (shown, re-cited, shown as a hedge or removed, and why),
and of the whole reply."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from paperbot.language import guess_language
from paperbot.text import GENERIC_WORDS, WIDE_END, content_words, words
from retrieval.grounding.debris import CITE, META
from retrieval.grounding.facts import NOT_A_CLAIM, Evidence, fact_problem, names, numbers
from retrieval.grounding.meaning import Meaning, TokenEncoder
from retrieval.grounding.passage import Passage

SUPPORT_THRESHOLD = 0.66  # calibrated: benchmarks/llm_grounding.py --sweep (docs/llm.md)
MIN_WORDS = 3  # content words a checked sentence needs; shorter ones are filler ("Yes [1].")
HEDGE_MARK = "ⓘ"  # before a sentence that says what the passages do not cover (it cites nothing)


# -- hedges -----------------------------------------------------------------------------------

_HEDGE = re.compile(
    r"^\W*(?:(?:however|but|unfortunately|note that|so),?\s+)?"
    r"(?:(?:beyond|apart from|besides|other than|except for)\s+[^,.;]{1,80},\s*)?(?:"
    r"(?:the|these|this)?\s*(?:provided\s+|given\s+|retrieved\s+|available\s+|quoted\s+|cited\s+|above\s+)?"
    r"(?:passages?|abstracts?|sources?|excerpts?|quotes?)\s+(?:itself\s+|themselves\s+|alone\s+)?"
    r"(?:do(?:es)?\s+not|don['’]t|doesn['’]t|did\s+not|never|(?:gives?|reports?|provides?|mentions?|states?|"
    r"includes?|offers?|contains?)\s+no|(?:says?|mentions?|reports?|states?|tells?(?:\s+us)?)\s+nothing|"
    r"(?:is|are)\s+silent)\b"
    r"|none of the (?:(?:retrieved|provided|cited|given|quoted)\s+)?(?:passages|abstracts|papers|sources|excerpts)\b"
    r"|no passage\b|nothing in (?:the|this|these)\s+(?:passages?|abstracts?|excerpts?)\b"
    r"|(?:the|this)\s+(?:passage|abstract|excerpt)s?\s+(?:is|are)\s+cut\s+off\b"
    r"|(?:the|this)\s+(?:passage|abstract|excerpt)s?\s+(?:cannot|can['’]t)\s+(?:tell|show|confirm|answer)\b"
    r"|(?:the|this)\s+(?:passage|abstract|excerpt)s?\s+leaves?\s+(?:[\w'’-]+\s+){1,8}?"
    r"(?:unspecified|unstated|unexplained|undescribed|unclear|open)\b"
    r"|(?:the|this)\s+(?:passage|abstract|excerpt)s?\s+(?:only\s+)?refers?\s+to\s+[^.;]{1,80}?\s+without\s+"
    r"(?:describing|stating|explaining|saying|naming|specifying|defining|listing)\b"
    r"|it is (?:not|un)(?:clear|stated|specified|known|reported)\b"
    r"|(?:this|that|it) is not (?:stated|reported|described|specified|covered|given|mentioned)\b"
    r"|there is no (?:information|mention|detail)\b"
    r"|(?:no\s+(?:[\w'’-]+\s+){1,6}(?:is|are|was|were)|(?:[\w'’-]+\s+){1,6}(?:is|are|was|were)\s+not)\s+"
    r"(?:given|stated|reported|provided|mentioned|specified|described|explained|detailed|discussed)\s+"
    r"in\s+(?:the|this|these)\s+(?:passages?|abstracts?|excerpts?|sources?)\b"
    r"|(?:it|they|the (?:paper|authors?|study|work|abstract))\s+(?:does|do)\s+not\s+(?:say|explain|state|describe|"
    r"specify|mention|report|detail|give|discuss|quantify|address|clarify|reveal|show|list|define|elaborate)\b"
    r"|(?:the|this)\s+(?:passage|abstract|excerpt)s?\s+(?:[\w'’,;\"“”-]+\s+){1,14}?"
    r"(?:but|yet|so\s+it|and|it)\s+(?:does|do)\s+not\s+"
    r"(?:say|explain|state|describe|specify|spell|mention|report|detail|give|name|clarify|reveal|show|tell|list|"
    r"define|elaborate)\b"
    r"|[^.;]{0,120}?\bnot\s+(?:spelled\s+out|detailed|described|explained|specified|given|stated|defined|listed|"
    r"reported|discussed|elaborated|covered|shown)\s+(?:in|by)\s+(?:the|this|these)\s+"
    r"(?:passages?|excerpts?|abstracts?)\b"
    r"|[^.;]{0,120}?\bcannot\s+be\s+(?:determined|inferred|told|judged|established|confirmed)\s+from\s+"
    r"(?:the|this|these)\s+(?:passages?|excerpts?|abstracts?)\b)"
    r"|(?:段落|文中|摘要|摘录|节选|这些段落|所给段落|该段落|引用段落|引文|材料|资料)(?:片段)?(?:本身)?(?:中|里)?(?:并)?(?:没有|未|没)(?:有)?"
    r"(?:专门|详细|具体|明确|直接|分别)?(?:说明|介绍|量化|描述|提及|提到|给出|列出|列举|写明|阐明|阐述|提供|报告|指出|涉及|比较|解释|"
    r"讨论|交代|出现)"
    r"|不清楚|尚不明确|未说明|未提及|没有提到|没有说明", re.I)


def is_hedge(sentence: str) -> bool:
    """A sentence that says what the passages do not cover, recognized by its form."""
    return bool(_HEDGE.search(CITE.sub("", sentence)))


# -- the check of one sentence ----------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """What becomes of one sentence: `shown` (empty when removed), or the `reason` (a removal kind) and `why`."""

    sentence: str
    shown: str = ""
    reason: str | None = None  # echo, filler, unsupported, uncited, fact, uncheckable
    why: str = ""
    checked: bool = False  # a claim its passage supports (hedges and removed sentences are not)
    recited: bool = False
    score: float = 0.0


class Checker:
    """Judges the sentences of one reply against its passages, one at a time (see the module docstring)."""

    def __init__(self, passages: Sequence[Passage], encoder: TokenEncoder | None = None, *, question: str = "",
                 threshold: float | None = None) -> None:
        self.passages = list(passages)
        self.by_n = {p.n: p for p in self.passages}
        self.threshold = SUPPORT_THRESHOLD if threshold is None else threshold
        self.asked = frozenset(content_words(question, ignore=GENERIC_WORDS))
        self.asked_evidence = Evidence.of(question) if question.strip() else None
        self.everything = Evidence.of(" ".join(f"{p.label}: {p.text}" for p in self.passages))
        self.meaning = Meaning(self.passages, encoder)

    def _evidence(self, ns: Sequence[int]) -> Evidence:
        if len(ns) == 1:
            return self.by_n[ns[0]].evidence or Evidence.of(self.by_n[ns[0]].text)
        return Evidence.of(" ".join(f"{self.by_n[n].label}: {self.by_n[n].text}" for n in ns))

    def judge(self, sentence: str) -> Decision:
        cited = [n for n in dict.fromkeys(int(x) for x in CITE.findall(sentence)) if n in self.by_n]
        bare = " ".join(NOT_A_CLAIM.sub(" ", CITE.sub(" ", sentence)).split())  # what is checked
        bare = re.sub(r"\s+([.,;:!?。，；：！？])", r"\1", bare)
        if not bare or not self.passages:
            return Decision(sentence, reason="filler", why="nothing to check")
        english = guess_language(bare) == "en"
        if is_hedge(bare):
            problem = fact_problem(bare, self.everything, self.asked_evidence, number_words=False, denials=False,
                                   scope=False)
            if problem:
                return Decision(sentence, reason="fact", why=problem)
            return Decision(sentence, shown=f"{HEDGE_MARK} {bare}")
        if META.search(bare):
            return Decision(sentence, reason="echo", why="talks about the prompt")
        if re.match(r"\s*\[\d{1,3}\]", sentence):
            return Decision(sentence, reason="echo", why="lists a passage")
        claimed = content_words(bare, ignore=GENERIC_WORDS)
        if (english and (len(claimed) < MIN_WORDS or not claimed - self.asked)
                and not any(_names_title(bare, self.by_n[n]) for n in cited)):
            return Decision(sentence, reason="filler", why="says nothing beyond the question")
        anchored = bool(numbers(bare) or names(bare) or re.search(r"[A-Za-z]{3}", bare))
        if not english and not anchored:
            return Decision(sentence, reason="uncheckable", why="no name, term or number to check it by")
        tokens = self.meaning.sentence_tokens(bare) if english else None

        def supported(ns: Sequence[int]) -> tuple[bool, str, float]:
            problem = fact_problem(bare, self._evidence(ns), self.asked_evidence, latin_terms=not english)
            if problem:
                return False, problem, 0.0
            if not english:
                return True, "", 1.0  # every anchor is in the passage
            score = self.meaning.score(bare, ns, tokens, self.asked)
            if len(ns) > 1 and min(self.meaning.score(bare, [n], tokens, self.asked) for n in ns) < self.threshold / 2:
                return False, "not supported by every passage it cites", score  # each cited passage contributes
            return score >= self.threshold, "" if score >= self.threshold else "not supported", score

        why, best = "", 0.0
        if cited:
            ok, why, best = supported(cited)
            if ok:
                return Decision(sentence, shown=sentence, checked=True, score=best)
        candidates = []
        for p in self.passages:
            if [p.n] == cited:
                continue
            ok, _, score = supported([p.n])
            if ok:
                candidates.append((score, p.n))
        if candidates:
            score, n = max(candidates)
            return Decision(sentence, shown=_cite(bare, [n]), checked=True, recited=bool(cited), score=score)
        if not cited:
            return Decision(sentence, reason="uncited", why="cites no passage, and none supports it")
        reason = "fact" if why and not why.startswith("not supported") else "unsupported"
        return Decision(sentence, reason=reason, why=why or "not supported", score=best)


def _names_title(sentence: str, passage: Passage) -> bool:
    """`sentence` says the title of `passage` (a label of three words or more, or its start where it is cut short):
    "Yes — “Taming data-hungry RL” studies this [1]" tells which paper, even where the question holds every word."""
    title = words(passage.label.replace("…", " "))
    said = words(sentence)
    return len(title) >= 3 and any(said[i:i + len(title)] == title for i in range(len(said) - len(title) + 1))


# -- a whole reply ----------------------------------------------------------------------------


@dataclass
class Grounding:
    """What became of a reply: the text shown (empty when nothing is checked) and why things were removed."""

    text: str
    used: list[int] = field(default_factory=list)
    removed: dict[str, int] = field(default_factory=dict)  # reason → sentences (or lines) removed
    recited: int = 0  # sentences given another passage's number
    decisions: list[Decision] = field(default_factory=list)

    def count(self, reason: str, n: int = 1) -> None:
        if n:
            self.removed[reason] = self.removed.get(reason, 0) + n

    @property
    def problem(self) -> str | None:
        """Why nothing is shown: the commonest removal reason, or None when text is left."""
        if self.text:
            return None
        return max(self.removed, key=lambda why: self.removed[why]) if self.removed else "empty"


def _cite(sentence: str, numbers_: Sequence[int]) -> str:
    """`sentence` with `numbers_` cited before its final punctuation."""
    marks = "".join(f"[{n}]" for n in numbers_)
    m = re.search(r"([.!?。！？]+)$", sentence)
    if m:
        return f"{sentence[: m.start()].rstrip()} {marks}{m.group(1)}"
    return f"{sentence} {marks}"


def join_sentences(sentences: Sequence[str]) -> str:
    """Sentences as one text: a space between them, none after Chinese punctuation."""
    out = ""
    for s in sentences:
        if out and not WIDE_END.search(out):
            out += " "
        out += s
    return out
