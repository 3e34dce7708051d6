"""Questions the corpus cannot be searched with as asked, rewritten by the model into English search queries.

A question that does not look English is rewritten (the corpus and the embedder
are English); a follow-up is condensed with the earlier questions into one
standalone query. The model's reply is untrusted: it is used only when it looks
like a search query (`rewrite_problem`), else the question is searched as asked.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from paperbot.language import guess_language
from paperbot.protocols import ChatModel
from paperbot.text import sentences
from retrieval import prompts
from retrieval.checks import sanitize, strip_thinking
from retrieval.followup import MAX_QUERY_CHARS, Turn

log = logging.getLogger(__name__)

MIN_QUERY_CHARS = 3
MAX_QUERY_WORDS = 24  # a longer reply is an answer or a ramble, not a search query
REWRITE_MAX_TOKENS = 64

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
    reply = strip_thinking(reply)
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


