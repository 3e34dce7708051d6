"""Question → cited answer, for async front ends (the Discord bot, the chat harness, `ask`).

`answer_question` runs these steps, each a function below or in its own module:

1. read the question against the conversation (retrieval/followup.py), and with a
   model, condense a follow-up or rewrite a non-English question into an English
   search query (retrieval/rewrite.py); without a usable rewrite, a Chinese query is
   translated offline (retrieval/translate.py);
2. retrieve (retrieval/scope.py: the corpus, or the papers a follow-up is about), in a
   worker thread so the event loop stays free; the extractive
   answer is built from the hits (retrieval/answer.py);
3. with a model, and whenever retrieval found papers plausibly relevant (a looser bar
   than citing them without one: retrieval/decision.py), ask it to summarize their
   sentences (retrieval/prompts.py), after letting it reorder them when LLM_RERANK is on
   (retrieval/rerank.py); a reply that only says the passages do not
   answer is the abstention, shown with the closest papers; check any other reply
   sentence by sentence as it streams (retrieval/checks.py, retrieval/grounding/):
   only checked, redacted sentences reach `on_text`, and the final answer is the
   last preview plus the sentences still to come, never less;
4. a reply left with nothing checked (or any failure of the endpoint before a
   sentence was shown) falls back to the extractive answer, with a short
   `fallback_reason` and the operator's `fallback_detail`; the rest goes to the log.

The quotes under the citations always come from the store, never from the model.
Fixed text (abstention, reasons, notes) is in `language` (paperbot/messages.py).
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

from paperbot import messages
from paperbot.errors import LLMError
from paperbot.language import guess_language, looks_english, message_language
from paperbot.protocols import ChatModel, PaperLibrary
from retrieval import prompts
from retrieval.answer import MAX_CITED_PAPERS, citations_for, extractive_answer
from retrieval.checks import (
    MAX_ANSWER_CHARS,
    ReplyCheck,
    Verdict,
    judge_reply,
    sanitize,
    validate_answer,
)
from retrieval.decision import llm_candidates
from retrieval.filters import Filters
from retrieval.followup import FollowUp, Turn, resolve
from retrieval.grounding import Passage
from retrieval.rerank import rerank
from retrieval.rewrite import condense_question, rewrite_problem, rewrite_query
from retrieval.scope import SCOPE_DEPTH, scoped_search, search_resolved
from retrieval.translate import english_query, has_chinese
from retrieval.types import Answer, Citation, SearchResult

log = logging.getLogger(__name__)

__all__ = ["answer_question", "search_follow_up", "scoped_search", "rewrite_query", "rewrite_problem",
           "condense_question", "judge_reply", "validate_answer", "looks_english", "sanitize", "Verdict",
           "MAX_ANSWER_CHARS", "SCOPE_DEPTH"]

OnText = Callable[[str], Any]


async def answer_question(library: PaperLibrary, question: str, *, llm: ChatModel | None = None, k: int | None = None,
                          on_text: OnText | None = None, max_chars: int = MAX_ANSWER_CHARS,
                          history: Sequence[Turn] = (), filters: Filters | None = None,
                          language: str | None = None, rerank_timeout: float | None = None) -> Answer:
    """The answer to `question`; `llm` summarizes when given, `on_text` gets the growing checked text.

    `on_text` may be a plain function or a coroutine function; it receives the whole
    answer so far each time a checked sentence is added (it only ever grows). An LLM
    answer is cut to `max_chars` at a sentence boundary. `history` (oldest first) makes
    the question a follow-up: see retrieval/followup.py. `filters` restrict the papers
    before ranking. `language` is that of the fixed text (default: the question's,
    when paperbot has messages in it). `rerank_timeout` (LLM_RERANK's seconds; None: off)
    lets the model reorder the papers it may be shown first (retrieval/rerank.py).
    """
    start = time.perf_counter()
    lang = language or message_language(question)
    followup = resolve(question, history)
    followup, search_query, condensed, notes, failed = await _search_query(llm, question, followup, history, lang)
    result = await asyncio.to_thread(search_resolved, library, followup, k, filters)
    if result.unsaid:  # "no paper here says “bathymetry”": the topic is absent, not missed
        notes.append(messages.text("UNSAID", lang, words=", ".join(f"“{w}”" for w in result.unsaid)))
    if result.query != followup.query:  # a topic of its own, searched without the conversation
        search_query = result.query if result.query != question else None
    extractive = replace(extractive_answer(result, lang), question=question, search_query=search_query,
                         notes=tuple(notes))

    def fallback(reason: str, detail: str) -> Answer:
        log.info("extractive answer instead of the LLM's: %s (%s)", messages.text(reason), detail)
        if extractive.abstained:  # an abstention gives no fallback reason: nothing fell back
            return replace(extractive, latency_ms=_ms_since(start))
        return replace(extractive, fallback_reason=messages.text(reason, lang), fallback_detail=detail or None,
                       latency_ms=_ms_since(start))

    citations = citations_for(result.hits, plausible=True)  # the LLM sees the plausible papers, a looser bar
    if llm is None or not citations:
        return replace(extractive, latency_ms=_ms_since(start))
    if failed is not None:
        return fallback("LLM_PAUSED" if failed.paused else "LLM_FAILED", failed.detail)
    if not llm.available:
        return fallback("LLM_PAUSED", f"skipped for {llm.cooldown_left():.0f} s after repeated failures")

    asked = f"{question} (in this conversation: {condensed})" if condensed and condensed != question else question
    if rerank_timeout is not None:
        candidates = llm_candidates(result.hits)
        if len(candidates) > MAX_CITED_PAPERS:  # with fewer, all are shown anyway: the order would only renumber
            citations = citations_for(await rerank(llm, asked, candidates, timeout=rerank_timeout), plausible=True)
    check = ReplyCheck([Passage.of(c.n, c.label, c.quote) for c in citations], library.embedder,
                       question=question, max_chars=max_chars, secrets=llm.secrets)
    preview = _Preview(check, on_text) if on_text is not None else None
    try:
        completion = await llm.chat(_answer_prompt(asked, citations, guess_language(question)), on_delta=preview)
    except LLMError as exc:
        if not check.text:
            return fallback("LLM_PAUSED" if exc.paused else "LLM_FAILED", exc.detail)
        # Sentences already shown stay: the answer is what was checked before the stream broke off.
        log.warning("the LLM's stream broke off after %d checked sentences: %s", len(check.shown), exc)
        verdict, model, tokens = check.verdict(), llm.model, None
        notes.append(messages.text("LLM_CUT_SHORT", lang))
    else:
        verdict = await asyncio.to_thread(check.finish, completion.text, completion.finish_reason)
        model, tokens = completion.model or llm.model, completion.tokens
    if verdict.declined:  # the model says the passages do not answer: an abstention, in its words
        log.info("the LLM found no answer in the %d passages it was shown", len(citations))
        return replace(extractive, text=verdict.declined, abstained=True, citations=[], mode="llm", model=model,
                       tokens=tokens, latency_ms=_ms_since(start), notes=tuple(notes))
    if verdict.reason:
        return fallback(verdict.reason, verdict.detail)
    if preview is not None:  # the last sentences, checked at the end: the final answer is the last preview
        await preview.show(verdict.text)
    if guess_language(question) != "en" and guess_language(re.sub(r"\[\d+\]", "", verdict.text)) == "en":
        log.info("the LLM answered a %s question in English", guess_language(question))
        notes.append(messages.text("LANGUAGE_IGNORED", lang))
    return Answer(
        question=question, text=verdict.text, abstained=False, citations=[c for c in citations if c.n in verdict.used],
        hits=result.hits, mode="llm", model=model, latency_ms=_ms_since(start), tokens=tokens,
        search_query=search_query, dropped_citations=tuple(verdict.dropped), notes=tuple(notes),
        filters=result.filters, language=lang, removed=verdict.removed,
    )


async def _search_query(llm: ChatModel | None, question: str, followup: FollowUp, history: Sequence[Turn],
                        lang: str):
    """(the follow-up with its query, search_query shown to the user or None, condensed follow-up, notes, the
    endpoint's failure or None).

    A follow-up is condensed by the model when one is available; a question that does not
    look English is rewritten into English; without a usable rewrite, Chinese is searched as asked (the library
    translates it offline, retrieval/translate.py, and the translation is what the user is shown as searched);
    otherwise the deterministic reading stands.
    """
    query = followup.query
    search_query: str | None = None if followup.standalone else query
    notes: list[str] = []
    failed: LLMError | None = None
    condensed = rewritten = ""
    rewrite_tried = False
    if llm is not None and llm.available and history:
        try:
            condensed = await condense_question(llm, question, history)
        except LLMError as exc:
            log.warning("the LLM failed while reading the conversation: %s", exc)
            failed = exc
        if condensed:
            query = search_query = condensed
    if llm is not None and llm.available and not condensed and failed is None and not looks_english(query):
        rewrite_tried = True
        try:
            rewritten = await rewrite_query(llm, query)
        except LLMError as exc:
            log.warning("the LLM failed while translating the question: %s", exc)
            failed = exc
        if rewritten:
            query = search_query = rewritten
    if condensed or rewritten:  # the model's query replaces the rules' (their papers stay in scope)
        return replace(followup, query=query, alone=""), search_query, condensed, notes, failed
    translated = await asyncio.to_thread(english_query, query) if has_chinese(query) else ""
    if translated:  # searched as asked: the library translates it and cites from the translation's own bar
        return followup, translated, condensed, notes, failed
    if rewrite_tried and failed is None:
        notes.append(messages.text("REWRITE_UNUSABLE", lang))
    return followup, search_query, condensed, notes, failed


def _answer_prompt(question: str, citations: Sequence[Citation], language: str) -> list[dict]:
    return prompts.answer_messages(
        question, [(c.n, c.label, c.quote or f"{c.paper.title} ({messages.ABSTRACT_PENDING})") for c in citations],
        language)


class _Preview:
    """The stream callback: the growing raw reply → `check` (in a thread) → `on_text` when the checked text grows."""

    def __init__(self, check: ReplyCheck, on_text: OnText) -> None:
        self.check = check
        self.on_text = on_text
        self.last = ""
        self.broken = False

    async def __call__(self, raw: str) -> None:
        await self.show(await asyncio.to_thread(self.check.feed, raw))

    async def show(self, text: str) -> None:
        """`text` to the front end, when it grew (it only ever grows: a decision on a sentence is final)."""
        if self.broken or not text or text == self.last:
            return
        self.last = text
        try:
            result = self.on_text(text)
            if inspect.isawaitable(result):
                await result
        except Exception:  # a broken preview must not cost the user the answer
            self.broken = True
            log.warning("the streaming preview failed; the answer continues without it", exc_info=True)


def search_follow_up(library: PaperLibrary, question: str, history: Sequence[Turn] = (), k: int | None = None) -> SearchResult:
    """What retrieval gives `question` read against `history`, without an LLM (blocking: run it in a thread).

    The same search `answer_question` makes without an LLM, so a front end can rebuild an answer's sources.
    """
    return search_resolved(library, resolve(question, history), k)


def _ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000
