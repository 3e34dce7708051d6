"""Follow-up questions read against the earlier turns of a conversation: pure functions, no I/O.

A front end gathers the history (Discord: the reply chain, the thread, the DM; the chat
REPL: the same) as `Turn`s: an earlier question, the papers its answer cited and the papers
it showed (an abstention shows its closest papers, numbered like citations). `resolve` turns
a follow-up into what to search (`FollowUp`), by one rule per kind, in English and Chinese:

* **explicit** references ("[2]", "paper 3", "the second one", "the first two", "compare 1
  and 3", "第二篇", "前两篇", "比较 1 和 3") name papers shown last: each is cited (`pinned`);
* **pronouns** ("it", "this method", "它", "该方法") mean the paper the last answer was about:
  its only citation, or (`single`) the cited paper the follow-up's terms match best;
* **scope** ("which of these / them", "do they …", "其中哪些") is answered from the papers shown
  last, including an abstention's closest papers; when none of them answers, from the papers
  the conversation's topic retrieves (`topic`), as "More sources" lists them;
* **code** questions ("any with code?", "is the code available?", "有代码吗？") are scope
  questions answered by the papers whose abstracts say their code is released (`code`);
* an **ellipsis** ("and for vision models?", "那世界模型呢？") is joined to the topic when it lacks
  a topic of its own; one that has its own (`alone`) is searched alone first, and stays alone
  when that retrieves well (a **topic change**: "and is there work on molecules?");
* any other question is searched as asked.

Queries stay readable (they appear as "searched for: …"): a pronoun or a reference is
replaced by the paper's short label when the turn carries labels, else the question is
searched as asked; nothing is cut out of it. Chinese text is left as asked here and
translated where it is searched (retrieval/translate.py); its terms, translated, decide
how much topic a Chinese follow-up has and whether it overlaps the conversation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from paperbot.text import REFERENCE_WORDS, content_words
from paperbot.text import HAN_CHAR, ZH_DIGITS, search_text, split_sentences, stem
from retrieval.types import Quote

MAX_TURNS = 6  # earlier turns a follow-up may lean on
MAX_HISTORY_CHARS = 2000  # of earlier questions, newest kept first
MAX_QUERY_CHARS = 300  # of a query made from a conversation (or a rewrite by the LLM: retrieval/qa.py)
OWN_TOPIC_TERMS = 3  # content terms an elliptical follow-up needs to be a topic of its own
SHORT_LABEL_WORDS = 4  # a label this short stands in for "it" in the search query


@dataclass(frozen=True)
class Turn:
    """One earlier exchange: the question as asked, the papers its answer cited ([1] first), and the papers it
    showed (an abstention's closest papers; empty: the cited ones), with their labels as shown when known."""

    question: str
    cited: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()  # aligned with `listed`

    @property
    def listed(self) -> tuple[str, ...]:
        """The papers the answer numbered [1], [2], …: its citations, or the closest papers of an abstention."""
        return self.shown or self.cited


@dataclass(frozen=True)
class FollowUp:
    """What to search for a question read in its conversation."""

    question: str  # as asked
    query: str  # what to search
    papers: tuple[str, ...] = ()  # answer only from these papers (empty: the whole corpus)
    pinned: bool = False  # the user named these papers: cite each of them
    kind: str = "fresh"  # fresh, explicit, pronoun, scope, code, ellipsis
    single: bool = False  # a pronoun: answer from the one paper of `papers` the query matches best
    code: bool = False  # asks which papers release code
    topic: str = ""  # the conversation's topic: a scope question widens to what it retrieves
    alone: str = ""  # the follow-up's own topic: searched alone first (a topic change when that retrieves well)

    @property
    def standalone(self) -> bool:
        return self.query == self.question and not self.papers and not self.alone


# -- words ------------------------------------------------------------------------------------

def terms(text: str) -> set[str]:
    """Content words of `text` in English: Chinese is translated first (retrieval/translate.py)."""
    if HAN_CHAR.search(text):
        from retrieval.translate import english_query

        text = english_query(text)
    return content_words(text, ignore=REFERENCE_WORDS, topics_only=True)


def bounded(history: Sequence[Turn], max_turns: int = MAX_TURNS, max_chars: int = MAX_HISTORY_CHARS) -> list[Turn]:
    """The newest turns that fit: at most `max_turns`, their questions at most `max_chars` together."""
    kept: list[Turn] = []
    used = 0
    for turn in reversed(history[-max_turns:] if max_turns else []):
        used += len(turn.question)
        if kept and used > max_chars:
            break
        kept.append(Turn(turn.question[:max_chars], turn.cited, turn.shown, turn.labels))
    return kept[::-1]


# -- explicit references ------------------------------------------------------------------------

_NOUN = r"(?:one|paper|result|source|work|article|study|method|entry)"
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4,
             "5th": 5}
_COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5, "2": 2, "3": 3, "4": 4, "5": 5}
_ZH_NUMBERS = {**ZH_DIGITS, **{str(n): n for n in range(1, 6)}}
_BRACKET = re.compile(r"[\[【［]\s*(\d{1,2})\s*[\]】］]")
_NUMBERED = re.compile(r"\b(?:papers?|results?|sources?|refs?|references?|citations?|numbers?|no\.|#)\s*"
                       r"(\d{1,2}(?:\s*(?:,|and|&|or|vs\.?|versus|to)\s*\d{1,2})*)\b", re.IGNORECASE)
_ORDINAL = re.compile(rf"\b(first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th|last)\s+{_NOUN}s?\b|"
                      r"\bthe\s+(first|second|third|fourth|fifth|last)\b", re.IGNORECASE)
_FIRST_N = re.compile(rf"\b(?:the\s+)?(?:first|top)\s+(two|three|four|five|[2-5])(?:\s+{_NOUN}s?)?\b", re.IGNORECASE)
_ZH_ORDINAL = re.compile(r"第\s*([一二三四五1-5])\s*(?:篇|个|项|份|条|种)|(?:论文|文章)\s*([1-5])(?![\d])")
_ZH_LAST = re.compile(r"最后(?:一|那)?(?:篇|个|项)")
_ZH_FIRST_N = re.compile(r"前\s*([两二三四五2-5])\s*(?:篇|个|项)")
_COMPARE = re.compile(r"\b(?:compare|comparing|comparison|versus|vs\.?|differ(?:s|ence|ences)?|between)\b|比较|对比|区别|不同|相比",
                      re.IGNORECASE)
_BARE_NUMBER = re.compile(r"(?<![A-Za-z0-9.-])(\d{1,2})(?![A-Za-z0-9-]|\.\d)")


def _referenced_numbers(question: str, n_listed: int) -> list[int]:
    numbers: list[int] = [int(m) for m in _BRACKET.findall(question)]
    for m in _NUMBERED.finditer(question):
        numbers += [int(d) for d in re.findall(r"\d{1,2}", m.group(1))]
    for m in _FIRST_N.finditer(question):
        numbers += list(range(1, _COUNTS[m.group(1).lower()] + 1))
    for m in _ORDINAL.finditer(question):
        word = (m.group(1) or m.group(2)).lower()
        numbers.append(n_listed if word == "last" else _ORDINALS[word])
    for m in _ZH_ORDINAL.finditer(question):
        numbers.append(_ZH_NUMBERS[m.group(1) or m.group(2)])
    for m in _ZH_FIRST_N.finditer(question):
        numbers += list(range(1, _ZH_NUMBERS[m.group(1)] + 1))
    if _ZH_LAST.search(question):
        numbers.append(n_listed)
    if _COMPARE.search(question):
        numbers += [int(d) for d in _BARE_NUMBER.findall(_BRACKET.sub(" ", question))]
    return [n for n in dict.fromkeys(numbers) if 1 <= n <= n_listed]


_REFERENCE_TEXT = (_BRACKET, _NUMBERED, _FIRST_N, _ORDINAL, _ZH_ORDINAL, _ZH_FIRST_N, _ZH_LAST)


def _without_references(question: str) -> str:
    """`question` without its references to numbered papers or their numbers (to see what else it asks)."""
    text = question
    for pattern in _REFERENCE_TEXT:
        text = pattern.sub(" ", text)
    if _COMPARE.search(question):
        text = _COMPARE.sub(" ", _BARE_NUMBER.sub(" ", text))
    return text


# -- pronouns, scope, ellipsis, code -----------------------------------------------------------

_ZH_NOUN = r"(?:方法|论文|文章|工作|框架|模型|算法|系统)"
_SINGULAR = re.compile(r"\b(?:that|this)\s+(?:one|paper|work|article|study|method|approach|framework|model|"
                       r"technique|system|algorithm)\b|\bthe\s+(?:paper|method|approach|framework)\b|"
                       rf"该{_ZH_NOUN}|(?:这个|这种|此|那个){_ZH_NOUN}|(?:这篇|这项|那篇){_ZH_NOUN}?|它(?!们)",
                       re.IGNORECASE)
_IT = re.compile(r"\b(?:it|its|itself)\b", re.IGNORECASE)
# "it" that points at nothing: "is it possible to…", "it is known that…", "make it work"
_EXPLETIVE = re.compile(r"\bis\s+it\s+(?:possible|true|feasible|hard|easy|necessary|worth|better|common|known|"
                        r"a good idea)\b|\bit\s+(?:is|was|seems|appears)\b|\bmake\s+it\b", re.IGNORECASE)
_PLURAL = re.compile(r"\b(?:these|those|(?:the)\s+(?:ones|papers|works|methods|results)|(?:of|among)\s+(?:these|those|"
                     r"them)|which\s+of\s+(?:these|those|them)|any\s+of\s+(?:these|those|them))\b|"
                     r"其中|这些|那些|它们|这几(?:篇|个)|上面|以上|上述", re.IGNORECASE)
_PLURAL_WEAK = re.compile(r"\b(?:they|them|their|theirs)\b", re.IGNORECASE)
WEAK_REFERENCE_WORDS = 3  # content words at most, for "they" to count as a reference
_ELLIPSIS_START = re.compile(r"^\s*(?:and|also|or|but|plus|what\s+about|how\s+about|and\s+what\s+about|what\s+of|"
                             r"same\s+(?:for|with)|now\s+for|only|just|any|anything|ones?)\b[\s,]*|"
                             r"^\s*(?:那么|那|还有|另外|至于|而|如果是|换成)", re.IGNORECASE)
_ZH_ELLIPSIS_END = re.compile(r"(?:的|里|中|下)?呢\s*[？?]?\s*$")
_WH = re.compile(r"^\s*(?:who|what|which|when|where|why|how|is|are|do|does|did|can|could|should|would|will|"
                 r"list|show|find|give|tell|explain|summari[sz]e|compare)\b", re.IGNORECASE)
_CODE = re.compile(r"\b(?:code|codes|github|implementation|open[- ]?sourced?|source\s+code|repo|repository)\b|"
                   r"代码|源码|源代码|开源", re.IGNORECASE)
_CODE_STEMS = frozenset(stem(w) for w in "code codes github implementation open source sourced repo repository available "
                        "release releases released public publicly provide provided share shared".split())


def _code_question(question: str) -> bool:
    """Asks whether code is released, and nothing else ("any with code?", "is the code available?")."""
    return bool(_CODE.search(question)) and not terms(question) - _CODE_STEMS


_FRAMING = frozenset("which what who one ones is are was were does do did about of the any there papers paper work works "
                     "study studies among".split())


def _scope_topic(question: str) -> str:
    """What a scope question asks of the papers, without its framing: "Which of these is about instruction
    following?" → "instruction following" (the framing would weigh on retrieval's verdict); Chinese is kept
    as asked (its translation drops question words)."""
    if HAN_CHAR.search(question):
        return question
    words = _PLURAL_WEAK.sub(" ", _PLURAL.sub(" ", question)).strip().rstrip("?.!").split()
    while words and words[0].lower().strip(",") in _FRAMING:
        words.pop(0)
    topic = " ".join(words)
    return topic if content_words(topic, ignore=REFERENCE_WORDS, topics_only=True) else question


def _strip_ellipsis(question: str) -> str:
    return _ZH_ELLIPSIS_END.sub("", _ELLIPSIS_START.sub("", question, count=1)).strip()


def _is_elliptical(question: str) -> bool:
    if _ELLIPSIS_START.match(question) or (HAN_CHAR.search(question) and _ZH_ELLIPSIS_END.search(question)):
        return True
    if HAN_CHAR.search(question):
        return False  # a Chinese question without those markers is a question of its own
    own = content_words(question, ignore=REFERENCE_WORDS, topics_only=True)
    return len(own) <= 2 and not _WH.match(question) and len(question.split()) <= 4


def _join(*parts: str) -> str:
    words = [w for p in parts for w in p.split() if any(c.isalnum() for c in w)]
    return " ".join(words)[:MAX_QUERY_CHARS].strip()


def _short_label(turn: Turn | None, paper: str) -> str:
    if turn is None or not turn.labels:
        return ""
    for pid, label in zip(turn.listed, turn.labels):
        if pid == paper:
            label = " ".join(label.split())
            if label and not label.endswith("…") and len(label.split()) <= SHORT_LABEL_WORDS:
                return label
    return ""


def _name_paper(question: str, label: str) -> str:
    """The question with its first pronoun replaced by the paper's label ("Does it …" → "Does NV-CoT …")."""
    if not label:
        return question
    for pattern in (_SINGULAR, _IT):
        m = pattern.search(question)
        if m:
            possessive = m.group(0).lower() == "its"
            name = f"{label}'s" if possessive else label
            if HAN_CHAR.match(m.group(0)):
                name = f" {label} "
            return " ".join((question[:m.start()] + name + question[m.end():]).split())
    return question


# -- reading a follow-up ------------------------------------------------------------------------


def topic(history: Sequence[Turn]) -> str:
    """What the conversation is about: each question read against the ones before it, the last one winning.

    A question about earlier papers ("which of these uses GRPO?") narrows the topic rather than replacing it;
    a topic change replaces it.
    """
    current = ""
    for i, turn in enumerate(history):
        f = _resolve(" ".join(turn.question.split()), history[:i], current)
        if f.alone:
            current = f.alone
        elif f.papers and f.query != current:
            current = _join(current, f.query)
        else:
            current = f.query
    return current


def resolve(question: str, history: Sequence[Turn]) -> FollowUp:
    """`question` read against `history` (oldest first): what to search and which papers it is about.

    Chat noise (mentions, emoji, links, greetings: paperbot.text.search_text) is not part of it."""
    question = search_text(question) or " ".join(question.split())
    history = bounded(history)
    return _resolve(question, history, topic(history))


def _resolve(question: str, history: Sequence[Turn], earlier: str) -> FollowUp:
    if not history or not question:
        return FollowUp(question, question)
    shown_turn = next((t for t in reversed(history) if t.listed), None)
    listed = shown_turn.listed if shown_turn else ()
    latest = history[-1]

    numbers = _referenced_numbers(question, len(listed))
    if numbers:
        papers = tuple(listed[n - 1] for n in numbers)
        own = terms(_without_references(question))
        query = question if own else earlier
        if own and len(papers) == 1:
            label = _short_label(shown_turn, papers[0])
            query = _name_reference(question, label) if label else question
        return FollowUp(question, query or question, papers, pinned=True, kind="explicit", topic=earlier)

    code = _code_question(question)
    own_terms = terms(question) - _CODE_STEMS if code else terms(question)
    short = len(own_terms) <= WEAK_REFERENCE_WORDS
    plural = bool(_PLURAL.search(question) or (short and _PLURAL_WEAK.search(question)))
    singular = bool(_SINGULAR.search(question) or (_IT.search(question) and not _EXPLETIVE.search(question)))
    if plural and singular and len(latest.cited) == 1:
        plural = False  # "how many of them does it improve?" after a one-paper answer: that paper
    if singular and not plural and listed:
        if latest.cited:  # the paper the last answer was about
            cited = latest.cited
            if len(cited) == 1:
                label = _short_label(latest, cited[0])
                query = _name_paper(question, label) if own_terms else (earlier or question)
                return FollowUp(question, query, cited, pinned=True, kind="pronoun", code=code, topic=earlier)
            query = question if own_terms else earlier
            return FollowUp(question, query or question, cited, kind="pronoun", single=True, code=code, topic=earlier)
        plural = True  # the last answer abstained: "it" is one of the papers it listed
    if plural and listed:
        query = _scope_topic(question) if own_terms or code else earlier
        return FollowUp(question, query or question, listed, kind="code" if code else "scope", code=code,
                        topic=earlier)
    if code and listed:  # "any with code?", "is the code available?"
        return FollowUp(question, _join(earlier, question) if earlier else question, listed, kind="code", code=True,
                        topic=earlier)

    if _is_elliptical(question) and earlier:
        rest = _strip_ellipsis(question)
        joined = _join(earlier, rest)
        own = terms(rest)
        if len(own) >= OWN_TOPIC_TERMS or (len(own) >= 2 and _WH.match(rest)):
            if not _overlaps(own, history):  # nothing in common with the conversation: a new topic
                return FollowUp(question, rest, kind="fresh", topic=earlier)
            return FollowUp(question, joined, kind="ellipsis", topic=earlier, alone=rest)
        return FollowUp(question, joined, kind="ellipsis", topic=earlier)
    return FollowUp(question, question)


def _stem(word: str) -> str:
    return word[:5]  # of a stem: "optim" ~ "optimization", "molecul" ~ "molecular": enough to see a shared topic


def _overlaps(words: Iterable[str], history: Sequence[Turn]) -> bool:
    """Whether any of `words` is a content word of the conversation (its questions and the papers' labels)."""
    seen = {_stem(w) for t in history for w in terms(t.question + " " + " ".join(t.labels))}
    return any(_stem(w) in seen for w in words)


def _name_reference(question: str, label: str) -> str:
    """The question with its reference to one numbered paper replaced by the paper's label."""
    for pattern in _REFERENCE_TEXT:
        m = pattern.search(question)
        if m:
            name = f" {label} " if HAN_CHAR.search(m.group(0)) else label
            return " ".join((question[:m.start()] + name + question[m.end():]).split())
    return question


# -- quoting a named paper that retrieval did not rank ---------------------------------------

_CODE_RELEASE = re.compile(
    r"github\.com|huggingface\.co|gitlab\.com|\bcode\b[^.]{0,80}\b(?:available|released?|provided|public|open[- ]?"
    r"sourced?)\b|\b(?:release|open[- ]?source|provide|publish)\b[^.]{0,40}\b(?:code|implementation)\b|"
    r"\bimplementation\b[^.]{0,40}\bavailable\b|\bcode\s*:", re.IGNORECASE)


def _sentences(abstract: str):
    for span in split_sentences(abstract):
        yield Quote(abstract[span.start:span.end], span.start, span.end)


def best_sentence(abstract: str, query: str) -> Quote:
    """The abstract's sentence sharing the most words with `query` (the first on a tie), verbatim."""
    want = set(terms(query))
    best: Quote | None = None
    best_score = -1
    for quote in _sentences(abstract):
        score = len(want & content_words(quote.text, ignore=REFERENCE_WORDS, topics_only=True))
        if score > best_score:
            best, best_score = quote, score
    return best or Quote(abstract, 0, len(abstract))


def code_sentence(abstract: str) -> Quote | None:
    """The abstract's sentence saying its code is released (a repository link, "code is available"), verbatim."""
    for quote in _sentences(abstract):
        if _CODE_RELEASE.search(quote.text):
            return quote
    return None
