"""Question → cited answer, for async front ends (the Discord bot, the chat harness, `ask`).

Retrieval runs in a worker thread so the event loop stays free. With a language
model configured, and only when retrieval found relevant papers, the model
summarizes the retrieved sentences; its reply is untrusted and validated:

* citation numbers that were not in the prompt are removed;
* markdown links and images become plain text, bare URLs and control characters
  are removed, and the length is bounded by the caller (front ends know their
  limits; mentions are neutralized where text is shown, in the Discord layer);
* a reply left without a valid citation (or any failure of the endpoint) falls
  back to the extractive answer, with `fallback_reason` saying why;
* the quotes under the citations always come from the store, never from the model.

A question that does not look English is first rewritten by the model into an
English search query (the corpus is English); the answer is written in the
language of the question. Without a model, retrieval runs on the original text.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from paperbot.errors import LLMError
from paperbot.messages import ABSTRACT_PENDING
from retrieval import prompts
from retrieval.answer import citations_for, extractive_answer
from retrieval.filters import Filters
from retrieval.followup import FollowUp, Turn, best_sentence, resolve
from retrieval.library import Library
from retrieval.llm import LLMClient
from retrieval.types import Answer, Hit, SearchResult

log = logging.getLogger(__name__)

MAX_ANSWER_CHARS = 4000  # the default bound on an LLM answer; front ends may ask for less
MAX_QUERY_CHARS = 300
MAX_QUERY_WORDS = 24  # a longer reply is an answer or a ramble, not a search query
SCOPE_DEPTH = 25  # papers searched when a follow-up is about papers cited earlier
REWRITE_MAX_TOKENS = 64
LINK_REMOVED = "(link removed)"

OnText = Callable[[str], Any]


async def answer_question(library: Library, question: str, *, llm: LLMClient | None = None, k: int | None = None,
                          on_text: OnText | None = None, max_chars: int = MAX_ANSWER_CHARS,
                          history: Sequence[Turn] = (), filters: Filters | None = None) -> Answer:
    """The answer to `question`; `llm` summarizes when given, `on_text` gets the growing text.

    `on_text` may be a plain function or a coroutine function; it receives the whole
    answer so far (already sanitized) each time the streamed text grows. An LLM
    answer is cut to `max_chars` at a sentence boundary. `history` (oldest first) makes
    the question a follow-up: see retrieval/followup.py.
    """
    start = time.perf_counter()
    followup = resolve(question, history)
    query = followup.query
    search_query: str | None = None if followup.standalone else query
    endpoint_failed: str | None = None
    condensed = ""
    if llm is not None and llm.available and history:
        try:
            condensed = await condense_question(llm, question, history)
        except LLMError as exc:
            endpoint_failed = f"the LLM failed while reading the conversation: {exc}"
        if condensed:
            query = search_query = condensed
    if llm is not None and llm.available and not condensed and not endpoint_failed and not looks_english(query):
        try:
            query = await rewrite_query(llm, query) or query
        except LLMError as exc:
            endpoint_failed = f"the LLM failed while translating the question: {exc}"
        if query != question:
            search_query = query
    if followup.papers:
        result = await asyncio.to_thread(scoped_search, library, query, followup, k, filters)
    else:
        result = await asyncio.to_thread(library.search, query, k, filters)
    extractive = replace(extractive_answer(result), question=question, search_query=search_query)

    def fallback(reason: str) -> Answer:
        log.info("extractive answer instead of the LLM's: %s", reason)
        return replace(extractive, fallback_reason=reason, latency_ms=_ms_since(start))

    if llm is None or extractive.abstained:
        return replace(extractive, latency_ms=_ms_since(start))
    if endpoint_failed:
        return fallback(endpoint_failed)
    if not llm.available:
        return fallback(f"the LLM endpoint is skipped for {llm.cooldown_left():.0f} s after repeated failures")

    citations = citations_for(result.hits)
    valid = {c.n for c in citations}
    asked = f"{question} (in this conversation: {condensed})" if condensed and condensed != question else question
    messages = prompts.answer_messages(asked, [(c.n, c.label, c.quote or f"{c.paper.title} ({ABSTRACT_PENDING})")
                                               for c in citations])
    try:
        completion = await llm.chat(messages, on_delta=_preview(on_text, valid, max_chars))
    except LLMError as exc:
        return fallback(f"the LLM failed: {exc}")
    raw = completion.text
    if completion.finish_reason == "length":  # cut off by LLM_MAX_TOKENS: keep the complete sentences
        raw = _complete_sentences(raw)
    text, used, dropped = validate_answer(raw, valid, max_chars)
    if not used:
        return fallback(_no_citation_reason(dropped, valid))
    return Answer(
        question=question, text=text, abstained=False, citations=[c for c in citations if c.n in used],
        hits=result.hits, mode="llm", model=llm.model, latency_ms=_ms_since(start), tokens=completion.tokens,
        search_query=search_query, dropped_citations=tuple(dropped),
    )


def search_follow_up(library: Library, question: str, history: Sequence[Turn] = (), k: int | None = None) -> SearchResult:
    """What retrieval gives `question` read against `history`, without an LLM (blocking: run it in a thread).

    The same search `answer_question` makes without an LLM, so a front end can rebuild an answer's sources.
    """
    followup = resolve(question, history)
    if followup.papers:
        return scoped_search(library, followup.query, followup, k)
    return library.search(followup.query, k)


def scoped_search(library: Library, query: str, followup: FollowUp, k: int | None = None,
                  filters: Filters | None = None) -> SearchResult:
    """`query` answered only from `followup.papers`; papers the user named are each kept and quoted.

    Retrieval ranks the corpus as usual and the papers outside the scope are dropped. A named
    (pinned) paper counts as relevant even where retrieval found it weak, quoted with its
    closest sentence; the others keep retrieval's verdict, so "which of these uses X?" can
    find that none does.
    """
    found = library.search(query, max(k or 0, SCOPE_DEPTH), filters)
    by_id = {h.paper_id: h for h in found.hits}
    hits: list[Hit] = []
    for pid in followup.papers:
        hit = by_id.get(pid)
        if hit is None:
            paper = library.paper(pid)
            if paper is None:
                continue
            hit = Hit(paper=paper, score=0.0, quotes=(best_sentence(paper.abstract, query),), relevant=False)
        hits.append(replace(hit, relevant=True) if followup.pinned else hit)
    if not followup.pinned:
        hits.sort(key=lambda h: (not h.relevant, -h.score))
    abstained = not any(h.relevant for h in hits)
    return SearchResult(query=query, hits=hits, abstained=abstained,
                        reason="none of the papers discussed answers this" if abstained else "")


async def rewrite_query(llm: LLMClient, question: str) -> str:
    """An English search query for `question`, or "" when the model's reply is unusable."""
    completion = await llm.chat(prompts.rewrite_messages(question), max_tokens=REWRITE_MAX_TOKENS,
                                temperature=0.0, stream=False)
    return _usable_query(completion.text)


async def condense_question(llm: LLMClient, question: str, history: Sequence[Turn]) -> str:
    """A standalone English search query for a follow-up, or "" when the model's reply is unusable.

    Validated like a rewrite; the deterministic reading (retrieval/followup.py) stands otherwise.
    """
    completion = await llm.chat(prompts.condense_messages(question, [t.question for t in history]),
                                max_tokens=REWRITE_MAX_TOKENS, temperature=0.0, stream=False)
    return _usable_query(completion.text)


def _usable_query(reply: str) -> str:
    """The first line of a model's reply as a search query, or "" when it is not one."""
    lines = [line for line in _strip_thinking(reply).splitlines() if line.strip()]
    query = sanitize(lines[0]).strip().strip("\"'`“”«»").strip() if lines else ""
    query = re.sub(r"^(?:english\s+)?(?:search\s+)?query\s*:\s*", "", query, flags=re.I)
    if (not query or len(query) > MAX_QUERY_CHARS or len(query.split()) > MAX_QUERY_WORDS
            or not re.search(r"[A-Za-z]", query)):
        log.info("unusable query rewrite %r; searching with the question as asked", query[:80])
        return ""
    log.info("searching for %r instead of the question as asked", query)
    return query


# -- validation ------------------------------------------------------------------------------

_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)
_WIDE_CITE = re.compile(r"[【［]\s*(\d{1,3})\s*[】］]")
_CITE = re.compile(r"\s?\[\s*(\d{1,3}(?:\s*(?:[,;]|[-–])\s*\d{1,3})*)\s*\]")
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")
_LINK = re.compile(r"\[([^\]\n]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")
_REF_DEF = re.compile(r"^\s*\[[^\]\n]+\]:\s*\S+.*$", re.M)
_AUTOLINK = re.compile(r"<(?:https?|ftp|mailto|discord):[^>\s]*>", re.I)
_URL = re.compile(r"\b(?:(?:https?|ftp|discord)://|www\.)[^\s<>()\[\]]+", re.I)
_INVITE = re.compile(r"\b(?:discord\.gg|discord(?:app)?\.com/invite)/\S+", re.I)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SPACES = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n{3,}")


def sanitize(text: str) -> str:
    """Model text made plain: no links or images, no control characters."""
    text = _CONTROL.sub("", text)
    text = _IMAGE.sub(lambda m: m.group(1), text)
    text = _LINK.sub(lambda m: f"[{m.group(1)}]" if m.group(1).strip().isdigit() else m.group(1), text)
    text = _REF_DEF.sub("", text)
    text = _AUTOLINK.sub(LINK_REMOVED, text)
    text = _INVITE.sub(LINK_REMOVED, text)
    return _URL.sub(LINK_REMOVED, text)


def _cited_numbers(inner: str) -> list[int]:
    numbers: list[int] = []
    for part in re.split(r"\s*[,;]\s*", inner):
        bounds = re.split(r"\s*[-–]\s*", part)
        if len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit() and int(bounds[1]) - int(bounds[0]) < 10:
            numbers.extend(range(int(bounds[0]), int(bounds[1]) + 1))
        elif part.isdigit():
            numbers.append(int(part))
    return numbers


def _filter_citations(text: str, valid: set[int], dropped: list[int]) -> str:
    def keep(m: re.Match) -> str:
        numbers = _cited_numbers(m.group(1))
        good = [n for n in dict.fromkeys(numbers) if n in valid]
        dropped.extend(n for n in numbers if n not in valid and n not in dropped)
        lead = m.group(0)[0] if m.group(0)[0].isspace() else ""
        return (lead + "".join(f"[{n}]" for n in good)) if good else ""

    return _CITE.sub(keep, text)


def _bound(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    sentence = max(cut.rfind(". "), cut.rfind("。"), cut.rfind("\n"))
    if sentence > limit // 2:
        cut = cut[: sentence + 1]
    else:
        cut = cut[: cut.rfind(" ")] if " " in cut[limit // 2:] else cut
    cut = re.sub(r"\[[^\]]*$", "", cut).rstrip()
    return cut + "…"


_SENTENCE_END = re.compile(r"(?:[.!?](?:[ \t]*\[\d+\])*(?=\s|$)|[。！？](?:[ \t]*\[\d+\])*|\n)")


def _complete_sentences(text: str) -> str:
    """`text` up to its last complete sentence (with the citations that follow it), if it has one."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text.rstrip())]
    return text[: ends[-1]] if ends and ends[-1] > 0 else text


def _strip_thinking(text: str) -> str:
    return _THINK.sub("", text)


def _tidy(text: str) -> str:
    text = "\n".join(_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    text = re.sub(r" +([.,;:!?。，])", r"\1", text)
    return _BLANK_LINES.sub("\n\n", text).strip()


def validate_answer(raw: str, valid: set[int], max_chars: int = MAX_ANSWER_CHARS) -> tuple[str, list[int], list[int]]:
    """(clean text, citation numbers it keeps in order, numbers removed as not in the prompt).

    The text is sanitized and bounded; `used` is empty when no valid citation survives,
    or when nothing but citations is left.
    """
    dropped: list[int] = []
    text = _strip_thinking(raw)
    text = _WIDE_CITE.sub(r"[\1]", text)
    text = sanitize(text)
    text = _filter_citations(text, valid, dropped)
    text = _bound(_tidy(text), max_chars)
    used = [int(n) for n in dict.fromkeys(re.findall(r"\[(\d+)\]", text)) if int(n) in valid]
    prose = re.sub(r"\[\d+\]", "", text)
    if sum(ch.isalnum() for ch in prose) < 3:
        used = []
    return text, used, dropped


def _no_citation_reason(dropped: list[int], valid: set[int]) -> str:
    allowed = ", ".join(f"[{n}]" for n in sorted(valid))
    if dropped:
        bad = ", ".join(f"[{n}]" for n in dropped)
        return f"the LLM cited {bad}, which the prompt did not contain (only {allowed}), and no valid passage"
    return f"the LLM's answer cited none of the retrieved passages ({allowed})"


def _preview(on_text: OnText | None, valid: set[int], max_chars: int):
    """The stream callback: sanitizes the growing raw text and hands it to `on_text`."""
    if on_text is None:
        return None
    state = {"last": "", "broken": False}

    async def on_delta(raw: str) -> None:
        if state["broken"]:
            return
        text = _tidy(_filter_citations(sanitize(_WIDE_CITE.sub(r"[\1]", _strip_thinking(raw))), valid, []))
        text = _bound(text, max_chars)
        if not text or text == state["last"]:
            return
        state["last"] = text
        try:
            result = on_text(text)
            if inspect.isawaitable(result):
                await result
        except Exception:  # a broken preview must not cost the user the answer
            state["broken"] = True
            log.warning("the streaming preview failed; the answer continues without it", exc_info=True)

    return on_delta


# -- language ------------------------------------------------------------------------------

_EN_WORDS = frozenset(
    "the a an of to in for on and or with how what which who why when where do does did is are was were can "
    "could should would will be been by from about that this these those than into paper papers model models "
    "method methods learning use used using any some there their it its as at".split())
_OTHER_WORDS = frozenset(
    # French, German, Spanish, Italian, Portuguese, Dutch function words that English does not use
    "le la les des du une est sont quels quelles quel quelle comment pourquoi avec pour dans sur qui "
    "der die das den dem ein eine einen ist sind wie welche welcher warum mit für und auf nicht "
    "el los las del es son cómo como qué cuál cuáles por para con una sobre "
    "il lo gli della delle sono che perché quali cosa "
    "os uma são quais porque sobre "
    "het een zijn hoe welke waarom met voor".split())


def looks_english(text: str) -> bool:
    """A cheap guess, good enough to decide whether to rewrite the question into English first."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return True
    latin = sum(1 for c in letters if c < "\u0250")
    if latin / len(letters) < 0.7:
        return False
    words = re.findall(r"[^\W\d_]+", text.lower())
    english = sum(w in _EN_WORDS for w in words)
    other = sum(w in _OTHER_WORDS for w in words)
    return not (other > english)


def _ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000

