"""Follow-up questions read against the earlier turns of a conversation: pure functions, no I/O.

A front end gathers the history (Discord: the reply chain, the thread, the DM; the
chat REPL: the same) as `Turn`s, each an earlier question and the ids of the papers
its answer cited, in citation order. `resolve` turns a follow-up into what to search:

* references to cited papers ("[2]", "paper 3", "the second paper", "compare 1 and 3")
  scope the answer to those papers, each cited (`pinned`);
* "it", "that one", "they", "these", "which of these …" scope it to the papers cited
  last, and retrieval decides which of them answer (not pinned);
* elliptical questions ("and for vision models?", "any with code?") are searched
  together with the question they continue.

A question that refers to nothing earlier is searched as asked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from paperbot.text import content_words as text_content_words
from paperbot.text import split_sentences
from retrieval.types import Quote

MAX_TURNS = 6  # earlier turns a follow-up may lean on
MAX_HISTORY_CHARS = 2000  # of earlier questions, newest kept first
MAX_QUERY_CHARS = 300  # of a query made from a conversation (or a rewrite by the LLM: retrieval/qa.py)


@dataclass(frozen=True)
class Turn:
    """One earlier exchange: the question as asked, and the papers its answer cited ([1] first)."""

    question: str
    cited: tuple[str, ...] = ()


@dataclass(frozen=True)
class FollowUp:
    """What to search for a question read in its conversation."""

    question: str  # as asked
    query: str  # what to search
    papers: tuple[str, ...] = ()  # answer only from these papers (empty: the whole corpus)
    pinned: bool = False  # the user named these papers: cite each of them

    @property
    def standalone(self) -> bool:
        return self.query == self.question and not self.papers


_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "1st": 1, "2nd": 2, "3rd": 3,
             "4th": 4, "5th": 5}
_BRACKET = re.compile(r"\[\s*(\d{1,2})\s*\]")
_NUMBERED = re.compile(r"\b(?:papers?|results?|sources?|refs?|references?|citations?|numbers?|no\.|#)\s*"
                       r"(\d{1,2}(?:\s*(?:,|and|&|or|vs\.?|versus|to)\s*\d{1,2})*)\b", re.IGNORECASE)
_ORDINAL = re.compile(r"\b(?:the\s+)?(first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th|last)"
                      r"(?:\s+(?:one|paper|result|source|work|article|study|method))?\b", re.IGNORECASE)
_ORDINAL_NEEDS_NOUN = re.compile(r"\b(first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th|last)"
                                 r"\s+(?:one|paper|result|source|work|article|study|method)s?\b|\bthe\s+"
                                 r"(first|second|third|fourth|fifth|last)\b", re.IGNORECASE)
_COMPARE = re.compile(r"\b(?:compare|comparing|comparison|versus|vs\.?|differ(?:ence|ences)?\s+between|between)\b",
                      re.IGNORECASE)
_BARE_NUMBER = re.compile(r"(?<![\w.-])(\d{1,2})(?![\w.-])")
# "that one", "these" always point back; "it" and "they" only in a short question ("does it use RL?"),
# since a longer one usually uses them on its own ("is it possible to prune LLMs without retraining?").
_SINGULAR = re.compile(r"\b(?:that|this)\s+(?:one|paper|work|article|study|method|approach)\b", re.IGNORECASE)
_SINGULAR_WEAK = re.compile(r"\b(?:it|its|itself)\b", re.IGNORECASE)
_PLURAL = re.compile(r"\b(?:these|those|(?:these|those|the)\s+(?:ones|papers|works|methods|results)|"
                     r"(?:of|among)\s+(?:these|those|them)|which\s+of\s+(?:these|those|them))\b", re.IGNORECASE)
_PLURAL_WEAK = re.compile(r"\b(?:they|them|their|theirs)\b", re.IGNORECASE)
WEAK_REFERENCE_WORDS = 3  # content words at most, for "it"/"they" to count as a reference
_ELLIPSIS_START = re.compile(r"^\s*(?:and|also|or|but|plus|what\s+about|how\s+about|and\s+what\s+about|"
                             r"what\s+of|same\s+(?:for|with)|now\s+for|only|just|any|anything|ones?)\b[\s,]*", re.IGNORECASE)
_WH = re.compile(r"^\s*(?:who|what|which|when|where|why|how|is|are|do|does|did|can|could|should|would|will|"
                 r"list|show|find|give|tell|explain|summari[sz]e|compare)\b", re.IGNORECASE)
# Words that point at earlier answers or frame a request; with the toolkit's stopwords, never a topic.
REFERENCE_WORDS = frozenset(
    "paper papers one ones tell more show explain please compare versus vs difference differences work works result "
    "results source sources number first second third fourth fifth last use uses used using describe summarize "
    "summarise".split())


def content_words(text: str) -> set[str]:
    """The stems of the topic words of `text` (numbers are references, not topics)."""
    return {w for w in text_content_words(text, ignore=REFERENCE_WORDS) if not w.isdigit()}


def bounded(history: Sequence[Turn], max_turns: int = MAX_TURNS, max_chars: int = MAX_HISTORY_CHARS) -> list[Turn]:
    """The newest turns that fit: at most `max_turns`, their questions at most `max_chars` together."""
    kept: list[Turn] = []
    used = 0
    for turn in reversed(history[-max_turns:] if max_turns else []):
        used += len(turn.question)
        if kept and used > max_chars:
            break
        kept.append(Turn(turn.question[:max_chars], turn.cited))
    return kept[::-1]


def _referenced_numbers(question: str, n_cited: int) -> list[int]:
    numbers: list[int] = [int(m) for m in _BRACKET.findall(question)]
    for m in _NUMBERED.finditer(question):
        numbers += [int(d) for d in re.findall(r"\d{1,2}", m.group(1))]
    for m in _ORDINAL_NEEDS_NOUN.finditer(question):
        word = (m.group(1) or m.group(2)).lower()
        numbers.append(n_cited if word == "last" else _ORDINALS[word])
    if _COMPARE.search(question):
        numbers += [int(d) for d in _BARE_NUMBER.findall(_BRACKET.sub(" ", question))]
    return [n for n in dict.fromkeys(numbers) if 1 <= n <= n_cited]


def _strip_references(question: str) -> str:
    text = _BRACKET.sub(" ", question)
    text = _NUMBERED.sub(" ", text)
    text = _ORDINAL_NEEDS_NOUN.sub(" ", text)
    for pattern in (_PLURAL, _PLURAL_WEAK, _SINGULAR, _SINGULAR_WEAK):
        text = pattern.sub(" ", text)
    return " ".join(text.split())


def _is_elliptical(question: str) -> bool:
    if _ELLIPSIS_START.match(question):
        return True
    return len(content_words(question)) <= 2 and not _WH.match(question) and len(question.split()) <= 4


def _join(*parts: str) -> str:
    words = [w for p in parts for w in p.split() if any(c.isalnum() for c in w)]
    query = " ".join(words)
    return query[:MAX_QUERY_CHARS].strip()


def topic(history: Sequence[Turn]) -> str:
    """What the conversation is about: each question read against the ones before it, the last one winning.

    A question about earlier papers ("which of these uses GRPO?") narrows the topic rather than replacing it.
    """
    current = ""
    for i, turn in enumerate(history):
        f = _resolve(" ".join(turn.question.split()), history[:i], current)
        current = _join(current, f.query) if f.papers and f.query != current else f.query
    return current


def resolve(question: str, history: Sequence[Turn]) -> FollowUp:
    """`question` read against `history` (oldest first): what to search and which papers it is about."""
    question = " ".join(question.split())
    history = bounded(history)
    return _resolve(question, history, topic(history))


def _resolve(question: str, history: Sequence[Turn], earlier: str) -> FollowUp:
    if not history or not question:
        return FollowUp(question, question)
    last_cited = next((t.cited for t in reversed(history) if t.cited), ())

    numbers = _referenced_numbers(question, len(last_cited))
    if numbers:
        papers = tuple(last_cited[n - 1] for n in numbers)
        rest = _strip_references(_COMPARE.sub(" ", question) if _COMPARE.search(question) else question)
        rest = " ".join(w for w in rest.split() if not w.isdigit() and w.lower() not in {"and", "&", "or", ","})
        query = _join(rest) if content_words(rest) else earlier
        return FollowUp(question, query or question, papers, pinned=True)

    short = len(content_words(question)) <= WEAK_REFERENCE_WORDS
    plural = bool(_PLURAL.search(question) or (short and _PLURAL_WEAK.search(question)))
    singular = bool(_SINGULAR.search(question) or (short and _SINGULAR_WEAK.search(question)))
    if last_cited and (plural or singular):
        papers = last_cited[:1] if singular and not plural and len(last_cited) == 1 else last_cited
        rest = _strip_references(question)
        query = _join(rest) if content_words(rest) else earlier
        return FollowUp(question, query or question, papers, pinned=False)

    if _is_elliptical(question) and earlier:
        rest = _ELLIPSIS_START.sub("", question, count=1)
        return FollowUp(question, _join(earlier, rest))
    return FollowUp(question, question)


# -- quoting a named paper that retrieval did not rank ---------------------------------------

def best_sentence(abstract: str, query: str) -> Quote:
    """The abstract's sentence sharing the most words with `query` (the first on a tie), verbatim."""
    want = set(content_words(query))
    best: Quote | None = None
    best_score = -1
    for span in split_sentences(abstract):
        text = abstract[span.start:span.end]
        score = len(want & content_words(text))
        if score > best_score:
            best, best_score = Quote(text, span.start, span.end), score
    return best or Quote(abstract, 0, len(abstract))
