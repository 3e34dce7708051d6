"""Plain-text pieces every front end shows the same way: the answer's footer."""

from __future__ import annotations

from retrieval.types import Answer


def answer_footer(answer: Answer) -> str:
    """mode · model · time · tokens · what was searched · why the LLM answer was not used."""
    parts = [f"mode: {answer.mode}"]
    if answer.model:
        parts.append(f"model: {answer.model}")
    if answer.latency_ms is not None:
        parts.append(f"{answer.latency_ms / 1000:.1f} s")
    if answer.tokens:
        parts.append(f"{answer.tokens} tokens")
    if answer.search_query:
        parts.append(f"searched for: {answer.search_query}")
    if answer.fallback_reason:
        parts.append(f"fell back: {answer.fallback_reason}")
    return " · ".join(parts)
