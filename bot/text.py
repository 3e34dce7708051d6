"""Plain-text pieces every front end shows the same way: the answer's footer, in the answer's language."""

from __future__ import annotations

import re

from paperbot.messages import text
from retrieval.types import Answer


def answer_footer(answer: Answer, *, detail: bool = False) -> str:
    """mode · model · time · tokens · what was searched · notes · why the LLM answer was not used.

    `detail` adds the operator's detail of a failure (`paperbot ask` in a terminal); a public footer
    (Discord) never shows it: it names no endpoint and quotes no server, but it is not for everyone either.
    """
    lang = answer.language
    parts = [text("FOOTER_MODE", lang, mode=answer.mode)]
    if answer.model:
        parts.append(text("FOOTER_MODEL", lang, model=answer.model))
    if answer.latency_ms is not None:
        parts.append(text("FOOTER_SECONDS", lang, seconds=answer.latency_ms / 1000))
    if answer.tokens:
        parts.append(text("FOOTER_TOKENS", lang, tokens=answer.tokens))
    if answer.search_query:
        parts.append(text("FOOTER_SEARCHED", lang, query=answer.search_query))
    parts += answer.notes
    if answer.fallback_reason:
        reason = answer.fallback_reason
        if detail and answer.fallback_detail:
            reason += f" ({answer.fallback_detail})"
        parts.append(text("FOOTER_FELL_BACK", lang, reason=reason))
    return " · ".join(parts)


# "!nollm question", "/ask --no-llm question", "--no-llm question": answer this one without the language model.
_NO_LLM = re.compile(r"^\s*(?:/ask\s+)?(?:!no-?llm|--no-llm)(?:\s+|$)", re.I)


def without_llm_prefix(question: str) -> tuple[str, bool]:
    """(question without a "!nollm" / "--no-llm" prefix, whether the language model may answer it)."""
    m = _NO_LLM.match(question)
    return (question[m.end():].strip(), False) if m else (question, True)
