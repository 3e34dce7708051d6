"""Plain-text pieces every front end shows the same way: the answer's footer."""

from __future__ import annotations

import unicodedata

from retrieval.types import Answer


def duration(ms: float) -> str:
    """A short time as people read it: "40 ms" below a second (never "0.0 s"), "2.3 s" above."""
    return f"{max(1, round(ms))} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def answer_footer(answer: Answer) -> str:
    """mode · model · time · tokens · what was searched · why the LLM answer was not used."""
    parts = [f"mode: {answer.mode}"]
    if answer.model:
        parts.append(f"model: {answer.model}")
    if answer.latency_ms is not None:
        parts.append(duration(answer.latency_ms))
    if answer.tokens:
        parts.append(f"{answer.tokens} tokens")
    if answer.search_query:
        parts.append(f"searched for: {answer.search_query}")
    if answer.fallback_reason:
        parts.append(f"fell back: {answer.fallback_reason}")
    return " · ".join(parts)


def clean_question(text: str) -> str:
    """A question as typed, without invisible format characters (zero-width, bidi controls, BOM) and extra space.

    A question made only of such characters is empty.
    """
    return " ".join("".join(c for c in text if unicodedata.category(c) != "Cf").split())
