"""Question → cited answer, for async front ends (the Discord bot, the chat harness, `ask`).

Retrieval runs in a worker thread so the event loop stays free. With a language
model configured, and only when retrieval found relevant papers, the model
summarizes the retrieved sentences; its reply is untrusted and validated:

* citation numbers that were not in the prompt are removed;
* markdown links and images become plain text, bare URLs and control characters
  are removed, and the length is bounded by the caller (front ends know their
  limits; mentions are neutralized where text is shown, in the Discord layer);
* chat-template debris and echoed prompt lines are removed, and only sentences
  that the passage they cite supports are kept (retrieval/grounding.py);
* a reply left with nothing grounded (or any failure of the endpoint) falls back
  to the extractive answer, with a short `fallback_reason` (no endpoint, no
  server text) and the operator's `fallback_detail`; the rest goes to the log;
* the quotes under the citations always come from the store, never from the model.

A question that does not look English is first rewritten by the model into an
English search query (the corpus is English); a rewrite that does not look like
one is not used, and a note says the question was searched as asked. The answer
should be in the language of the question; a note says so when it is not.
Fixed text (abstention, reasons, notes) is in `language` (paperbot/messages.py).
Without a model, retrieval runs on the original text.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from paperbot import messages
from paperbot.errors import LLMError
from paperbot.language import guess_language, looks_english, message_language
from paperbot.protocols import ChatModel, PaperLibrary
from paperbot.text import sentences, split_sentences, strip_control
from retrieval import prompts
from retrieval.answer import citations_for, extractive_answer
from retrieval.filters import Filters
from retrieval.followup import MAX_QUERY_CHARS, FollowUp, Turn, best_sentence, resolve
from retrieval.grounding import Embed, Grounding, Passage, ground_reply, strip_template
from retrieval.types import Answer, Hit, SearchResult

log = logging.getLogger(__name__)

__all__ = ["answer_question", "rewrite_query", "validate_answer", "looks_english", "sanitize", "MAX_ANSWER_CHARS"]

MAX_ANSWER_CHARS = 4000  # the default bound on an LLM answer; front ends may ask for less
MIN_QUERY_CHARS = 3
MAX_QUERY_WORDS = 24  # a longer reply is an answer or a ramble, not a search query
REWRITE_MAX_TOKENS = 64
SCOPE_DEPTH = 25  # papers searched when a follow-up is about papers cited earlier
LINK_REMOVED = "(link removed)"

OnText = Callable[[str], Any]

_GROUNDING_REASONS = {  # grounding problem → the public reason
    "echo": "LLM_DEBRIS", "placeholder": "LLM_DEBRIS", "repeated": "LLM_DEBRIS", "empty": "LLM_DEBRIS",
    "filler": "LLM_DEBRIS", "uncited": "LLM_NO_CITATION", "unsupported": "LLM_UNGROUNDED",
}


async def answer_question(library: PaperLibrary, question: str, *, llm: ChatModel | None = None, k: int | None = None,
                          on_text: OnText | None = None, max_chars: int = MAX_ANSWER_CHARS,
                          history: Sequence[Turn] = (), filters: Filters | None = None,
                          language: str | None = None) -> Answer:
    """The answer to `question`; `llm` summarizes when given, `on_text` gets the growing text.

    `on_text` may be a plain function or a coroutine function; it receives the whole
    answer so far (already sanitized) each time the streamed text grows. An LLM
    answer is cut to `max_chars` at a sentence boundary. `history` (oldest first) makes
    the question a follow-up: see retrieval/followup.py. `filters` restrict the papers
    before ranking. `language` is that of the fixed text (default: the question's,
    when paperbot has messages in it).
    """
    start = time.perf_counter()
    lang = language or message_language(question)
    followup = resolve(question, history)
    query = followup.query
    search_query: str | None = None if followup.standalone else query
    notes: list[str] = []
    endpoint_failed: LLMError | None = None
    condensed = ""
    if llm is not None and llm.available and history:
        try:
            condensed = await condense_question(llm, question, history)
        except LLMError as exc:
            log.warning("the LLM failed while reading the conversation: %s", exc)
            endpoint_failed = exc
        if condensed:
            query = search_query = condensed
    if llm is not None and llm.available and not condensed and endpoint_failed is None and not looks_english(query):
        rewritten = ""
        try:
            rewritten = await rewrite_query(llm, query)
        except LLMError as exc:
            log.warning("the LLM failed while translating the question: %s", exc)
            endpoint_failed = exc
        if rewritten:
            query = search_query = rewritten
        elif endpoint_failed is None:
            notes.append(messages.text("REWRITE_UNUSABLE", lang))
    if followup.papers:
        result = await asyncio.to_thread(scoped_search, library, query, followup, k, filters)
    else:
        result = await asyncio.to_thread(library.search, query, k, filters)
    extractive = replace(extractive_answer(result, lang), question=question, search_query=search_query,
                         notes=tuple(notes))

    def fallback(reason: str, detail: str) -> Answer:
        log.info("extractive answer instead of the LLM's: %s (%s)", messages.text(reason), detail)
        return replace(extractive, fallback_reason=messages.text(reason, lang), fallback_detail=detail or None,
                       latency_ms=_ms_since(start))

    if llm is None or extractive.abstained:
        return replace(extractive, latency_ms=_ms_since(start))
    if endpoint_failed is not None:
        return fallback("LLM_PAUSED" if endpoint_failed.paused else "LLM_FAILED", endpoint_failed.detail)
    if not llm.available:
        return fallback("LLM_PAUSED", f"skipped for {llm.cooldown_left():.0f} s after repeated failures")

    citations = citations_for(result.hits)
    valid = {c.n for c in citations}
    asked_in = guess_language(question)
    asked = f"{question} (in this conversation: {condensed})" if condensed and condensed != question else question
    messages_ = prompts.answer_messages(
        asked, [(c.n, c.label, c.quote or f"{c.paper.title} ({messages.ABSTRACT_PENDING})") for c in citations],
        asked_in)
    try:
        completion = await llm.chat(messages_, on_delta=_preview(on_text, valid, max_chars))
    except LLMError as exc:
        return fallback("LLM_PAUSED" if exc.paused else "LLM_FAILED", exc.detail)
    passages = [Passage.of(c.n, c.label, c.quote) for c in citations]
    verdict = await asyncio.to_thread(judge_reply, completion.text, passages, library.embedder.encode,
                                      question=question, finish_reason=completion.finish_reason,
                                      max_chars=max_chars)
    if verdict.reason:
        return fallback(verdict.reason, verdict.detail)
    text, used, dropped = verdict.text, verdict.used, verdict.dropped
    if asked_in != "en" and guess_language(re.sub(r"\[\d+\]", "", text)) == "en":
        log.info("the LLM answered a %s question in English", asked_in)
        notes.append(messages.text("LANGUAGE_IGNORED", lang))
    return Answer(
        question=question, text=text, abstained=False, citations=[c for c in citations if c.n in used],
        hits=result.hits, mode="llm", model=completion.model or llm.model, latency_ms=_ms_since(start),
        tokens=completion.tokens, search_query=search_query, dropped_citations=tuple(dropped), notes=tuple(notes),
        filters=result.filters, language=lang,
    )


def search_follow_up(library: PaperLibrary, question: str, history: Sequence[Turn] = (), k: int | None = None) -> SearchResult:
    """What retrieval gives `question` read against `history`, without an LLM (blocking: run it in a thread).

    The same search `answer_question` makes without an LLM, so a front end can rebuild an answer's sources.
    """
    followup = resolve(question, history)
    if followup.papers:
        return scoped_search(library, followup.query, followup, k)
    return library.search(followup.query, k)


def scoped_search(library: PaperLibrary, query: str, followup: FollowUp, k: int | None = None,
                  filters: Filters | None = None) -> SearchResult:
    """`query` answered only from `followup.papers`; papers the user named are each kept and quoted.

    Retrieval ranks only the papers in scope, so whether one answers is judged among them. A named
    (pinned) paper counts as relevant even where retrieval found it weak, quoted with its
    closest sentence; the others keep retrieval's verdict, so "which of these uses X?" can
    find that none does.
    """
    found = library.search(query, max(k or 0, SCOPE_DEPTH), filters, within=followup.papers)
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


@dataclass(frozen=True)
class Verdict:
    """What to show of a reply: `text` citing `used`, or nothing, with `reason` (a messages name) and `detail`."""

    text: str
    used: list[int]
    dropped: list[int]
    reason: str | None = None
    detail: str = ""
    grounding: Grounding | None = None


def judge_reply(raw: str, passages: list[Passage], embed: Embed | None, *, question: str = "",
                finish_reason: str | None = None, max_chars: int = MAX_ANSWER_CHARS) -> Verdict:
    """The model's reply made safe and checked: sanitized, valid citations only, grounded sentences only.

    Pure (the embedder aside), so benchmarks/llm_grounding.py measures exactly what users get.
    """
    if finish_reason == "length":  # cut off by LLM_MAX_TOKENS: keep the complete sentences
        raw = _complete_sentences(strip_template(_strip_thinking(raw)))
    valid = {p.n for p in passages}
    text, used, dropped = validate_answer(raw, valid, max_chars)
    if not used:
        return Verdict("", [], dropped, "LLM_NO_CITATION", _no_citation_reason(dropped, valid))
    grounding = ground_reply(text, passages, embed, question=question)
    if grounding.removed or grounding.recited:
        log.info("grounding of the LLM's answer: removed %s, re-cited %d", grounding.removed, grounding.recited)
    if not grounding.text:
        reason = _GROUNDING_REASONS.get(grounding.problem or "empty", "LLM_UNGROUNDED")
        return Verdict("", [], dropped, reason, _grounding_detail(grounding), grounding)
    text = _bound(grounding.text, max_chars)
    return Verdict(text, [n for n in grounding.used if n in valid], dropped, grounding=grounding)


def _grounding_detail(grounding) -> str:
    parts = [f"{n} {why}" for why, n in sorted(grounding.removed.items(), key=lambda kv: -kv[1])]
    return "removed: " + ", ".join(parts) if parts else "nothing left to show"


_TEMPLATE_TOKEN = re.compile(r"<\|[^|>\s]{1,40}\|>|</?s>|<(?:start|end)_of_turn>|\[/?INST\]|<</?SYS>>", re.I)


async def rewrite_query(llm: ChatModel, question: str) -> str:
    """An English search query for `question`, or "" when the model's reply does not look like one.

    Refused: template tokens, a repeated sentence, fewer than 3 or more than 300 characters or 24 words,
    no Latin letters, or text that is not English (a search query in the question's language is no rewrite).
    """
    completion = await llm.chat(prompts.rewrite_messages(question), max_tokens=REWRITE_MAX_TOKENS,
                                temperature=0.0, stream=False)
    return _usable_query(completion.text)


async def condense_question(llm: ChatModel, question: str, history: Sequence[Turn]) -> str:
    """A standalone English search query for a follow-up, or "" when the model's reply is unusable.

    Validated like a rewrite; the deterministic reading (retrieval/followup.py) stands otherwise.
    """
    completion = await llm.chat(prompts.condense_messages(question, [t.question for t in history]),
                                max_tokens=REWRITE_MAX_TOKENS, temperature=0.0, stream=False)
    return _usable_query(completion.text)


def _usable_query(reply: str) -> str:
    """The first line of a model's reply as a search query, or "" when it does not look like one."""
    reply = _strip_thinking(reply)
    problem = rewrite_problem(reply)
    if problem:
        log.info("unusable query rewrite %r (%s); searching with the question as asked", reply[:80], problem)
        return ""
    query = _rewrite_line(reply)
    log.info("searching for %r instead of the question as asked", query)
    return query


def _rewrite_line(reply: str) -> str:
    lines = [line for line in reply.splitlines() if line.strip()]
    query = sanitize(lines[0]).strip().strip("\"'`“”«»").strip() if lines else ""
    return re.sub(r"^(?:english\s+)?(?:search\s+)?query\s*:\s*", "", query, flags=re.I).strip()


def rewrite_problem(reply: str) -> str | None:
    """Why `reply` is not a usable English search query, or None when it is one."""
    if _TEMPLATE_TOKEN.search(reply):
        return "template tokens"
    query = _rewrite_line(reply)
    if len(query) < MIN_QUERY_CHARS:
        return "too short"
    if len(query) > MAX_QUERY_CHARS or len(query.split()) > MAX_QUERY_WORDS:
        return "too long"
    if not re.search(r"[A-Za-z]{2}", query):
        return "no English words"
    said = [" ".join(s.lower().split()) for s in sentences(query)]
    if len(said) != len(set(said)):
        return "a repeated sentence"
    words = re.findall(r"\w+", query.lower())
    if len(words) >= 4 and len(set(words)) <= len(words) // 2:
        return "repeated words"
    if guess_language(query) != "en":
        return "not English"
    if _CHATTY.search(query):
        return "an answer, not a query"
    if len(said) > 1:
        return "more than one sentence"
    if query.endswith(".") and len(query.split()) > 12:
        return "a statement, not a query"
    return None


# A reply that talks (to the user, about the question or its answer) is no search query.
_CHATTY = re.compile(r"^(?:the answer|answer|sure|here is|here's|yes|no|to (?:re)?(?:frame|phrase|answer))\b"
                     r"|\b(?:I|I'd|I'm|I'll|you|your|the answer|this question|the question|rephras\w*|reframe\w*)\b",
                     re.I)


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
_SPACES = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n{3,}")


def sanitize(text: str) -> str:
    """Model text made plain: no links or images, no control characters."""
    text = strip_control(text)
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


_ENDED = re.compile(r"[.!?。！？][\"')\]”’]*(?:\s*\[\d{1,3}\])*$")


def _complete_sentences(text: str) -> str:
    """`text` up to its last complete sentence (with the citations that follow it), if it has one."""
    spans = split_sentences(text.rstrip(), lines=True)  # a line ended by a line break is complete too
    complete = [s for s in spans if _ENDED.search(text[s.start:s.end]) or text[s.end:].lstrip(" \t")[:1] == "\n"]
    if not complete or complete[-1] is spans[-1]:
        return text
    return text[: complete[-1].end]


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
    text = strip_template(_strip_thinking(raw))
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
        text = _tidy(_filter_citations(sanitize(_WIDE_CITE.sub(r"[\1]", strip_template(_strip_thinking(raw)))), valid, []))
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


def _ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000

